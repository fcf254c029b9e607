"""The encoded body of ``GET /api/conversations/{id}/messages``, kept while its thread file is unchanged.

The original front end reloads a whole thread on every switch and every reload, and a 10,000-message thread costs the
server about 300 ms of CPU to read, convert and encode (``benchmarks/API.md``) — nearly all of it reading the file
again. The store already knows, for almost nothing, whether a file changed since a reader looked: its one change rule,
``layer.scan(since=cursor)`` (:mod:`agentmem_nb.store.scan`). So the body is kept with the cursor taken *before* the
read that made it, and served again while the scan says ``"unchanged"``; anything else (an append, a rewrite) reads
the thread again. A body is never staler than a fresh read would be: lines appended during the read are in the body
already, and the next scan from the earlier cursor sees them as appended and reads again.

Bounded: the :data:`MAX_THREADS` most recently served threads of at least :data:`MIN_MESSAGES` messages (a short thread
is cheap to read, and keeping it would only take memory).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable

from agentmem_nb.store import Cursor, MessageFile

__all__ = ["ThreadCache", "MAX_THREADS", "MIN_MESSAGES"]

MAX_THREADS = 16
MIN_MESSAGES = 500


class ThreadCache:
    """Encoded message lists by ``(user, session)``, valid while the thread file is unchanged."""

    def __init__(self, *, max_threads: int = MAX_THREADS, min_messages: int = MIN_MESSAGES) -> None:
        self.max_threads = max_threads
        self.min_messages = min_messages
        self._entries: OrderedDict[tuple[str, str], tuple[Cursor, bytes]] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        """Bodies served from the cache (what the tests count)."""

    def body(self, key: tuple[str, str], layer: MessageFile, encode: Callable[[MessageFile], tuple[int, bytes]]
             ) -> bytes:
        """The body for ``layer``: kept, or ``encode(layer)`` (which returns the message count and the body)."""
        with self._lock:
            kept = self._entries.get(key)
        if kept is not None:
            if layer.scan(kept[0]).change == "unchanged":
                with self._lock:
                    self.hits += 1
                    if key in self._entries:
                        self._entries.move_to_end(key)
                return kept[1]
        cursor = layer.scan().cursor  # taken before the read: see the module docstring
        count, body = encode(layer)
        with self._lock:
            if count >= self.min_messages:
                self._entries[key] = (cursor, body)
                self._entries.move_to_end(key)
                while len(self._entries) > self.max_threads:
                    self._entries.popitem(last=False)
            else:
                self._entries.pop(key, None)
        return body
