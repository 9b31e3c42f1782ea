"""The learner's JupyterLab (keel_course/lab.py) without starting it: what it leaves out, found in
this venv's own configuration, and that it leaves that configuration as it was. The server started
for real: test_workspace.py (through `make lab`) and test_live_lab.py (in a browser)."""

from __future__ import annotations

import json
import os
import sys

import pytest
from jupyter_core.paths import jupyter_config_path
from jupyter_server.extension.config import ExtensionConfigManager
from jupyterlab_server.config import get_page_config

from keel_course import lab

pytestmark = pytest.mark.lab_wide


def enabled_server_extensions(env: dict[str, str]) -> dict[str, bool]:
    """The server extensions a Jupyter server started with `env` would load."""
    saved = os.environ.get("JUPYTER_CONFIG_PATH")
    os.environ["JUPYTER_CONFIG_PATH"] = env.get("JUPYTER_CONFIG_PATH", "")
    try:
        found = dict(ExtensionConfigManager(read_config_path=jupyter_config_path())
                     .get_jpserver_extensions())
        for path in reversed(jupyter_config_path()):  # the files ServerApp reads, first wins
            file = os.path.join(path, "jupyter_server_config.json")
            if os.path.isfile(file):
                with open(file) as f:
                    found.update(json.load(f).get("ServerApp", {}).get("jpserver_extensions", {}))
        return found
    finally:
        if saved is None:
            del os.environ["JUPYTER_CONFIG_PATH"]
        else:
            os.environ["JUPYTER_CONFIG_PATH"] = saved


def test_the_instructors_extensions_are_found_in_this_venv():
    config = lab.learner_config()
    assert config.server_extensions  # nbgrader is installed for instructors (requirements.txt)
    assert all(m.startswith("nbgrader.") for m in config.server_extensions)
    assert config.lab_extensions == ("@jupyter/nbgrader", lab.ANNOUNCEMENTS)


def test_the_private_folder_switches_them_off_for_its_server_only(tmp_path, monkeypatch):
    monkeypatch.delenv("JUPYTER_CONFIG_PATH", raising=False)
    config = lab.learner_config()
    config.write(tmp_path)
    learner = enabled_server_extensions(lab.environment(tmp_path, {}))
    assert {m: learner[m] for m in config.server_extensions} == \
        dict.fromkeys(config.server_extensions, False)
    assert learner["jupyterlab"] is True
    instructor = enabled_server_extensions({})  # the venv's own configuration, unchanged
    assert {m: instructor[m] for m in config.server_extensions} == \
        dict.fromkeys(config.server_extensions, True)
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", str(tmp_path))
    page = get_page_config([], logger=None)
    assert set(config.lab_extensions) <= set(page["disabledExtensions"])
    server = json.loads((tmp_path / "jupyter_server_config.json").read_text())
    assert server["LabApp"] == {"news_url": None, "check_for_updates_class":
                                "jupyterlab.handlers.announcements.NeverCheckForUpdate"}


def test_the_private_folder_goes_first_and_keeps_the_path_given():
    assert lab.environment(lab.Path("/p"), {"HOME": "/h"}) == {
        "HOME": "/h", "JUPYTER_CONFIG_PATH": "/p"}
    assert lab.environment(lab.Path("/p"), {"JUPYTER_CONFIG_PATH": "/a"})[
        "JUPYTER_CONFIG_PATH"] == os.pathsep.join(["/p", "/a"])


def test_the_command_serves_the_folder_on_localhost_without_a_browser():
    command = lab.command(lab.Path("workspace"), ["--port=8890"])
    assert command[:6] == [sys.executable, "-m", "jupyterlab", "--notebook-dir=workspace",
                           "--no-browser", "--ip=127.0.0.1"]
    assert ("--allow-root" in command) == (os.geteuid() == 0)
    assert command[-1] == "--port=8890"


def test_a_missing_folder_is_one_line(tmp_path, capsys):
    assert lab.main([str(tmp_path / "none"), "--port=8890"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (f"make lab: {tmp_path / 'none'} is not a folder: `make lab` makes the "
                   "learner's copy first\n")
