"""What building the index costs, counted in operations (never in seconds).

A fresh process pays for a cold index on its first ranked query. The per-word Python work (the token regex, the
stop-word and possessive rules, the stemmer) must happen once per *distinct* chunk of text, not once per word of
every message: a conversation repeats the same words, so that is what keeps a 100,000-message build in seconds.
"""

from __future__ import annotations

import random
import unicodedata
from pathlib import Path
from typing import Any

import pytest

from agentmem_nb import MemoryStore
from agentmem_nb.retrieval import UserIndex
from agentmem_nb.retrieval import tokenize as tokenize_module
from agentmem_nb.retrieval.tokenize import Tokenizer

# Plain words, words with punctuation or a possessive glued on, a contraction, a number, Chinese, an accent.
VOCABULARY = ["beagle", "Beagle", "puppy,", "walks", "walked.", "the", "park", "Biscuit's", "don't", "2023", "西湖",
              "why?", "sunrise", "painting", "café"]


class _Counts:
    def __init__(self) -> None:
        self.word_calls = 0
        self.regex_chars = 0
        self.stemmed: list[str] = []


@pytest.fixture
def counts(monkeypatch: pytest.MonkeyPatch) -> _Counts:
    """Count calls of the per-word rules, characters scanned by the token regex and words given to the stemmer."""
    import snowballstemmer

    counts = _Counts()
    real_word = Tokenizer._word
    real_regex = tokenize_module._TOKEN_RE
    real_stemmer = snowballstemmer.stemmer

    def word(self: Tokenizer, token: str, out: list[str]) -> None:
        counts.word_calls += 1
        real_word(self, token, out)

    class Regex:
        def findall(self, text: str) -> list[Any]:
            counts.regex_chars += len(text)
            return real_regex.findall(text)

    class Stemmer:
        def __init__(self, inner: Any) -> None:
            self.inner = inner

        def stemWord(self, word: str) -> str:
            counts.stemmed.append(word)
            return self.inner.stemWord(word)

        def stemWords(self, words: list[str]) -> list[str]:
            counts.stemmed.extend(words)
            return self.inner.stemWords(words)

    monkeypatch.setattr(Tokenizer, "_word", word)
    monkeypatch.setattr(tokenize_module, "_TOKEN_RE", Regex())
    monkeypatch.setattr(snowballstemmer, "stemmer", lambda language: Stemmer(real_stemmer(language)))
    return counts


def test_each_distinct_chunk_is_analysed_once_however_often_it_recurs(tmp_path: Path, counts: _Counts) -> None:
    user = MemoryStore(tmp_path, zone="UTC").user("u")
    rng = random.Random(5)
    texts = [" ".join(rng.choice(VOCABULARY) for _ in range(10)) for _ in range(300)]
    for text in texts:
        user.append("s", "user", text)
    view = UserIndex(user).view("session", "s")
    assert view.size == 300
    # 3,000 chunks, of len(VOCABULARY) - 1 distinct ones ("Beagle" and "beagle" are one chunk).
    distinct = {c for t in texts for c in unicodedata.normalize("NFKC", t).casefold().split()}
    # Per word of every message these would be 3,000 calls and every character of every message.
    assert counts.word_calls <= len(distinct)
    assert counts.regex_chars <= sum(map(len, distinct))
    # Each word reaches the stemmer once.
    assert len(counts.stemmed) == len(set(counts.stemmed)) <= len(distinct)


def test_an_append_of_known_words_learns_nothing_new(tmp_path: Path) -> None:
    user = MemoryStore(tmp_path, zone="UTC").user("u")
    for i in range(20):
        user.append("s", "user", f"beagle walks in the park, {i % 3} times")
    index = UserIndex(user)
    index.view("session", "s")
    learnt = index.tokenizer.chunks_learnt
    assert learnt == len({"beagle", "walks", "in", "the", "park,", "0", "1", "2", "times"})
    user.append("s", "user", "the beagle walks in the park, 2 times")
    index.view("session", "s")
    assert index.tokenizer.chunks_learnt == learnt
    user.append("s", "user", "the beagle swims")
    index.view("session", "s")
    assert index.tokenizer.chunks_learnt == learnt + 1  # "swims"
