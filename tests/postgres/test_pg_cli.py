"""The store commands on a database: ``agentmem-nb --root postgresql://… search / window / problems / users``."""

from __future__ import annotations

from pg_server import PASSWORD

from agentmem_nb import MemoryStore
from agentmem_nb.cli import main
from agentmem_nb.store.postgres import upgrade_database


def test_the_store_commands_read_a_database(pg_url: str, capsys) -> None:
    upgrade_database(pg_url)
    user = MemoryStore(pg_url, zone="UTC").user("alice")
    user.append("s1", "user", "I like green tea", day="2026-04-08")
    user.append("s1", "assistant", "noted", day="2026-04-08")
    base = ["--root", pg_url, "--zone", "UTC"]
    assert main([*base, "users"]) == 0
    assert capsys.readouterr().out.split()[0] == "alice"
    assert main([*base, "search", "--user", "alice", "--session", "s1", "TEA"]) == 0
    assert "#1" in capsys.readouterr().out
    assert main([*base, "window", "--user", "alice", "--session", "s1", "2", "--before", "1"]) == 0
    assert capsys.readouterr().out.count("#") == 2
    assert main([*base, "problems", "--user", "alice"]) == 0
    out = capsys.readouterr().out
    assert "no problems in postgresql://" in out and PASSWORD not in out
    assert main([*base, "search", "--user", "bob", "tea"]) == 2  # an unknown user is refused, the password unshown
    err = capsys.readouterr().err
    assert "no user 'bob'" in err and PASSWORD not in err
