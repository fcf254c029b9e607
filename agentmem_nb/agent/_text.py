"""Small text helpers shared by the context builder and the offline model (no dependencies)."""

from __future__ import annotations

import re

__all__ = ["has_cjk", "content_tokens", "EN_STOP_WORDS"]

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af"
CJK_RUN = re.compile(f"[{_CJK}]+")
_HAS_CJK = re.compile(f"[{_CJK}]")
WORD = re.compile(r"[a-z0-9][a-z0-9'’-]*[a-z0-9]|[a-z0-9]", re.IGNORECASE)

EN_STOP_WORDS = frozenset("""
a an the i i'm im i've ive i'd me my mine myself you your yours you're we our us he him his she her hers it its they
them their this that these those there here what whats what's which who whom whose where when why how is am are was
were be been being do does did done doing have has had having to of in on at for with about from by as into onto over
under and or but if then so than too very can could would should will shall may might must not no yes just also any
some all again ever still please ok okay well really remember recall remind say said tell told mention mentioned talk
talked earlier before previously last time ago know think thought like get got let let's lets something anything
thing things one ones much many more most tell me you've you'd
""".split())
"""Words that say nothing about *what* is being talked about (question words, pronouns, recall verbs)."""


def has_cjk(text: str) -> bool:
    """True if ``text`` contains Chinese, Japanese or Korean characters."""
    return _HAS_CJK.search(text) is not None


def content_tokens(text: str) -> set[str]:
    """Casefolded content words (3+ letters, not stop words) and CJK bigrams (single characters for 1-char runs)."""
    folded = text.casefold()
    out = {w.strip("'’-") for w in WORD.findall(folded)}
    out = {w for w in out if len(w) >= 3 and w not in EN_STOP_WORDS}
    for run in CJK_RUN.findall(folded):
        if len(run) == 1:
            out.add(run)
        out.update(run[i : i + 2] for i in range(len(run) - 1))
    return out
