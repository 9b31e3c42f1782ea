import errno
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from keel_cli._command import BROKEN_PIPE, OUTPUT_FAILED, main
from keel_lab.course._experiments.registry import EXPERIMENTS
from keel_lab.course._experiments.report import Report

pytestmark = pytest.mark.lab_wide


def test_pairing_json_has_the_promised_fields(capsys):
    assert main(["experiments", "pairing", "--trials", "200", "--calls", "4", "--seed", "9",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["trials"], out["calls"], out["seed"]) == (200, 4, 9)
    assert set(out["strategies"]) == {"position_over_gather", "position_over_completion",
                                      "position_with_skip", "by_call_id"}
    for counts in out["strategies"].values():
        assert set(counts) == {"trials_with_mismatch", "mismatched_pairs"}
        assert all(isinstance(v, int) for v in counts.values())


def test_all_experiments_one_json_object_each(capsys):
    assert main(["experiments", "--trials", "20", "--json"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [json.loads(line)["experiment"] for line in lines] == [
        "pairing", "spread", "calls", "order", "exceptions", "gather", "streaming", "cancellation",
        "bad_json", "block_close", "partial", "outcomes", "quirks", "naive_clients", "faults",
        "timeline", "scheduling", "screen", "rendering"]


def test_tables_by_default(capsys):
    assert main(["experiments", "order", "--trials", "60"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("order: trials=60, calls=3, seed=0\ncollector")
    assert "gather        60" in out


def test_plots_are_written(tmp_path, capsys):
    assert main(["experiments", "timeline", "--out", str(tmp_path / "plots")]) == 0
    png = tmp_path / "plots" / "timeline.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"plot: {png}" in capsys.readouterr().err


@pytest.mark.parametrize(("argv", "message"), [
    (["experiments", "pairing", "--trials", "0"], "argument --trials: 0 is outside"),
    (["experiments", "pairing", "--trials", "many"], "'many' is not a whole number"),
    (["experiments", "pairing", "--calls", "11"], "argument --calls: 11 is outside 1..10"),
    (["experiments", "nope"], "invalid choice: 'nope'"),
    ([], "the following arguments are required: COMMAND"),
])
def test_bad_arguments_get_usage_not_a_traceback(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "usage: keel-lab" in err and message in err and "Traceback" not in err


def test_unwritable_out_dir_is_a_clear_error(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert main(["experiments", "timeline", "--out", str(blocker / "sub")]) == 2
    assert capsys.readouterr().err.startswith(f"keel-lab: error: cannot write plots to {blocker}")


def test_console_script_is_installed():
    script = Path(sys.executable).parent / "keel-lab"
    out = subprocess.run([str(script), "experiments", "partial", "--json"],
                         capture_output=True, text=True, check=True).stdout
    assert json.loads(out)["experiment"] == "partial"


def test_import_stays_light():
    code = ("import sys, keel_lab; print(sorted(m for m in ('matplotlib', 'jsonschema', "
            "'tqdm', 'ipywidgets') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def test_experiment_tables_fit_a_hundred_columns(capsys):
    assert main(["experiments", "--trials", "20"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(len(line) for line in lines) <= 100


def test_help_lists_the_experiments_one_per_line(capsys):
    with pytest.raises(SystemExit):
        main(["experiments", "--help"])
    out = capsys.readouterr().out
    listed = out.split("\nexperiments:\n", 1)[1].split("\n\nexamples:\n")[0].splitlines()
    assert [line.split()[0] for line in listed] == list(EXPERIMENTS)


def test_out_says_which_experiments_have_no_plot(tmp_path, capsys):
    assert main(["experiments", "gather", "--out", str(tmp_path)]) == 0
    assert "no plot for gather: " in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_json_is_strict(monkeypatch, capsys):
    monkeypatch.setattr(Report, "to_dict", lambda self: {"x": float("nan")})
    assert main(["experiments", "partial", "--json"]) == 2
    assert "cannot be written as JSON" in capsys.readouterr().err


# Output that cannot be written: one line on stderr and exit 74, never 1 (a verdict) (T1's 4).

STREAM = Path(__file__).resolve().parents[2] / "data/streams/openai-chat/one_call.sse"


class _Full(io.StringIO):
    """A stdout on a full disk."""

    def write(self, text: str) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")


class _Gone(io.StringIO):
    def write(self, text: str) -> int:
        raise BrokenPipeError(errno.EPIPE, "Broken pipe")


@pytest.mark.parametrize("argv", [["assemble", str(STREAM)], ["assemble", str(STREAM), "--json"],
                                  ["experiments", "partial"], ["progress", "--json"]])
def test_a_full_stdout_is_one_line_and_exit_74(argv, monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdout", _Full())
    assert main(argv) == OUTPUT_FAILED == 74
    assert capsys.readouterr().err == (
        "keel-lab: error: cannot write the output: No space left on device\n")


class _Failing(io.StringIO):
    def __init__(self, exc: Exception) -> None:
        super().__init__()
        self.exc = exc

    def flush(self) -> None:  # what is printed fails only when it reaches the device
        raise self.exc


@pytest.mark.parametrize("exc", [OSError(errno.EIO, "Input/output error"),
                                 OSError(errno.EBADF, "Bad file descriptor"),
                                 OSError(errno.EDQUOT, "Disk quota exceeded"),
                                 ValueError("I/O operation on closed file.")])
def test_any_failure_to_write_stdout_is_exit_74(exc, monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdout", _Failing(exc))
    assert main(["assemble", str(STREAM)]) == 74
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("keel-lab: error: cannot write the output: ")


def test_a_closed_stdout_is_one_line_and_exit_74(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdout", None)
    assert main(["assemble", str(STREAM)]) == 74
    assert capsys.readouterr().err == (
        "keel-lab: error: cannot write the output: standard output is closed\n")


def test_a_closed_pipe_is_still_141(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdout", _Gone())
    assert main(["assemble", str(STREAM)]) == BROKEN_PIPE == 141
    assert capsys.readouterr().err == ""


def test_a_full_stderr_too_leaves_the_exit_code(monkeypatch):
    monkeypatch.setattr(sys, "stdout", _Full())
    monkeypatch.setattr(sys, "stderr", _Full())
    assert main(["assemble", str(STREAM)]) == 74


def test_a_commands_own_file_error_is_not_an_output_error(tmp_path, capsys):
    assert main(["assemble", str(tmp_path / "missing.sse")]) == 2
    assert "cannot write the output" not in capsys.readouterr().err


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize(("argv", "redirect"), [
    (["assemble", str(STREAM)], ">/dev/full"),
    (["validate", "HISTORY"], ">/dev/full"),
    (["assemble", str(STREAM)], ">&-"),
    (["experiments", "partial", "--json"], ">&-"),
])
def test_the_installed_command_on_a_full_or_closed_stdout(argv, redirect, tmp_path):
    history = tmp_path / "history.json"
    history.write_text('[{"role": "user", "content": "hi"}]')
    argv = [str(history) if a == "HISTORY" else a for a in argv]
    script = Path(sys.executable).parent / "keel-lab"
    shell = f"'{script}' {' '.join(argv)} {redirect}; echo $? >&2"
    done = subprocess.run(["bash", "-c", shell], capture_output=True, text=True, check=True)
    *lines, code = done.stderr.splitlines()
    assert code == "74" and len(lines) == 1, done.stderr
    assert lines[0].startswith("keel-lab: error: cannot write the output: ")
