"""File-system primitives: safe opens inside a user folder, inter-process locks and atomic replacement.

**Nothing inside a user folder is opened through a link or as a special file.** A memory folder may come from
someone else (a git repository, an archive): a link ``sessions/s1.jsonl -> /elsewhere/notes.txt`` must not make an
append write there, ``memory.md -> /elsewhere/credentials`` must not put that file into a prompt, and a FIFO must not
make a read wait forever. Every open below the *base* folder (the store's root, which the caller chose and which may
itself be a link) goes through :func:`open_file` / :func:`open_in`, the one place this rule lives:

* each folder on the way is opened relative to the one before it with ``O_DIRECTORY | O_NOFOLLOW`` (``openat``), and
  the file itself relative to its folder with ``O_NOFOLLOW | O_NONBLOCK``, then checked with ``fstat`` to be a regular
  file before a single byte is read or written.

Why descriptors rather than ``lstat`` checks followed by an open by path: a check by path and the open that follows
are two look-ups, and a folder swapped for a link between them (by another process, or an archive being unpacked) is
followed by the second. Opening each step relative to the descriptor of the step before checks and uses *the same*
entry, so there is no window; ``O_NONBLOCK`` makes opening a FIFO return at once (a read-only open of a FIFO otherwise
waits for a writer), and the ``fstat`` on the open descriptor says what was really opened. It costs three or four
extra ``openat``/``close`` calls per open, nothing per byte; a file used again skips it (below). Errors name the
whole path, not just the component ``openat`` was given.

:func:`atomic_write` follows the same rule (its folder by descriptor, ``renameat`` within it, a link at the target
refused rather than replaced), keeps the target's permission bits, and holds a ``flock`` on its temporary file until
the rename so that :func:`temp_is_orphaned` can tell a killed writer's leftover from a write in progress.

A *hard* link is refused too (a regular file with ``st_nlink > 1``): its other name may be outside the folder
(``memory.md`` hard-linked to a credentials file is read as the file itself), and an append through it changes every
other name at once (a hard-link snapshot backup would be silently rewritten). A folder from a hard-link backup is
opened after copying it (``cp -r`` makes files of their own). The base folder is trusted as given.

**A file used again is not walked again.** A layer file is read or appended many times by one process (the agent's
every turn, a notebook's every window), and the walk above costs six system calls and more Python than the write it
guards (a warm two-file append measured 9,100/s with it, 11,200/s before the rule). :class:`KeptFile` keeps the
descriptor the safe open returned and, before each use, checks that the path still leads to that very file through
real folders: one ``lstat`` per step below the base (no step a link) and the file's own ``lstat`` giving the kept
identity (device, inode), a regular file with one name. Anything else (a link or another file swapped in, the file
gone, hard-linked, or moved out with a link left behind) closes the descriptor and takes the safe open, which
refuses what it must. The checks and the use are separate look-ups, but what is used is the descriptor the safe open
verified, so the worst a swap between them can do is what a swap just after a safe open does: let the file the store
itself opened be written once more. Kept descriptors are bounded (:data:`MAX_KEPT`, least recently used closed
first) and dropped in a forked child (a shared descriptor would share its ``flock``, see below).

Locks are POSIX ``flock`` locks taken on the data file itself (or on the user's directory for whole-file
documents), so no lock files litter a memory folder that people read and diff. ``flock`` locks belong to an open
file description: two threads that each open the file exclude each other just as two processes do.
"""

from __future__ import annotations

import errno
import fcntl
import os
import re
import secrets
import stat
import threading
import weakref
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agentmem_nb.errors import StoreError, UnsafeFileError

__all__ = [
    "flocked", "directory_lock", "atomic_write",
    "open_in", "open_folder_in", "open_file", "folder_fd", "read_file", "list_folder", "check_file",
    "describe_mode", "describe_entry", "refusal",
    "temp_target", "temp_is_orphaned", "KeptFile", "MAX_KEPT",
]

_FILE_FLAGS = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


@contextmanager
def flocked(fd: int, *, exclusive: bool) -> Iterator[None]:
    """Hold a ``flock`` on ``fd`` for the duration of the block."""
    fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
    try:
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)


# ---------------------------------------------------------------------------------------------- safe opens


def describe_mode(mode: int) -> str:
    """What kind of entry ``mode`` (from ``lstat``) describes, for messages: ``"a FIFO (named pipe)"``..."""
    kinds = [(stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
             (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISDIR, "a folder"),
             (stat.S_ISREG, "a regular file")]
    return next((what for test, what in kinds if test(mode)), f"an entry of unknown type {stat.S_IFMT(mode):o}")


def refusal(st: os.stat_result) -> str | None:
    """Why the entry ``st`` (from ``fstat`` or ``lstat``) is not opened, or ``None`` for a plain regular file: the one
    test every open, check and folder walk applies."""
    if not stat.S_ISREG(st.st_mode):
        return describe_mode(st.st_mode)
    if st.st_nlink > 1:
        return f"a file with {st.st_nlink} hard links (its content is shared with a name that may be outside the folder)"
    return None


def describe_entry(dfd: int, name: str) -> str:
    """Describe the entry ``name`` of folder ``dfd`` without following it (a link names its target)."""
    try:
        st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
    except OSError as exc:
        return f"not openable ({exc.strerror})"
    what = describe_mode(st.st_mode)
    if stat.S_ISLNK(st.st_mode):
        try:
            what += f" to {os.readlink(name, dir_fd=dfd)!r}"  # the link itself, never what it points to
        except OSError:  # gone or changed since the stat: the kind alone still says what was refused
            pass
    return what


def _renamed(exc: OSError, shown: Path) -> OSError:
    """``exc`` with the whole path as its filename (an ``openat`` error names only the last component)."""
    return type(exc)(exc.errno, exc.strerror, str(shown))


def open_in(dfd: int, name: str, flags: int, *, shown: Path, mode: int = 0o666) -> int:
    """Open the regular file ``name`` in the folder open as ``dfd``, never through a link and never blocking; the
    caller closes the descriptor. ``shown`` is the full path, for errors.

    Raises:
        UnsafeFileError: ``name`` is a link, a FIFO, a socket, a device or a folder (nothing was read or written).
        OSError: as ``os.open`` (``FileNotFoundError`` when it does not exist), naming ``shown``.
    """
    try:
        fd = os.open(name, flags | _FILE_FLAGS, mode, dir_fd=dfd)
    except OSError as exc:
        # ELOOP: a link met O_NOFOLLOW; EISDIR: a folder opened for writing; ENXIO: a FIFO opened for writing with
        # no reader, or a device without a driver. Say what is there rather than the bare errno.
        if exc.errno in (errno.ELOOP, errno.EISDIR, errno.ENXIO, errno.EOPNOTSUPP):
            raise UnsafeFileError(shown, describe_entry(dfd, name)) from None
        raise _renamed(exc, shown) from None
    try:
        # O_NONBLOCK stays set: it has no effect on a regular file (POSIX), the only kind let through here.
        refused = refusal(os.fstat(fd))
        if refused is not None:
            raise UnsafeFileError(shown, refused)
    except BaseException:
        os.close(fd)
        raise
    return fd


class _NotAFolder(Exception):
    """Internal: what stands where a folder was expected (translated to UnsafeFileError with the full path)."""

    def __init__(self, found: str) -> None:
        super().__init__(found)
        self.found = found


def _folder_in(dfd: int, name: str, create: bool) -> int:
    for attempt in (1, 2):
        try:
            return os.open(name, _DIR_FLAGS, dir_fd=dfd)
        except FileNotFoundError:
            if not create or attempt == 2:
                raise
            try:
                os.mkdir(name, 0o777, dir_fd=dfd)
            except FileExistsError:  # made by someone else meanwhile (or a dangling link: the retry refuses it)
                pass
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                raise _NotAFolder(describe_entry(dfd, name)) from None
            raise
    raise AssertionError("unreachable")  # pragma: no cover


def open_folder_in(dfd: int, name: str, *, shown: Path, create: bool = False) -> int:
    """Open the real folder ``name`` in the folder open as ``dfd`` (made first when ``create``), never through a
    link; the caller closes the descriptor. Raises :class:`~agentmem_nb.errors.UnsafeFileError` for anything that
    is not a real folder, ``FileNotFoundError`` (naming ``shown``) when missing."""
    try:
        return _folder_in(dfd, name, create)
    except _NotAFolder as exc:
        raise UnsafeFileError(shown, exc.found, expected="folder") from None
    except OSError as exc:
        raise _renamed(exc, shown) from None


def _parts_below(directory: str, base: str) -> list[str]:
    # Plain string work: this runs on every open, and pathlib's relative_to costs more than the system calls.
    # Both come from Path objects, so they are already normalised (no "//", no trailing "/", no "." parts).
    if directory == base:
        return []
    prefix = "" if base == "." else base if base.endswith("/") else base + "/"  # Path(".") / "a" is "a"
    if not directory.startswith(prefix) or (not prefix and directory.startswith("/")):
        raise StoreError(f"{directory} is not inside {base}: the store opens nothing outside its folder")
    parts = directory[len(prefix):].split("/")
    if ".." in parts or "." in parts or "" in parts:
        raise StoreError(f"{directory} leaves {base} through '..': the store opens nothing outside its folder")
    return parts


def _open_folder(directory: str, base: Path, create: bool) -> int:
    """A descriptor of ``directory`` (see :func:`folder_fd`); the caller closes it."""
    parts = _parts_below(directory, str(base))
    try:
        fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError as exc:
        if not create:
            raise _renamed(exc, base) from None
        base.mkdir(parents=True, exist_ok=True)
        fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        raise _renamed(exc, base) from None
    for i, part in enumerate(parts):
        try:
            inner = _folder_in(fd, part, create)
        except _NotAFolder as exc:
            raise UnsafeFileError(base.joinpath(*parts[: i + 1]), exc.found, expected="folder") from None
        except OSError as exc:
            raise _renamed(exc, base.joinpath(*parts[: i + 1])) from None
        finally:
            os.close(fd)
        fd = inner
    return fd


@contextmanager
def folder_fd(directory: Path, *, base: Path, create: bool = False) -> Iterator[int]:
    """A descriptor of ``directory``, every folder below ``base`` on the way opened without following a link
    (``base`` itself is the caller's choice and is opened normally). ``create`` makes missing folders.

    Raises ``FileNotFoundError`` (when not creating) or :class:`~agentmem_nb.errors.UnsafeFileError` naming the
    first step that is not a real folder."""
    fd = _open_folder(str(directory), base, create)
    try:
        yield fd
    finally:
        os.close(fd)


def open_file(path: Path, flags: int, *, base: Path, mode: int = 0o666, create_folders: bool = False) -> int:
    """Open the regular file ``path`` (below ``base``) under the rule of this module; the caller closes the
    descriptor. See :func:`open_in` for what is raised."""
    folder, _, name = str(path).rpartition("/")
    dfd = _open_folder(folder, base, create_folders)
    try:
        return open_in(dfd, name, flags, shown=path, mode=mode)
    finally:
        os.close(dfd)


def read_file(path: Path, *, base: Path) -> bytes:
    """The whole content of the regular file ``path`` (``FileNotFoundError`` when it does not exist)."""
    fd = open_file(path, os.O_RDONLY, base=base)
    try:
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def list_folder(directory: Path, *, base: Path) -> list[str]:
    """Names in ``directory`` (empty when it does not exist); refuses a folder that is a link."""
    try:
        with folder_fd(directory, base=base) as dfd:
            return os.listdir(dfd)
    except FileNotFoundError:
        return []


def check_file(path: Path, *, base: Path) -> None:
    """Raise :class:`~agentmem_nb.errors.UnsafeFileError` if ``path`` exists but would be refused by
    :func:`open_file` (or a folder on its way would be); a missing file is fine. Opens no file: a check before a
    write to several files, so that a refusal comes before the first of them is touched."""
    folder, _, name = str(path).rpartition("/")
    try:
        dfd = _open_folder(folder, base, False)
    except FileNotFoundError:
        return
    try:
        st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
        if (why := refusal(st)) is not None:
            raise UnsafeFileError(path, describe_entry(dfd, name) if stat.S_ISLNK(st.st_mode) else why)
    except FileNotFoundError:
        return
    finally:
        os.close(dfd)


# ---------------------------------------------------------------------------------------------- kept descriptors

MAX_KEPT = 64
"""The most descriptors kept open by :class:`KeptFile` in one process (a search over a year of day files touches
365 layers; the least recently used are closed, and walked again when used again)."""

_kept_lock = threading.Lock()  # guards _kept and every KeptFile's fd/busy (never held while waiting on anything)
_kept: OrderedDict[KeptFile, None] = OrderedDict()  # the kept files with an open descriptor, least recent first
_generation = 0  # bumped in a forked child: descriptors from before the fork are the parent's
_orphans: list[KeptFile] = []  # kept files whose owner was collected: closed at the next open (list.append is atomic,
# so a finalizer that runs in the middle of anything, even with _kept_lock held, only appends here)


def _after_fork_in_child() -> None:
    # The child closes its copies of the parent's kept descriptors: unused (their generation is the parent's), they
    # would keep every layer file the parent had open alive in each child for its whole life (up to MAX_KEPT each),
    # and keep the parent's open file descriptions, and so any flock the parent had taken on them, referenced until
    # the child exits. Closing a copy in the child leaves the parent's descriptor and its lock as they are. The lock
    # is made anew: a parent thread may have held it at the fork, and that thread does not exist here to release it.
    global _generation, _kept_lock
    _generation += 1
    _kept_lock = threading.Lock()
    inherited = [kept.fd for kept in _kept if kept.fd is not None]
    for kept in _kept:
        kept.fd = None
    _kept.clear()
    for fd in inherited:
        try:
            os.close(fd)
        except OSError:  # already closed by code that ran before this hook: nothing is left to release
            pass


os.register_at_fork(after_in_child=_after_fork_in_child)


class KeptFile:
    """The descriptor of one regular file below ``base``, opened by :func:`open_file` and kept for the next use,
    re-verified before each use by one ``lstat`` per step of its path (module docstring). Its owner serialises the
    uses (one at a time; the layer's lock) and never takes a ``flock`` twice on it.

    >>> # fd = kept.acquire(write=True)
    >>> # try: os.write(fd, line)
    >>> # finally: kept.release()
    """

    __slots__ = ("path", "base", "_steps", "fd", "_writable", "_identity", "_generation", "_busy",
                 "__weakref__")

    def __init__(self, path: Path, *, base: Path, owner: object) -> None:
        self.path = path
        self.base = base
        folder = str(path).rpartition("/")[0]
        try:
            parts = _parts_below(folder, str(base))
        except StoreError:  # not below base: nothing is kept, and every use raises it from open_file, as before
            parts = None
        # The folders on the way, each to be a real folder (None: never verified, always the safe open).
        self._steps = None if parts is None else [str(base.joinpath(*parts[: i + 1])) for i in range(len(parts))]
        self.fd: int | None = None
        self._writable = False
        self._identity: tuple[int, int] = (0, 0)
        self._generation = -1
        self._busy = False
        weakref.finalize(owner, _orphans.append, self)  # the owner gone, its descriptor is closed soon after

    def acquire(self, *, write: bool, create: bool = False, verified: bool = False) -> int:
        """The kept descriptor (``O_RDWR | O_APPEND`` when ``write``, made with its folders when ``create``) if the
        path still leads to it, else a fresh safe open, kept in its place; :meth:`release` it when done (``try`` /
        ``finally``: a plain pair, as this runs twice per append). ``verified``: the caller has just run
        :meth:`verify` (under the owner's lock, still held), so the checks are not repeated.

        Raises as :func:`open_file` (``FileNotFoundError`` when there is no file and not ``create``), released."""
        with _kept_lock:  # marked busy first: from here on no other thread closes it to make room
            self._busy = True
            fd = self.fd if self._generation == _generation and (self._writable or not write) else None
            if fd is not None:
                _kept.move_to_end(self)
        try:
            if fd is None or not (verified or self._still_there()):
                fd = self._reopen(write, create)
        except BaseException:
            self.release()
            raise
        return fd

    def release(self) -> None:
        """End the use begun by :meth:`acquire` (the descriptor stays open, kept)."""
        with _kept_lock:
            self._busy = False

    def verify(self) -> bool:
        """Whether a descriptor is kept and the path still leads to it (see :meth:`acquire`); ``False`` asks for a safe
        open or check. Caller holds the owner's lock."""
        with _kept_lock:
            kept = self.fd is not None and self._generation == _generation and self._writable
        return kept and self._still_there()

    def _still_there(self) -> bool:
        if self._steps is None:
            return False
        try:
            for step in self._steps:
                if not stat.S_ISDIR(os.lstat(step).st_mode):  # a link (or anything else) where a folder was
                    return False
            st = os.lstat(self.path)
        except OSError:
            return False
        return (st.st_dev, st.st_ino) == self._identity and refusal(st) is None

    def _reopen(self, write: bool, create: bool) -> int:
        self.close()
        flags = (os.O_RDWR | os.O_APPEND | (os.O_CREAT if create else 0)) if write else os.O_RDONLY
        fd = open_file(self.path, flags, base=self.base, mode=0o644, create_folders=create)
        try:
            st = os.fstat(fd)
        except BaseException:
            os.close(fd)
            raise
        with _kept_lock:
            while _orphans:
                _orphans.pop()._drop()
            self.fd, self._writable, self._identity = fd, write, (st.st_dev, st.st_ino)
            self._generation = _generation
            _kept[self] = None
            for other in [kept for kept in _kept if not kept._busy][: max(0, len(_kept) - MAX_KEPT)]:
                other._drop()
        return fd

    def _drop(self) -> None:
        """Close the descriptor (caller holds ``_kept_lock``; the file is not in use)."""
        _kept.pop(self, None)
        fd, self.fd = self.fd, None
        if fd is not None and self._generation == _generation:  # a descriptor from before a fork is the parent's
            os.close(fd)

    def close(self) -> None:
        """Close the kept descriptor, if any (the next use opens the file again). Not while in use."""
        with _kept_lock:
            self._drop()


# ---------------------------------------------------------------------------------------------- locks


_held = threading.local()


@contextmanager
def directory_lock(directory: Path, *, base: Path | None = None) -> Iterator[None]:
    """Serialise read-modify-write of documents in ``directory`` (memory.md, conversations.json) across processes
    and threads. Re-entrant within one thread (a second ``flock`` on a new descriptor would deadlock).

    ``directory`` is made if missing and opened without following a link below ``base`` (default: its parent)."""
    base = directory.parent if base is None else base
    key = os.path.realpath(directory)
    held: set[str] = _held.__dict__.setdefault("paths", set())
    if key in held:
        yield
        return
    with folder_fd(directory, base=base, create=True) as fd, flocked(fd, exclusive=True):
        held.add(key)
        try:
            yield
        finally:
            held.discard(key)


# ---------------------------------------------------------------------------------------------- atomic replacement

# ".{target}.{8 characters}.tmp": the shape tempfile.mkstemp gave earlier versions, so their leftovers are known too.
_TEMP_NAME = re.compile(r"\.(?P<target>.+)\.[a-z0-9_]{8}\.tmp")
_TEMP_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789_"


def temp_target(name: str) -> str | None:
    """The file a temporary file of :func:`atomic_write` was to replace (``None`` if ``name`` is not one)."""
    found = _TEMP_NAME.fullmatch(name)
    return found.group("target") if found else None


def temp_is_orphaned(fd: int) -> bool:
    """Whether the temporary file open as ``fd`` was left by a writer that is gone. :func:`atomic_write` holds a
    ``flock`` on its temporary file until the rename, and the kernel drops it when the process dies, so a lock we
    can take means nobody is writing it. (A writer between creating the file and locking it, a few microseconds,
    would be misreported: this only reports, it deletes nothing.)"""
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    fcntl.flock(fd, fcntl.LOCK_UN)
    return True


def _write_error(path: Path, exc: OSError, doing: str) -> StoreError:
    fix = {errno.EACCES: "make the folder writable for this user", errno.EPERM: "make the folder writable",
           errno.EROFS: "the file system is read-only: open the store on a writable folder",
           errno.ENOSPC: "free some disk space", errno.EDQUOT: "free some space (disk quota exceeded)"}
    return StoreError(f"could not write {path}: {exc.strerror or exc} while {doing} in {path.parent}; "
                      f"{fix.get(exc.errno or 0, 'check the folder')} and try again (the file is unchanged)")


def atomic_write(path: Path, data: bytes | list[Any], *, fsync: bool = True, base: Path | None = None) -> None:
    """Replace ``path`` with ``data`` (bytes, or a list of buffers written one after the other) so that readers
    see the old or the new content, never a mix.

    ``path`` keeps its permission bits (a ``0664`` file stays ``0664``); a new file gets the mode a plain ``open``
    would give (``0666`` less the umask). Folders below ``base`` (default: the file's folder) are made if missing
    and never followed through a link; a link or special file at ``path`` is refused, not replaced. A failure
    leaves ``path`` as it was and raises :class:`~agentmem_nb.errors.StoreError` naming ``path``.
    """
    base = path.parent if base is None else base
    with folder_fd(path.parent, base=base, create=True) as dfd:
        try:
            st: os.stat_result | None = os.stat(path.name, dir_fd=dfd, follow_symlinks=False)
        except FileNotFoundError:
            st = None
        if st is not None and (why := refusal(st)) is not None:
            raise UnsafeFileError(path, describe_entry(dfd, path.name) if stat.S_ISLNK(st.st_mode) else why)
        tmp = f".{path.name}.{''.join(secrets.choice(_TEMP_ALPHABET) for _ in range(8))}.tmp"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _FILE_FLAGS, 0o666 if st is None else 0o600,
                         dir_fd=dfd)
        except OSError as exc:
            raise _write_error(path, exc, "creating a temporary file") from exc
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)  # marks the temporary file as in use (see temp_is_orphaned)
                if st is not None:
                    os.fchmod(fd, stat.S_IMODE(st.st_mode))
                for piece in data if isinstance(data, list) else [data]:  # pieces: a large file is never joined
                    view = memoryview(piece).cast("B")
                    while view:
                        view = view[os.write(fd, view):]
                if fsync:
                    os.fsync(fd)
                os.replace(tmp, path.name, src_dir_fd=dfd, dst_dir_fd=dfd)
            except OSError as exc:
                raise _write_error(path, exc, "writing it") from exc
            finally:
                os.close(fd)
        except BaseException:
            try:
                os.unlink(tmp, dir_fd=dfd)
            except FileNotFoundError:  # already renamed into place, or never made
                pass
            raise
        if fsync:
            os.fsync(dfd)
