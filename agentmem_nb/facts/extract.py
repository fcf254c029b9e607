"""Extractors and the one way their output is written: :func:`record_message`.

Two extractors give the same :class:`~agentmem_nb.store.facts.Statement` values, so the same events: the
deterministic :class:`OfflineExtractor` here (English and Chinese grammar patterns, no network) and the model
extractor of the agent (structured output through the configured model, ``agentmem_nb.agent.facts_model``). An
extractor sees one message and the key the conversation spoke about last (a bare "actually, it's Lyon" needs it);
what the statements *do* (supersede, conflict, nothing) is decided by the store, under its lock.
"""

from __future__ import annotations

import datetime as _dt
import re
from typing import Protocol, runtime_checkable

from agentmem_nb.facts._marks import one_name_each
from agentmem_nb.facts._values import day_only
from agentmem_nb.facts.chinese import extract_chinese
from agentmem_nb.facts.english import extract_english
from agentmem_nb.retrieval.tokenize import has_cjk
from agentmem_nb.store.facts import Fact, FactKey, FactSource, FactsLayer, Statement

__all__ = ["Extractor", "OfflineExtractor", "record_message", "last_key_of"]

# Sentence ends of both languages, kept with the sentence before them (a "?" decides that it is a question).
_PIECES = re.compile(r"[^。！？!?；;.\n]+[。！？!?；;.\n]*")


@runtime_checkable
class Extractor(Protocol):
    """Reads statements from one message. ``name`` is recorded as each fact's ``extracted_by``."""

    name: str

    def extract(self, text: str, *, last_key: FactKey | None = None) -> list[Statement]: ...


class OfflineExtractor:
    """The deterministic extractor: English and Chinese statements by grammar patterns (see
    :mod:`agentmem_nb.facts.english` and :mod:`agentmem_nb.facts.chinese`). Each sentence goes to the rules of its
    script, so a message mixing both languages is read whole.

    >>> [s.value for s in OfflineExtractor().extract("I moved to Lyon. 我喜欢茶。")]
    ['Lyon', '茶']
    """

    name = "offline"

    def extract(self, text: str, *, last_key: FactKey | None = None) -> list[Statement]:
        """The statements of ``text``; ``last_key`` is what a bare correction refers to."""
        if not isinstance(text, str) or not text.strip():
            return []
        if not has_cjk(text):
            return one_name_each(extract_english(text, last_key=last_key), text)
        out: list[Statement] = []
        run: list[str] = []
        run_cjk: bool | None = None
        for piece in _PIECES.findall(text) + [""]:
            cjk = has_cjk(piece) if piece else None
            if run and (cjk != run_cjk or not piece):
                joined = "".join(run)
                key = out[-1].key if out else last_key
                out += extract_chinese(joined, last_key=key) if run_cjk else extract_english(joined, last_key=key)
                run = []
            if piece:
                run.append(piece)
                run_cjk = cjk
        return one_name_each(out, text)


def last_key_of(facts: FactsLayer, source: FactSource) -> FactKey | None:
    """The key of the latest fact recorded from an earlier message of the same thread (what "actually, it's …"
    corrects), or ``None``."""
    latest: Fact | None = None
    for fact in facts.all():
        if (fact.source is not None and fact.source.session_id == source.session_id
                and fact.source.message_id < source.message_id
                and (latest is None or fact.fact_id > latest.fact_id)):
            latest = fact
    return latest.key if latest else None


def _with_month(facts: FactsLayer, statement: Statement) -> Statement:
    """A birthday said as a day alone ("wait no, the 21st", "是21号") takes the month (and year) of the birthday
    known now; any other statement as it is."""
    day = day_only(statement.value) if statement.key.attribute == "birthday" else None
    known = facts.get(statement.key.subject, "birthday") if day is not None else []
    month = re.fullmatch(r"(?P<head>(?:\d{4}-)?\d\d)-\d\d", known[-1].value) if known else None
    if month is None:
        return statement
    return Statement(statement.subject, statement.attribute, f"{month.group('head')}-{day:02d}", statement.op,
                     statement.certain)


def record_message(facts: FactsLayer, extractor: Extractor, text: str, *, source: FactSource,
                   valid_from: _dt.datetime | None = None, recorded_at: _dt.datetime | None = None) -> list[Fact]:
    """Extract the statements of one message and record them as events from ``source`` (idempotent: a message
    already recorded adds nothing). Returns the facts that changed."""
    statements = [_with_month(facts, s) for s in extractor.extract(text, last_key=last_key_of(facts, source))]
    if not statements:
        return []
    return facts.record(statements, source=source, extracted_by=extractor.name, valid_from=valid_from,
                        recorded_at=recorded_at)
