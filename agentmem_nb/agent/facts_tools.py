"""The ``recall_facts`` tool: the user's structured facts that match a query, with their sources and history.

Built with the memory tools' own machinery (:class:`~agentmem_nb.agent.tools.MemoryTools`: the arguments as one
dict, checked by the same rules, an argument error answered as a message the model can read), and ranked by the
same :class:`~agentmem_nb.facts.rank.FactRanker` that chooses the facts of the context.
"""

from __future__ import annotations

from typing import Any

from langchain_core.tools import BaseTool

from agentmem_nb.agent.tools import MemoryTools, TurnScope, _BadArgument, _check_keys, _schema, _show
from agentmem_nb.facts.rank import FactRanker
from agentmem_nb.store import UserMemory

__all__ = ["recall_facts_tool", "recall_facts"]

RECALL_LIMIT = 10


def recall_facts(user: UserMemory, ranker: FactRanker, args: dict[str, Any], *,
                 scope: TurnScope | None = None) -> str:
    """``recall_facts(query)``: one line per matching fact (active or held for review), each followed by the
    values its key had before, oldest first."""
    _check_keys(args, ("query",), ("query",))
    query = args["query"]
    if not isinstance(query, str) or not query.strip():
        raise _BadArgument(f"query must be some words about what to recall, got {_show(query)}.")
    chosen = ranker.select(user.facts, query, budget=RECALL_LIMIT, profile=0)
    if not chosen:
        return "No stored fact matches that; try search_daily for what was said."
    lines = []
    for selected in chosen:
        fact = selected.fact
        lines.append(f"fact {fact.fact_id}: {selected.line()}")
        before = [f for f in user.facts.history(fact.subject, fact.attribute)
                  if f.status == "superseded" and f.fact_id != fact.fact_id
                  and (f.valid_to is None or fact.valid_from is None or f.valid_to <= fact.valid_from)]
        for old in before[-3:]:
            until = old.valid_to.date().isoformat() if old.valid_to else "?"
            lines.append(f"  before: {old.value} (until {until}, {old.ended_by or 'ended'}, from {old.source or '?'})")
    return "\n".join(lines)


def recall_facts_tool(user: UserMemory, ranker: FactRanker) -> BaseTool:
    """The tool bound to ``user``."""

    def run(args: dict[str, Any], *, scope: TurnScope | None = None) -> str:
        return recall_facts(user, ranker, args, scope=scope)

    return MemoryTools._tool(
        "recall_facts", run,
        "Look up stored facts about the user or their people (where they live or work, names, birthdays, likes), "
        "with the message each came from and the values they replaced. Pass a few words, e.g. 'sister city'.",
        _schema({"query": {"type": "string", "description": "What to recall, in a few words."}}, ["query"]))
