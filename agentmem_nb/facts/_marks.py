"""What a sentence's framing does to the statements its predicate gave, the same in every language: a correction
("actually, it's …", "其实是…") turns a plain ``set`` into ``correct``; a hedge ("I think", "好像") makes each one
unsure, so a contradiction it brings waits as a conflict instead of winning."""

from __future__ import annotations

from agentmem_nb.store.facts import Statement

__all__ = ["marked"]


def marked(found: list[Statement], *, correction: bool, certain: bool) -> list[Statement]:
    """``found`` with the sentence's correction and certainty applied."""
    if correction:
        found = [Statement(s.subject, s.attribute, s.value, "correct", s.certain) if s.op == "set" else s
                 for s in found]
    if not certain:
        found = [Statement(s.subject, s.attribute, s.value, s.op, False) for s in found]
    return found
