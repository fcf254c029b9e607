"""agentmem_nb — see what an agent remembered, why it found it, and what it did with it.

The store is importable without the heavy dependencies::

    from agentmem_nb import MemoryStore
    mem = MemoryStore("memory").user("alice")
"""

from agentmem_nb.errors import (
    AgentMemError,
    AgentMemWarning,
    ConfigError,
    InvalidArgument,
    InvalidIdentifier,
    MemoryDataWarning,
    SessionBusy,
    StoreError,
    UndecodableMemoryFile,
    UnsafeFileError,
    VersionConflict,
)
from agentmem_nb.items import ItemKey
from agentmem_nb.messages import Message, ToolCall
from agentmem_nb.store import MemoryStore, Problem, ProblemKind, UserMemory, Window

__version__ = "0.1.0"

__all__ = [
    "MemoryStore",
    "UserMemory",
    "Message",
    "ToolCall",
    "ItemKey",
    "Window",
    "Problem",
    "ProblemKind",
    "AgentMemError",
    "InvalidIdentifier",
    "InvalidArgument",
    "StoreError",
    "UnsafeFileError",
    "UndecodableMemoryFile",
    "VersionConflict",
    "ConfigError",
    "SessionBusy",
    "AgentMemWarning",
    "MemoryDataWarning",
]
