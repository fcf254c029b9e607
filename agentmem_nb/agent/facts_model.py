"""The model extractor: facts read by the configured chat model through structured output.

Same :class:`~agentmem_nb.store.facts.Statement` values as the offline extractor, so the same events and the same
store decisions (supersede, conflict, idempotent replays). The model is asked for one ``record_facts`` call
(``with_structured_output(..., method="function_calling")``: tool calling is what OpenAI-compatible servers support
most widely); what it returns is checked item by item, and an item that is not a statement (no attribute, an unknown
``op``, a value that is not text) is dropped, never recorded. A failed call raises: the queue records the failure as
a failed turn's error is recorded (:mod:`agentmem_nb.agent.facts_queue`).
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage

from agentmem_nb.errors import InvalidArgument
from agentmem_nb.store.facts import FactKey, Statement

__all__ = ["ModelExtractor", "FACTS_SCHEMA", "EXTRACTION_PROMPT"]

FACTS_SCHEMA: dict[str, Any] = {
    "title": "record_facts",
    "description": "Record the durable facts the user states about themself or their people in one message.",
    "type": "object",
    "properties": {
        "facts": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "subject": {"type": "string", "description": "'user', or a relation: sister, mother, boss ..."},
                    "attribute": {"type": "string", "description": "name, lives_in, works_at, job, birthday (MM-DD), "
                                                                   "age, hometown, likes, dislikes, allergic_to"},
                    "value": {"type": "string"},
                    "op": {"type": "string", "enum": ["set", "add", "end", "correct"]},
                    "certain": {"type": "boolean"},
                },
                "required": ["subject", "attribute", "value", "op"],
            },
        },
    },
    "required": ["facts"],
}

EXTRACTION_PROMPT = """\
Extract durable facts the user states as true now about themself ("user") or one of their people (subject: the
relation, e.g. "sister"). Use op "set" for one-value attributes (lives_in, works_at, job, name, birthday, age,
hometown), "add" for likes/dislikes/allergic_to, "end" for "no longer ...", "correct" for a correction of what they
said before. certain=false when they hedge. Questions, plans, hypotheticals and other people's words are no facts:
return an empty list for them. Reply only with the record_facts call."""


class ModelExtractor:
    """Reads statements with ``model`` (the service's configured chat model, or any ``BaseChatModel`` that supports
    tool calling).

    >>> # ChatService(store, config=cfg, fact_extractor=ModelExtractor(make_chat_model(cfg)))
    """

    name = "model"

    def __init__(self, model: BaseChatModel) -> None:
        self.model = model
        self._structured = model.with_structured_output(FACTS_SCHEMA, method="function_calling")

    def extract(self, text: str, *, last_key: FactKey | None = None) -> list[Statement]:
        """The statements the model reads in ``text`` (raises what the model call raises)."""
        hint = f"The attribute spoken about last was {last_key}." if last_key is not None else ""
        answer = self._structured.invoke([SystemMessage(content=f"{EXTRACTION_PROMPT}\n{hint}".strip()),
                                          HumanMessage(content=text)])
        items = answer.get("facts") if isinstance(answer, dict) else None
        out: list[Statement] = []
        for item in items if isinstance(items, list) else []:
            statement = _statement(item)
            if statement is not None:
                out.append(statement)
        return out


def _statement(item: object) -> Statement | None:
    """``item`` as a statement, or ``None`` when it is not one (what a model returns is data to check)."""
    if not isinstance(item, dict):
        return None
    subject, attribute, value = item.get("subject", "user"), item.get("attribute"), item.get("value", "")
    op, certain = item.get("op", "set"), item.get("certain", True)
    if not (isinstance(subject, str) and isinstance(attribute, str) and isinstance(value, str)
            and op in ("set", "add", "end", "correct") and isinstance(certain, bool)):
        return None
    if not value.strip() and op != "end":
        return None
    statement = Statement(subject, attribute, value, op, certain)
    try:
        statement.key  # noqa: B018 - an empty attribute raises here
    except InvalidArgument:
        return None
    return statement
