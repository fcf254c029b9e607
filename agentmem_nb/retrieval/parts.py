"""The parts of a question that asks about several things at once, each retrieved on its own.

"What do Jon and Gina both have in common?" needs a turn about Jon *and* one about Gina; ranked as a whole, the ten
messages of the budget tend to come from wherever the two names co-occur best, often one session, and the question
keeps one of its evidence turns at most. So the retriever also ranks each *part* of such a question and merges the
lists within the budget (:data:`MergeRule`). Measured by leave-one-conversation-out in ``benchmarks/DENSE.md``: it
did not raise the cross-validated figure on LoCoMo (most of its multi-hop questions are lists about one person, with
nothing to split), so it is an option (``Retriever(parts=...)``), off by default.

What makes parts (general rules of the language, nothing learnt from a data set):

* a coordination of single words or names — ``X and Y``, ``X, Y and Z``, ``X or Y``, ``X & Y`` — gives one part per
  member (the coordination replaced by that member);
* otherwise, two or more distinct names (capitalised words not opening the question) give one part per name, the
  other names removed;
* Chinese: ``A和B`` / ``与`` / ``跟`` / ``及`` / ``以及`` / ``或`` / ``或者`` / ``还是`` between runs of Han characters
  gives ``A…`` and ``B…`` (the other member and the conjunction removed); a member is the run of up to two Han
  characters next to the conjunction (the commonest length of a Chinese word: without a dictionary a longer run
  would as often take the verb after the member as the member's own third character), cut at a character that is
  almost always a word of its own (的, 都, 是, 在 …);
* words that only say "all of them" (``both``, ``each``, ``all``; ``都``, ``俩``, ``两个``, ``一起``) leave the parts.

A question with fewer than two parts has none (:func:`question_parts` returns ``()``): it is ranked as a whole, as
before.

>>> question_parts("What do Jon and Gina both have in common?")
('What do Jon have in common?', 'What do Gina have in common?')
>>> question_parts("小林和阿梅都喜欢什么？")
('小林喜欢什么？', '阿梅喜欢什么？')
"""

from __future__ import annotations

import re
from typing import Literal

__all__ = ["question_parts", "MergeRule", "MERGE_RULES"]

MergeRule = Literal["whole", "interleave", "reserve"]
"""How the ranked lists of a question and of its parts share the budget's anchors:

* ``"whole"`` — the question as a whole only (parts ignored);
* ``"interleave"`` — round robin: the whole question's best, each part's best, the whole's second, each part's
  second, … (a message already taken is skipped);
* ``"reserve"`` — the whole question's best anchor, then each part's best not yet taken (one reserved anchor per
  part), then the whole question's list.
"""
MERGE_RULES: tuple[str, ...] = ("whole", "interleave", "reserve")

MAX_PARTS = 6
"""A question with more parts than this is retrieved as a whole (a long list is one topic, and each part costs one
more ranking and one more embedded question)."""

_WORD = r"[A-Za-z][\w'’-]*"
# A member is one word, or a possessive/determiner and its word ("her kids", "the dog").
_DET = r"(?:(?:her|his|their|my|your|our|its|the|a|an)\s+)?"
_COORD = re.compile(rf"\b({_WORD})((?:\s*,\s*{_DET}{_WORD})*)(?:\s*,)?\s+(?:and|or|&)\s+({_DET}{_WORD})\b")
# A name: a run of capitalised words ("Pacific Northwest" is one name, not two).
_NAME = re.compile(r"\b[A-Z][a-z][\w’'-]*(?:\s+[A-Z][a-z][\w’'-]*)*")
_QUOTED = re.compile(r"[\"“”«»][^\"“”«»]*[\"“”«»]")  # a title in quotes is one thing, whatever its capitals
# Words that coordinate clauses, not things ("... work with and why?").
_FUNCTION_WORDS = frozenset(
    "why how what when where who whom which whose then so also not too is are was were do does did has have had be "
    "been will would can could should".split()
)
_ALL_OF_THEM = re.compile(r"\s*\b(?:both|each|all)\b", re.IGNORECASE)
# Capitalised words that are not names (pronouns, question and function words a question may capitalise).
_NOT_NAMES = frozenset(
    "I I'm I've I'd I'll What When Where Who Whom Whose Why How Which Did Do Does Is Are Was Were Has Have Had Can "
    "Could Would Should Will The A An In On At Of For And Or But If My Your Our Their His Her Its Mr Mrs Ms Dr "
    "Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec "
    "Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April May June July August "
    "September October November December".split()
)
_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_ZH_CONJ = re.compile(rf"(?<=[{_HAN}])(以及|或者|还是|和|与|跟|及|或)(?=[{_HAN}])")
# Characters that are words of their own next to a noun (particles, adverbs, copulas, common verbs): a coordinated
# member does not run across them.
_ZH_STOP = frozenset("的了着过都也还就是在有去来把被给对向从到让和与跟及或吗呢吧啊么呀一起")
_ZH_ALL_OF_THEM = re.compile(r"都|俩|两个人|两个|一起")


def question_parts(question: str, *, names: bool = True) -> tuple[str, ...]:
    """The parts of ``question`` to retrieve for one by one, or ``()`` if it asks about one thing (module doc).

    ``names=False`` leaves out the rule of several names that are not coordinated ("What did Nate do for Joanna?").
    """
    parts = _zh_parts(question) if re.search(f"[{_HAN}]", question) else ()
    if not parts:
        parts = _coordination_parts(question) or (_name_parts(question) if names else ())
    tidy = tuple(dict.fromkeys(" ".join(p.split()) for p in parts if p.strip()))
    # a question about more things than this is a list, not parts: each part is one more ranking and embedding
    return tidy if 2 <= len(tidy) <= MAX_PARTS else ()


def _coordination_parts(question: str) -> tuple[str, ...]:
    match = _COORD.search(question)
    if match is None:
        return ()
    members = [match.group(1), *re.findall(_DET + _WORD, match.group(2) or ""), match.group(3)]
    if len({m.casefold() for m in members}) < 2 or any(m.casefold() in _FUNCTION_WORDS for m in members):
        return ()
    head, tail = question[: match.start()], question[match.end():]
    return tuple(_without_all(f"{head}{member}{tail}") for member in members)


def _name_parts(question: str) -> tuple[str, ...]:
    plain = _QUOTED.sub(lambda m: " " * len(m.group()), question)
    names = [m for m in _NAME.finditer(plain) if m.start() > 0 and _bare(m.group()) not in _NOT_NAMES
             and m.group().split()[0] not in _NOT_NAMES]
    distinct = list(dict.fromkeys(_bare(m.group()) for m in names))
    if not 2 <= len(distinct) <= MAX_PARTS:  # (many names: a list, and each removal below walks the question)
        return ()
    parts = []
    for keep in distinct:
        text = question
        for other in sorted({m.group() for m in names if _bare(m.group()) != keep}, key=len, reverse=True):
            text = re.sub(rf"\b{re.escape(other)}", "", text)
        parts.append(_without_all(text))
    return tuple(parts)


def _bare(word: str) -> str:
    """A name without its possessive (``Caroline's`` is Caroline)."""
    return re.sub(r"['’]s$", "", word)


def _without_all(text: str) -> str:
    return " ".join(_ALL_OF_THEM.sub("", text).split()).replace(" ?", "?")


def _zh_parts(question: str) -> tuple[str, ...]:
    match = _ZH_CONJ.search(question)
    if match is None:
        return ()
    left = _member(question[: match.start()][::-1])[::-1]
    right = _member(question[match.end():])
    if not left or not right:
        return ()
    a_start, b_end = match.start() - len(left), match.end() + len(right)
    head, tail = question[:a_start], question[b_end:]
    return tuple(_ZH_ALL_OF_THEM.sub("", f"{head}{member}{tail}") for member in (left, right))


def _member(text: str) -> str:
    """The coordinated member at the start of ``text``: up to two Han characters, not across a word of its own."""
    out = []
    for ch in text[:2]:
        if not re.match(f"[{_HAN}]", ch) or ch in _ZH_STOP:
            break
        out.append(ch)
    return "".join(out)
