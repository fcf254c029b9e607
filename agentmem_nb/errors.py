"""The exceptions and warnings agentmem_nb raises.

::

    AgentMemError                  base of everything raised on purpose
    ├── InvalidIdentifier          (also a ValueError) a user_id / session_id / day that is not allowed
    ├── StoreError                 the files cannot be read or written as asked (permissions, unknown version, ...)
    └── ConfigError                config/llm.yaml or an environment override is malformed

    AgentMemWarning                base of warnings (the test-suite turns them into errors)
    └── MemoryDataWarning          bad lines were skipped or repaired while reading a layer; see ``UserMemory.problems()``

Every message names the offending value and says what to do about it.
"""

from __future__ import annotations

__all__ = [
    "AgentMemError",
    "InvalidIdentifier",
    "StoreError",
    "ConfigError",
    "AgentMemWarning",
    "MemoryDataWarning",
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


class StoreError(AgentMemError):
    """The store could not read or write its files as asked."""


class ConfigError(AgentMemError):
    """A configuration file or environment override is malformed."""


class AgentMemWarning(UserWarning):
    """Base class of agentmem_nb's warnings."""


class MemoryDataWarning(AgentMemWarning):
    """Some lines of a memory file were skipped, repaired or quarantined while reading it."""
