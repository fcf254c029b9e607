"""``agentmem-nb lab``: open JupyterLab on the notebooks (the quickstart by default)."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from agentmem_nb.cli import whole_number
from agentmem_nb.errors import AgentMemError

__all__ = ["add_parser"]


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the ``lab`` subcommand."""
    p = sub.add_parser("lab", help="open JupyterLab on the notebooks (the quickstart by default)")
    p.add_argument("notebook", nargs="?", default="notebooks/01_quickstart.ipynb",
                   help="notebook to open, relative to --dir (default: %(default)s)")
    p.add_argument("--dir", default=".", help="folder JupyterLab serves (default: the current folder)")
    p.add_argument("--port", type=whole_number(1, 65535), default=8888)
    p.add_argument("--no-browser", action="store_true", help="do not open a browser window")
    p.add_argument("--ip", default="127.0.0.1", help="address to listen on (default: %(default)s, this machine only)")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    root = Path(args.dir).resolve()
    notebook = root / args.notebook
    if not notebook.is_file():
        raise AgentMemError(f"notebook {str(notebook)!r} not found: run from the project folder or pass --dir")
    command = [
        sys.executable, "-m", "jupyter", "lab", f"--ServerApp.root_dir={root}", f"--port={args.port}",
        f"--ip={args.ip}", os.path.relpath(notebook, root),
    ]
    if args.no_browser:
        command.append("--no-browser")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")  # containers and CI machines often run as root; Jupyter refuses it otherwise
    print("starting:", " ".join(command), flush=True)
    return subprocess.call(command)
