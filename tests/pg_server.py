"""A private, throwaway PostgreSQL server for the tests: ``initdb`` + ``pg_ctl`` in a temporary folder.

Nothing is shared with a server of the machine: the cluster lives in a fresh folder under the system's temp dir,
listens on a free loopback port and on a unix socket in that folder, and is stopped (and its folder removed) when the
test process ends. ``scripts/install_postgres.sh`` (run by ``make test``) installs Debian's ``postgresql``.

Why it looks like this:

* **Root.** CI runs as root, and ``initdb``/``postgres`` refuse to run as root. Then the server runs as the
  unprivileged ``postgres`` user (created by Debian's package) through ``runuser``; its folder is made under the
  system's temp dir (pytest's ``tmp_path`` is private to root, 0700) and handed to that user.
* **Missing server.** Outside CI the tests that need it skip, naming what is missing and ``make test`` as the fix;
  under CI (``CI`` set) a missing server is an error, so it can never pass silently.
* **Speed.** ``fsync=off``: a throwaway cluster need not survive a power cut. One server per test process; a fresh
  database per store (``new_database``), copied from a template that holds the extensions.
* **Auth.** The superuser ``agentmem`` has a password over TCP (scram), so the tests see a real credential in a URL.
"""

from __future__ import annotations

import atexit
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import threading
from pathlib import Path

import pytest

SUPERUSER = "agentmem"
PASSWORD = "pw-Secr3t-9f2c1e7a"  # noqa: S105 - a throwaway test server's password; tests check it never leaks
SERVER_USER = "postgres"  # who runs the server when the tests run as root


def server_bindir() -> Path | None:
    """The folder with ``initdb``, ``pg_ctl`` and ``postgres`` (Debian puts them outside PATH), or ``None``."""
    override = os.environ.get("AGENTMEM_PG_BINDIR")
    if override:  # the one place to look (a test of the missing-server path points it at an empty folder)
        candidates = [override]
    else:
        candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(Path(p).parent.name)
                            if Path(p).parent.name.isdigit() else 0, reverse=True)
        found = shutil.which("initdb")
        if found:
            candidates.append(str(Path(found).resolve().parent))
    for folder in candidates:
        if folder and all((Path(folder) / tool).is_file() for tool in ("initdb", "pg_ctl", "postgres")):
            return Path(folder)
    return None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class PgServer:
    """One running throwaway cluster. ``url(db)`` gives a URL with the password; ``new_database()`` a fresh db."""

    def __init__(self, bindir: Path, *, durable: bool = False) -> None:
        """``durable``: keep PostgreSQL's default fsync/commit settings (benchmarks); off by default (tests)."""
        self.bindir = bindir
        self.folder = Path(tempfile.mkdtemp(prefix="agentmem-pg-"))
        self.data = self.folder / "data"
        self.port = _free_port()
        self._as: list[str] = []
        if os.geteuid() == 0:
            try:
                pwd.getpwnam(SERVER_USER)
            except KeyError:
                raise RuntimeError(f"running as root, and there is no {SERVER_USER!r} user to run the server as "
                                   "(initdb refuses root): run scripts/install_postgres.sh") from None
            self._as = ["runuser", "-u", SERVER_USER, "--"]
            os.chmod(self.folder, 0o755)
            shutil.chown(self.folder, SERVER_USER, SERVER_USER)
        self._count = 0
        self._lock = threading.Lock()
        pwfile = self.folder / "pw"
        pwfile.write_text(PASSWORD + "\n")
        if self._as:
            shutil.chown(pwfile, SERVER_USER, SERVER_USER)
        self._run("initdb", "-D", str(self.data), "-U", SUPERUSER, f"--pwfile={pwfile}", "--auth-local=trust",
                  "--auth-host=scram-sha-256", "--encoding=UTF8", "--locale=C.UTF-8", "--no-sync")
        pwfile.unlink()
        with open(self.data / "postgresql.conf", "a", encoding="utf-8") as conf:
            conf.write(f"\nport = {self.port}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = "
                       f"'{self.folder}'\nmax_connections = 300\nshared_buffers = 64MB\n")
            if not durable:
                conf.write("fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n")
        self.start()
        self._psql("template1", "CREATE EXTENSION IF NOT EXISTS pg_trgm; CREATE EXTENSION IF NOT EXISTS btree_gin;")

    def _run(self, tool: str, *args: str) -> str:
        done = subprocess.run([*self._as, str(self.bindir / tool), *args], capture_output=True, text=True,
                              cwd=self.folder, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{tool} {' '.join(args)} failed ({done.returncode}): {done.stderr.strip()}")
        return done.stdout

    def _psql(self, database: str, sql: str) -> str:
        psql = shutil.which("psql") or str(self.bindir / "psql")
        done = subprocess.run([psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", str(self.folder), "-p",
                               str(self.port), "-U", SUPERUSER, "-d", database, "-c", sql],
                              capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"psql {sql!r} failed: {done.stderr.strip()}")
        return done.stdout

    def start(self) -> None:
        """Start (or start again) the server and wait until it accepts connections."""
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.folder / "server.log"), "-w", "-t", "60", "start")

    def stop(self, mode: str = "fast") -> None:
        """Stop the server (``mode``: smart, fast or immediate); the data stays."""
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")

    def restart(self) -> None:
        """Stop and start again: every open connection is cut."""
        self.stop()
        self.start()

    def destroy(self) -> None:
        try:
            self.stop("immediate")
        except RuntimeError:  # already stopped (a test stopped it): only the folder is left to remove
            pass
        shutil.rmtree(self.folder, ignore_errors=True)

    def url(self, database: str = "postgres", *, password: str = PASSWORD) -> str:
        return f"postgresql://{SUPERUSER}:{password}@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        """A fresh, empty database (pg_trgm and btree_gin already there); returns its URL."""
        with self._lock:
            self._count += 1
            name = f"t{os.getpid()}_{self._count}"
        self._psql("postgres", f'CREATE DATABASE "{name}" TEMPLATE template1')
        return self.url(name)


_shared: PgServer | None = None
_shared_error: str | None = None
_shared_lock = threading.Lock()


def shared_server() -> PgServer:
    """The test process's server, started on first use; skips the test (fails under CI) when it cannot start."""
    global _shared, _shared_error
    with _shared_lock:
        if _shared is None and _shared_error is None:
            bindir = server_bindir()
            if bindir is None:
                _shared_error = ("no PostgreSQL server binaries (initdb, pg_ctl, postgres) under "
                                 "/usr/lib/postgresql/*/bin: run `make test` (scripts/install_postgres.sh installs "
                                 "Debian's postgresql) or set AGENTMEM_PG_BINDIR")
            else:
                try:
                    _shared = PgServer(bindir)
                    atexit.register(_shared.destroy)
                except (RuntimeError, OSError) as exc:  # reported as the skip reason (an error under CI) below
                    _shared_error = f"could not start a throwaway PostgreSQL server: {exc}"
        if _shared is None:
            if os.environ.get("CI"):
                pytest.fail(f"CI is set and {_shared_error}", pytrace=False)
            pytest.skip(str(_shared_error))
        try:
            import psycopg  # noqa: F401
        except ImportError:
            message = "psycopg is not installed: pip install -e '.[dev]' (or '.[postgres]')"
            if os.environ.get("CI"):
                pytest.fail(message, pytrace=False)
            pytest.skip(message)
        return _shared
