import json
import subprocess
import sys
from pathlib import Path

import pytest

from keel_lab.cli import main
from keel_lab.course.experiments import EXPERIMENTS, Report


def test_pairing_json_has_the_promised_fields(capsys):
    assert main(["experiments", "pairing", "--trials", "200", "--calls", "4", "--seed", "9",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["trials"], out["calls"], out["seed"]) == (200, 4, 9)
    assert set(out["strategies"]) == {"position_over_gather", "position_over_completion",
                                      "position_with_skip", "call_id"}
    for counts in out["strategies"].values():
        assert set(counts) == {"trials_with_mismatch", "mismatched_pairs"}
        assert all(isinstance(v, int) for v in counts.values())


def test_all_experiments_one_json_object_each(capsys):
    assert main(["experiments", "--trials", "20", "--json"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [json.loads(line)["experiment"] for line in lines] == [
        "pairing", "spread", "calls", "order", "exceptions", "gather", "streaming", "cancellation",
        "bad_json", "block_close", "partial", "outcomes", "quirks", "faults", "timeline",
        "scheduling", "screen", "rendering"]


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
    ([], "the following arguments are required: command"),
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
    listed = out.split("experiments:\n", 1)[1].splitlines()
    assert [line.split()[0] for line in listed] == list(EXPERIMENTS)


def test_out_says_which_experiments_have_no_plot(tmp_path, capsys):
    assert main(["experiments", "gather", "--out", str(tmp_path)]) == 0
    assert "no plot for gather: " in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_json_is_strict(monkeypatch, capsys):
    monkeypatch.setattr(Report, "to_dict", lambda self: {"x": float("nan")})
    assert main(["experiments", "partial", "--json"]) == 2
    assert "cannot be written as JSON" in capsys.readouterr().err
