"""Start JupyterLab on 127.0.0.1 for one test, isolated from the developer's own Jupyter set-up, and stop it by pid.

Everything Jupyter would read or write under ``~`` or ``sys.prefix`` is pointed into the test's tmp folder
(config, data, runtime, user settings, workspaces, app settings with the overrides), so the test neither depends on
nor changes the machine's Jupyter state. See RECIPES.md "JupyterLab in a real browser".
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["LabServer", "start_lab", "OVERRIDES"]

OVERRIDES = {
    # no news popup and no update check (both would reach the network), no autosave (the notebook is generated)
    "@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False},
    "@jupyterlab/docmanager-extension:plugin": {"autosave": False},
}


@dataclass
class LabServer:
    """A running ``jupyter lab``: its URL, its folders and its process."""

    url: str
    root_dir: Path
    log_path: Path
    process: subprocess.Popen[bytes]

    def get(self, path: str, *, timeout: float = 5.0) -> Any:
        with urllib.request.urlopen(self.url + path, timeout=timeout) as response:  # noqa: S310 - 127.0.0.1 only
            return json.loads(response.read().decode("utf-8"))

    def delete(self, path: str, *, timeout: float = 10.0) -> None:
        request = urllib.request.Request(self.url + path, method="DELETE")
        with urllib.request.urlopen(request, timeout=timeout):  # noqa: S310
            pass

    def wait_for_kernel(self, *, timeout: float = 60.0) -> dict[str, Any]:
        """Until a kernel has a browser connection and is idle.

        The UI shows "Idle" before the kernel can run anything, and Run All then silently runs nothing, so readiness
        is read from the server: ``connections >= 1`` and ``execution_state == "idle"``.
        """
        deadline = time.monotonic() + timeout
        seen: Any = None
        while time.monotonic() < deadline:
            self.check_alive()
            try:
                seen = self.get("/api/kernels")
            except urllib.error.HTTPError as exc:
                # seen once in ~20 runs: a 500 while the kernel was still being started; ask again
                seen = f"HTTP {exc.code} {exc.reason}"
                time.sleep(0.25)
                continue
            for kernel in seen:
                if kernel.get("connections", 0) >= 1 and kernel.get("execution_state") == "idle":
                    return kernel
            time.sleep(0.25)
        raise TimeoutError(f"no idle kernel with a connection after {timeout:.0f} s; /api/kernels said {seen!r}; "
                           f"server log: {self.log_path}")

    def check_alive(self) -> None:
        code = self.process.poll()
        if code is not None:
            raise RuntimeError(f"jupyter lab exited with code {code}; its log:\n{self.log_tail()}")

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
        except FileNotFoundError:
            return "(no log)"

    def stop(self) -> None:
        """Shut the kernels down through the API, then stop the server by its pid (SIGTERM, then SIGKILL)."""
        if self.process.poll() is None:
            try:
                for session in self.get("/api/sessions"):
                    self.delete(f"/api/sessions/{session['id']}")
                for kernel in self.get("/api/kernels"):
                    self.delete(f"/api/kernels/{kernel['id']}")
            except (OSError, urllib.error.URLError, ValueError):
                pass  # the server is going away anyway; its own shutdown also stops kernels
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_lab(base: Path, root_dir: Path, *, timeout: float = 60.0) -> LabServer:
    """Start ``jupyter lab`` from this venv serving ``root_dir``; private Jupyter folders live under ``base``."""
    settings = base / "app-settings"
    settings.mkdir(parents=True, exist_ok=True)
    (settings / "overrides.json").write_text(json.dumps(OVERRIDES, indent=2), encoding="utf-8")
    env = dict(os.environ)
    for var, sub in (("JUPYTER_CONFIG_DIR", "config"), ("JUPYTER_DATA_DIR", "data"),
                     ("JUPYTER_RUNTIME_DIR", "runtime"), ("JUPYTERLAB_SETTINGS_DIR", "user-settings"),
                     ("JUPYTERLAB_WORKSPACES_DIR", "workspaces"), ("IPYTHONDIR", "ipython")):
        (base / sub).mkdir(parents=True, exist_ok=True)
        env[var] = str(base / sub)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env.pop("JUPYTER_PATH", None)
    env.pop("JUPYTER_TOKEN", None)
    log_path = base / "jupyter-lab.log"
    port = _free_port()
    command = [
        sys.executable, "-m", "jupyterlab",
        "--no-browser", "--allow-root",
        "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
        "--IdentityProvider.token=", "--ServerApp.password=",
        f"--ServerApp.root_dir={root_dir}",
        f"--LabApp.app_settings_dir={settings}",
        "--LabApp.news_url=",
        "--LabApp.extension_manager=readonly",  # the default "pypi" manager may query PyPI
        "--LabApp.check_for_updates_class=jupyterlab.handlers.announcements.NeverCheckForUpdate",
    ]
    with open(log_path, "wb") as log:
        process = subprocess.Popen(command, cwd=root_dir, env=env, stdout=log, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL)
    server = LabServer(f"http://127.0.0.1:{port}", root_dir, log_path, process)
    deadline = time.monotonic() + timeout
    try:
        while True:
            server.check_alive()
            try:
                server.get("/api/status", timeout=2)
                return server
            except (OSError, urllib.error.URLError, ValueError):
                if time.monotonic() > deadline:
                    raise TimeoutError(f"jupyter lab did not answer /api/status within {timeout:.0f} s; "
                                       f"log:\n{server.log_tail()}") from None
                time.sleep(0.2)
    except BaseException:
        server.stop()
        raise
