"""Turning text into index terms, for English and Chinese alike.

English: casefold, split on anything that is not a letter or digit, drop a possessive ``'s``, drop stop words, and
reduce each word to its Snowball (Porter 2) stem so that "painting", "paints" and "painted" meet. The stemmer comes
from ``snowballstemmer`` (which uses the C ``PyStemmer`` when it is installed); stems are cached, because a
conversation repeats the same few thousand words.

Chinese (and Japanese kana, Korean hangul): there are no spaces between words, so a run of CJK characters is cut
into overlapping character **unigrams and bigrams** (``"西湖旅行"`` → 西 湖 旅 行 西湖 湖旅 旅行). A query then
finds a message that shares any word with it, whatever the segmentation would have been, with no dictionary to load.
Bigrams carry most of the precision (most Chinese words are two characters); unigrams keep one-character words and
names findable. ``jieba`` word segmentation was measured against this on the project's Chinese test set (see
``tests/retrieval/data``): see :data:`CJK_MODES` and the report in ``agentmem_nb.evaluation.retrieval``.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import compress, filterfalse, islice, repeat
from operator import and_, is_, not_
from typing import Literal, cast

from agentmem_nb.errors import InvalidArgument

__all__ = ["Tokenizer", "TokenizerConfig", "ENGLISH_STOP_WORDS", "CJK_STOP_CHARS", "CJK_MODES", "is_cjk", "has_cjk"]

CjkMode = Literal["bigram", "jieba"]
CJK_MODES: tuple[CjkMode, ...] = ("bigram", "jieba")

# A common English stop list (function words, auxiliaries, pronouns, question words). Written out here rather than
# pulled from NLTK/sklearn to avoid a heavy dependency for 150 words. Content words are never in it.
ENGLISH_STOP_WORDS: frozenset[str] = frozenset(
    """
    a about above after again against all am an and any are aren't as at be because been before being below between
    both but by can can't cannot could couldn't did didn't do does doesn't doing don't down during each few for from
    further had hadn't has hasn't have haven't having he he'd he'll he's her here here's hers herself him himself his
    how how's i i'd i'll i'm i've if in into is isn't it it's its itself let's me more most mustn't my myself no nor
    not of off on once only or other ought our ours ourselves out over own same shan't she she'd she'll she's should
    shouldn't so some such than that that's the their theirs them themselves then there there's these they they'd
    they'll they're they've this those through to too under until up very was wasn't we we'd we'll we're we've were
    weren't what what's when when's where where's which while who who's whom why why's will with won't would
    wouldn't you you'd you'll you're you've your yours yourself yourselves also just s t d ll m re ve
    """.split()
)

# Function characters of Chinese that, on their own, say nothing about the topic (particles, pronouns, copula).
# They are dropped as unigrams only: inside bigrams they still help (e.g. 我的 is noise, but 的确 is a word).
CJK_STOP_CHARS: frozenset[str] = frozenset("的了吗呢吧啊呀么是在和与及或也都就还又我你他她它们这那哪什谁个有没不")

_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "`": "'"})
_CJK_RANGES = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0002fa1f"
_LETTER = rf"(?:(?![{_CJK_RANGES}])[^\W_])"
# Either a run of CJK characters (group 1), or a run of other letters/digits with inner apostrophes kept, so that
# "don't" stays one stop word (group 2). One regex pass: the tokenizer is on the indexing hot path.
_TOKEN_RE = re.compile(rf"([{_CJK_RANGES}]+)|({_LETTER}+(?:'{_LETTER}+)*)")
# Distinct chunks remembered per tokenizer (a chunk and its terms take about 200 bytes): a long conversation has a
# few tens of thousands; past the limit new chunks are still tokenised correctly, just not remembered.
_CHUNK_CACHE_SIZE = 200_000
LONG_CHUNK = 1024
"""A chunk longer than this (characters) is tokenised as a stream (:meth:`Tokenizer.iter_chunk_terms`) and never
memoised. Chinese has no spaces, so one pasted document can be a single chunk of millions of characters, and its
terms as Python strings (two per character, about 60-80 bytes each) took ~90x the text's size in memory at once."""
_STEM_CACHE_SIZE = 200_000


def is_cjk(char: str) -> bool:
    """True for Han ideographs, kana and hangul: scripts written without spaces between words."""
    code = ord(char)
    return (
        0x4E00 <= code <= 0x9FFF  # CJK unified ideographs
        or 0x3400 <= code <= 0x4DBF  # extension A
        or 0x20000 <= code <= 0x2FA1F  # extensions B.. and compatibility supplement
        or 0xF900 <= code <= 0xFAFF  # compatibility ideographs
        or 0x3040 <= code <= 0x30FF  # hiragana, katakana
        or 0xAC00 <= code <= 0xD7AF  # hangul syllables
    )


def has_cjk(text: str) -> bool:
    """True if ``text`` contains at least one CJK character."""
    return any(is_cjk(c) for c in text)


@dataclass(frozen=True, slots=True)
class TokenizerConfig:
    """What a :class:`Tokenizer` does. Two indexes built with equal configs are interchangeable.

    Attributes:
        stem: reduce English words to their Snowball stem.
        stop_words: English words never indexed nor searched.
        cjk: ``"bigram"`` (character unigrams + bigrams, no dictionary) or ``"jieba"`` (word segmentation).
        cjk_unigrams: with ``cjk="bigram"``, also emit single characters (minus :data:`CJK_STOP_CHARS`).
    """

    stem: bool = True
    lemmatize: bool = False
    stop_words: frozenset[str] = field(default=ENGLISH_STOP_WORDS, repr=False)
    cjk: CjkMode = "bigram"
    cjk_unigrams: bool = True

    def __post_init__(self) -> None:
        if self.cjk not in CJK_MODES:
            raise InvalidArgument(f"unknown cjk mode {self.cjk!r}: use one of {', '.join(CJK_MODES)}")


class Tokenizer:
    """Text → index terms. Thread-safe; cheap to call repeatedly (stems are cached).

    >>> Tokenizer().terms("Caroline's paintings were painted in 2023")
    ['carolin', 'paint', 'paint', '2023']
    >>> Tokenizer().terms("西湖旅行")
    ['西', '湖', '旅', '行', '西湖', '湖旅', '旅行']
    """

    def __init__(self, config: TokenizerConfig | None = None) -> None:
        self.config = config or TokenizerConfig()
        self._stem_cache: dict[str, str] = {}
        self._lock = threading.Lock()
        self._stem_word: Callable[[str], str] | None = None
        self._stem_words: Callable[[list[str]], list[str]] | None = None
        self._segment: Callable[[str], Iterable[str]] | None = None
        self._lemma: Callable[[str], str] | None = None
        if self.config.stem:
            import snowballstemmer  # local: only loaded when stemming is on

            stemmer = snowballstemmer.stemmer("english")
            if hasattr(stemmer, "maxCacheSize"):
                # PyStemmer's own memo (10,000 words) only slows a stream of new words down (about 3x, with its
                # periodic purges): stems are memoised here already.
                stemmer.maxCacheSize = 0
            self._stem_word = stemmer.stemWord
            self._stem_words = stemmer.stemWords  # the same stems, a list at a time (one C call with PyStemmer)
        if self.config.lemmatize:
            import simplemma  # local: its English dictionary loads on first use (about a second)

            self._lemma = lambda word: simplemma.lemmatize(word, lang="en")
        self._chunk_cache: dict[str, tuple[str, ...]] = {}
        # Chunks whose terms were worked out (complexity tests count them; approximate if several threads tokenise
        # at once).
        self.chunks_learnt = 0

    def __repr__(self) -> str:
        return f"Tokenizer({self.config!r})"

    # ------------------------------------------------------------------ public

    def terms(self, text: str) -> list[str]:
        """Index terms of ``text`` in order of appearance (repeats kept: they are term frequencies).

        This is the definition; bulk indexing takes the faster route of :meth:`chunks` and :meth:`chunk_terms_many`,
        which gives the same terms (a property the tests check on arbitrary text).
        """
        out: list[str] = []
        for cjk, word in _TOKEN_RE.findall(self.normalize(text)):
            if cjk:
                self._cjk_run(cjk, out)
            else:
                self._word(word, out)
        return out

    @staticmethod
    def normalize(text: str) -> str:
        """NFKC, casefolded, with typographic apostrophes made plain: the form the token regex reads."""
        text = unicodedata.normalize("NFKC", text).casefold()
        # translate() walks the text in Python-object steps when it is not ASCII; skip it when there is nothing to
        # translate (the usual case), which `in` finds with a C-level scan.
        if "`" in text or "\u2019" in text or "\u2018" in text or "\u02bc" in text:
            text = text.translate(_APOSTROPHES)
        return text

    @staticmethod
    def chunks(text: str) -> list[str]:
        """The whitespace-separated pieces of ``normalize(text)``.

        No term ever spans whitespace (a token is a run of letters, digits or CJK characters, with inner
        apostrophes), so the terms of a text are the terms of its chunks one after the other. A conversation
        repeats the same few thousand chunks, so :meth:`chunk_terms_many` does the regex and stemming work once per
        distinct chunk, not once per word of every message.
        """
        return Tokenizer.normalize(text).split()

    def chunk_terms_many(self, chunks: Sequence[str]) -> list[tuple[str, ...]]:
        """Index terms of each chunk (see :meth:`chunks`), memoised; many at once (what a block of new messages
        brings).

        Most chunks of a chat are one plain word: ASCII letters or digits only. Such a chunk is its only token, so
        its terms follow from the stop list and the stemmer without the regex: these are sorted out with C-level
        passes (``map``, ``compress``) and stemmed in one call. Any other chunk (punctuation, apostrophes, accents,
        CJK) takes the general path, one at a time.
        """
        cache = self._chunk_cache
        known = list(map(cache.get, chunks))
        todo = list(compress(chunks, map(is_, known, repeat(None))))  # repeats are harmless (dict keys below)
        if not todo:
            return cast("list[tuple[str, ...]]", known)  # nothing to do: every chunk was known (none is None)
        plain_flags = list(map(and_, map(str.isascii, todo), map(str.isalnum, todo)))
        plain = list(compress(todo, plain_flags))
        stop_flags = list(map(self.config.stop_words.__contains__, plain))
        found: dict[str, tuple[str, ...]] = dict.fromkeys(compress(plain, stop_flags), ())
        content = list(compress(plain, map(not_, stop_flags)))
        alpha_flags = list(map(str.isalpha, content))
        words = list(compress(content, alpha_flags))
        found.update(zip(words, zip(self.stem_many(words))))  # zip(stems) gives the 1-tuples (stem,)
        others = list(compress(content, map(not_, alpha_flags)))  # digits, or letters and digits: kept as they are
        found.update(zip(others, zip(others)))
        for chunk in compress(todo, map(not_, plain_flags)):
            if chunk in found:
                continue
            terms: list[str] = []
            for cjk, word in _TOKEN_RE.findall(chunk):
                if cjk:
                    self._cjk_run(cjk, terms)
                else:
                    self._word(word, terms)
            found[chunk] = tuple(terms)
        self.chunks_learnt += len(found)
        room = _CHUNK_CACHE_SIZE - len(cache)
        cache.update(found if room >= len(found) else islice(found.items(), max(0, room)))
        return [f if f is not None else found[c] for c, f in zip(chunks, known)]

    def iter_chunk_terms(self, chunk: str) -> Iterator[str]:
        """The terms of one chunk (see :meth:`chunks`), one at a time, in the order :meth:`terms` gives them.

        For a chunk too long to hold its terms as a list (see :data:`LONG_CHUNK`): memory stays proportional to the
        chunk's text, whatever its length. Nothing is memoised."""
        for match in _TOKEN_RE.finditer(chunk):
            cjk, word = match.group(1), match.group(2)
            if cjk:
                yield from self._iter_cjk_run(cjk)
            else:
                out: list[str] = []
                self._word(word, out)
                yield from out

    def stem(self, word: str) -> str:
        """The stem of one casefolded English word (identity when stemming is off)."""
        if self._stem_word is None and self._lemma is None:
            return word
        cached = self._stem_cache.get(word)
        if cached is None:
            with self._lock:  # the C stemmer object is not documented as thread-safe
                cached = self._lemma(word).casefold() if self._lemma is not None else word
                if self._stem_word is not None:
                    cached = self._stem_word(cached)
            if len(self._stem_cache) < _STEM_CACHE_SIZE:
                self._stem_cache[word] = cached
        return cached

    def stem_many(self, words: Sequence[str]) -> list[str]:
        """:meth:`stem` of each word; the words not stemmed before go to the stemmer in one call."""
        if self._stem_words is None or self._lemma is not None:
            return [self.stem(word) for word in words]
        cache = self._stem_cache
        missing = list(dict.fromkeys(filterfalse(cache.__contains__, words)))
        if not missing:
            return list(map(cache.__getitem__, words))
        with self._lock:
            fresh = dict(zip(missing, self._stem_words(missing), strict=True))
        # Past the cache's size limit the new stems are still used, just not all remembered.
        cache.update(islice(fresh.items(), max(0, _STEM_CACHE_SIZE - len(cache))))
        # Each stem is fresh, or else cached: never None (mypy cannot see that, hence the cast).
        return cast("list[str]", list(map(fresh.get, words, map(cache.get, words))))

    # ------------------------------------------------------------------ pieces

    def _word(self, token: str, out: list[str]) -> None:
        if token.endswith("'s"):
            token = token[:-2]
        if not token or token in self.config.stop_words:
            return
        if "'" in token:
            # "o'brien", "rock'n'roll": keep the parts, each a word of its own.
            for part in token.split("'"):
                self._word(part, out)
            return
        out.append(self.stem(token) if token.isalpha() else token)

    def _cjk_run(self, run: str, out: list[str]) -> None:
        out.extend(self._iter_cjk_run(run))

    def _iter_cjk_run(self, run: str) -> Iterator[str]:
        """The terms of a run of CJK characters: unigrams (stop characters dropped), then bigrams; lazily."""
        if self.config.cjk == "jieba":
            for word in self._jieba()(run):
                if word.strip() and not (len(word) == 1 and word in CJK_STOP_CHARS):
                    yield word
            return
        if self.config.cjk_unigrams:
            yield from filterfalse(CJK_STOP_CHARS.__contains__, run)
        yield from map(run.__getitem__, map(slice, range(len(run) - 1), range(2, len(run) + 1)))
        if len(run) == 1 and not self.config.cjk_unigrams:
            yield run

    def _jieba(self) -> Callable[[str], Iterable[str]]:
        if self._segment is None:
            try:
                import jieba  # optional; loading its dictionary costs about a second
            except ImportError:
                raise ImportError(
                    "TokenizerConfig(cjk='jieba') needs the jieba package: pip install jieba, or use cjk='bigram'"
                ) from None
            jieba.setLogLevel(60)
            self._segment = jieba.cut_for_search
        return self._segment
