"""Extractors and the one way their output is written: :func:`record_message`.

Two extractors give the same :class:`~agentmem_nb.store.facts.Statement` values, so the same events: the
deterministic :class:`OfflineExtractor` here (English and Chinese grammar patterns, no network) and the model
extractor of the agent (structured output through the configured model, ``agentmem_nb.agent.facts_model``). An
extractor sees one message and the key the conversation spoke about last (a bare "actually, it's Lyon" needs it);
what the statements *do* (supersede, conflict, nothing) is decided by the store, under its lock.
"""

from __future__ import annotations

import datetime as _dt
import functools
import inspect
import re
from collections.abc import Mapping
from typing import Protocol, cast, runtime_checkable

from agentmem_nb.facts._marks import one_name_each
from agentmem_nb.facts._values import day_only
from agentmem_nb.facts.chinese import RELATIONS_ZH, extract_chinese
from agentmem_nb.facts.english import RELATIONS_EN, extract_english
from agentmem_nb.retrieval.tokenize import has_cjk
from agentmem_nb.store.facts import USER, Fact, FactKey, FactSource, FactsLayer, Statement

__all__ = ["Extractor", "OfflineExtractor", "record_message", "last_key_of", "known_names"]

# Sentence ends of both languages, kept with the sentence before them (a "?" decides that it is a question).
_PIECES = re.compile(r"[^。！？!?；;.\n]+[。！？!?；;.\n]*")


@runtime_checkable
class Extractor(Protocol):
    """Reads statements from one message. ``name`` is recorded as each fact's ``extracted_by``.

    An extractor whose ``extract`` also takes ``names`` (keyword) is given the people known by name — a name → the
    subject it is the name of (:func:`known_names`) — so that "Amara moved to Toronto" is read of the best friend
    called Amara; :func:`record_message` passes it only to those that take it."""

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

    def extract(self, text: str, *, last_key: FactKey | None = None,
                names: Mapping[str, str] | None = None) -> list[Statement]:
        """The statements of ``text``; ``last_key`` is what a bare correction refers to, ``names`` the people known
        by name (a name said as someone's subject is read as that person: "佳佳又搬到东京了")."""
        if not isinstance(text, str) or not text.strip():
            return []
        if names:
            text = _names_as_relations(text, names)
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


# How each relation is said after "my" / 我的 (the first word of each language's table that names it: "best friend",
# 最好的朋友).
_SAID_EN = {subject: word for word, subject in reversed(list(RELATIONS_EN.items()))}
_SAID_ZH = {subject: word for word, subject in reversed(list(RELATIONS_ZH.items()))}
# A name that introduces or names someone again, which stays as said: "my best friend Amara", "called Amara",
# "Amara is my sister", 叫佳佳, 佳佳是我妹妹.
_NAMING_BEFORE_EN = re.compile(r"(?:\b(?:named|called|call|is|was|am|me|I'm)|\b(?:" + "|".join(
    sorted((re.escape(w) for w in RELATIONS_EN), key=len, reverse=True)) + r"))\s+$", re.I)
_NAMING_AFTER_EN = re.compile(r"^(?:'s\s+name|\s+(?:is|was|'s)\s+(?:my|our|his|her|their|the|a|an)\b)", re.I)
_NAMING_BEFORE_ZH = re.compile(r"(?:叫|叫做|名叫|是|" + "|".join(sorted((re.escape(w) for w in RELATIONS_ZH), key=len,
                                                                   reverse=True)) + r")$")
_NAMING_AFTER_ZH = re.compile(r"^(?:是|就是|也是)(?:我|你|他|她)")


_NEAR = 40  # characters each side of a mention read for what gives or names it ("my best friend ", " is my sister")


def known_names(facts: FactsLayer) -> dict[str, str]:
    """The people known by name: each active ``name`` of someone other than the user, name → subject (a name two
    people share names neither)."""
    out: dict[str, str] = {}
    shared: set[str] = set()
    for fact in facts.active():
        if fact.key.attribute != "name" or fact.key.subject == USER or not fact.value.strip():
            continue
        if out.get(fact.value, fact.key.subject) != fact.key.subject:
            shared.add(fact.value)
        out[fact.value] = fact.key.subject
    return {name: subject for name, subject in out.items() if name not in shared}


def _names_as_relations(text: str, names: Mapping[str, str]) -> str:
    """``text`` with each known name said as its person ("Amara relocated to Toronto" → "my best friend relocated
    to Toronto", "佳佳又搬到东京了" → "我的最好的朋友又搬到东京了"), less where the name is being given or said to be
    someone's ("my friend Amara", "Amara is my sister", 叫佳佳)."""
    for name, subject in sorted(names.items(), key=lambda item: -len(item[0])):
        cjk = has_cjk(name)
        said = _SAID_ZH.get(subject) if cjk else _SAID_EN.get(subject)
        if said is None or len(name) < (2 if cjk else 3):
            continue
        pattern = re.compile(re.escape(name) if cjk else r"(?<![\w'])" + re.escape(name) + r"(?![\w-])")
        pieces: list[str] = []
        at = 0
        for found in pattern.finditer(text):
            # (what names someone stands right beside the name: a few words each side, not the whole text — the
            # whole before and after, copied and searched for each mention, was quadratic: 2,000 mentions took 22 s)
            before, after = text[max(0, found.start() - _NEAR): found.start()], text[found.end(): found.end() + _NEAR]
            giving = (_NAMING_BEFORE_ZH.search(before) or _NAMING_AFTER_ZH.match(after)) if cjk else (
                _NAMING_BEFORE_EN.search(before) or _NAMING_AFTER_EN.match(after))
            if giving:
                continue
            pieces += [text[at: found.start()], f"我的{said}" if cjk else f"my {said}"]
            at = found.end()
        text = "".join(pieces) + text[at:]
    return text


class _ReadsNames(Protocol):
    def extract(self, text: str, *, last_key: FactKey | None = None,
                names: Mapping[str, str] | None = None) -> list[Statement]: ...


@functools.lru_cache(maxsize=64)
def _takes_names(kind: type) -> bool:
    """Whether the ``extract`` of extractors of ``kind`` takes ``names`` (one written before it was offered does
    not, and is called as it was)."""
    try:
        parameters = inspect.signature(kind.extract).parameters  # type: ignore[attr-defined]
    except (TypeError, ValueError, AttributeError):  # no signature to read (a C callable): call it the old way
        return False
    return "names" in parameters or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())


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
    last_key = last_key_of(facts, source)
    read = (cast(_ReadsNames, extractor).extract(text, last_key=last_key, names=known_names(facts))
            if _takes_names(type(extractor)) else extractor.extract(text, last_key=last_key))
    statements = [_with_month(facts, s) for s in read]
    if not statements:
        return []
    return facts.record(statements, source=source, extracted_by=extractor.name, valid_from=valid_from,
                        recorded_at=recorded_at)
