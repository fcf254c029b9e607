"""The entry object: ``MemoryStore(root)``."""

from __future__ import annotations

import datetime as _dt
import os
import threading
import warnings
from pathlib import Path
from typing import Any, TypeGuard

from agentmem_nb.errors import InvalidIdentifier, MemoryDataWarning
from agentmem_nb.identifiers import check_user_id
from agentmem_nb.errors import InvalidArgument
from agentmem_nb.store.facts import MergePolicy
from agentmem_nb.store.jsonl import Durability
from agentmem_nb.store.user import UserMemory
from agentmem_nb.timeutil import Clock, resolve_zone, system_clock

__all__ = ["MemoryStore", "is_database_url"]


def is_database_url(location: object) -> TypeGuard[str]:
    """Whether a store location names a PostgreSQL database (``postgresql://…``, ``postgres://…``) rather than a
    memory folder (the one rule, for ``MemoryStore`` and the command line)."""
    return isinstance(location, str) and location.lower().startswith(("postgresql://", "postgres://"))


class MemoryStore:
    """A folder of users' memories: ``{root}/{user_id}/...`` (the layout is in the README, "Memory layout").

    Args:
        root: the memory folder (created on first write).
        zone: IANA zone name or tzinfo that decides day files and reads naive legacy timestamps; ``None`` means the
            machine's local zone.
        clock: zero-argument callable giving the current aware time (inject a fixed clock in tests).
        durability: ``"flush"`` (default) or ``"fsync"`` — see :data:`~agentmem_nb.store.jsonl.Durability`.
        fact_policy: how a new value of a single-valued fact is merged (``"supersede"``, ``"review"`` or
            ``"latest"``; see :mod:`agentmem_nb.store.facts`).

    >>> # store = MemoryStore("memory", zone="Asia/Shanghai")
    >>> # store.user("alice").append("s1", "user", "hello")

    Given a PostgreSQL URL instead of a folder (``MemoryStore("postgresql://user:password@host/db")``) it opens the
    PostgreSQL backend, :class:`~agentmem_nb.store.postgres.PostgresStore`, with the same API (the store contract);
    that needs the ``postgres`` extra, and ``durability`` does not apply (the server decides).
    """

    def __new__(cls, root: str | os.PathLike[str] = "", *args: Any, **kwargs: Any) -> MemoryStore:
        if is_database_url(root):
            from agentmem_nb.store.postgres import PostgresStore  # imported only here: psycopg is an optional extra

            kwargs.pop("durability", None)
            # ignore: the database store is no MemoryStore subclass (it shares the contract, not the files'
            # machinery), and returning it from __new__ is what makes MemoryStore(url) the one obvious entry.
            return PostgresStore(root, *args, **kwargs)  # type: ignore[return-value]
        return super().__new__(cls)

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        zone: str | _dt.tzinfo | None = None,
        clock: Clock = system_clock,
        durability: Durability = "flush",
        fact_policy: MergePolicy = "supersede",
    ) -> None:
        if fact_policy not in ("supersede", "review", "latest"):
            raise InvalidArgument(f"fact_policy {fact_policy!r}: use 'supersede', 'review' or 'latest'")
        self.root = Path(root)
        self.zone = resolve_zone(zone)
        self.clock = clock
        self.durability: Durability = durability
        self.fact_policy: MergePolicy = fact_policy
        self._users: dict[str, UserMemory] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"MemoryStore(root={str(self.root)!r}, zone={self.zone!s}, durability={self.durability!r})"

    def user(self, user_id: str) -> UserMemory:
        """The memory of ``user_id`` (validated; the same object on every call)."""
        user_id = check_user_id(user_id)
        with self._lock:
            found = self._users.get(user_id)
            if found is None:
                found = self._users[user_id] = UserMemory(self, user_id)
            return found

    __getitem__ = user

    def users(self) -> list[str]:
        """User ids that have a folder under ``root``.

        Only real folders count: a link is not a user folder (the store never opens one; ``user(id).problems()``
        reports it). A folder whose name is not a valid user id (see :mod:`agentmem_nb.identifiers`; e.g. a
        decomposed "é" made by another program) cannot be opened, so it is not listed, but it is named in a
        :class:`~agentmem_nb.errors.MemoryDataWarning` rather than left out in silence. Hidden folders (``.git``,
        ``.ipynb_checkpoints``) are no one's memory and are passed over quietly.
        """
        try:
            with os.scandir(self.root) as listing:
                names = sorted(entry.name for entry in listing if entry.is_dir(follow_symlinks=False))
        except FileNotFoundError:
            return []
        out = []
        refused = []
        for name in names:
            if name.startswith("."):
                continue
            try:
                out.append(check_user_id(name))
            except InvalidIdentifier as exc:
                refused.append(str(exc))
        if refused:
            warnings.warn(MemoryDataWarning(
                f"{self.root}: {len(refused)} folder(s) not listed as users, their names are not valid user ids "
                "(rename them to open them): " + " | ".join(refused[:5]) + (" ..." if len(refused) > 5 else "")
            ), stacklevel=2)
        return out
