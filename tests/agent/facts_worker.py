"""A process that answers one turn and is then killed before its facts are extracted (tests/agent/test_agent_facts.py).

Usage: python facts_worker.py ROOT USER SESSION TEXT — prints "turned" once the turn has returned, then waits for
the parent to kill it; its extractor never returns, so the extraction stays queued on disk.
"""

from __future__ import annotations

import sys
import threading

from agentmem_nb import MemoryStore
from agentmem_nb.agent import ChatService, OfflineChatModel


class NeverReturns:
    name = "never"

    def extract(self, text: str, *, last_key: object = None) -> list[object]:
        threading.Event().wait()  # the worker is stuck here when the process is killed
        return []


if __name__ == "__main__":
    root, user, session, text = sys.argv[1:5]
    svc = ChatService(MemoryStore(root), model=OfflineChatModel(), fact_extractor=NeverReturns())  # type: ignore[arg-type]
    svc.turn(user, session, text)
    print("turned", flush=True)
    sys.stdin.read()  # until killed
