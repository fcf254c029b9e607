"""Rules every language's extractor shares.

What a sentence's framing does to the statements its predicate gave: a correction ("actually, it's …", "其实是…")
turns a plain ``set`` into ``correct``; a hedge ("I think", "好像") makes each one unsure, so a contradiction it
brings waits as a conflict instead of winning. And whom a pronoun ("she", 她) names: the relation spoken about last.
A second name for the same person in one message ("I'm Robert, everyone calls me Bob") is an alias, not a change.
"""

from __future__ import annotations

import re

from agentmem_nb.store.facts import ACCUMULATING, FactKey, Statement

__all__ = ["PLURAL_RELATIONS", "PRONOUN_LOOKBACK", "last_relative", "marked", "one_name_each", "said_of_both"]

# Relations that are several people: "they"/他们 refers to them, "he"/"she"/他/她 does not.
PLURAL_RELATIONS = frozenset({"parents"})


def marked(found: list[Statement], *, correction: bool, certain: bool, asked: bool = False) -> list[Statement]:
    """``found`` with the sentence's correction and certainty applied. ``asked``: a guess said with a question mark
    ("Perhaps I'm allergic to cats?", "我可能是对花生过敏吧？") — a list takes every value it is given, sure or not, so
    such a guess adds nothing to one; a single value still waits as a conflict."""
    if asked:
        found = [s for s in found if s.key.attribute not in ACCUMULATING]
    if correction:
        found = [Statement(s.subject, s.attribute, s.value, "correct", s.certain) if s.op == "set" else s
                 for s in found]
    if not certain:
        found = [Statement(s.subject, s.attribute, s.value, s.op, False) for s in found]
    return found


def said_of_both(found: list[Statement], relation: str) -> list[Statement]:
    """``found`` and, for each statement of the speaker's, the same of ``relation``: what "my son and I" / 我和我老公都
    say is said of both."""
    return found + [Statement(relation, s.attribute, s.value, s.op, s.certain) for s in found if s.key.subject == "user"]


# How far back in a message a pronoun looks for its relation, in statements. Without a bound every sentence looked
# through all the message had said so far: quadratic (4,000 short sentences about the user took 10 s). A pronoun
# names someone mentioned a few statements ago, never dozens.
PRONOUN_LOOKBACK = 24


def last_relative(found: list[Statement], out: list[Statement], last_key: FactKey | None) -> str | None:
    """The relation spoken about last — in this sentence (``found``), then the last :data:`PRONOUN_LOOKBACK`
    statements of this message (``out``), then the conversation (``last_key``, only when the message has said
    nothing yet) — which "he"/"she"/他/她 refers to."""
    for statement in reversed(found + out[-PRONOUN_LOOKBACK:]):
        if statement.key.subject != "user":
            return statement.key.subject
    if out:
        return None
    return last_key.subject if last_key is not None and last_key.subject != "user" else None


# What introduces a given name rather than a nickname: "my real name is", "name's", 大名, 真名, 名字叫.
_FORMAL = r"(?:\bname(?:\s+is|'s|\s+was)|名字?(?:叫做|叫|是)|姓名(?:是|叫)|大名|真名|本名|学名)\s*(?:actually\s+|其实)?"


def one_name_each(statements: list[Statement], text: str = "") -> list[Statement]:
    """``statements`` less every plain ``name`` of a subject but one (an alias said in the same message:
    "我叫李雷，大家都叫我雷子"; a correction of it stays): the one ``text`` gives as a name ("everyone calls me
    Jimmy, my actual name is James" keeps James), else the first."""
    keep: dict[str, Statement] = {}
    # What follows each formal introduction, read once (a search of the text for each name was quadratic in a long
    # message of names: 2,000 took 1.9 s).
    # (each start tried: "大名叫张伟" is introduced by 大名 and by 名叫, and only the second is followed by the name)
    after_formal = [text[m.start() + len(m.group(1)): m.start() + len(m.group(1)) + 80].casefold()
                    for m in re.finditer("(?=(" + _FORMAL + "))", text, re.IGNORECASE)]
    formal_cache: dict[str, bool] = {}

    def formal(value: str) -> bool:
        if value not in formal_cache:
            folded = value.casefold()
            formal_cache[value] = any(following.startswith(folded) for following in after_formal)
        return formal_cache[value]

    for statement in statements:
        if statement.key.attribute != "name" or statement.op != "set":
            continue
        if statement.key.subject not in keep or (formal(statement.value)
                                                 and not formal(keep[statement.key.subject].value)):
            keep[statement.key.subject] = statement
    # One hometown each too: "born in Harbin, grew up in Dalian" says where one is from once, not twice.
    first_home: dict[str, Statement] = {}
    for statement in statements:
        if statement.key.attribute == "hometown" and statement.op == "set":
            first_home.setdefault(statement.key.subject, statement)
    return [s for s in statements
            if (s.key.attribute != "name" or s.op != "set" or keep.get(s.key.subject) is s)
            and (s.key.attribute != "hometown" or s.op != "set" or first_home.get(s.key.subject) is s)]
