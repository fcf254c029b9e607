"""The throwaway server the backend's tests run on: it starts (as root too), speaks SQL, has pg_trgm."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from pg_server import PgServer


def test_the_throwaway_server_answers_with_trigram_search(pg_url: str) -> None:
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)
        extensions = {row[0] for row in conn.execute("SELECT extname FROM pg_extension")}
        assert {"pg_trgm", "btree_gin"} <= extensions


def test_databases_are_fresh_and_separate(pg: PgServer) -> None:
    one, two = pg.new_database(), pg.new_database()
    assert one != two
    with psycopg.connect(one) as conn:
        conn.execute("CREATE TABLE only_here (x int)")
    with psycopg.connect(two) as conn:
        assert conn.execute("SELECT to_regclass('only_here')").fetchone() == (None,)


@pytest.mark.slow
@pytest.mark.parametrize(("ci", "outcome"), [("", "1 skipped"), ("1", "1 failed")])
def test_a_missing_server_skips_with_the_reason_and_is_an_error_under_ci(tmp_path: Path, ci: str,
                                                                         outcome: str) -> None:
    test = tmp_path / "test_needs_server.py"
    test.write_text("from pg_server import shared_server\n\ndef test_it():\n    shared_server()\n")
    tests = str(Path(__file__).resolve().parents[1])  # where pg_server.py is
    env = {**os.environ, "AGENTMEM_PG_BINDIR": str(tmp_path / "no-server-here"), "CI": ci,
           "PYTHONPATH": os.pathsep.join(p for p in (tests, os.environ.get("PYTHONPATH", "")) if p)}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "-p",
                           "no:langsmith_plugin", "-o", "addopts=", str(test)], env=env, cwd=tmp_path,
                          capture_output=True, text=True, check=False, timeout=300)
    assert outcome in done.stdout, done.stdout + done.stderr
    assert "no PostgreSQL server binaries" in done.stdout and "make test" in done.stdout
