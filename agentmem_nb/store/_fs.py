"""File-system primitives: inter-process locks and atomic replacement.

Locks are POSIX ``flock`` locks taken on the data file itself (or on the user's directory for whole-file
documents), so no lock files litter a memory folder that people read and diff. ``flock`` locks belong to an open
file description: two threads that each open the file exclude each other just as two processes do.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["flocked", "directory_lock", "atomic_write", "fsync_directory"]


@contextmanager
def flocked(fd: int, *, exclusive: bool) -> Iterator[None]:
    """Hold a ``flock`` on ``fd`` for the duration of the block."""
    fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
    try:
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)


_held = threading.local()


@contextmanager
def directory_lock(directory: Path) -> Iterator[None]:
    """Serialise read-modify-write of documents in ``directory`` (memory.md, conversations.json) across processes
    and threads. Re-entrant within one thread (a second ``flock`` on a new descriptor would deadlock)."""
    directory.mkdir(parents=True, exist_ok=True)
    key = os.path.realpath(directory)
    held: set[str] = _held.__dict__.setdefault("paths", set())
    if key in held:
        yield
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        with flocked(fd, exclusive=True):
            held.add(key)
            try:
                yield
            finally:
                held.discard(key)
    finally:
        os.close(fd)


def fsync_directory(directory: Path) -> None:
    """Make a rename in ``directory`` durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: Path, data: bytes, *, fsync: bool = True) -> None:
    """Replace ``path`` with ``data`` so that readers see the old or the new content, never a mix."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            if fsync:
                os.fsync(handle.fileno())
        os.replace(tmp_name, path)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
    if fsync:
        fsync_directory(path.parent)
