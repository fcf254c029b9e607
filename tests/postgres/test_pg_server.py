"""The throwaway server the backend's tests run on: it starts (as root too), speaks SQL, has pg_trgm."""

from __future__ import annotations

import psycopg
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
