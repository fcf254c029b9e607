"""A separate process that writes to a memory store, for the concurrency and crash tests.

Usage (run by the tests, not by hand)::

    store_worker.py append ROOT USER SESSION COUNT TAG [warm|cold]   COUNT messages "TAG:i"
    store_worker.py notes  ROOT USER COUNT TAG                       COUNT long-term notes "TAG note i"
    store_worker.py crash  ROOT USER SESSION SIZE                    append forever, SIZE-character contents

Each prints ``ready`` once set up and then waits for one line on stdin, so the tests can start all workers at the
same moment. ``crash`` prints every acknowledged ``message_id`` (flushed) right after ``append`` returns.
"""

from __future__ import annotations

import datetime as _dt
import sys

from agentmem_nb import MemoryStore

# A fixed instant: the day file must not depend on when the test runs (midnight in Asia/Shanghai would split it).
FIXED = _dt.datetime(2026, 4, 8, 12, 0, tzinfo=_dt.timezone(_dt.timedelta(hours=8)))


def _store(root: str) -> MemoryStore:
    return MemoryStore(root, zone="Asia/Shanghai", clock=lambda: FIXED)


def _wait_for_go() -> None:
    print("ready", flush=True)
    sys.stdin.readline()


def main(argv: list[str]) -> int:
    command = argv[0]
    if command == "append":
        root, user, session, count, tag = argv[1:6]
        mode = argv[6] if len(argv) > 6 else "cold"
        mem = _store(root).user(user)
        if mode == "warm":
            len(mem.session(session))  # index the file first: appends then take the warm path
        _wait_for_go()
        for i in range(int(count)):
            mem.append(session, "user", f"{tag}:{i}")
        print("done", flush=True)
    elif command == "notes":
        root, user, count, tag = argv[1:5]
        long_term = _store(root).user(user).long_term
        _wait_for_go()
        for i in range(int(count)):
            long_term.add_note(f"{tag} note {i}")
        print("done", flush=True)
    elif command == "crash":
        root, user, session, size = argv[1:5]
        mem = _store(root).user(user)
        # Index both files first: warm appends spend their time writing, so a kill lands mid-write more often.
        len(mem.session(session))
        len(mem.daily(FIXED.date().isoformat()))
        body = "长" * int(size)
        _wait_for_go()
        i = 0
        while True:
            written = mem.append(session, "user", f"{i}:{body}")
            sys.stdout.write(f"{written.session.message_id}\n")
            sys.stdout.flush()
            i += 1
    else:
        print(f"unknown command {command!r}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
