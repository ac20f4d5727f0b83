"""Options that would silently do nothing are refused or named, and bad input ends in one line.

Each test here failed before its fix: the options below were accepted and ignored
(``--database http://x`` made a directory ``./http:/x``), and the inputs below ended in a
traceback (``--backend os:path``, ``--backend :``, ``coverage --plot x.json``, ``repro
--results`` naming a JSON file that is no results file, Ctrl-C in ``fuzz`` with an isolated
backend).
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest

from ctsgen.cli import main
from ctsgen.mutants import deviations
from one_line_errors import fails_with

REPO = Path(__file__).resolve().parents[1]
PACK_COUNT = 4
pytest_plugins = ["pytester"]


# -- options that do nothing -------------------------------------------------------------

def test_run_names_an_expected_deviation_that_reaches_no_case(pack: Path, capsys) -> None:
    assert main(["run", str(pack), "--quiet", "--expect-deviation", "gemm-ignores-beta"]) == 0
    err = capsys.readouterr().err
    assert "warning: --expect-deviation gemm-ignores-beta reached no case" in err
    assert main(["run", str(pack), "--quiet", "--expect-deviation", "repeat-c-remainder"]) == 0
    assert "warning" not in capsys.readouterr().err  # a tensor-layout deviation reaches a tensor-layout pack


def test_a_deviation_an_earlier_command_reached_is_not_reached_by_the_next(pack: Path, capsys) -> None:
    """Reaches count per command: in one process (a test suite, ``main(argv)`` called again) a deviation
    that reached a case in an earlier command, here a cm2-gemm oracle under gemm-ignores-beta, does not
    silence the warning of a later command it reaches nothing in (the whole suite's order hid it)."""
    deviations._REACHED.add("gemm-ignores-beta")  # as an earlier command's cm2-gemm oracle left it
    assert main(["run", str(pack), "--quiet", "--expect-deviation", "gemm-ignores-beta"]) == 0
    assert "warning: --expect-deviation gemm-ignores-beta reached no case" in capsys.readouterr().err


def test_fuzz_names_an_expected_deviation_that_reaches_no_case(tmp_path: Path, capsys) -> None:
    assert main(["fuzz", "--max-examples", "5", "--database", "none", "--repro-dir", str(tmp_path / "r"),
                 "--expect-deviation", "gemm-ignores-beta"]) == 0
    assert "warning: --expect-deviation gemm-ignores-beta reached no case" in capsys.readouterr().err


@pytest.mark.parametrize("argv, says", [
    (["--min-batch", "64", "--max-batch", "8"], "--min-batch 64 is above --max-batch 8"),
    (["--devices", "0,1"], "--devices"),
    (["--database", "http://x"], "http:// is no example database"),
    (["--database", ""], "--database is empty"),
    (["--database", "none", "--repro-dir", " "], "--repro-dir is empty"),
])
def test_fuzz_refuses_options_that_would_do_nothing(tmp_path: Path, monkeypatch, capsys, argv, says) -> None:
    monkeypatch.chdir(tmp_path)
    line = fails_with(capsys, ["fuzz", "--max-examples", "1", *argv])
    assert says in line
    assert list(tmp_path.iterdir()) == [], "nothing made (no ./http:/x directory)"


@pytest.mark.parametrize("value", ["yes", "2", ""])
def test_a_pipeline_cache_setting_other_than_0_or_1_is_refused(pack: Path, monkeypatch, capsys, value: str) -> None:
    monkeypatch.setenv("CTSGEN_PIPELINE_CACHE", value)
    assert "CTSGEN_PIPELINE_CACHE" in fails_with(capsys, ["run", str(pack), "--quiet"])


# -- one line instead of a traceback ------------------------------------------------------

@pytest.mark.parametrize("backend, says", [("os:path", "not a backend class"), (":", "is not MODULE:CLASS"),
                                           ("os.:x y", "is not MODULE:CLASS")])
def test_a_backend_name_that_is_no_class_is_one_line(pack: Path, capsys, backend: str, says: str) -> None:
    assert says in fails_with(capsys, ["run", str(pack), "--quiet", "--backend", backend])
    assert says in fails_with(capsys, ["fuzz", "--max-examples", "1", "--database", "none", "--backend", backend])


def test_the_pytest_plugin_refuses_a_backend_that_is_no_class_once(pytester: pytest.Pytester, pack: Path) -> None:
    result = pytester.runpytest("-p", "no:cacheprovider", "--ctsgen-pack", str(pack), "--ctsgen-backend", "os:path")
    text = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR, text
    assert text.count("ctsgen: error:") == 1 and "not a backend class" in text and "Traceback" not in text


@pytest.mark.parametrize("plot", ["x.json", "noext"])
def test_coverage_refuses_a_plot_format_matplotlib_cannot_write(pack: Path, tmp_path: Path, capsys, plot: str) -> None:
    pytest.importorskip("matplotlib")
    line = fails_with(capsys, ["coverage", str(pack), "--plot", str(tmp_path / plot)])
    assert "matplotlib writes no" in line and not (tmp_path / plot).exists()


@pytest.mark.parametrize("content", ['{"a": 1}\n', "[1, 2]\n", '{\n  "name": "x"\n}\n'])
def test_repro_refuses_a_json_file_that_is_no_results_file(pack: Path, tmp_path: Path, capsys, content: str) -> None:
    bogus = tmp_path / "r.json"
    bogus.write_text(content)
    case = json.loads((pack / "manifest.json").read_text())["cases"][0]["name"]
    line = fails_with(capsys, ["repro", str(pack), case, "--out", str(tmp_path / "o"), "--results", str(bogus)])
    assert str(bogus) in line and not (tmp_path / "o").exists()


@pytest.mark.slow
def test_ctrl_c_leaves_a_supervised_backend_worker_to_its_supervisor(capfd) -> None:
    """Ctrl-C reaches the whole process group, the worker included: it must not die with a
    KeyboardInterrupt traceback (the supervisor closes it)."""
    from ctsgen.backends.registry import open_backend

    backend = open_backend("mutant:gemm-ignores-beta", "process")
    try:
        name = backend.profile().name
        os.kill(backend._proc.pid, signal.SIGINT)  # noqa: SLF001 (the worker process itself)
        time.sleep(1)
        assert backend._proc.is_alive()  # noqa: SLF001
        assert backend.stats is not None and backend.profile().name == name
    finally:
        backend.close()
    err = capfd.readouterr().err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err


class _InterruptedAfterSending:
    """A pipe whose first ``run`` request is sent and then interrupted, as a Ctrl-C or SIGTERM
    landing just after ``send`` returns would do."""

    def __init__(self, conn) -> None:
        self.conn, self.fired = conn, False

    def send(self, message) -> None:
        self.conn.send(message)
        if message[0] == "run" and not self.fired:
            self.fired = True
            raise KeyboardInterrupt

    def __getattr__(self, name: str):
        return getattr(self.conn, name)


def test_a_signal_just_after_a_request_is_sent_leaves_close_clean(pack: Path) -> None:
    """close() read the interrupted request's answer as its own (ValueError: dictionary update
    sequence element #0 has length 3) and the command ended in a traceback."""
    from ctsgen.backends.registry import open_backend
    from ctsgen.pack.read import load_pack
    from ctsgen.runner.run import run_pack

    backend = open_backend("mutant:gemm-ignores-beta", "process")
    backend.profile()
    backend._conn = _InterruptedAfterSending(backend._conn)  # noqa: SLF001 (the pipe to the worker)
    with pytest.raises(KeyboardInterrupt):
        run_pack(load_pack(pack), backend)
    backend.close()  # no exception: the worker, mid-request, is stopped
