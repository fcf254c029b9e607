"""Which facts go into a turn's context: a small always-included profile, then the facts relevant to the question,
ranked by the retrieval's own BM25 (:mod:`agentmem_nb.retrieval.bm25`, the same tokenizer and scoring as message
search), within a budget. Each chosen fact says why it was chosen (the profile, or the query terms it matched), so
the logged context can say which facts were included and why.

A fact is searched as its value plus words for its subject and attribute in both languages ("lives_in" also reads
"live city where 住 哪里"), so "where does my sister live?" and "我妹妹住哪里" both find ``sister.lives_in``. The
term index is kept per user and only extended with facts recorded since the last question (a fact's text never
changes; its status is read at question time), so a question costs its postings, not a rebuild.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from agentmem_nb.errors import InvalidArgument
from agentmem_nb.facts.chinese import RELATIONS_ZH
from agentmem_nb.retrieval.bm25 import CorpusStats, TermIndex, explain_terms, score_query
from agentmem_nb.retrieval.tokenize import Tokenizer
from agentmem_nb.store.facts import USER, Fact, FactsLayer

__all__ = ["SelectedFact", "FactRanker", "PROFILE_ATTRIBUTES", "ATTRIBUTE_WORDS"]

PROFILE_ATTRIBUTES = ("name", "lives_in", "works_at", "job", "allergic_to")
"""The user's own attributes always shown (in this order, up to the profile size): who they are, where, and what
must never be forgotten."""

ATTRIBUTE_WORDS = {
    "name": "name called call 名字 叫 姓名",
    "lives_in": "live lives living city home where place 住 住在 哪里 城市 家",
    "works_at": "work works job company employer office where 工作 公司 上班 单位",
    "works_in": "work works where city 工作 哪里",
    "job": "job work profession occupation do career 职业 工作 做什么",
    "birthday": "birthday born birth date when 生日 出生",
    "age": "age old years 年龄 岁 多大",
    "hometown": "from hometown grew born origin 老家 家乡 哪里人",
    "likes": "like likes love favourite favorite enjoy prefer 喜欢 爱 最爱",
    "dislikes": "dislike hate avoid don't 不喜欢 讨厌",
    "allergic_to": "allergic allergy allergies 过敏",
}
_SUBJECT_WORDS: dict[str, str] = {}
for _zh, _en in RELATIONS_ZH.items():
    _SUBJECT_WORDS[_en] = f"{_SUBJECT_WORDS.get(_en, _en.replace('_', ' '))} {_zh}"
_SUBJECT_WORDS[USER] = "i me my 我"


@dataclass(frozen=True, slots=True)
class SelectedFact:
    """A fact chosen for the context and why: ``reason`` is ``"profile"`` or ``"relevant"``; ``matched`` the query
    terms that found it (empty for the profile); ``score`` its BM25 score (0 for the profile)."""

    fact: Fact
    reason: str
    score: float = 0.0
    matched: tuple[str, ...] = ()

    def line(self) -> str:
        """The fact as the model sees it: ``user.lives_in = Lyon (since 2026-04-08, from s1#3)``."""
        fact = self.fact
        since = f"since {fact.valid_from.date().isoformat()}" if fact.valid_from else "since ?"
        held = ", unconfirmed: held for review" if fact.status == "conflict" else ""
        where = f", from {fact.source}" if fact.source else ""
        return f"{fact.describe()} ({since}{where}{held})"

    def why(self) -> str:
        """Why it was included, for the log."""
        if self.reason == "profile":
            return "profile"
        return f"relevant: {', '.join(self.matched)} ({self.score:.2f})"


class _UserIndex:
    __slots__ = ("index", "fact_ids")

    def __init__(self) -> None:
        self.index = TermIndex()
        self.fact_ids: list[int] = []  # position in the index -> fact id


class FactRanker:
    """Chooses the facts for a turn (one per service, like its :class:`~agentmem_nb.retrieval.Retriever`).

    >>> # FactRanker().select(user.facts, "where does my sister live?", budget=8)
    """

    def __init__(self, *, tokenizer: Tokenizer | None = None) -> None:
        self.tokenizer = tokenizer or Tokenizer()
        self._indexes: dict[str, _UserIndex] = {}
        self._lock = threading.Lock()

    def _text(self, fact: Fact) -> str:
        return " ".join([_SUBJECT_WORDS.get(fact.subject, fact.subject.replace("_", " ")),
                         ATTRIBUTE_WORDS.get(fact.attribute, fact.attribute.replace("_", " ")), fact.value])

    def select(self, facts: FactsLayer, question: str, *, budget: int = 12, profile: int = 4) -> tuple[SelectedFact,
                                                                                                         ...]:
        """Up to ``budget`` facts: the user's profile (at most ``profile`` of :data:`PROFILE_ATTRIBUTES`), then the
        active facts and open conflicts that match the question, best first."""
        if budget <= 0:
            return ()
        chosen: list[SelectedFact] = []
        for fact in facts.get_many(USER, PROFILE_ATTRIBUTES)[: min(profile, budget)]:  # key look-ups: flat in n
            chosen.append(SelectedFact(fact, "profile"))
        taken = {s.fact.fact_id for s in chosen}
        terms = self.tokenizer.terms(question)
        if not terms or len(chosen) >= budget:
            return tuple(chosen)
        with self._lock:
            state = self._indexes.setdefault(str(facts.path), _UserIndex())
            if len(state.fact_ids) > len(facts):  # the file was replaced by a shorter one: index it again
                state = self._indexes[str(facts.path)] = _UserIndex()
            for fact in facts.recorded(len(state.fact_ids)):  # only the facts recorded since the last question
                state.fact_ids.append(fact.fact_id)
                state.index.add(self.tokenizer.terms(self._text(fact)))
            weights = {t: 1.0 for t in terms}
            stats = CorpusStats.of([state.index], terms)
            scores = score_query(state.index, weights, stats)
            ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
            for position, score in ranked:
                try:
                    found = facts.fact(state.fact_ids[position])  # its status now
                except InvalidArgument:  # the file was replaced meanwhile: the next question re-indexes
                    continue
                if found.fact_id in taken or found.status not in ("active", "conflict"):
                    continue
                matched = tuple(t for t, v in explain_terms(state.index, position, weights, stats).items() if v > 0)
                chosen.append(SelectedFact(found, "relevant", score, matched))
                taken.add(found.fact_id)
                if len(chosen) >= budget:
                    break
        return tuple(chosen)
