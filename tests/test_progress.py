"""Progress output: one live line on a terminal, a summary line every few
seconds otherwise, never one line per example, and messages on their own line."""

from __future__ import annotations

import io

from ctsgen.progress import Progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_log_gets_a_summary_line_every_few_seconds_not_one_per_example():
    log = io.StringIO()
    show = Progress("fuzzing", stream=log, interval=5.0)
    for n in range(1, 5001):  # a fuzz run past its first round: more examples than one round's budget
        show(n, max(n, 200), f"{n} cases")  # what `ctsgen fuzz --time` passed
    lines = log.getvalue().splitlines()
    assert 1 <= len(lines) <= 3, lines
    assert "\r" not in log.getvalue()


def test_a_finished_count_is_reported_once():
    log = io.StringIO()
    show = Progress("running", stream=log, interval=5.0)
    for _ in range(50):
        show(10, 10)
    assert log.getvalue().count("[10/10]") == 1


def test_a_terminal_gets_one_live_line():
    tty = Terminal()
    show = Progress("writing cases", stream=tty)
    for n in range(1, 2001):
        show(n, 2000)
    show.close()
    text = tty.getvalue()
    assert text.count("\n") <= 1, repr(text[-300:])
    assert "2000/2000" in text


def test_messages_get_their_own_line_on_a_terminal():
    tty = Terminal()
    show = Progress("fuzzing", stream=tty, interval=0.0)
    show(5, None, "40 cases")
    show.write("found: Fail in some.case")
    show(6, None, "48 cases")
    show.close()
    pieces = [p for chunk in tty.getvalue().split("\n") for p in chunk.split("\r")]
    found = [p for p in pieces if "found:" in p]
    assert found == ["found: Fail in some.case"], pieces
