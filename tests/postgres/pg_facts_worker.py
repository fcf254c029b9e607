"""A fact writer process for tests/postgres/test_pg_facts.py: ``python pg_facts_worker.py URL NAME COUNT``.

It opens the store, prints ``ready``, waits for a line on stdin (every writer starts at once, with no sleep), then
records COUNT new values of ``user.lives_in`` (``NAME-i``, source ``NAME#i``) for user ``u`` and prints ``done``.
"""

from __future__ import annotations

import sys

from agentmem_nb import MemoryStore
from agentmem_nb.store import FactSource, Statement


def main() -> None:
    url, name, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    store = MemoryStore(url, zone="UTC")
    facts = store.user("u").facts
    facts.all()  # a connection is open before the start signal
    print("ready", flush=True)
    sys.stdin.readline()
    for i in range(1, count + 1):
        facts.record([Statement("user", "lives_in", f"{name}-{i}")], source=FactSource(name, i))
    print("done", flush=True)


if __name__ == "__main__":
    main()
