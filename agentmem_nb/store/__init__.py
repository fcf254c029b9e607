"""The memory store: plain files a person can read, grep and diff.

``MemoryStore(root).user(user_id)`` gives a :class:`UserMemory` with its sessions, days, long-term memory,
conversation list and dialogue log. This package imports neither pandas, ipywidgets nor langchain.
"""

from agentmem_nb.store.conversations import Conversation, Conversations
from agentmem_nb.store.dialogue_log import DialogueEntry, DialogueLog
from agentmem_nb.store.facts import Fact, FactKey, FactSource, FactsLayer, Statement
from agentmem_nb.store.jsonl import Durability, IOStats, JsonlFile, LineBlock, RawLines
from agentmem_nb.store.scan import Change, Cursor, Scan
from agentmem_nb.store.layer import MAX_SEARCH_LIMIT, MAX_WINDOW_SIDE, MessageFile, Window
from agentmem_nb.store.longterm import LongTermMemory, MemoryHistory, MemorySnapshot, MemoryVersion
from agentmem_nb.store.memory_store import MemoryStore
from agentmem_nb.store.problems import Problem, ProblemKind
from agentmem_nb.store.user import Appended, UserMemory

__all__ = [
    "MemoryStore",
    "UserMemory",
    "Appended",
    "MessageFile",
    "Window",
    "Cursor",
    "Change",
    "Scan",
    "LineBlock",
    "RawLines",
    "JsonlFile",
    "IOStats",
    "Durability",
    "LongTermMemory",
    "MemoryVersion",
    "MemoryHistory",
    "MemorySnapshot",
    "Conversations",
    "Conversation",
    "DialogueLog",
    "DialogueEntry",
    "FactsLayer",
    "Fact",
    "FactKey",
    "FactSource",
    "Statement",
    "Problem",
    "ProblemKind",
    "MAX_WINDOW_SIDE",
    "MAX_SEARCH_LIMIT",
]
