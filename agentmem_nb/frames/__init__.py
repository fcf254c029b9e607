"""Every layer of a user's memory as a pandas DataFrame — plain functions, no widgets.

::

    from agentmem_nb import MemoryStore
    from agentmem_nb import frames

    mem = MemoryStore("memory").user("alice")
    frames.session_messages(mem)                       # every thread, ordered by time
    frames.session_messages(mem, "s1", role="user", keyword="lyon")
    frames.daily_messages(mem, ("2026-04-01", "2026-04-08"))
    frames.tool_calls(mem, tools=["search_session"], keyword="job", start="2026-04-08")
    frames.long_term(mem), frames.long_term_history(mem), frames.conversations(mem)
    frames.dialogue_log(mem), frames.problems(mem)
    frames.facts(mem), frames.facts(mem, current=True), frames.facts(mem, key="user.lives_in")

A LangGraph agent's memory reads the same way (``frames.langgraph``): a checkpointer in place of ``mem``
(``frames.session_messages(checkpointer, THREAD_ID)``, ``frames.tool_calls(checkpointer, session=THREAD_ID)``),
``frames.threads(checkpointer)``, ``frames.checkpoint_history(checkpointer, THREAD_ID)`` and
``frames.store_items(store, namespace_prefix=(...))`` for any LangGraph ``BaseStore``.

Datetime columns are timezone-aware, in the store's zone (the machine's local zone when the store has none). Text
columns have pandas' ``"str"`` dtype; one that holds a lone surrogate (a JSON escape such as ``\\ud800`` the store kept)
is stored by Python instead of pyarrow, so the text is never dropped or altered (see ``_text``). Rows
are what the store reads — the same skipped lines, the same normalised legacy ids: every byte comes through the
store's scan (``MessageFile.line_blocks`` / ``raw_lines`` / ``scan``; no private store name is imported here). A large
clean file is read in columns by pyarrow (``_fast``, used only where the result is provably the same), anything else
in bulk through the store's line index (``_read``), so a million messages load in seconds. :class:`LayerFollower`
keeps frames up to date by asking the store's scan what was appended since its cursor. The store never imports this
package.
"""

from agentmem_nb.frames._read import ReadStats
from agentmem_nb.frames._time import TimeBound
from agentmem_nb.frames.documents import (
    CONVERSATION_COLUMNS,
    HISTORY_COLUMNS,
    LOG_COLUMNS,
    LONG_TERM_COLUMNS,
    PROBLEM_COLUMNS,
    conversations,
    dialogue_log,
    filter_log,
    long_term,
    long_term_history,
    problems,
)
from agentmem_nb.frames.facts import FACT_COLUMNS, facts, facts_frame
from agentmem_nb.frames.follow import LayerFollower
from agentmem_nb.frames.langgraph import (
    CHECKPOINT_COLUMNS,
    LANGGRAPH_MESSAGE_COLUMNS,
    LANGGRAPH_TOOL_COLUMNS,
    STORE_COLUMNS,
    checkpoint_history,
    store_items,
    store_namespaces,
    threads,
)
from agentmem_nb.frames.messages import (
    MESSAGE_COLUMNS,
    DayRange,
    contains_casefold,
    daily_messages,
    filter_messages,
    message_file_frame,
    messages_frame,
    session_messages,
    time_mask,
)
from agentmem_nb.frames.tools import TOOL_COLUMNS, ToolSource, filter_tool_calls, input_text, tool_calls

__all__ = [
    "facts",
    "facts_frame",
    "FACT_COLUMNS",
    "session_messages",
    "daily_messages",
    "message_file_frame",
    "messages_frame",
    "long_term",
    "long_term_history",
    "conversations",
    "dialogue_log",
    "tool_calls",
    "problems",
    "threads",
    "checkpoint_history",
    "store_items",
    "store_namespaces",
    "filter_messages",
    "filter_tool_calls",
    "filter_log",
    "input_text",
    "contains_casefold",
    "time_mask",
    "LayerFollower",
    "ReadStats",
    "TimeBound",
    "DayRange",
    "ToolSource",
    "MESSAGE_COLUMNS",
    "TOOL_COLUMNS",
    "LONG_TERM_COLUMNS",
    "HISTORY_COLUMNS",
    "CONVERSATION_COLUMNS",
    "LOG_COLUMNS",
    "PROBLEM_COLUMNS",
    "LANGGRAPH_MESSAGE_COLUMNS",
    "LANGGRAPH_TOOL_COLUMNS",
    "CHECKPOINT_COLUMNS",
    "STORE_COLUMNS",
]
