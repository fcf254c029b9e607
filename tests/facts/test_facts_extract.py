"""The offline extractor (agentmem_nb/facts): who the subject is, what is no fact, ends, corrections, hedges."""

from __future__ import annotations

import pytest

from agentmem_nb.facts import OfflineExtractor
from agentmem_nb.store.facts import FactKey


def _read(text: str, last: FactKey | None = None) -> list[tuple[str, str, str, str, bool]]:
    return [(s.key.subject, s.key.attribute, s.value, s.op, s.certain)
            for s in OfflineExtractor().extract(text, last_key=last)]


@pytest.mark.parametrize(("text", "expected"), [
    ("I live in Toronto.", [("user", "lives_in", "Toronto", "set", True)]),
    ("My sister Ana lives in Madrid.", [("sister", "name", "Ana", "set", True),
                                        ("sister", "lives_in", "Madrid", "set", True)]),
    ("I work at Google and my husband works at Apple.", [("user", "works_at", "Google", "set", True),
                                                         ("husband", "works_at", "Apple", "set", True)]),
    ("我妹妹小美住在广州。", [("sister", "name", "小美", "set", True), ("sister", "lives_in", "广州", "set", True)]),
    ("我在阿里工作，我老公在网易工作。", [("user", "works_at", "阿里", "set", True),
                                          ("husband", "works_at", "网易", "set", True)]),
    ("我住在大连，那边天气怎么样？", [("user", "lives_in", "大连", "set", True)]),
])
def test_the_subject_is_the_user_or_their_relative(text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize("text", [
    "Where do I live again?", "If I moved to Tokyo I would learn Japanese.", "My coworker said she lives in Brooklyn.",
    "He lives in Rome.", '"I love country music," my neighbour told me.', "I'm going to move to Berlin next year.",
    "我住在哪里？", "如果我搬到东京，我就去学日语。", "我同事说她住在朝阳区。", "他住在罗马。", "我打算明年搬到成都。",
    "“我最喜欢乡村音乐了”，我邻居跟我说。",
])
def test_questions_plans_and_other_peoples_words_give_nothing(text: str) -> None:
    assert _read(text) == []


@pytest.mark.parametrize(("text", "expected"), [
    ("I don't like coffee anymore.", ("user", "likes", "coffee", "end", True)),
    ("I no longer live in Berlin.", ("user", "lives_in", "Berlin", "end", True)),
    ("I don't work at Google anymore.", ("user", "works_at", "Google", "end", True)),
    ("我不再喜欢咖啡了。", ("user", "likes", "咖啡", "end", True)),
    ("我已经不在华为工作了。", ("user", "works_at", "华为", "end", True)),
    ("我从京东离职了。", ("user", "works_at", "京东", "end", True)),
])
def test_no_longer_ends_a_value(text: str, expected: tuple[str, str, str, str, bool]) -> None:
    assert _read(text)[0] == expected


@pytest.mark.parametrize(("text", "last", "expected"), [
    ("Oops, actually it's Dallas.", FactKey("user", "lives_in"), ("user", "lives_in", "Dallas", "correct", True)),
    ("Wait, no, it's May 15.", FactKey("user", "birthday"), ("user", "birthday", "05-15", "correct", True)),
    ("Sorry, I live in Lisbon, not Porto.", None, ("user", "lives_in", "Lisbon", "correct", True)),
    ("哦不对，其实是无锡。", FactKey("user", "lives_in"), ("user", "lives_in", "无锡", "correct", True)),
    ("说错了，是5月15号。", FactKey("user", "birthday"), ("user", "birthday", "05-15", "correct", True)),
])
def test_a_correction_names_or_inherits_its_key(text: str, last: FactKey | None,
                                                expected: tuple[str, str, str, str, bool]) -> None:
    assert _read(text, last) == [expected]


def test_a_bare_correction_without_a_previous_key_gives_nothing() -> None:
    assert _read("Actually, it's Dallas.") == []


@pytest.mark.parametrize(("text", "value"), [("I think my birthday is May 4th.", "05-04"),
                                             ("我好像是5月4号生日。", "05-04")])
def test_a_hedge_is_kept_unsure(text: str, value: str) -> None:
    assert _read(text) == [("user", "birthday", value, "set", False)]


@pytest.mark.parametrize(("text", "value"), [("My birthday is on the 3rd of March.", "03-03"),
                                             ("I was born on 2 August 1991.", "1991-08-02"),
                                             ("我的生日是三月三号。", "03-03"), ("我是1992年8月2日出生的。", "1992-08-02")])
def test_dates_are_one_value_however_said(text: str, value: str) -> None:
    assert _read(text)[0][2] == value


def test_a_message_in_both_languages_is_read_whole() -> None:
    assert [(a, v) for _, a, v, _, _ in _read("I moved to Lyon. 我喜欢茶。")] == [("lives_in", "Lyon"), ("likes", "茶")]


@pytest.mark.parametrize(("text", "last", "expected"), [
    ("Sorry, she's a doctor actually.", FactKey("sister", "job"), ("sister", "job", "doctor", "correct", True)),
    ("不对，她其实是医生。", FactKey("sister", "job"), ("sister", "job", "医生", "correct", True)),
])
def test_he_or_she_is_the_relative_spoken_about_last(text: str, last: FactKey,
                                                     expected: tuple[str, str, str, str, bool]) -> None:
    assert _read(text, last) == [expected]


@pytest.mark.parametrize("last", [None, FactKey("colleague", "name")])
def test_she_in_reported_speech_gives_nothing(last: FactKey | None) -> None:
    assert _read("My coworker said she lives in Brooklyn.", last) == []


def test_he_with_no_relative_spoken_about_gives_nothing() -> None:
    assert _read("He lives in Rome.", FactKey("user", "lives_in")) == [] and _read("他住在罗马。") == []


@pytest.mark.parametrize(("text", "expected"), [("我爸退休后搬到了海南。", [("father", "lives_in", "海南", "set", True)]),
                                                ("我以后搬到上海。", [])])
def test_a_time_clause_is_past_but_later_is_a_plan(text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


def test_a_long_list_without_and_is_read_in_linear_time() -> None:
    # The list pattern once had two ways to spend each space: 25 items took 10 s and 40 never finished, holding the
    # interpreter (one chat message could stall a server). A separate process, so a regression fails, not hangs.
    import subprocess
    import sys

    code = ("from agentmem_nb.facts import OfflineExtractor; "
            "print(len(OfflineExtractor().extract('I like ' + 'tea, ' * 400)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
