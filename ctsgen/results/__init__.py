"""Results in the shapes driver CI reads: deqp-runner's statuses, expectation files and CSV files.

:mod:`~ctsgen.results.status` maps ctsgen's verdicts onto deqp-runner's statuses;
:mod:`~ctsgen.results.deqp_csv` reads and writes ``results.csv`` / ``failures.csv``;
:mod:`~ctsgen.results.expectations` loads ``--baseline`` / ``--flakes`` / ``--skips`` files
and classifies each case's record against them (docs/ci.md).
"""
