"""``agentmem-nb lab``: open JupyterLab on the notebooks (the quickstart by default), from anywhere.

The notebooks ship with the package (``agentmem_nb.notebooks``; the repository keeps them in ``notebooks/``). Run
inside a checkout (a ``notebooks/`` folder here holds the notebook) or with ``--dir``, JupyterLab serves that
folder as before. Anywhere else, as anyone who installed the package runs it, it serves a working copy in a folder
of yours (``--workspace``, default ``$AGENTMEM_NB_HOME`` or ``~/agentmem-nb``): the notebooks are copied into its
``notebooks/`` folder the first time, and a copy that is already there is never overwritten (your edits and outputs
stay; a newer packaged version is named so you can compare).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

from agentmem_nb.cli import whole_number
from agentmem_nb.errors import AgentMemError

__all__ = ["add_parser", "packaged_notebooks", "prepare_workspace", "DEFAULT_NOTEBOOK"]

DEFAULT_NOTEBOOK = "notebooks/01_quickstart.ipynb"


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the ``lab`` subcommand."""
    p = sub.add_parser("lab", help="open JupyterLab on the notebooks (the quickstart by default), from any folder")
    p.add_argument("notebook", nargs="?", default=DEFAULT_NOTEBOOK,
                   help="notebook to open, relative to the folder served (default: %(default)s)")
    p.add_argument("--dir", default=None,
                   help="folder JupyterLab serves, as is (default: this folder when it has the notebook, else the "
                        "workspace)")
    p.add_argument("--workspace", default=None,
                   help="where the working copy of the packaged notebooks lives (default: $AGENTMEM_NB_HOME or "
                        "~/agentmem-nb)")
    p.add_argument("--port", type=whole_number(1, 65535), default=8888)
    p.add_argument("--no-browser", action="store_true", help="do not open a browser window")
    p.add_argument("--ip", default="127.0.0.1", help="address to listen on (default: %(default)s, this machine only)")
    p.add_argument("--dry-run", action="store_true",
                   help="prepare the workspace and print the command, without starting JupyterLab")
    p.set_defaults(func=_run)


def packaged_notebooks() -> Path:
    """The folder of the notebooks that came with the package (installed: ``agentmem_nb/notebooks``; a checkout
    run from source: its ``notebooks/``)."""
    import agentmem_nb

    package = Path(agentmem_nb.__file__).resolve().parent
    for candidate in (package / "notebooks", package.parent / "notebooks"):
        if any(candidate.glob("*.ipynb")):
            return candidate
    raise AgentMemError(f"the packaged notebooks are missing (looked in {str(package / 'notebooks')!r} and "
                        f"{str(package.parent / 'notebooks')!r}): reinstall agentmem_nb, or pass --dir FOLDER")


def prepare_workspace(workspace: Path, *, source: Path | None = None) -> list[str]:
    """Copy the packaged notebooks into ``workspace/notebooks`` where no copy exists yet; returns one line per
    notebook saying what happened (copied, kept as is, kept although the packaged one differs)."""
    source = source if source is not None else packaged_notebooks()
    target = workspace / "notebooks"
    try:
        target.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise AgentMemError(f"cannot create the notebook workspace {str(target)!r} ({exc.strerror}): pass "
                            "--workspace FOLDER (or set AGENTMEM_NB_HOME) to a folder you can write") from None
    report = []
    for notebook in sorted(source.glob("*.ipynb")):
        copy = target / notebook.name
        if not copy.exists():
            shutil.copyfile(notebook, copy)
            report.append(f"copied {notebook.name}")
        elif copy.read_bytes() == notebook.read_bytes():
            report.append(f"kept {notebook.name} (up to date)")
        else:
            # never overwrite: the copy holds the person's edits and outputs
            report.append(f"kept your copy of {notebook.name} (the packaged one differs: {notebook})")
    return report


def _workspace(args: argparse.Namespace) -> Path:
    chosen = args.workspace or os.environ.get("AGENTMEM_NB_HOME") or str(Path.home() / "agentmem-nb")
    return Path(chosen).expanduser().resolve()


def _run(args: argparse.Namespace) -> int:
    if args.dir is not None:
        root = Path(args.dir).resolve()
    elif (Path.cwd() / args.notebook).is_file():
        root = Path.cwd().resolve()  # a checkout (or a workspace) serves itself
    else:
        root = _workspace(args)
        for line in prepare_workspace(root):
            print(f"{root}: {line}", flush=True)
    notebook = root / args.notebook
    if not notebook.is_file():
        shipped = ", ".join(f"notebooks/{p.name}" for p in sorted(packaged_notebooks().glob("*.ipynb")))
        raise AgentMemError(f"notebook {str(notebook)!r} not found: name one relative to {str(root)!r} "
                            f"(the packaged ones: {shipped})")
    command = [
        sys.executable, "-m", "jupyter", "lab", f"--ServerApp.root_dir={root}", f"--port={args.port}",
        f"--ip={args.ip}", os.path.relpath(notebook, root),
    ]
    if args.no_browser:
        command.append("--no-browser")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")  # containers and CI machines often run as root; Jupyter refuses it otherwise
    print("starting:" if not args.dry_run else "would start:", " ".join(command), flush=True)
    if args.dry_run:
        return 0
    return subprocess.call(command, cwd=root)
