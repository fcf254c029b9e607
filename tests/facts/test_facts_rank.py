"""The facts chosen for a turn: profile first, then the relevant ones by BM25, within the budget; cost per question."""

from __future__ import annotations

from agentmem_nb import MemoryStore
from agentmem_nb.facts import OfflineExtractor, record_message
from agentmem_nb.facts.rank import FactRanker
from agentmem_nb.retrieval.tokenize import Tokenizer
from agentmem_nb.store import FactSource, Statement


class CountingTokenizer(Tokenizer):
    """Counts the texts it tokenises (the work of indexing a fact)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def terms(self, text: str) -> list[str]:
        self.calls += 1
        return super().terms(text)


def _user(store: MemoryStore, texts: list[str]):  # type: ignore[no-untyped-def]
    user = store.user("u")
    for number, text in enumerate(texts, start=1):
        record_message(user.facts, OfflineExtractor(), text, source=FactSource("s", number))
    return user


def test_profile_then_relevant_in_both_languages(store: MemoryStore) -> None:
    user = _user(store, ["My name is Ana. I live in Lyon.", "My sister Eva lives in Madrid.", "I love jazz.",
                         "我妹妹喜欢猫。"])
    ranker = FactRanker()
    for question in ["where does my sister live?", "我妹妹住哪里？"]:
        chosen = ranker.select(user.facts, question, budget=3)
        assert [(s.fact.describe(), s.reason) for s in chosen] == [
            ("user.name = Ana", "profile"), ("user.lives_in = Lyon", "profile"),
            ("sister.lives_in = Madrid", "relevant")]
    assert ranker.select(user.facts, "anything", budget=0) == ()


def test_superseded_facts_are_not_chosen_and_conflicts_are_marked(store: MemoryStore) -> None:
    user = _user(store, ["My sister lives in Paris.", "My sister moved to Rome.", "My sister's name is Eva.",
                         "My sister's name is Eve."])
    lines = [s.line() for s in FactRanker().select(user.facts, "sister", budget=5)]
    assert not any("Paris" in line for line in lines)
    assert any(line.startswith("sister.name = Eve") and "held for review" in line for line in lines)


def test_a_question_indexes_only_facts_new_since_the_last(store: MemoryStore) -> None:
    user = store.user("u")
    user.facts.record([Statement("friend", "likes", f"thing{i}", "add") for i in range(300)],
                      source=FactSource("s", 1))
    tokenizer = CountingTokenizer()
    ranker = FactRanker(tokenizer=tokenizer)
    ranker.select(user.facts, "what does my friend like", budget=5)
    assert tokenizer.calls == 301  # every fact once, and the question
    user.facts.record([Statement("user", "lives_in", "Oslo")], source=FactSource("s", 2))
    tokenizer.calls = 0
    chosen = ranker.select(user.facts, "what does my friend like", budget=5)
    assert tokenizer.calls == 2 and len(chosen) == 5  # the new fact and the question, whatever the total
