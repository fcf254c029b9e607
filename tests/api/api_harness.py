"""Helpers of the API tests (a module of its own: test modules import it by this unique name, never as
``conftest``, which names a different file in every test folder)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[2]
ENV_NAMES = ("AGENTMEM_API_KEY", "AGENTMEM_MODEL", "AGENTMEM_BASE_URL", "AGENTMEM_LLM_TIMEOUT",
             "AGENTMEM_LLM_MAX_RETRIES", "AGENTMEM_TURN_TIMEOUT", "AGENTMEM_CONFIG", "AGENTMEM_API_TOKEN",
             "OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL")
"""Variables that could hand a test a real key or a token from the machine."""


@dataclass
class CliServer:
    """``agentmem-nb serve`` running in a subprocess."""

    process: subprocess.Popen[str]
    url: str
    banner: str

    def stop(self) -> int:
        """Ctrl-C (SIGINT): uvicorn finishes open requests, then the command exits with 130."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
        try:
            return self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait(timeout=10)


def start_cli_server(root: Path, *extra: str, env: dict[str, str] | None = None) -> CliServer:
    """Start ``python -m agentmem_nb.cli --root ROOT serve --port 0 …`` and wait until its health answers."""
    environ = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    for name in ENV_NAMES:
        if name not in (env or {}):
            environ.pop(name, None)
    process = subprocess.Popen(
        [sys.executable, "-m", "agentmem_nb.cli", "--root", str(root), "serve", "--port", "0", "--quiet", *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environ, cwd=str(root.parent))
    assert process.stdout is not None
    banner = process.stdout.readline()  # printed once the socket is bound; empty if the process died
    if "serving http://" not in banner:
        process.kill()
        _, err = process.communicate(timeout=10)
        raise AssertionError(f"serve did not start: {banner!r} {err[-2000:]}")
    url = banner.split("serving ", 1)[1].split("/ ", 1)[0]
    server = CliServer(process, url, banner)
    with httpx.Client(base_url=url, timeout=30) as http:
        for _ in range(600):  # polls health (the socket is bound, so this waits on uvicorn's start, not on time)
            try:
                if http.get("/api/health").status_code == 200:
                    return server
            except httpx.TransportError:
                if process.poll() is not None:
                    break
    server.stop()
    raise AssertionError(f"serve at {url} never answered /api/health")


