"""A writer process for the concurrency tests: ``python pg_worker.py URL NAME COUNT``.

It opens the store, prints ``ready``, waits for a line on stdin (so every writer starts at once, with no sleep), then
appends COUNT messages ``NAME-i`` to user ``u``, session ``s1``, day 2026-04-08, and prints ``done``.
"""

from __future__ import annotations

import sys

from agentmem_nb import MemoryStore


def main() -> None:
    url, name, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    store = MemoryStore(url, zone="UTC")
    user = store.user("u")
    user.session("s1").tail(1)  # a connection is open before the start signal
    print("ready", flush=True)
    sys.stdin.readline()
    for i in range(count):
        user.append("s1", "user", f"{name}-{i}", day="2026-04-08")
    print("done", flush=True)


if __name__ == "__main__":
    main()
