"""Running cases: batching them into a dispatch, judging each, bisecting a dispatch that fails whole.

:func:`ctsgen.execute.run.run_cases` is the one dispatch-and-judge step every path shares.
"""
