"""The exceptions and warnings agentmem_nb raises.

::

    AgentMemError                  base of everything raised on purpose
    ├── InvalidIdentifier          (also a ValueError) a user_id / session_id / day that is not allowed
    ├── InvalidArgument            (also a ValueError) an option outside what the call accepts (a budget < 1, ...)
    ├── StoreError                 the files cannot be read or written as asked (permissions, unknown version, ...)
    │   ├── UndecodableMemoryFile  memory.md is not UTF-8: shown with replacement characters, never rewritten
    │   ├── VersionConflict        write(expected_version=N) found another version: re-read and try again
    │   └── UnsafeFileError        a link, FIFO, device... or a folder where a file belongs: never opened
    ├── ConfigError                config/llm.yaml or an environment override is malformed
    └── SessionBusy                (also a RuntimeError) another turn of the same (user, session) is running

    AgentMemWarning                base of warnings (the test-suite turns them into errors)
    └── MemoryDataWarning          bad lines were skipped or repaired while reading a layer; see ``UserMemory.problems()``

Every message names the offending value and says what to do about it.
"""

from __future__ import annotations

__all__ = [
    "AgentMemError",
    "InvalidIdentifier",
    "InvalidArgument",
    "SessionBusy",
    "StoreError",
    "ConfigError",
    "UnsafeFileError",
    "AgentMemWarning",
    "MemoryDataWarning",
    "UndecodableMemoryFile",
    "VersionConflict",
]


class AgentMemError(Exception):
    """Base class of every error agentmem_nb raises deliberately."""


class InvalidIdentifier(AgentMemError, ValueError):
    """An identifier that could escape ``memory/{user_id}/`` or is not of the documented form.

    Attributes:
        field: which identifier (``"user_id"``, ``"session_id"`` or ``"day"``).
        value: the rejected value, as given.
    """

    def __init__(self, field: str, value: object, rule: str) -> None:
        self.field = field
        self.value = value
        shown = repr(value)
        if len(shown) > 80:
            shown = shown[:60] + f"... ({len(str(value))} characters)"
        super().__init__(f"invalid {field} {shown}: {rule}")


class InvalidArgument(AgentMemError, ValueError):
    """An argument outside what the call accepts (an unknown mode, a budget below 1, an empty message, a file that is
    not what the call reads). A ``ValueError`` too, so code written against the standard exceptions still catches it;
    the message names the value and what to pass instead."""


class StoreError(AgentMemError):
    """The store could not read or write its files as asked."""


class UnsafeFileError(StoreError):
    """A file or folder inside a user folder that the store refuses to open: a symbolic link (it could lead out of
    the memory folder), a FIFO, socket or device (a read could block forever, a write could vanish), or an entry of
    the wrong kind (a folder where the store keeps a file, or the reverse).

    Attributes:
        path: the refused entry (the file itself, or the folder on its way that is not a real folder).
        found: what is there, e.g. ``"a symbolic link to '/elsewhere/notes.txt'"`` or ``"a FIFO (named pipe)"``.
    """

    def __init__(self, path: object, found: str, *, expected: str = "file") -> None:
        self.path = path
        self.found = found
        self.advice = (f"the store only opens real {expected}s inside a user folder (never through a link, never a "
                       f"special file), so nothing outside it is read or written; replace it with a regular {expected} "
                       "or move it out of the folder")
        super().__init__(f"{path} is {found}: {self.advice}")


class ConfigError(AgentMemError):
    """A configuration file or environment override is malformed."""


class AgentMemWarning(UserWarning):
    """Base class of agentmem_nb's warnings."""


class MemoryDataWarning(AgentMemWarning):
    """Some lines of a memory file were skipped, repaired or quarantined while reading it."""


class UndecodableMemoryFile(StoreError):
    """``memory.md`` is not valid UTF-8 (say, saved as cp1252 by an editor). The store shows it with replacement
    characters but never rewrites it, since the replacement would destroy the original bytes for good.

    Attributes:
        path: the file.
        offset: byte offset of the first byte that is not UTF-8.
    """

    def __init__(self, path: object, offset: int, reason: str) -> None:
        self.path = path
        self.offset = offset
        super().__init__(f"{path} is not valid UTF-8 ({reason} at byte {offset}), so it was left untouched: re-save "
                         "it as UTF-8 (e.g. `iconv -f cp1252 -t utf-8`, or 'Save with encoding: UTF-8' in an editor) "
                         "and try again")


class VersionConflict(StoreError):
    """``LongTermMemory.write(text, expected_version=N)`` found that another change came first.

    Attributes:
        path: the file.
        expected: the version the caller read.
        actual: the version the file is at now.
    """

    def __init__(self, path: object, expected: int, actual: int | None) -> None:
        self.path = path
        self.expected = expected
        self.actual = actual
        now = "a text no version records" if actual is None else f"version {actual}"
        super().__init__(f"{path} changed since version {expected} was read (it is now {now}); nothing was written: "
                         "read it again (LongTermMemory.current()) and redo the change, or use "
                         "LongTermMemory.edit(fn), which applies fn under the lock")


class SessionBusy(AgentMemError, RuntimeError):
    """A turn could not start: another turn of the same ``(user, session)`` holds it.

    Raised at once when waiting could never succeed (the holder is a stream paused in the calling thread, or a turn
    this thread is already running), else after ``lock_timeout`` seconds. The message says which and what to do.
    Nothing of the refused turn was written.
    """

    def __init__(self, message: str, *, user_id: str, session_id: str) -> None:
        super().__init__(message)
        self.user_id = user_id
        self.session_id = session_id
