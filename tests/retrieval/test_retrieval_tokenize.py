"""Tokenizer: English variants meet, stop words go, Chinese is cut without a dictionary."""

from __future__ import annotations

import pytest

from agentmem_nb.retrieval.tokenize import (
    CJK_STOP_CHARS,
    Tokenizer,
    TokenizerConfig,
    has_cjk,
    is_cjk,
)

TOK = Tokenizer()


@pytest.mark.parametrize(
    ("left", "right"),
    [
        ("painting", "paints"),
        ("painted", "paint"),
        ("adopted", "adopting"),
        ("studies", "studying"),
        ("Running", "runs"),
        ("KIDS", "kid"),
        ("Caroline's", "caroline"),
        ("Caroline\u2019s", "CAROLINE"),  # typographic apostrophe
        ("café", "CAFÉ"),
    ],
)
def test_english_variants_share_one_term(left: str, right: str) -> None:
    assert TOK.terms(left) == TOK.terms(right)
    assert len(TOK.terms(left)) == 1


def test_stop_words_and_punctuation_are_dropped() -> None:
    assert TOK.terms("What did you do, and where was it?!") == []
    assert TOK.terms("What did you paint?") == TOK.terms("paint")


def test_repeats_are_kept_as_term_frequency() -> None:
    assert TOK.terms("dog dogs DOG") == ["dog", "dog", "dog"]


def test_numbers_and_mixed_tokens_are_kept_verbatim() -> None:
    assert TOK.terms("10k race in 2023") == ["10k", "race", "2023"]


def test_contraction_is_a_stop_word_and_inner_apostrophes_split() -> None:
    assert TOK.terms("don't") == []
    assert TOK.terms("rock'n'roll") == [TOK.stem("rock"), "n", TOK.stem("roll")]


def test_no_stemming_keeps_the_surface_form() -> None:
    plain = Tokenizer(TokenizerConfig(stem=False))
    assert plain.terms("Paintings painted") == ["paintings", "painted"]


def test_chinese_is_cut_into_unigrams_and_bigrams() -> None:
    assert TOK.terms("西湖旅行") == ["西", "湖", "旅", "行", "西湖", "湖旅", "旅行"]


def test_chinese_stop_characters_are_dropped_as_unigrams_only() -> None:
    terms = TOK.terms("我的猫")
    assert "我" not in terms and "的" not in terms
    assert "我的" in terms and "的猫" in terms and "猫" in terms
    assert all(c in CJK_STOP_CHARS for c in "的了吗")


def test_chinese_query_shares_terms_with_a_sentence_that_shares_no_whitespace_token() -> None:
    message = "我上个月搬到杭州了，在一家电商公司当程序员。"
    query = "谁在杭州当程序员"
    assert set(query.split()).isdisjoint(message.split())
    shared = set(TOK.terms(query)) & set(TOK.terms(message))
    assert {"杭州", "程序", "序员"} <= shared


def test_mixed_script_tokens_are_split_by_script() -> None:
    terms = TOK.terms("我在Lyon工作")
    assert "lyon" in terms and "工作" in terms and "在l" not in terms


def test_fullwidth_forms_are_normalised() -> None:
    assert TOK.terms("ＡＢＣ１２３") == TOK.terms("abc123")


def test_bigram_only_mode_keeps_a_single_character_run() -> None:
    tok = Tokenizer(TokenizerConfig(cjk_unigrams=False))
    assert tok.terms("猫") == ["猫"]
    assert tok.terms("西湖") == ["西湖"]


@pytest.mark.slow
def test_jieba_mode_segments_words() -> None:
    pytest.importorskip("jieba")
    tok = Tokenizer(TokenizerConfig(cjk="jieba"))
    assert "西湖" in tok.terms("我去西湖旅行")


def test_unknown_cjk_mode_is_rejected_with_the_choices() -> None:
    with pytest.raises(ValueError, match="bigram, jieba"):
        TokenizerConfig(cjk="trigram")  # type: ignore[arg-type]


@pytest.mark.parametrize(("char", "expected"), [("猫", True), ("カ", True), ("한", True), ("a", False), ("，", False)])
def test_is_cjk(char: str, expected: bool) -> None:
    assert is_cjk(char) is expected
    assert has_cjk(f"x{char}y") is expected
