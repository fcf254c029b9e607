"""``agentmem-nb lab`` run outside the checkout (as anyone who installed the package runs it): the packaged
notebooks are copied into a workspace and opened there; edits to the copy are never overwritten."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import tomllib
import urllib.error
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO)  # the package under test, whatever the current folder
    env["HOME"] = str(tmp_path / "home")
    env.pop("AGENTMEM_NB_HOME", None)
    for var, sub in (("JUPYTER_CONFIG_DIR", "config"), ("JUPYTER_DATA_DIR", "data"), ("JUPYTER_RUNTIME_DIR", "rt"),
                     ("JUPYTERLAB_SETTINGS_DIR", "settings"), ("JUPYTERLAB_WORKSPACES_DIR", "ws"),
                     ("IPYTHONDIR", "ipython")):
        env[var] = str(tmp_path / "jupyter" / sub)
    return env


def _lab(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(exist_ok=True)
    return subprocess.run([sys.executable, "-m", "agentmem_nb.cli", "lab", *args], cwd=elsewhere,
                          env=_env(tmp_path), capture_output=True, text=True, timeout=120)


def test_outside_the_checkout_it_opens_a_working_copy_of_the_packaged_notebooks(tmp_path: Path) -> None:
    done = _lab(tmp_path, "--dry-run", "--no-browser")
    assert done.returncode == 0, done.stderr
    workspace = tmp_path / "home" / "agentmem-nb"
    shipped = sorted(p.name for p in (REPO / "notebooks").glob("*.ipynb"))
    assert sorted(p.name for p in (workspace / "notebooks").glob("*.ipynb")) == shipped
    assert f"--ServerApp.root_dir={workspace}" in done.stdout
    assert "notebooks/01_quickstart.ipynb" in done.stdout

    edited = workspace / "notebooks" / "01_quickstart.ipynb"
    edited.write_text(edited.read_text(encoding="utf-8").replace("Quickstart", "My own notes"), encoding="utf-8")
    again = _lab(tmp_path, "--dry-run", "--no-browser")
    assert again.returncode == 0, again.stderr
    assert "My own notes" in edited.read_text(encoding="utf-8")  # the edit is kept
    assert "kept your copy of 01_quickstart.ipynb" in again.stdout


def test_an_unknown_notebook_is_named_with_the_ones_that_exist(tmp_path: Path) -> None:
    done = _lab(tmp_path, "notebooks/99_nope.ipynb", "--dry-run", "--workspace", str(tmp_path / "ws"))
    assert done.returncode != 0
    assert "99_nope.ipynb" in done.stderr and "notebooks/01_quickstart.ipynb" in done.stderr


def test_the_package_lists_every_subpackage_and_ships_the_notebooks() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    on_disk = {".".join(p.parent.relative_to(REPO).parts) for p in (REPO / "agentmem_nb").rglob("__init__.py")}
    assert set(config["packages"]) == on_disk | {"agentmem_nb.notebooks"}
    folder = REPO / config["package-dir"]["agentmem_nb.notebooks"]
    assert config["package-data"]["agentmem_nb.notebooks"] == ["*.ipynb"] and any(folder.glob("*.ipynb"))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.slow
def test_jupyterlab_really_serves_the_working_copy(tmp_path: Path) -> None:
    port = _free_port()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = _env(tmp_path)
    process = subprocess.Popen(
        [sys.executable, "-m", "agentmem_nb.cli", "lab", "--no-browser", "--port", str(port),
         "--workspace", str(tmp_path / "ws")],
        cwd=elsewhere, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                # the server's token, from the file it writes in its (private) runtime folder
                info = next(Path(env["JUPYTER_RUNTIME_DIR"]).glob("jpserver-*.json"), None)
                token = json.loads(info.read_text(encoding="utf-8"))["token"] if info is not None else ""
                url = f"http://127.0.0.1:{port}/api/contents/notebooks/01_quickstart.ipynb?token={token}"
                with urllib.request.urlopen(url, timeout=3) as response:  # noqa: S310 - 127.0.0.1 only
                    body = json.loads(response.read())
                break
            except (OSError, urllib.error.URLError):
                assert process.poll() is None, "agentmem-nb lab exited"
                assert time.monotonic() < deadline, "JupyterLab did not answer"
                time.sleep(0.5)  # polling a server that is starting, not synchronising two threads
        assert body["type"] == "notebook" and body["content"]["cells"]
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)
