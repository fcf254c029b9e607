"""Retrieval part by part (issue 18, multi-hop): a question about several things is split into parts, each ranked,
and the lists merged within the budget so that more than one evidence turn enters it; the hit says which part found
it. Also: question vectors embedded once per question, in one batch with the parts."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from agentmem_nb import MemoryStore, UserMemory
from agentmem_nb.errors import InvalidArgument
from agentmem_nb.retrieval import RankerConfig, Retriever
from agentmem_nb.retrieval.parts import question_parts
from agentmem_nb.retrieval.ranker import Candidate
from agentmem_nb.retrieval.retriever import merge_ranked


@pytest.mark.parametrize(
    ("question", "parts"),
    [
        ("What do Jon and Gina both have in common?", ("What do Jon have in common?", "What do Gina have in common?")),
        ("Which city have both Jean and John visited?", ("Which city have Jean visited?", "Which city have John visited?")),
        ("What did Melanie and her kids make?", ("What did Melanie make?", "What did her kids make?")),
        ("Did she try painting, pottery or hiking?",
         ("Did she try painting?", "Did she try pottery?", "Did she try hiking?")),
        ("What book did Melanie read from Caroline's suggestion?",
         ("What book did Melanie read from suggestion?", "What book did read from Caroline's suggestion?")),
        ("小林和阿梅都喜欢什么？", ("小林喜欢什么？", "阿梅喜欢什么？")),
        ("小王或者老李去过杭州吗？", ("小王去过杭州吗？", "老李去过杭州吗？")),
    ],
)
def test_a_question_about_several_things_has_parts(question: str, parts: tuple[str, ...]) -> None:
    assert question_parts(question) == parts


@pytest.mark.parametrize(
    "question",
    [
        "What activities does Melanie partake in?",  # one person, one thing: no parts
        "When did the team drive to the Pacific Northwest?",  # one place of two capitalised words
        'What did Caroline take away from the book "Becoming Nicole"?',  # a title in quotes
        "What is a charity that John might want to work with and why?",  # "and why" joins clauses, not things
        "小林最喜欢的茶是什么？",
    ],
)
def test_a_question_about_one_thing_has_none(question: str) -> None:
    assert question_parts(question) == ()


def test_uncoordinated_names_can_be_left_whole() -> None:
    assert question_parts("What did Nate cook for Joanna?")
    assert question_parts("What did Nate cook for Joanna?", names=False) == ()
    assert question_parts("Did Jon and Gina dance?", names=False) == ("Did Jon dance?", "Did Gina dance?")


def _c(layer: int, position: int, part: str = "") -> Candidate:
    return Candidate(layer, position, 1.0, {"bm25": 1.0}, part=part)


def test_merge_rules() -> None:
    whole = [_c(0, 1), _c(0, 2), _c(0, 3)]
    jon = [_c(0, 2, "jon"), _c(1, 5, "jon"), _c(1, 6, "jon")]
    gina = [_c(2, 7, "gina"), _c(0, 1, "gina")]
    order = lambda got: [(c.layer, c.position, c.part) for c in got]  # noqa: E731
    assert order(merge_ranked("whole", [whole, jon, gina], 10)) == [(0, 1, ""), (0, 2, ""), (0, 3, "")]
    assert order(merge_ranked("interleave", [whole, jon, gina], 10)) == [
        (0, 1, ""), (0, 2, "jon"), (2, 7, "gina"), (1, 5, "jon"), (0, 3, ""), (1, 6, "jon")]
    # reserve: the whole question's best, then each part's best not yet taken, then the whole question's list
    assert order(merge_ranked("reserve", [whole, jon, gina], 10)) == [
        (0, 1, ""), (0, 2, "jon"), (2, 7, "gina"), (0, 3, "")]
    assert len(merge_ranked("interleave", [whole, jon, gina], 4)) == 4


JON = "Jon: I dance at the harbour warehouse."


def _two_people(user: UserMemory) -> None:
    """Jon's answer is one turn among his chores; Gina's session is full of turns that match the question's words
    better (her name, "like", "dance"), so ranked as a whole the budget goes to her session."""
    for text in ("The studio lease is signed.", "I bought paint for the walls.", JON, "The mirrors arrive on Monday.",
                 "Taxes are due.", "The heater is fixed.", "The sign went up."):
        user.append("jon", "user", text)
    for text in ("Gina: I like to dance on the rooftop studio downtown.", "Gina: I like dance nights there.",
                 "Gina: I like my dance partner Lou.", "Gina: I like to dance tango."):
        user.append("gina", "user", text)


@pytest.mark.parametrize("rule", ["interleave", "reserve"])
def test_each_part_brings_its_own_evidence_into_the_budget(store: MemoryStore, rule: str) -> None:
    user = store.user("pair")
    _two_people(user)
    question = "Where do Jon and Gina both like to dance?"
    whole = Retriever().search(user, question, budget=4)
    assert JON not in {m.message.content for m in whole.messages}  # as a whole: Gina's session only
    split = Retriever(parts=rule).search(user, question, budget=4)  # type: ignore[arg-type]
    got = {m.message.content: m.hit for m in split.messages}
    assert JON in got and any(text.startswith("Gina:") for text in got)
    jon = got[JON]
    assert jon is not None and jon.part == "Where do Jon like to dance?"
    assert jon.explain().endswith("; found by the part 'Where do Jon like to dance?'")
    assert all(h.part in ("", "Where do Jon like to dance?", "Where do Gina like to dance?") for h in split.hits)


def test_an_unknown_merge_rule_is_refused() -> None:
    with pytest.raises(InvalidArgument, match="merge rule parts='zip'"):
        Retriever(parts="zip")  # type: ignore[arg-type]


class _CountingEmbedder:
    """Vectors from letter counts; records each call to ``embed_queries``."""

    def __init__(self) -> None:
        self.query_calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [[float(t.count(c)) + 0.01 for c in "aeiou"] for t in texts]

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        self.query_calls.append(list(texts))
        return self.embed(texts)


def test_question_and_parts_embedded_in_one_batch_once(store: MemoryStore) -> None:
    user = store.user("pair")
    _two_people(user)
    embedder = _CountingEmbedder()
    retriever = Retriever(ranker=RankerConfig(embedder=embedder, dense_weight=2.0), parts="interleave")
    question = "Where do Jon and Gina both like to dance?"
    first = retriever.search(user, question, budget=4)
    assert embedder.query_calls == [[question, "Where do Jon like to dance?", "Where do Gina like to dance?"]]
    again = retriever.search(user, question, budget=4)  # asked again: memoised, nothing embedded
    assert len(embedder.query_calls) == 1
    assert [h.message.message_id for h in again.hits] == [h.message.message_id for h in first.hits]
    assert any(h.signal("dense") > 0 for h in first.hits)


def test_a_failed_question_embedding_is_not_remembered(store: MemoryStore) -> None:
    user = store.user("pair")
    _two_people(user)

    class Flaky(_CountingEmbedder):
        fail = True

        def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
            if self.fail:
                raise InvalidArgument("embedding server down")
            return super().embed_queries(texts)

    embedder = Flaky()
    retriever = Retriever(ranker=RankerConfig(embedder=embedder, dense_weight=2.0))
    with pytest.raises(InvalidArgument, match="server down"):
        retriever.search(user, "where to dance", budget=4)
    embedder.fail = False
    assert retriever.search(user, "where to dance", budget=4).hits
    assert embedder.query_calls == [["where to dance"]]


class _PetsEmbedder:
    """One made-up dimension, 'pets' (so a question finds a turn it shares no word with)."""

    PETS = ("puppy", "beagle", "dog", "shoe")

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [[float(sum(w.strip(".,!?") in self.PETS for w in t.lower().split())), 0.05] for t in texts]


def _lamps(user: UserMemory) -> None:
    for i in range(5):
        user.append("shop", "user", f"The lamp shop had lamp number {i} on sale.")
    user.append("home", "user", "Look at this!")
    user.append("home", "user", "My beagle chewed a shoe.")
    user.append("home", "user", "Unrelated chatter about taxes.")


def test_a_dense_slot_brings_the_nearest_turn_the_words_miss(store: MemoryStore) -> None:
    user = store.user("lamps")
    _lamps(user)
    ranker = RankerConfig(embedder=_PetsEmbedder(), dense_weight=0.5)
    question = "which lamp for the puppy"
    fused = Retriever(ranker=ranker).search(user, question, budget=3, before=0, after=0)
    assert "My beagle chewed a shoe." not in {m.message.content for m in fused.messages}
    slotted = Retriever(ranker=ranker, dense_slot=1).search(user, question, budget=3, before=0, after=0)
    assert [h.message.content for h in slotted.hits][1] == "My beagle chewed a shoe."
    assert [s.name for s in slotted.hits[1].signals] == ["dense"]
    assert slotted.hits[0].message.content == fused.hits[0].message.content  # the fused best stays first


def test_dense_context_lends_a_neighbour_of_a_dense_hit_its_share(store: MemoryStore) -> None:
    user = store.user("lamps")
    _lamps(user)
    question = "my dog"

    def context_of(share: float) -> float:
        ranker = RankerConfig(embedder=_PetsEmbedder(), dense_weight=2.0, dense_context=share)
        hits = Retriever(ranker=ranker).rank_hits(user, question, limit=10)
        return sum(h.signal("context") for h in hits if h.message.content == "Look at this!")

    assert context_of(0.0) == 0.0
    assert context_of(0.3) == pytest.approx(0.3 * 2.0)  # its neighbour is the nearest turn: signal 1 x weight 2


class _TopicVectors:
    """'dog' turns all point one way, 'cat' turns another (a question gets both: it asks about pets)."""

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [[1.0 if "dog" in t else 0.0, 1.0 if "cat" in t else 0.0, 0.2] for t in texts]

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        return [[1.0, 1.0, 0.2] for _ in texts]


def test_diversity_gives_a_repeated_turn_s_place_to_another_thing(store: MemoryStore) -> None:
    user = store.user("pets")
    for text in ("Our pets: the dog Rex sleeps a lot, my pets love him.", "Our pets: the dog Rex sleeps all day.",
                 "Our pets: the dog Rex sleeps again."):
        user.append("a", "user", text)
    user.append("b", "user", "The cat Tom is new.")
    ranker = RankerConfig(embedder=_TopicVectors(), dense_weight=0.1)
    question = "which pets do we have"
    plain = Retriever(ranker=ranker).search(user, question, budget=2, before=0, after=0)
    assert all("dog" in m.message.content for m in plain.messages)
    varied = Retriever(ranker=ranker, diversity=1.0).search(user, question, budget=2, before=0, after=0)
    assert {"dog" in m.message.content for m in varied.messages} == {True, False}
    assert varied.hits[0].message.content == plain.hits[0].message.content  # the best stays first


def test_dense_weight_zero_with_every_dense_option_ranks_exactly_as_lexical(memory: UserMemory) -> None:
    embedder = _CountingEmbedder()
    off = Retriever(ranker=RankerConfig(embedder=embedder, dense_weight=0.0, dense_context=0.3, dense_top_k=7),
                    dense_slot=2, diversity=1.0)
    for query in ("beagle puppy shoe", "pottery bowl blue", "riverside race minutes", "杭州 程序员"):
        lexical = Retriever().search(memory, query, budget=6)
        got = off.search(memory, query, budget=6)
        assert [(h.message.message_id, h.score, h.signals) for h in got.hits] == [
            (h.message.message_id, h.score, h.signals) for h in lexical.hits]
        assert [m.message.message_id for m in got.messages] == [m.message.message_id for m in lexical.messages]
    assert embedder.query_calls == []  # no dense signal: nothing embedded


def test_a_failed_batch_of_parts_is_embedded_again_once_the_embedder_is_back(store: MemoryStore) -> None:
    """The question and its parts are one batch: when it fails, none of its vectors is kept — the next search sends
    the whole batch again instead of failing once more per part with the old error."""
    user = store.user("pair")
    _two_people(user)

    class Flaky(_CountingEmbedder):
        fail = True

        def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
            if self.fail:
                raise InvalidArgument("embedding server down")
            return super().embed_queries(texts)

    embedder = Flaky()
    retriever = Retriever(ranker=RankerConfig(embedder=embedder, dense_weight=2.0), parts="interleave")
    question = "Where do Jon and Gina both like to dance?"
    with pytest.raises(InvalidArgument, match="server down"):
        retriever.search(user, question, budget=4)
    embedder.fail = False
    assert retriever.search(user, question, budget=4).hits  # the first search after the recovery works
    assert embedder.query_calls == [[question, "Where do Jon like to dance?", "Where do Gina like to dance?"]]


def test_dense_top_k_zero_gives_no_dense_signal_and_no_error(store: MemoryStore) -> None:
    user = store.user("pair")
    _two_people(user)
    plain = Retriever().search(user, "dance salsa", budget=4)
    none = Retriever(ranker=RankerConfig(embedder=_CountingEmbedder(), dense_weight=2.0, dense_top_k=0)).search(
        user, "dance salsa", budget=4)
    assert [h.message.message_id for h in none.hits] == [h.message.message_id for h in plain.hits]
    assert all(h.signal("dense") == 0 for h in none.hits)


def test_a_question_about_many_things_is_asked_whole() -> None:
    few = "Where do Ann, Bob and Cleo like to dance?"
    assert len(question_parts(few)) == 3
    many = "Where do " + ", ".join(f"Person{i}" for i in range(40)) + " and Zed like to dance?"
    assert question_parts(many) == ()
    names = "Did " + " met ".join(f"Mister{chr(65 + i)}x" for i in range(20)) + "?"
    assert question_parts(names) == ()
