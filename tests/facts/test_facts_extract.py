"""The offline extractor (agentmem_nb/facts): who the subject is, what is no fact, ends, corrections, hedges."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentmem_nb import MemoryStore
from agentmem_nb.facts import OfflineExtractor, record_message
from agentmem_nb.store import FactSource
from agentmem_nb.store.facts import FactKey, Statement, fact_key


def _read(text: str, last: FactKey | None = None) -> list[tuple[str, str, str, str, bool]]:
    return [(s.key.subject, s.key.attribute, s.value, s.op, s.certain)
            for s in OfflineExtractor().extract(text, last_key=last)]


def _extract_in_a_child(texts: str, timeout: float = 120) -> None:
    """Extract from each text of ``texts`` (a Python expression giving them) in a separate process, which must end
    within ``timeout`` seconds: a quadratic pattern on the long inputs the tests give fails at the timeout."""
    code = f"from agentmem_nb.facts import OfflineExtractor as E; e = E(); [e.extract(t) for t in {texts}]"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr


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
    _extract_in_a_child("('I like ' + 'tea, ' * 400,)")


# ---------------------------------------------------------------- rule families from the eighth held-out round
# Each family is a grammar-level rule; each example below was read wrongly (or not at all) before it.

_USER_LIVES = FactKey("user", "lives_in")
_USER_NAME = FactKey("user", "name")


@pytest.mark.parametrize(("text", "expected"), [
    ("We relocated from Boston to Denver last spring.", [("user", "lives_in", "Boston", "set", True),
                                                         ("user", "lives_in", "Denver", "set", True)]),
    ("去年我们从杭州搬到了成都。", [("user", "lives_in", "杭州", "set", True), ("user", "lives_in", "成都", "set", True)]),
])
def test_a_move_names_its_origin_as_the_value_before(text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("I work for Spotify as a data analyst.", [("user", "works_at", "Spotify", "set", True),
                                               ("user", "job", "data analyst", "set", True)]),
    ("I work in marketing at Unilever.", [("user", "works_in", "marketing", "set", True),
                                          ("user", "works_at", "Unilever", "set", True)]),
    ("我在腾讯当产品经理。", [("user", "works_at", "腾讯", "set", True), ("user", "job", "产品经理", "set", True)]),
])
def test_an_employer_with_a_role_gives_both(text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("My daughter just moved to Melbourne for uni.", [("daughter", "lives_in", "Melbourne", "set", True)]),
    ("I'm from Mexico originally.", [("user", "hometown", "Mexico", "set", True)]),
    ("我女儿刚搬去墨尔本读大学。", [("daughter", "lives_in", "墨尔本", "set", True)]),
    ("我目前在北京工作和生活。", [("user", "lives_in", "北京", "set", True)]),
    ("我在上海已经住了五年了。", [("user", "lives_in", "上海", "set", True)]),
])
def test_a_place_ends_before_a_purpose_or_a_span(text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("Honestly I've grown to hate jazz.", [("user", "dislikes", "jazz", "add", True)]),
    ("I'm currently working as a barista.", [("user", "job", "barista", "set", True)]),
    ("I became a school principal last year.", [("user", "job", "school principal", "set", True)]),
    ("去年我当上了校长。", [("user", "job", "校长", "set", True)]),
    ("我实在受不了香菜。", [("user", "dislikes", "香菜", "add", True)]),
    ("跟你说一下，我现在常年待在深圳。", [("user", "lives_in", "深圳", "set", True)]),
])
def test_aspect_and_change_of_state_verbs_frame_the_predicate(text: str,
                                                              expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize(("text", "last", "expected"), [
    ("Actually it's John, with an h.", _USER_NAME, [("user", "name", "John", "correct", True)]),
    ("Or maybe it's Portland now, I'm not sure.", _USER_LIVES, [("user", "lives_in", "Portland", "correct", False)]),
    ("其实是张玮，玉字旁的玮。", _USER_NAME, [("user", "name", "张玮", "correct", True)]),
    ("也可能是咸阳吧，我不太确定。", _USER_LIVES, [("user", "lives_in", "咸阳", "correct", False)]),
])
def test_a_bare_correction_takes_the_first_clause_naming_a_value(
        text: str, last: FactKey, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text, last) == expected


@pytest.mark.parametrize("text", [
    # (the first three are guards: the adverbs read through since then, "basically", 简直, must not make them facts)
    "My dad is basically a chef.", "She's like a walking encyclopedia.", "哈哈，我简直就是专业睡觉选手。",
    "开玩笑的，我其实是外星人。",
])
def test_a_figure_of_speech_gives_nothing(text: str) -> None:
    assert _read(text) == []


@pytest.mark.parametrize(("text", "expected"), [
    ("Pizza is my favourite food.", [("user", "likes", "Pizza", "add", True)]),
    ("Lyon is where I live now.", [("user", "lives_in", "Lyon", "set", True)]),
    ("Google is where my wife works.", [("wife", "works_at", "Google", "set", True)]),
    ("火锅是我最喜欢的食物。", [("user", "likes", "火锅", "add", True)]),
    ("香菜是我最讨厌的。", [("user", "dislikes", "香菜", "add", True)]),
    ("北京是我长大的地方。", [("user", "hometown", "北京", "set", True)]),
    ("上海是我现在住的地方。", [("user", "lives_in", "上海", "set", True)]),
])
def test_a_value_said_first_is_read_as_its_predicate(text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("I stopped eating meat.", [("user", "likes", "eating meat", "end", True), ("user", "likes", "meat", "end", True)]),
    ("I quit smoking.", [("user", "likes", "smoking", "end", True)]),
    ("I quit my job.", [("user", "works_at", "", "end", True)]),
    ("I'm not working at Google anymore.", [("user", "works_at", "Google", "end", True)]),
])
def test_an_ended_habit_or_job_is_an_end(text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("告诉你个好消息，我刚搬到苏州了！", [("user", "lives_in", "苏州", "set", True)]),
    ("你可以叫我小王。", [("user", "name", "小王", "set", True)]),
    ("他告诉你他住在北京。", []),  # (a guard: someone else telling the assistant is still reported)
])
def test_words_addressed_to_the_assistant_are_the_speakers(text: str,
                                                           expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("We have a dog. His name is Rex.", [("user", "has_pet", "dog", "add", True), ("dog", "name", "Rex", "set", True)]),
    ("I have a sister, she lives in Rome.", [("sister", "lives_in", "Rome", "set", True)]),
    ("我们家养了一只猫，叫咪咪。", [("cat", "name", "咪咪", "set", True), ("user", "has_pet", "猫", "add", True)]),
    ("我有一个妹妹，她住在上海。", [("sister", "lives_in", "上海", "set", True)]),
])
def test_a_relation_introduced_without_a_fact_is_the_one_spoken_about(
        text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("New job: I'm at Salesforce now.", [("user", "works_at", "Salesforce", "set", True)]),
    ("We moved in May. I'm in Lisbon now.", [("user", "lives_in", "Lisbon", "set", True)]),
    ("I've been in Berlin for three years now.", [("user", "lives_in", "Berlin", "set", True)]),
    ("I'm at the gym.", []), ("I'm in London this week.", []), ("I've been in a meeting all day.", []),  # guards
])
def test_a_named_place_after_a_copula_needs_a_mark_of_duration(
        text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("ya i work at starbucks lol", [("user", "works_at", "starbucks", "set", True)]),
    ("I'm Tom, by the way.", [("user", "name", "Tom", "set", True)]),
    ("I love both cats and dogs.", [("user", "likes", "cats", "add", True), ("user", "likes", "dogs", "add", True)]),
    ("我和老婆住在杭州。", [("user", "lives_in", "杭州", "set", True)]),
])
def test_chat_interjections_and_afterthoughts_are_no_part_of_a_value(
        text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


def test_an_employer_after_job_is_must_be_a_name() -> None:
    assert _read("My job is teaching math at a high school.") == [("user", "job", "teaching math", "set", True)]


@pytest.mark.parametrize(("text", "expected"), [
    ("My husband's a doctor.", [("husband", "job", "doctor", "set", True)]),
    ("My mom's from Texas.", [("mother", "hometown", "Texas", "set", True)]),
    ("My husband's called Dan.", [("husband", "name", "Dan", "set", True)]),
    ("My sister's dog is called Max.", []),  # (a guard: a possessive 's stays possessive)
])
def test_a_relations_s_before_a_predicate_is_is(text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("I'm no longer with Google.", [("user", "works_at", "Google", "end", True)]),
    ("I'm not in Paris anymore.", [("user", "lives_in", "Paris", "end", True)]),
    ("I'm not a teacher anymore.", [("user", "job", "teacher", "end", True)]),
    ("I haven't worked at Google since 2020.", [("user", "works_at", "Google", "end", True)]),
    ("I'm done with coffee.", [("user", "likes", "coffee", "end", True)]),
    ("我现在已经不在腾讯了。", [("user", "works_at", "腾讯", "end", True), ("user", "lives_in", "腾讯", "end", True)]),
    ("我再也不吃麻辣烫了。", [("user", "likes", "麻辣烫", "end", True), ("user", "likes", "吃麻辣烫", "end", True)]),
])
def test_an_end_reads_its_predicate_without_the_negation(text: str,
                                                         expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("My sister's name is actually Jen, not Jenny.", [("sister", "name", "Jen", "correct", True)]),
    ("我之前说错了，我在百度工作。", [("user", "works_at", "百度", "correct", True)]),
])
def test_a_correction_marked_inside_the_sentence(text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("I speak French and Spanish.", [("user", "speaks", "French", "add", True), ("user", "speaks", "Spanish", "add", True)]),
    ("我会说法语和西班牙语。", [("user", "speaks", "法语", "add", True), ("user", "speaks", "西班牙语", "add", True)]),
    ("我今年三十了。", [("user", "age", "30", "set", True)]),
    ("我生于1990年5月3日。", [("user", "birthday", "1990-05-03", "set", True)]),
    ("我一点都不喜欢下雨天。", [("user", "dislikes", "下雨天", "add", True)]),
])
def test_languages_ages_and_dates_said_other_ways(text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("I'm Robert, but everyone calls me Bob.", [("user", "name", "Robert", "set", True)]),
    ("我叫李雷，大家都叫我雷子。", [("user", "name", "李雷", "set", True)]),
])
def test_a_second_name_in_one_message_is_an_alias(text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize("text", [
    "I'm Tired.", "I'm Back!", "I'm from the future lol", "I grew up in the 90s.", "I am from work, just got home.",
    "我叫不出他的名字。", "我叫外卖了。", "我出生在医院。", "我是新手。",
])
def test_a_state_or_an_action_is_no_name_town_or_job(text: str) -> None:
    # Name, hometown and birthday are stable: a wrong second value would be held as a conflict for review.
    assert _read(text) == []


@pytest.mark.parametrize(("text", "last", "expected"), [
    ("Sorry, I typed that wrong: her name is Ellen, not Helen.", FactKey("wife", "name"),
     [("wife", "name", "Ellen", "correct", True)]),
    ("I'd say I prefer green tea.", None, [("user", "likes", "green tea", "add", True)]),
    ("Mum just moved to Galway to be near my sister.", None, [("mother", "lives_in", "Galway", "set", True)]),
    ("Dad's a plumber.", None, [("father", "job", "plumber", "set", True)]),
    ("I'm 41, married, and I work as an accountant.", None, [("user", "age", "41", "set", True),
                                                             ("user", "job", "accountant", "set", True)]),
])
def test_speech_acts_kin_titles_and_lists_around_a_statement(
        text: str, last: FactKey | None, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text, last) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("上个月我加入了字节跳动，做产品设计师。", [("user", "works_at", "字节跳动", "set", True),
                                               ("user", "job", "产品设计师", "set", True)]),
    ("我舅舅是都柏林的消防员。", [("uncle", "job", "消防员", "set", True)]),
    ("嗯，严格说我好像是在如皋出生的。", [("user", "hometown", "如皋", "set", False)]),
])
def test_chinese_joining_a_job_after_a_place_and_born_in(text: str,
                                                         expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize(("text", "last", "expected"), [
    ("Good morning! I'm a high school history teacher.", None,
     [("user", "job", "high school history teacher", "set", True)]),
    ("Quick update — I've moved from Brighton to Bristol.", None,
     [("user", "lives_in", "Brighton", "set", True), ("user", "lives_in", "Bristol", "set", True)]),
    ("Actually no — I live in Swansea.", _USER_LIVES, [("user", "lives_in", "Swansea", "correct", True)]),
    ("Honestly, I've never liked olives.", None, [("user", "dislikes", "olives", "add", True)]),
    ("In my free time I love knitting.", None, [("user", "likes", "knitting", "add", True)]),
    ("hi im jess", None, [("user", "name", "jess", "set", True)]),
    ("FYI I have a severe allergy to shellfish.", None, [("user", "allergic_to", "shellfish", "add", True)]),
    ("I might be moving to Sydney, not sure yet.", _USER_LIVES, []),
])
def test_headings_dashes_leisure_openers_and_plans_behind_a_hedge(
        text: str, last: FactKey | None, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text, last) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("八月份我离开了滴滴。", [("user", "works_at", "滴滴", "end", True), ("user", "lives_in", "滴滴", "end", True)]),
    ("上周三我搬到了杭州。", [("user", "lives_in", "杭州", "set", True)]),
    ("嗨，我是小静", [("user", "name", "小静", "set", True)]),
    ("大家好，我是程序员。", [("user", "job", "程序员", "set", True)]),  # (a guard: a job is no name)
    ("顺便说一下，我对贝类严重过敏。", [("user", "allergic_to", "贝类", "add", True)]),
])
def test_chinese_time_before_the_subject_introductions_and_degree_words(
        text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("So I'm Kevin, nice to meet you.", [("user", "name", "Kevin", "set", True)]),
    ("I've lived in Toronto my whole life.", [("user", "lives_in", "Toronto", "set", True)]),
    ("I'm a big coffee drinker.", []),
    ("Not a huge fan of cold weather tbh.", [("user", "dislikes", "cold weather", "add", True)]),
    ("Spicy food isn't my thing.", [("user", "dislikes", "Spicy food", "add", True)]),
    ("My ex lives in Paris.", [("ex", "lives_in", "Paris", "set", True)]),
    ("My kids love Minecraft.", [("children", "likes", "Minecraft", "add", True)]),
])
def test_more_relations_tastes_said_as_things_and_habits_that_are_no_job(
        text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("我超级讨厌堵车。", [("user", "dislikes", "堵车", "add", True)]),
    ("我以前住在武汉，后来搬到了长沙。", [("user", "lives_in", "武汉", "end", True), ("user", "lives_in", "长沙", "set", True)]),
    ("我已经戒咖啡了。", [("user", "likes", v, "end", True) for v in ("咖啡", "喝咖啡", "吃咖啡", "抽咖啡")]),
    ("哦对，我生日其实是5月4号。", [("user", "birthday", "05-04", "correct", True)]),
])
def test_chinese_long_adverbs_then_clauses_quitting_and_a_correction_inside(
        text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("My wife works at Lidl on weekends.", [("wife", "works_at", "Lidl", "set", True)]),
    ("I'm from a tiny town in Vermont called Stowe.", [("user", "hometown", "Stowe", "set", True)]),
    ("好消息，我升职成高级分析师了！", [("user", "job", "高级分析师", "set", True)]),
])
def test_a_schedule_after_an_employer_a_place_named_after_its_kind_and_a_job_closed_by_le(
        text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


# ---------------------------------------------------------------- rule families from the twelfth held-out round

@pytest.mark.parametrize(("text", "expected"), [
    ("Everyone calls me Jimmy, though my actual name is James.", [("user", "name", "James", "set", True)]),
    ("My real name is Robert, but friends call me Bobby.", [("user", "name", "Robert", "set", True)]),
    ("大家都叫我小胖，我大名叫张伟。", [("user", "name", "张伟", "set", True)]),
])
def test_a_given_name_beats_a_nickname_said_in_the_same_message(
        text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


_PARENTS_LIVE = FactKey("parents", "lives_in")


@pytest.mark.parametrize(("text", "expected"), [
    ("They moved to Spain last year.", [("parents", "lives_in", "Spain", "set", True)]),
    ("He moved to Spain last year.", []),
    ("他们退休后去年搬到了三亚。", [("parents", "lives_in", "三亚", "set", True)]),
])
def test_they_names_the_parents_spoken_about_and_he_does_not(
        text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text, _PARENTS_LIVE) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("香菜我是真受不了。", [("user", "dislikes", "香菜", "add", True)]),
    ("火锅我最爱吃了。", [("user", "likes", "火锅", "add", True)]),
    # (我很喜欢 with no object: what the clause before named, as "but I love it")
    ("我哥讨厌寿司，但我很喜欢。", [("brother", "dislikes", "寿司", "add", True), ("user", "likes", "寿司", "add", True)]),
])
def test_chinese_an_object_said_before_the_speaker(text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize(("text", "last", "expected"), [
    ("我弟刚在字节跳动找到工作。", None, [("brother", "works_at", "字节跳动", "set", True)]),
    ("我姐上个月在腾讯找到了一份工作。", None, [("sister", "works_at", "腾讯", "set", True)]),
    ("上周末他刚满8岁！", FactKey("son", "age"), [("son", "age", "8", "set", True)]),
    ("2015年以后一直住在深圳。", None, [("user", "lives_in", "深圳", "set", True)]),
    ("我闺蜜小雨今晚要来我家。", None, [("best_friend", "name", "小雨", "set", True)]),
    ("我哥周末要来。", None, []),
])
def test_chinese_finding_a_job_a_weekend_a_year_since_and_a_name_before_a_time(
        text: str, last: FactKey | None, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text, last) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("Hmm, or maybe I should say I work at Stripe now, not sure yet.", [("user", "works_at", "Stripe", "set", False)]),
    ("嗯，也可能现在算是在蚂蚁集团了，我也不太确定。", [("user", "works_at", "蚂蚁集团", "correct", False)]),
])
def test_a_hedged_other_value_reads_past_i_should_say_and_adverbs(
        text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text, FactKey("user", "works_at")) == expected


# ---------------------------------------------------------------- rule families from the thirteenth held-out round

@pytest.mark.parametrize(("text", "expected"), [
    ("Sorry, I meant Bath, not Bristol.", [("user", "hometown", "Bath", "correct", True)]),
    ("Sorry, I meant Bath, Bristol is where I studied.", [("user", "hometown", "Bath", "correct", True)]),
])
def test_the_word_before_a_comma_after_a_correction_is_the_value(
        text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text, FactKey("user", "hometown")) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("I quit coffee a month ago for my health.", [("user", "likes", "coffee", "end", True)]),
    ("I quit Google last year.", [("user", "works_at", "Google", "end", True)]),
    ("我两年前就不吃肉了。", [("user", "likes", "肉", "end", True), ("user", "likes", "吃肉", "end", True)]),
    ("为了健康，我一个月前把咖啡戒了。", [("user", "likes", v, "end", True) for v in ("咖啡", "喝咖啡", "吃咖啡", "抽咖啡")]),
])
def test_a_habit_given_up_ends_a_like_and_is_no_employer_or_dislike(
        text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    # the pets kept (a breed is its kind), then their names
    ("We have two pets: a beagle named Rocky and a cat named Luna.",
     [("user", "has_pet", "dog", "add", True), ("user", "has_pet", "cat", "add", True),
      ("dog", "name", "Rocky", "set", True), ("cat", "name", "Luna", "set", True)]),
    ("I have a golden retriever called Sunny.", [("user", "has_pet", "dog", "add", True),
                                                 ("dog", "name", "Sunny", "set", True)]),
    ("我养了一条比格犬叫旺财，还有一只猫叫咪咪。", [("user", "has_pet", "狗", "add", True), ("user", "has_pet", "猫", "add", True),
                                       ("dog", "name", "旺财", "set", True), ("cat", "name", "咪咪", "set", True)]),
    ("我邻居养了一条狗叫饼干。", []),
])
def test_pets_of_any_breed_named_in_one_sentence(text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("We just bought a place in Jersey City!", [("user", "lives_in", "Jersey City", "set", True)]),
    ("I've been renting in Brooklyn for five years.", [("user", "lives_in", "Brooklyn", "set", True)]),
    ("我们刚在通州买了房，已经搬过去了！", [("user", "lives_in", "通州", "set", True)]),
    ("My all-time favourite book is Dune.", [("user", "likes", "Dune", "add", True)]),
    ("我最喜欢的一本书是《三体》。", [("user", "likes", "三体", "add", True)]),
    ("爵士乐我不太感冒。", [("user", "dislikes", "爵士乐", "add", True)]),
])
def test_a_home_bought_or_rented_favourites_qualified_or_titled_and_not_my_thing(
        text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("好消息是我现在在一家餐厅当厨师。", [("user", "job", "厨师", "set", True)]),
    ("哎呀，其实我已经30了，生日刚过。", [("user", "age", "30", "correct", True)]),
])
def test_chinese_news_framing_interjections_an_unnamed_employer_and_a_birthday_without_a_date(
        text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


# ---------------------------------------------------------------- rule families from the fourteenth held-out round

@pytest.mark.parametrize(("text", "expected"), [
    ("My son and I are both allergic to peanuts.", [("user", "allergic_to", "peanuts", "add", True),
                                                    ("son", "allergic_to", "peanuts", "add", True)]),
    ("My husband and I both hate cold weather.", [("user", "dislikes", "cold weather", "add", True),
                                                  ("husband", "dislikes", "cold weather", "add", True)]),
])
def test_my_relative_and_i_says_it_of_both(text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("My grandma still lives in the house I grew up in, in Naples.", [("grandmother", "lives_in", "Naples", "set", True)]),
    ("I live in a small town near Boston.", [("user", "lives_in", "Boston", "set", True)]),
    ("I have my own flat in Leeds now.", [("user", "lives_in", "Leeds", "set", True)]),
    ("I have a house in Spain too.", []),
    ("我奶奶还住在老家那不勒斯。", [("grandmother", "lives_in", "那不勒斯", "set", True)]),
    ("我搬到了嘉兴的一个小镇。", [("user", "lives_in", "嘉兴", "set", True)]),
])
def test_where_one_lives_is_the_named_place_not_its_kind(
        text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize(("text", "last", "expected"), [
    ("现在在中科院做博士后。", None, [("user", "works_at", "中科院", "set", True), ("user", "job", "博士后", "set", True)]),
    ("我哥王强五月份结婚。", None, [("brother", "name", "王强", "set", True)]),
    ("不好意思打错了，是张辰。", _USER_NAME, [("user", "name", "张辰", "correct", True)]),
])
def test_chinese_postdoc_a_name_before_a_month_and_a_typo_corrected(
        text: str, last: FactKey | None, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text, last) == expected


@pytest.mark.parametrize(("said", "correction"), [("My birthday is on the 12th of August.", "Wait no, the 21st."),
                                                 ("我生日是8月12号。", "等等，不对，是21号。")])
def test_a_birthday_corrected_by_its_day_alone_keeps_the_month(tmp_path: Path, said: str, correction: str) -> None:
    facts = MemoryStore(tmp_path).user("u").facts
    for number, text in enumerate((said, correction), start=1):
        record_message(facts, OfflineExtractor(), text, source=FactSource("t", number))
    assert [f.value for f in facts.get("user", "birthday")] == ["08-21"]


# ---------------------------------------------------------------- rule families from the fifteenth held-out round

@pytest.mark.parametrize(("text", "expected"), [
    ("Hi! I'm Marta, a UX designer based in Barcelona.", [("user", "name", "Marta", "set", True),
                                                          ("user", "job", "UX designer", "set", True),
                                                          ("user", "lives_in", "Barcelona", "set", True)]),
    ("你好！我是李娜，在成都做UI设计师。", [("user", "name", "李娜", "set", True), ("user", "works_at", "成都", "set", True),
                                       ("user", "job", "UI设计师", "set", True)]),
    # a full name (a common surname) is an introduction without a greeting too; a title or a kind is not
    ("我是李娜。", [("user", "name", "李娜", "set", True)]),
    ("我是李思琪，想问问红烧鱼怎么做不腥。", [("user", "name", "李思琪", "set", True)]),
    ("我是高手。", []),
])
def test_an_introduction_after_a_greeting_with_a_role_in_apposition(
        text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize("text", ["We renamed her Salt, long story.", "后来我们给它改名叫盐巴了。"])
def test_a_new_name_for_the_one_spoken_about_corrects_its_name(text: str) -> None:
    value = "Salt" if text.isascii() else "盐巴"
    assert _read(text, FactKey("cat", "name")) == [("cat", "name", value, "correct", True)]


@pytest.mark.parametrize(("text", "expected"), [
    ("I drink green tea every morning, I love it.", [("user", "likes", "green tea", "add", True)]),
    ("I used to hate sushi but now I love it.", [("user", "dislikes", "sushi", "end", True),
                                                 ("user", "likes", "sushi", "add", True)]),
])
def test_it_after_a_thing_is_that_thing(text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("My cousin works for the BBC in London.", [("cousin", "works_at", "BBC", "set", True)]),
    ("我出生在哈尔滨，在大连长大。", [("user", "hometown", "哈尔滨", "set", True)]),
    ("可惜我对猫毛过敏，所以家里不养宠物。", [("user", "allergic_to", "猫毛", "add", True)]),
])
def test_an_employer_less_its_place_one_hometown_a_message_and_regret_framing(
        text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


def test_the_new_rules_read_long_adversarial_messages_in_linear_time() -> None:
    # "it" after a thing once let its object and its time words share the same text: 40,000 characters took 7 s and
    # 200,000 would take minutes; an open "陪\S*$" in a place's purpose took 3 s on 20,000 陪 (quadratic: 200,000 take
    # minutes); so were a value's closing words and symbols (20,000 了 took 50 s). A separate process, so a
    # regression fails at the timeout instead of hanging.
    _extract_in_a_child("('I drink ' + 'tea every ' * 20000 + ', I hate x', "
                        "'I live in the house ' + 'near in ' * 20000, 'We have ' + 'a beagle named ' * 12000, "
                        "'香菜我' * 30000 + '受不了', '我住在' + '的一个' * 30000 + '小镇', "
                        "'我住在' + '陪' * 200000 + ' 了x', '我住在' + '照顾' * 100000 + ' 了x', '我住在' + '了' * 60000 + ' x', "
                        "'我住在' + '★' * 200000 + 'x', 'I live in ' + '*' * 200000 + 'x')")


# ---------------------------------------------------------------- rule families from the sixteenth held-out round

@pytest.mark.parametrize(("text", "expected"), [
    ("Anna is my wife, she's a vet.", [("wife", "name", "Anna", "set", True), ("wife", "job", "vet", "set", True)]),
    ("安娜是我老婆，她是兽医。", [("wife", "name", "安娜", "set", True), ("wife", "job", "兽医", "set", True)]),
    ("现在改名叫王红了。", [("user", "name", "王红", "correct", True)]),
    ("我老家在贵州山区的一个小村子，叫石门坎。", [("user", "hometown", "石门坎", "set", True)]),
])
def test_a_name_said_first_a_new_name_and_a_village_named_after_a_comma(
        text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("I'm a native Spanish speaker.", [("user", "speaks", "Spanish", "add", True)]),
    ("我的母语是粤语。", [("user", "speaks", "粤语", "add", True)]),
    ("I'm a huge Beatles fan.", [("user", "likes", "Beatles", "add", True)]),
    ("I'm a big fan.", []),
    ("我是铁杆球迷。", [("user", "likes", "球", "add", True)]),
])
def test_a_native_speaker_a_mother_tongue_and_a_fan_of_a_thing(
        text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("I work nights at the Royal Infirmary as a porter.", [("user", "works_at", "Royal Infirmary", "set", True),
                                                           ("user", "job", "porter", "set", True)]),
    ("我在人民医院上夜班，做护工。", [("user", "works_at", "人民医院", "set", True), ("user", "job", "护工", "set", True)]),
    ("这学期开始我当校长了。", [("user", "job", "校长", "set", True)]),
])
def test_shifts_at_an_employer_and_a_role_from_this_term(
        text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


def test_a_bare_correction_of_a_name_drops_the_verb_of_naming() -> None:
    assert _read("哦不对，是叫旺财，旺旺是以前那条狗。", FactKey("dog", "name")) == [("dog", "name", "旺财", "correct", True)]


# ---------------------------------------------------------------- review guards: false positives of recent rules
# Each sentence below gave no fact before the rule that misread it; each rule is now constrained by grammar.

@pytest.mark.parametrize("text", ["同事叫我帮忙。", "朋友叫我出去玩。", "大家都叫我去吃饭。", "你叫我干嘛。", "别人叫我等一下。",
                                  "就叫我一声。", "妈妈叫我回家吃饭。", "同事叫我小李。"])
def test_chinese_being_asked_to_do_something_is_no_name(text: str) -> None:
    # 叫我 + an action is "asked me to"; a bare someone (同事, 你) calling me X is no name without 都/可以/就行
    assert _read(text) == []


@pytest.mark.parametrize(("text", "name"), [("大家都叫我小王。", "小王"), ("朋友都叫我阿杰。", "阿杰"),
                                            ("你叫我老王就行。", "老王"), ("家里人都叫我欧阳娜娜。", "欧阳娜娜"),
                                            ("叫我Tom就好了。", "Tom")])
def test_chinese_a_name_others_call_the_speaker_by_still_counts(text: str, name: str) -> None:
    assert _read(text) == [("user", "name", name, "set", True)]


@pytest.mark.parametrize("text", ["I speak to my mom every day.", "I speak at conferences.", "I speak my mind.",
                                  "我说了很多废话。", "我讲笑话。", "我说的是真话。", "我在讲电话。"])
def test_speaking_to_someone_or_saying_something_is_no_language(text: str) -> None:
    assert _read(text) == []


@pytest.mark.parametrize(("text", "languages"), [("I speak fluent Mandarin.", ["Mandarin"]),
                                                 ("I speak French and Spanish.", ["French", "Spanish"]),
                                                 ("I speak English at work.", ["English"]),
                                                 ("我会说一口流利的英语。", ["英语"]), ("我说普通话。", ["普通话"])])
def test_a_language_spoken_is_still_read(text: str, languages: list[str]) -> None:
    assert _read(text) == [("user", "speaks", v, "add", True) for v in languages]


@pytest.mark.parametrize(("text", "expected"), [
    ("I stopped at the store.", []), ("I kicked the ball.", []), ("I gave up my seat.", []),
    ("I stopped working at Google.", [("user", "works_at", "Google", "end", True)]),
    ("I've given up sugar.", [("user", "likes", "sugar", "end", True)]),
    ("I stopped eating meat.", [("user", "likes", "eating meat", "end", True), ("user", "likes", "meat", "end", True)]),
])
def test_a_habit_given_up_is_an_activity_or_a_thing_not_a_place_or_an_employer(
        text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("I'm over the moon about it.", []), ("I am over 30.", []), ("I am over six feet tall.", []),
    ("I'm so over reality TV.", [("user", "likes", "reality TV", "end", True)]),
    ("I became a US citizen.", []), ("I became an uncle.", []), ("I became a widow.", []),
    ("I became a grandmother.", []),
    ("I became a school principal last year.", [("user", "job", "school principal", "set", True)]),
])
def test_an_idiom_an_age_or_a_change_of_state_is_no_taste_ended_nor_job(
        text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize("text", ["I'm at Starbucks now.", "I'm at Heathrow now.", "I'm in Paris now."])
def test_being_somewhere_now_is_no_home_or_employer_said_alone(text: str) -> None:
    assert _read(text) == []


@pytest.mark.parametrize(("last", "expected"), [
    (FactKey("user", "works_at"), [("user", "works_at", "Salesforce", "set", True)]),
    (FactKey("user", "lives_in"), []),
])
def test_at_a_name_now_is_an_employer_in_a_conversation_about_work(
        last: FactKey, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read("I'm at Salesforce now.", last) == expected


# ---------------------------------------------------------------- general causes of the blind rounds' misses (facts18)
# Each family below is a cause found by classifying the first-run misses of heldout13–17 and probes written to vary
# them; each example was read wrongly (or not at all) before the rule.

@pytest.mark.parametrize(("text", "expected"), [
    ("I eventually moved to Denver.", [("user", "lives_in", "Denver", "set", True)]),
    ("My sister recently moved to Oslo.", [("sister", "lives_in", "Oslo", "set", True)]),
    ("My mum moved in with us in Leeds.", [("mother", "lives_in", "Leeds", "set", True)]),
    ("I live with my parents in York.", [("user", "lives_in", "York", "set", True)]),
    ("My sister moved with her husband to Oslo.", [("sister", "lives_in", "Oslo", "set", True)]),
    ("My younger brother just moved out to Vancouver.", [("brother", "lives_in", "Vancouver", "set", True)]),
    ("After college I moved back home to Ohio.", [("user", "lives_in", "Ohio", "set", True)]),
    ("In 2019, my sister joined Google.", [("sister", "works_at", "Google", "set", True)]),
    ("I ended up moving to Austin.", [("user", "lives_in", "Austin", "set", True)]),
    ("I moved to Berlin many years ago.", [("user", "lives_in", "Berlin", "set", True)]),
])
def test_words_between_the_subject_the_verb_and_the_place_do_not_hide_the_statement(
        text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize("text", ["I fly to Paris often.", "Before I moved to Paris, I visited Rome.",
                                  "I stayed with my aunt in Paris last summer.", "I live with my parents."])
def test_a_verb_in_ly_a_clause_before_the_subject_and_a_visit_are_still_no_home(text: str) -> None:
    assert _read(text) == []


@pytest.mark.parametrize(("text", "expected"), [
    ("As a 34-year-old, I find this hard.", ("user", "age", "34")),
    ("I'm a 29 year old nurse.", ("user", "age", "29")),
    ("Our son turned six last week.", ("son", "age", "6")),
    ("作为一个34岁的人，这挺难的。", ("user", "age", "34")),
    ("我今年39，下个月满40。", ("user", "age", "39")),
    ("我儿子今年7。", ("son", "age", "7")),
])
def test_an_age_said_as_what_one_is_or_as_this_years_number(text: str, expected: tuple[str, str, str]) -> None:
    assert [(s, a, v) for s, a, v, _, _ in _read(text)] == [expected]


@pytest.mark.parametrize(("text", "name"), [("My friends call me Tink because I'm always tinkering.", "Tink"),
                                            ("Most people just call me Sunny.", "Sunny"),
                                            ("Everyone at work calls me Jay.", "Jay"),
                                            ("My whole family calls me Bea.", "Bea")])
def test_a_name_many_people_call_the_speaker_by(text: str, name: str) -> None:
    assert _read(text) == [("user", "name", name, "set", True)]


@pytest.mark.parametrize("text", ["My kids call me constantly.", "My husband calls me Bunny.", "Call me tomorrow.",
                                  "My friends called me Tink in school."])
def test_a_request_a_pet_name_or_a_past_nickname_is_no_name(text: str) -> None:
    assert _read(text) == []


@pytest.mark.parametrize(("first", "second", "value"), [
    ("I live in Toronto.", "Well, technically Mississauga, but everyone says Toronto.", "Mississauga"),
    ("I work at Google.", "Strictly speaking, I work for Alphabet.", "Alphabet"),
    ("我住在广州。", "嗯，严格来说是佛山，不过大家都说广州。", "佛山"),
])
def test_technically_is_a_hedged_correction_held_as_a_conflict(tmp_path: Path, first: str, second: str,
                                                               value: str) -> None:
    facts = MemoryStore(tmp_path).user("u").facts
    for message_id, text in enumerate((first, second), start=1):
        record_message(facts, OfflineExtractor(), text, source=FactSource("s", message_id))
    assert [f.value for f in facts.conflicts()] == [value]


@pytest.mark.parametrize(("text", "expected"), [
    ("I live in Leeds, and I think it's lovely.", [("user", "lives_in", "Leeds", "set", True)]),
    ("I live in Leeds but I'm moving to Paris next year.", [("user", "lives_in", "Leeds", "set", True)]),
    ("I work at Google and I want to move to Apple.", [("user", "works_at", "Google", "set", True)]),
    ("我住在成都，我觉得这里挺好的。", [("user", "lives_in", "成都", "set", True)]),
    ("我在腾讯工作，可能明年会换。", [("user", "works_at", "腾讯", "set", True)]),
    # a guess or a plan in the first clause, or a hedge closing a clause of its own, still frames the sentence
    ("I'm not sure, maybe I live in Boulder now.", [("user", "lives_in", "Boulder", "set", False)]),
    ("I live in Leeds, I think.", [("user", "lives_in", "Leeds", "set", False)]),
    ("我住在成都吧，我不太确定。", [("user", "lives_in", "成都", "set", False)]),
])
def test_a_plan_or_a_guess_in_a_later_clause_governs_that_clause_only(
        text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize("text", ["I'd move to Paris if I could.", "我就搬去上海，如果可以的话。",
                                  "I'm going to move to Berlin, my sister lives there.", "我打算明年搬到成都，我妹妹住在那里。"])
def test_a_condition_anywhere_or_a_plan_first_still_frames_the_whole_sentence(text: str) -> None:
    assert _read(text) == []


@pytest.mark.parametrize(("text", "expected"), [
    ("I'm employed as a teacher.", [("user", "job", "teacher", "set", True)]),
    ("I was hired as a software engineer at Shopify.", [("user", "job", "software engineer", "set", True),
                                                        ("user", "works_at", "Shopify", "set", True)]),
    ("I've been a nurse for ten years.", [("user", "job", "nurse", "set", True)]),
    ("Mushrooms are something I really hate.", [("user", "dislikes", "Mushrooms", "add", True)]),
    ("Jazz is what I love most.", [("user", "likes", "Jazz", "add", True)]),
    ("My favourite food is definitely ramen.", [("user", "likes", "ramen", "add", True)]),
])
def test_more_forms_of_a_job_and_a_taste_and_a_value_less_its_filler(
        text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


def test_a_bare_correction_less_how_it_is_spelled() -> None:
    assert _read("Actually, it's spelled Kathryn.", _USER_NAME) == [("user", "name", "Kathryn", "correct", True)]


@pytest.mark.parametrize(("text", "expected"), [
    ("My birthday is next month, on June 3rd.", "06-03"), ("My birthday is coming up next week, May 9th.", "05-09"),
    ("我的生日是下个月，6月3号。", "06-03"), ("我生日是下周二，5月9号。", "05-09"),
    ("I was born on 3/14/1992.", "1992-03-14"), ("My birthday is 14/03/1992.", "1992-03-14"),
])
def test_a_birthday_with_when_it_next_comes_or_in_digits(text: str, expected: str) -> None:
    assert _read(text) == [("user", "birthday", expected, "set", True)]


@pytest.mark.parametrize("text", ["My birthday is 03/04/1992.", "Yeah right, like I'd ever live in Florida.",
                                  "I'm moving next month, on June 3rd.", "我下个月搬家，6月3号。"])
def test_an_ambiguous_date_sarcasm_and_a_dated_plan_give_nothing(text: str) -> None:
    assert _read(text) == []


@pytest.mark.parametrize(("text", "expected"), [
    ("我大哥在温州当水管工。", ("brother", "job", "水管工")),
    ("我二姐住在成都。", ("sister", "lives_in", "成都")),
    ("我小儿子今年五岁。", ("son", "age", "5")),
    ("我妈上个月搬来青岛跟我们一起住了。", ("mother", "lives_in", "青岛")),
    ("目前我和老公定居在苏州。", ("user", "lives_in", "苏州")),
    ("我远程给一家叫路米的创业公司干活。", ("user", "works_at", "路米")),
    ("我男朋友最近换到了阿里巴巴工作。", ("boyfriend", "works_at", "阿里巴巴")),
    ("我最近以产品经理的身份加入了字节跳动。", ("user", "works_at", "字节跳动")),
    ("业余时间我喜欢拉小提琴。", ("user", "likes", "拉小提琴")),
    ("去年春天我们领养了一只狗，叫饼干。", ("dog", "name", "饼干")),
    ("在柏林待了五年后，我又回到了慕尼黑。", ("user", "lives_in", "慕尼黑")),
])
def test_chinese_kin_order_company_time_before_the_subject_and_more_employer_forms(
        text: str, expected: tuple[str, str, str]) -> None:
    assert expected in [(s, a, v) for s, a, v, _, _ in _read(text)]
    assert ("user", "name") not in [(s, a) for s, a, _, _, _ in _read(text)]


@pytest.mark.parametrize("text", ["我远程给一家多伦多的公司工作。", "我为家人工作。", "给我打电话。", "我回到了家。"])
def test_chinese_an_unnamed_employer_family_and_coming_home_are_no_fact(text: str) -> None:
    assert _read(text) == []


def test_chinese_i_meant_corrects_the_last_attribute() -> None:
    assert _read("不好意思，我是说浦西。", _USER_LIVES) == [("user", "lives_in", "浦西", "correct", True)]


@pytest.mark.parametrize(("text", "expected"), [
    ("I used to work at IBM, now I'm at Oracle.", [("user", "works_at", "IBM", "end", True),
                                                   ("user", "works_at", "Oracle", "set", True)]),
    ("我以前在IBM工作，现在在甲骨文。", [("user", "works_at", "IBM", "end", True), ("user", "works_at", "甲骨文", "set", True)]),
    ("My sister, who lives in Rome, is a chef.", [("sister", "job", "chef", "set", True),
                                                  ("sister", "lives_in", "Rome", "set", True)]),
    ("Tom, my roommate, works at Tesco.", [("roommate", "name", "Tom", "set", True),
                                          ("roommate", "works_at", "Tesco", "set", True)]),
    ("我室友小汤晚上在面包店上夜班。", [("roommate", "name", "小汤", "set", True), ("roommate", "works_at", "面包店", "set", True)]),
    ("我喜欢巴黎，但我住在里昂。", [("user", "likes", "巴黎", "add", True), ("user", "lives_in", "里昂", "set", True)]),
    ("我新养了一只小狗！它叫肉肉。", [("user", "has_pet", "狗", "add", True), ("dog", "name", "肉肉", "set", True)]),
])
def test_now_after_a_past_an_aside_about_a_relative_a_joining_word_and_it_for_a_new_pet(
        text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("I'm staying at a hotel in Madrid this week.", []), ("我这周住在马德里的一家酒店。", []), ("我讨厌别人迟到。", []),
    ("刚搬到成都，还在适应。", [("user", "lives_in", "成都", "set", True)]),  # (还在适应 is a state, no place)
])
def test_a_stay_a_clause_as_a_value_and_a_bare_state_are_no_fact(
        text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("I handed in my notice and started at KPMG on Monday.", [("user", "works_at", "KPMG", "set", True)]),
    ("I passed the bar, so I'm now a lawyer.", [("user", "job", "lawyer", "set", True)]),
    ("我上周递了辞呈，周一开始去毕马威上班了。", [("user", "works_at", "毕马威", "set", True)]),
    ("我哥后来转行当了护士。", [("brother", "job", "护士", "set", True)]),
])
def test_a_second_verb_or_a_consequence_is_a_clause_and_a_change_of_trade_names_the_job(
        text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("Tofu's not really my thing anymore.", [("user", "likes", "Tofu", "end", True)]),
    ("My knees gave out so I don't run anymore.", [("user", "likes", "running", "end", True)]),
    ("I don't swim anymore.", [("user", "likes", "swimming", "end", True)]),
    ("膝盖坏了，所以现在不跑了。", [("user", "likes", "跑步", "end", True)]),
    ("现在豆腐我已经不爱吃了。", [("user", "likes", "豆腐", "end", True)]),
])
def test_an_activity_or_a_taste_that_stopped_ends_the_like(
        text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize(("text", "age"), [("My son just had his fifth birthday.", "5"),
                                           ("I celebrated my 40th birthday yesterday.", "40"),
                                           ("我儿子刚过完五岁生日。", "5")])
def test_a_birthday_just_had_gives_the_age(text: str, age: str) -> None:
    assert [(a, v) for _, a, v, _, _ in _read(text)] == [("age", age)]


def test_after_leaving_a_name_that_is_an_employer_or_a_home_a_bare_now_there_is_unsure_so_nothing() -> None:
    assert _read("我已经离开Costa了，现在在Pret。") == [("user", "works_at", "Costa", "end", True),
                                                   ("user", "lives_in", "Costa", "end", True)]


@pytest.mark.parametrize(("text", "expected"), [
    ("My wife used to teach high school maths. Now she's a data analyst at a bank.",
     [("wife", "job", "data analyst", "set", True)]),
    ("我老婆以前教高中数学。现在她在银行做数据分析师。", [("wife", "works_at", "银行", "set", True),
                                                ("wife", "job", "数据分析师", "set", True)]),
    # someone's words introduce nobody: what follows stays theirs
    ("My friend said she lives in Berlin. She works at Google.", []),
    ("我同事说她住在朝阳区。她在腾讯工作。", []),
])
def test_a_relative_spoken_about_with_no_fact_is_whom_a_later_pronoun_names(
        text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("I've been at Deloitte since 2019.", [("user", "works_at", "Deloitte", "set", True)]),
    ("I've been at Heathrow for three hours.", []),
])
def test_been_at_a_name_for_years_is_an_employer_for_hours_a_place(
        text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize("text", ["My sister is a genius.", "My dad is a legend.", "I'm a dreamer.", "I'm an optimist.",
                                  "Everyone calls me lazy."])
def test_a_description_is_no_job_and_an_adjective_no_name(text: str) -> None:
    assert _read(text) == []


@pytest.mark.parametrize(("text", "job"), [("I'm a lifeguard.", "lifeguard"), ("My brother is a sous chef.", "sous chef"),
                                           ("I'm a vet.", "vet"), ("I'm a nurse practitioner.", "nurse practitioner")])
def test_a_job_by_its_word_is_still_read(text: str, job: str) -> None:
    assert [(a, v) for _, a, v, _, _ in _read(text)] == [("job", job)]


@pytest.mark.parametrize("text", ["我是好人。", "我是一个很懒的人。", "我是成年人。", "我是外地人。", "我是做梦的。", "我是搞笑的。",
                                  "我喜欢上了一个人。", "我爱上了她。", "我住的地方离公司很远。", "我是老师眼里的好学生。"])
def test_chinese_a_kind_of_person_a_one_character_trade_a_person_loved_and_a_clause_are_no_fact(text: str) -> None:
    assert _read(text) == []


@pytest.mark.parametrize(("text", "expected"), [("我是大连人。", ("hometown", "大连")), ("我是湖南长沙人。", ("hometown", "湖南长沙")),
                                                ("我是做设计的。", ("job", "设计")), ("我爱上了滑雪。", ("likes", "滑雪"))])
def test_chinese_a_place_before_ren_a_trade_and_a_new_love_are_still_read(text: str, expected: tuple[str, str]) -> None:
    assert [(a, v) for _, a, v, _, _ in _read(text)] == [expected]


@pytest.mark.parametrize("text", ["I love it here.", "I like how you explained it.", "I work at night.", "I work at home.",
                                  "I live in fear of spiders.", "I live in the moment.", "I grew up in the countryside.",
                                  "I was born in a hospital.", "My name is on the list.", "My name is hard to spell."])
def test_a_clause_a_common_noun_for_a_place_and_words_about_a_name_are_no_value(text: str) -> None:
    assert _read(text) == []


@pytest.mark.parametrize(("text", "expected"), [
    ("i live in berlin", ("lives_in", "berlin")), ("I work at the BBC.", ("works_at", "BBC")),
    ("I live in the Bay Area.", ("lives_in", "the Bay Area")), ("my name is alex", ("name", "alex")),
])
def test_a_named_place_and_a_lowercase_chat_name_are_still_read(text: str, expected: tuple[str, str]) -> None:
    assert [(a, v) for _, a, v, _, _ in _read(text)] == [expected]


def test_not_the_old_value_then_the_new_one_corrects_the_last_attribute() -> None:
    assert _read("Not Ford, Toyota.", FactKey("user", "works_at")) == [("user", "works_at", "Toyota", "correct", True)]
    assert _read("Not sure, maybe Boston.") == []


@pytest.mark.parametrize(("text", "expected"), [
    ("他六月就51了。", []), ("我老公到年底就五十岁了。", []),
    ("我3月就搬到上海了。", [("user", "lives_in", "上海", "set", True)]),
    ("我们家的狗旺财12岁了。", [("dog", "name", "旺财", "set", True), ("dog", "age", "12", "set", True)]),
])
def test_chinese_an_age_by_a_later_month_is_to_come_and_a_name_before_an_age(
        text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text, FactKey("husband", "age") if text.startswith("他") else None) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("I call Vancouver home these days.", ("user", "lives_in", "Vancouver")),
    ("Home is Melbourne for now.", ("user", "lives_in", "Melbourne")),
    ("I'm a Chicago native.", ("user", "hometown", "Chicago")),
    ("Born and bred in Liverpool, me.", ("user", "hometown", "Liverpool")),
    ("My go-to drink is an iced latte.", ("user", "likes", "an iced latte")),
    ("I can't get enough of K-dramas.", ("user", "likes", "K-dramas")),
    ("I have a nut allergy.", ("user", "allergic_to", "nut")),
    ("I hate the cold, which is funny since I live in Oslo.", ("user", "lives_in", "Oslo")),
    ("温哥华是我的家。", ("user", "lives_in", "温哥华")), ("上海是我的老家。", ("user", "hometown", "上海")),
    ("我是土生土长的芝加哥人。", ("user", "hometown", "芝加哥")), ("我平时最常喝的是冰拿铁。", ("user", "likes", "冰拿铁")),
    ("我日语说得很流利。", ("user", "speaks", "日语")), ("我双胞胎哥哥阿历克斯住在丹佛。", ("brother", "lives_in", "丹佛")),
    ("我是阿森纳的铁杆球迷。", ("user", "likes", "阿森纳")), ("我对象小山是急救员。", ("partner", "job", "急救员")),
    ("我很怕冷，可偏偏住在奥斯陆。", ("user", "lives_in", "奥斯陆")),
])
def test_more_ways_to_say_home_origin_taste_language_and_kin(text: str, expected: tuple[str, str, str]) -> None:
    assert expected in [(s, a, v) for s, a, v, _, _ in _read(text)]


@pytest.mark.parametrize("text", ["I've lived in six countries.", "I'm lactose intolerant.", "I have a bit allergy.",
                                  "他说得对。", "这里是我的家。"])
def test_a_count_of_places_an_intolerance_and_said_well_are_no_fact(text: str) -> None:
    assert _read(text) == []


@pytest.mark.parametrize(("text", "expected"), [
    ("I used to live in Rome, then Milan, and now Turin.", [("user", "lives_in", "Rome", "end", True),
                                                            ("user", "lives_in", "Turin", "set", True)]),
    ("I've switched jobs, I'm now at Spotify.", [("user", "works_at", "Spotify", "set", True)]),
    ("我换工作了，现在在Spotify。", [("user", "works_at", "Spotify", "set", True)]),
    ("I work in finance, at Barclays.", [("user", "works_in", "finance", "set", True),
                                         ("user", "works_at", "Barclays", "set", True)]),
    ("Our dog is a golden retriever named Max.", [("dog", "name", "Max", "set", True)]),
    ("I'm a former teacher.", [("user", "job", "teacher", "end", True)]),
    ("Coffee? Can't stand the stuff.", []),
    ("我老公老家是利马的。", [("husband", "hometown", "利马", "set", True)]),
    ("我对运动不太感兴趣。", [("user", "dislikes", "运动", "add", True)]),
    ("我对猫和狗都过敏。", [("user", "allergic_to", "猫", "add", True), ("user", "allergic_to", "狗", "add", True)]),
])
def test_now_after_a_list_of_places_a_field_then_its_employer_a_kind_then_a_name_and_more(
        text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("I've recently taken up pottery.", ("user", "likes", "pottery")),
    ("Rugby's my absolute favourite sport.", ("user", "likes", "Rugby")),
    ("I'm a software engineer, currently at Shopify.", ("user", "works_at", "Shopify")),
    ("My brother and his wife live in Cork.", ("brother", "lives_in", "Cork")),
    ("我嫂子是都柏林的药剂师。", ("sister_in_law", "job", "药剂师")),
    ("比起咖啡我更喜欢茶。", ("user", "likes", "茶")),
    ("我是软件工程师，目前在Shopify。", ("user", "works_at", "Shopify")),
    ("我哥和我嫂子住在科克。", ("brother", "lives_in", "科克")),
    ("我的猫露娜很讨厌去看兽医。", ("cat", "name", "露娜")),
])
def test_a_pastime_taken_up_an_employer_after_a_job_a_relative_and_company_and_in_laws(
        text: str, expected: tuple[str, str, str]) -> None:
    assert expected in [(s, a, v) for s, a, v, _, _ in _read(text)]


def test_taking_up_a_job_offer_is_no_pastime() -> None:
    assert ("user", "likes") not in [(s, a) for s, a, _, _, _ in _read("I took up the job offer.")]


@pytest.mark.parametrize(("text", "last", "expected"), [
    ("Had my 30th last weekend!", None, [("user", "age", "30", "set", True)]),
    ("I've switched to tea these days.", None, [("user", "likes", "tea", "add", True)]),
    ("现在改喝茶了。", None, [("user", "likes", "茶", "add", True)]),
    ("She left to start her own company.", FactKey("sister", "works_at"), [("sister", "works_at", "", "end", True)]),
    ("I'm allergic to dust, not cats.", None, [("user", "allergic_to", "dust", "add", True),
                                               ("user", "allergic_to", "cats", "end", True)]),
    ("后来发现其实是对灰尘过敏，不是猫。", None, [("user", "allergic_to", "灰尘", "add", True),
                                           ("user", "allergic_to", "猫", "end", True)]),
    ("I switched to Google last year.", None, [("user", "works_at", "Google", "set", True)]),
])
def test_a_change_of_habit_an_ordinal_birthday_leaving_to_do_something_and_not_x_in_a_list(
        text: str, last: FactKey | None, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text, last) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("Quick intro: I'm Tom, 41, a dad of two living in Hull.", [("user", "name", "Tom", "set", True),
                                                                 ("user", "age", "41", "set", True),
                                                                 ("user", "lives_in", "Hull", "set", True)]),
    ("I've worked as a paramedic for twelve years.", [("user", "job", "paramedic", "set", True)]),
    ("I'm pretty sure my birthday is the same as yours, 4 July.", [("user", "birthday", "07-04", "set", True)]),
    ("我当急救员已经十二年了。", [("user", "job", "急救员", "set", True)]),
    ("我们去年春天在利斯买了房子。", [("user", "lives_in", "利斯", "set", True)]),
    ("我同事小丹特别迷F1。", [("colleague", "name", "小丹", "set", True), ("colleague", "likes", "F1", "add", True)]),
])
def test_an_introduction_in_pieces_a_job_for_years_a_season_and_a_fan(
        text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize("text", ["我迷路了。", "I'm Tired, sorry, long day."])
def test_being_lost_or_tired_is_no_taste_and_no_introduction(text: str) -> None:
    assert _read(text) == []


@pytest.mark.parametrize(("text", "expected"), [
    ("Me and my sister both love horses.", [("user", "likes", "horses", "add", True),
                                            ("sister", "likes", "horses", "add", True)]),
    ("跟我哥不一样，我讨厌足球。", [("user", "dislikes", "足球", "add", True)]),
    ("我跟猫一样懒。", []),  # (a likeness is still a figure of speech)
])
def test_me_and_my_relative_and_unlike_someone_are_statements(
        text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


def test_the_facts18_rules_read_long_adversarial_messages_in_linear_time() -> None:
    # Every rule of this round on inputs that repeat what it looks for; the clause scope of a plan once searched the
    # whole text before each comma (quadratic). A separate process, so a regression fails at the timeout.
    _extract_in_a_child("('I live in Leeds' + ', and so' * 40000, 'I live in ' + 'x, ' * 100000, "
                        "'My friends ' + 'call me ' * 40000 + 'Tink', 'I moved ' + 'with my ' * 40000 + 'to Leeds', "
                        "'After ' + 'the war ' * 40000 + 'I moved to Leeds', '我住在北京' + '，好' * 100000, "
                        "'我' + '今年3' * 60000, '在柏林' + '待了五年' * 40000 + '回到了慕尼黑', '我住在北京' + '跟' * 200000 + 'x', "
                        "'My birthday is ' + 'next week, ' * 40000 + 'May 9th', 'I am a ' + '34-year-old ' * 40000, "
                        "'我' + '以产品经理' * 40000 + '的身份加入了字节跳动', 'Jazz ' * 40000 + 'is what I love', "
                        "\"I'm Tom, \" + '41, ' * 40000, '我当急救员' + '已经' * 40000, "
                        "'My sister, who ' + 'x ' * 40000 + ', is a chef', 'Tom, my roommate, ' + 'works ' * 40000, "
                        "'我以前在IBM工作，现在在' + '在' * 100000, 'I am staying at ' + 'a hotel ' * 40000, "
                        "'我新养了一只小狗！' + '它叫' * 60000, 'I do not ' + 'run ' * 40000 + 'anymore', "
                        "'豆腐我' + '已经' * 60000 + '不爱吃了', '我' + '周一开始' * 40000 + '去毕马威上班了')")


def test_a_long_run_of_months_or_digits_is_read_in_linear_time() -> None:
    # Two patterns older than the linear-time tests above, quadratic on what they look for repeated: a birthday's
    # open ".*?" before 月 was tried at every 月 of a long run, each time to the end (40k characters: 18 s), and the
    # years of a stay took an open run of digits from every digit (40k: 2.4 s). At these sizes the quadratic forms
    # take many minutes.
    _extract_in_a_child("('我爸是' + '3月' * 200000 + '生日', '我是' + '3月' * 200000 + '生的', "
                        "'在柏林' + '1' * 400000 + '回到了慕尼黑', '我在柏林待了' + '1' * 400000 + '后回到了慕尼黑')")


def test_a_birthday_and_the_years_of_a_stay_are_still_read() -> None:
    """What the two linear forms above must still read: the month is the first 月, a stay's years a few digits."""
    facts = {(f.key.subject, f.key.attribute): f.value for f in OfflineExtractor().extract("我爸是3月12号生日")}
    assert facts.get(("father", "birthday")) == "03-12"
    facts = {(f.key.subject, f.key.attribute): f.value for f in OfflineExtractor().extract("我是1995年6月21号生的")}
    assert facts.get(("user", "birthday")) == "1995-06-21"
    for said, home in (("三十年后，我又回到了成都", "成都"), ("在柏林待了12年，我又回到了慕尼黑", "慕尼黑")):
        facts = {(f.key.subject, f.key.attribute): f.value for f in OfflineExtractor().extract(said)}
        assert facts.get(("user", "lives_in")) == home, said  # back where one lived, after years elsewhere


def test_many_sentences_about_the_user_are_read_in_linear_time() -> None:
    # Every sentence looked for the relation a pronoun names through everything the message had said so far
    # (quadratic: 4,000 short sentences took 10 s); it looks at the last few statements now.
    _extract_in_a_child("('I live in Leeds; ' * 10000 + 'I am in Derby; ' * 10000,)")


def test_a_pronoun_still_names_the_relative_a_few_statements_back() -> None:
    said = "My sister lives in Paris. I live in Leeds. I work at Tesco. I love jazz. She works at Google."
    facts = {(f.key.subject, f.key.attribute): f.value for f in OfflineExtractor().extract(said)}
    assert facts.get(("sister", "works_at")) == "Google"
    assert facts.get(("user", "works_at")) == "Tesco"


@pytest.mark.parametrize(("text", "expected"), [
    ("We just moved to Portland last weekend, still unpacking boxes.", [("user", "lives_in", "Portland", "set", True)]),
    ("I moved to Denver last Friday", [("user", "lives_in", "Denver", "set", True)]),
    ("I started at Google a while back", [("user", "works_at", "Google", "set", True)]),
    ("I moved to Leeds a while ago", [("user", "lives_in", "Leeds", "set", True)]),
])
def test_a_time_said_after_a_value_is_not_part_of_it(text: str,
                                                      expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("I'm 34 and originally from Glasgow.", [("user", "age", "34", "set", True),
                                             ("user", "hometown", "Glasgow", "set", True)]),
    ("I'm 29 and allergic to cats", [("user", "age", "29", "set", True), ("user", "allergic_to", "cats", "add", True)]),
    ("I am from Cork and a nurse", [("user", "hometown", "Cork", "set", True), ("user", "job", "nurse", "set", True)]),
    ("My sister is a nurse and based in Leeds", [("sister", "job", "nurse", "set", True),
                                                 ("sister", "lives_in", "Leeds", "set", True)]),
])
def test_one_subject_and_be_shared_by_two_complements_gives_both(
        text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("我已经不对牛奶过敏了", [("user", "allergic_to", "牛奶", "end", True)]),
    ("我现在对牛奶不过敏了", [("user", "allergic_to", "牛奶", "end", True)]),  # 不过敏: not 不过 ("but")
    ("我对花粉已经不过敏了", [("user", "allergic_to", "花粉", "end", True)]),
    ("我对花粉过敏，不过不严重", [("user", "allergic_to", "花粉", "add", True)]),
    ("我已经不在华为干了，目前在家休息", [("user", "works_at", "华为", "end", True)]),  # 干: the spoken "work"
    ("我在华为干了三年", [("user", "works_at", "华为", "set", True)]),
    ("我以前在IBM工作，现在在家乐福", [("user", "works_at", "IBM", "end", True), ("user", "works_at", "家乐福", "set", True)]),
])
def test_an_allergy_or_a_job_that_ended_in_chinese(text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("hey! I'm Priya btw, I'm a dental hygienist", [("user", "name", "Priya", "set", True),
                                                    ("user", "job", "dental hygienist", "set", True)]),
    ("i live out in Croydon and work at Deloitte", [("user", "lives_in", "Croydon", "set", True),
                                                    ("user", "works_at", "Deloitte", "set", True)]),
    ("these days I'm way more into green tea", [("user", "likes", "green tea", "add", True)]),
    ("just started a new job as a web developer!! so nervous", [("user", "job", "web developer", "set", True)]),
    ("don't work at Tesco anymore thank god", [("user", "works_at", "Tesco", "end", True)]),
])
def test_chat_phrasings_of_ordinary_statements(text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("I'm obsessed with sushi but I honestly can't stand cilantro, any ideas that work for both?",
     [("user", "likes", "sushi", "add", True), ("user", "dislikes", "cilantro", "add", True)]),
    ("My sister lives in Oslo, what should I send her for her birthday?",
     [("sister", "lives_in", "Oslo", "set", True)]),
    # a question of the statement itself, or about someone not ours, or with no "I" or "my" of its own: nothing
    ("Do you remember I live in Paris, what's the weather?", []),
    ("If I moved to Lisbon, what would I need?", []),
    ("Love the necklace, any special meaning to it?", []),
])
def test_a_statement_before_a_question_to_the_assistant_stands(
        text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("Actually it's walnuts I'm allergic to, not almonds.", [("user", "allergic_to", "walnuts", "add", True),
                                                            ("user", "allergic_to", "almonds", "end", True)]),
    ("it's Lyon I live in", [("user", "lives_in", "Lyon", "set", True)]),
    ("I'm not a fan of cilantro at all.", [("user", "dislikes", "cilantro", "add", True)]),
    ("It's based on a book series that I love.", []),  # a participle, not a value put first
    ("我现在不当老师了，改做翻译了。", [("user", "job", "老师", "end", True), ("user", "job", "翻译", "set", True)]),
    ("哦不对，我是在网易工作，刚才说错了。", [("user", "works_at", "网易", "correct", True)]),
    ("更正：我过敏的是虾，不是所有海鲜。", [("user", "allergic_to", "虾", "add", True), ("user", "allergic_to", "海鲜", "end", True)]),
    ("帮我写个故事，主人公叫小红，住在巴黎，是个厨师。", []),  # the story's, not the speaker's
])
def test_values_put_first_emphatic_shi_and_what_a_story_asked_for_says(
        text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    # a predicate said once and meant for someone else too
    ("I'm not a doctor, my wife is.", [("wife", "job", "doctor", "set", True)]),
    ("I don't live in Leeds, my sister does.", [("sister", "lives_in", "Leeds", "set", True)]),
    ("My best friend's birthday is October 12th and mine is October 20th.",
     [("best_friend", "birthday", "10-12", "set", True), ("user", "birthday", "10-20", "set", True)]),
    ("我不是老师，我姐姐才是。", [("sister", "job", "老师", "set", True)]),
    ("我不是医生，是我老公", [("husband", "job", "医生", "set", True)]),
    ("我室友的生日是12月3号，我的是12月30号。",
     [("roommate", "birthday", "12-03", "set", True), ("user", "birthday", "12-30", "set", True)]),
    # two people in one sentence, joined by "meanwhile", each with an age
    ("my boss is 61 and still runs marathons, meanwhile I'm 32 and get winded on the stairs",
     [("boss", "age", "61", "set", True), ("user", "age", "32", "set", True)]),
    ("我爸今年65了，身体比我还好，我才40就天天腰疼", [("father", "age", "65", "set", True), ("user", "age", "40", "set", True)]),
    ("今年刚满26，感觉时间过得好快啊", [("user", "age", "26", "set", True)]),
])
def test_an_elided_predicate_or_a_second_person_in_the_sentence_is_read(
        text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("fun fact my bday is on valentines day so i never get a proper date lol", [("user", "birthday", "02-14", "set", True)]),
    ("I was born on New Year's Day.", [("user", "birthday", "01-01", "set", True)]),
    ("我生日就是国庆节那天哈哈，每次都跟放假撞一起", [("user", "birthday", "10-01", "set", True)]),
    ("My birthday is at Easter this year.", []),  # a holiday with no fixed day names no date
    ("for the form: born 3 Nov 1991, and I speak French and Arabic fluently",
     [("user", "birthday", "1991-11-03", "set", True), ("user", "speaks", "French", "add", True),
      ("user", "speaks", "Arabic", "add", True)]),
    ("Please keep in mind I'm allergic to peanuts and shellfish when you suggest recipes.",
     [("user", "allergic_to", "peanuts", "add", True), ("user", "allergic_to", "shellfish", "add", True)]),
    ("I'm allergic to peanuts and also shellfish so pls nothing with either",
     [("user", "allergic_to", "peanuts", "add", True), ("user", "allergic_to", "shellfish", "add", True)]),
    ("I live in Paris and also work at Google", [("user", "lives_in", "Paris", "set", True),
                                                 ("user", "works_at", "Google", "set", True)]),
    ("I can't stand mushrooms anymore", [("user", "likes", "mushrooms", "end", True),
                                         ("user", "dislikes", "mushrooms", "add", True)]),
    ("I don't like mushrooms anymore", [("user", "likes", "mushrooms", "end", True)]),
    ("我不喜欢吃榴莲。", [("user", "dislikes", "榴莲", "add", True)]),  # what one eats is the thing disliked
    ("我喜欢吃辣", [("user", "likes", "吃辣", "add", True)]),  # (one character after it: an activity)
    ("没想到现在我居然爱上榴莲了！", [("user", "likes", "榴莲", "add", True)]),
])
def test_holidays_forms_requests_and_consumption_verbs(
        text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize(("text", "last", "expected"), [
    ("Oh wait, actually it's November 3, 1989.", ("user", "birthday"), [("user", "birthday", "1989-11-03", "correct", True)]),
    ("sorry autocorrect, it's Kathryn", ("user", "name"), [("user", "name", "Kathryn", "correct", True)]),
])
def test_a_bare_correction_takes_the_value_it_says_is_the_value(
        text: str, last: tuple[str, str], expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text, fact_key(*last)) == expected


@pytest.mark.parametrize(("text", "expected"), [
    # an aversion that ended is the dislike that ended; a like denied that ended is the like that ended
    ("I used to hate olives but now I honestly love them", [("user", "dislikes", "olives", "end", True),
                                                           ("user", "likes", "olives", "add", True)]),
    ("I don't hate jazz anymore", [("user", "dislikes", "jazz", "end", True)]),
    ("I don't like jazz anymore", [("user", "likes", "jazz", "end", True)]),
    ("I like jazz but my wife hates it", [("user", "likes", "jazz", "add", True), ("wife", "dislikes", "jazz", "add", True)]),
    ("我以前特别讨厌吃香菜，现在居然爱上了", [("user", "dislikes", "香菜", "end", True), ("user", "likes", "香菜", "add", True)]),
    ("我以前不喜欢香菜", [("user", "dislikes", "香菜", "end", True)]),
    ("我现在不讨厌香菜了", [("user", "dislikes", "香菜", "end", True)]),
    ("我不喜欢香菜了", [("user", "likes", "香菜", "end", True)]),
])
def test_what_ended_is_the_taste_as_it_was_said(text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("Before that I was a barista for four years, so this is huge for me.", [("user", "job", "barista", "end", True)]),
    ("I used to be a barista", [("user", "job", "barista", "end", True)]),
    ("I was a kid then", []),
    ("My roommate is super allergic to cats so no pets for me", [("roommate", "allergic_to", "cats", "add", True)]),
    ("I'm no longer with Target as of friday.", [("user", "works_at", "Target", "end", True)]),
    ("I'm still stuck in Galway haha", [("user", "lives_in", "Galway", "set", True)]),
    ("I'm stuck in traffic", []),
    ("我是做程序员的啦😂", [("user", "job", "程序员", "set", True)]),
    ("我以前当护士，现在在药企做医药代表", [("user", "job", "护士", "end", True), ("user", "works_at", "药企", "set", True),
                                   ("user", "job", "医药代表", "set", True)]),
    ("换工作了哈，现在去小米了，还是做硬件工程师", [("user", "job", "硬件工程师", "set", True)]),
    ("我爸今年60了，我妈58", [("father", "age", "60", "set", True), ("mother", "age", "58", "set", True)]),
    ("一共58", []),
    ("现在大概算产品经理了吧？我也不确定，活儿啥都干", [("user", "job", "产品经理", "set", False)]),
    ("你是北京人吧？", []),
])
def test_past_jobs_intensifiers_particles_and_guesses_said_as_questions(
        text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize(("text", "last", "expected"), [
    ("*John, with an h", ("user", "name"), [("user", "name", "John", "correct", True)]),
    ("Kathryn*", ("user", "name"), [("user", "name", "Kathryn", "correct", True)]),
    # a clause or a kind of thing is no value, even said unsure right after one
    ("not sure, the merger stuff is confusing lol", ("user", "works_at"), []),
    ("It's a trial contract, so I'm not sure.", ("user", "works_at"), []),
    ("我也不确定，活儿啥都干", ("user", "job"), []),
])
def test_a_starred_word_corrects_and_a_clause_is_no_bare_value(
        text: str, last: tuple[str, str], expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text, fact_key(*last)) == expected



@pytest.mark.parametrize(("text", "expected"), [
    ("I have a hamster and a parrot.", [("user", "has_pet", "hamster", "add", True),
                                        ("user", "has_pet", "parrot", "add", True)]),
    ("Sadly we no longer have the hamster.", [("user", "has_pet", "hamster", "end", True)]),
    ("I don't have a dog anymore", [("user", "has_pet", "dog", "end", True)]),
    ("Our cat died last week", [("user", "has_pet", "cat", "end", True)]),
    ("We gave away the rabbit", [("user", "has_pet", "rabbit", "end", True)]),
    ("我养了一只狗和一只兔子。", [("user", "has_pet", "狗", "add", True), ("user", "has_pet", "兔子", "add", True)]),
    ("兔子送给朋友了，现在家里只剩狗。", [("user", "has_pet", "兔子", "end", True)]),
    ("我们家的狗去年走了", [("user", "has_pet", "狗", "end", True)]),
    ("我不养猫了", [("user", "has_pet", "猫", "end", True)]),
    # no pet of the user's: denied, wished for, someone else's, a love of a kind, an allergy
    ("I don't have a dog", []),
    ("I want to get a dog", []),
    ("My sister has a cat", [("sister", "has_pet", "cat", "add", True)]),  # (hers, not the user's)
    ("I've always had a love for horses!", []),
    ("I have a dog allergy", [("user", "allergic_to", "dog", "add", True)]),
    ("我想养一只猫", []),
])
def test_the_pets_one_keeps_and_no_longer_keeps(text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


def test_a_relatives_name_said_with_a_possessive_is_the_name() -> None:
    assert _read("My friend Lucy's birthday is November 3rd, help me pick a gift?") == [
        ("friend", "name", "Lucy", "set", True), ("friend", "birthday", "11-03", "set", True)]


@pytest.mark.parametrize(("text", "expected"), [
    # a question after a dash, an emoticon, a time after "and", a change verb after a comma, how well one speaks
    ("I live in Vancouver - can you suggest a few weekend hikes nearby?", [("user", "lives_in", "Vancouver", "set", True)]),
    ("Good evening :) I speak Portuguese, can you reply in it sometimes so I don't get rusty?",
     [("user", "speaks", "Portuguese", "add", True)]),
    ("I work at Mercy Hospital as a nurse and today was pure chaos.",
     [("user", "works_at", "Mercy Hospital", "set", True), ("user", "job", "nurse", "set", True)]),
    ("Quit Crumbs last Friday, started at Blue Bottle this week.",
     [("user", "works_at", "Crumbs", "end", True), ("user", "works_at", "Blue Bottle", "set", True)]),
    ("I speak Portuguese and a bit of Japanese.", [("user", "speaks", "Portuguese", "add", True),
                                                   ("user", "speaks", "Japanese", "add", True)]),
    ("I like some jazz", [("user", "likes", "some jazz", "add", True)]),  # (how well: only of a language)
    ("I'm not teaching anymore, took early retirement in June", [("user", "job", "", "end", True)]),
    # one's own place after another person's
    ("My sister lives in Oslo and I'm in Bergen", [("sister", "lives_in", "Oslo", "set", True),
                                                   ("user", "lives_in", "Bergen", "set", True)]),
    ("我姐姐住在上海，我在苏州", [("sister", "lives_in", "上海", "set", True), ("user", "lives_in", "苏州", "set", True)]),
    ("我老公在华为上班，我在家带娃", [("husband", "works_at", "华为", "set", True)]),
    ("我老公在华为上班，我在学校上课", [("husband", "works_at", "华为", "set", True)]),
    ("我不会说粤语，虽然我住在广州", [("user", "lives_in", "广州", "set", True)]),
    ("我同事王磊会说德语，帮我把这段话翻成德语吧", [("colleague", "name", "王磊", "set", True),
                                    ("colleague", "speaks", "德语", "add", True)]),
    ("下周五是我生日，9月12号，帮我订个餐厅呗", [("user", "birthday", "09-12", "set", True)]),
    ("工作换成平安保险了，上周刚入职", [("user", "works_at", "平安保险", "set", True)]),
])
def test_requests_greetings_and_a_second_person_around_a_fact(
        text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected



@pytest.mark.parametrize(("text", "expected"), [
    # a fact said on the way to a request
    ("I'm planning a weekend getaway from Seattle, where I live — anything good within a three-hour drive?",
     [("user", "lives_in", "Seattle", "set", True)]),
    ("Back in my hometown of Aberdeen we always had butteries for breakfast.", [("user", "hometown", "Aberdeen", "set", True)]),
    ("As a nurse working night shifts, what should I eat before a 12-hour shift?", [("user", "job", "nurse", "set", True)]),
    ("As a runner, what should I eat?", []),  # a pastime, not a living
    ("I'm a runner", []),
    ("I work at Google and eat lunch at the office most days, so I only need ideas for light dinners.",
     [("user", "works_at", "Google", "set", True)]),
    ("I work at Marks and Spencer", [("user", "works_at", "Marks and Spencer", "set", True)]),
    ("My brother works at Tesla and never has time to cook.", [("brother", "works_at", "Tesla", "set", True)]),
    ("I only speak English and French", [("user", "speaks", "English", "add", True), ("user", "speaks", "French", "add", True)]),
    ("I speak Portuguese fairly well, so would Brazil be easier?", [("user", "speaks", "Portuguese", "add", True)]),
    ("Now that I've turned 30, should I change anything in my running plan?", [("user", "age", "30", "set", True)]),
    ("The milk has turned sour", []),
    ("My son is 7 and a really picky eater — he won't touch broccoli.",
     [("son", "age", "7", "set", True), ("son", "dislikes", "broccoli", "add", True)]),
    ("I live in Leeds - it's lovely", [("user", "lives_in", "Leeds", "set", True)]),
    ("我会说粤语，去香港玩的话沟通应该没问题吧？", [("user", "speaks", "粤语", "add", True)]),
    ("今年开春我们全家搬到了昆明，这边有什么特色菜值得学？", [("user", "lives_in", "昆明", "set", True)]),
    ("后来我调到了同仁医院，排班规律多了", [("user", "works_at", "同仁医院", "set", True)]),
    ("我去了趟医院", []),
    ("更正一下，我是三十五岁，不是三十八。", [("user", "age", "35", "correct", True)]),
    ("纠正一下，我是出纳，不是会计。", [("user", "job", "出纳", "correct", True)]),
    ("我朋友小周特别喜欢吃臭豆腐，我却最讨厌臭豆腐", [("friend", "name", "小周", "set", True),
                                     ("friend", "likes", "臭豆腐", "add", True), ("user", "dislikes", "臭豆腐", "add", True)]),
    ("我姐姐住在新加坡，会说英语和闽南语，我下个月去看她，要准备什么？",
     [("sister", "lives_in", "新加坡", "set", True), ("sister", "speaks", "英语", "add", True),
      ("sister", "speaks", "闽南语", "add", True)]),
])
def test_facts_said_on_the_way_to_a_request(text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


def test_since_a_month_ive_been_at_a_named_place_is_where_one_works_when_work_is_the_topic() -> None:
    assert _read("Since January I've been at KPMG and the travel is even worse.", fact_key("user", "works_at")) == [
        ("user", "works_at", "KPMG", "set", True)]
    assert _read("I've been at the gym", fact_key("user", "works_at")) == []


@pytest.mark.parametrize(("text", "last", "expected"), [
    ("更正一下，我老家其实是宁波，绍兴是我外婆家。", ("user", "hometown"), [("user", "hometown", "宁波", "correct", True)]),
    ("不对，我是审计，老是说混。", ("user", "job"), [("user", "job", "审计", "correct", True)]),
    # an explicit correction of a list's item: the item said last was the wrong one; "也" adds
    ("哦不对，是对虾过敏，花生没事。", ("user", "allergic_to"), [("user", "allergic_to", "虾", "correct", True)]),
    ("不对，我也对虾过敏", ("user", "allergic_to"), [("user", "allergic_to", "虾", "add", True)]),
])
def test_chinese_corrections_inside_a_sentence_and_of_a_lists_item(
        text: str, last: tuple[str, str], expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text, fact_key(*last)) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("我会说粤语，还会一点点法语。", [("user", "speaks", "粤语", "add", True), ("user", "speaks", "法语", "add", True)]),
    ("我不会说日语，只会说中文和英语。", [("user", "speaks", "中文", "add", True), ("user", "speaks", "英语", "add", True)]),
    ("我和我老公都在协和医院上班。", [("user", "works_at", "协和医院", "set", True),
                              ("husband", "works_at", "协和医院", "set", True)]),
    ("你好呀，我叫林晓雯，在一家广告公司做文案。", [("user", "name", "林晓雯", "set", True), ("user", "job", "文案", "set", True)]),
    # someone named by a noun is spoken about, in that clause and after it
    ("最近在追的剧里，女主是律师，住在上海，好羡慕她啊。", []),
    ("在北京工作，住在朝阳", [("user", "works_at", "北京", "set", True), ("user", "lives_in", "朝阳", "set", True)]),
])
def test_chinese_languages_both_of_us_and_someone_named_by_a_noun(
        text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize("text", [
    # not a pet of the user's kept or gone
    "I have never had a dog", "I have a friend with a dog", "I have a photo of a cat", "I have a computer mouse",
    "We have a mouse in the house", "I have a dog in this fight", "My sister sold the horse.", "The dog died in the movie",
    "My neighbour gave away the puppy", "I don't have the energy for a dog anymore", "My sister's dog died",
    "我家有个马桶堵了", "我有一个猫爪杯", "我有一条狗链", "我们家有个鸟笼", "我有一个兔子玩偶", "我买了一条鱼", "同事家的狗被领养了",
    "电影里那只狗死了",
    # no birthday on a holiday: near one, someone else's, or denied
    "My birthday is the day after Christmas", "My birthday is around Christmas", "我生日是国庆节前一天", "我女儿生日在六一前一天",
    "My birthday is in the spring, unlike my sister's which is on Christmas", "My birthday isn't on Christmas, it's in March",
    # no job that ended: not a trade, or still held
    "I was a teenager in the 90s", "I was a passenger in the car", "I was a runner-up", "I was a teacher and I still am",
    # no ellipsis read into a past, or into a judgement
    "I did not live in Leeds, my sister did", "I haven't lived in Leeds, my sister has",
    # stuck somewhere for now; a number that is no age; a guess asked about adds nothing to a list
    "I'm stuck in Heathrow because my flight got cancelled", "I'm still stuck in Paris airport", "I'm stuck in Traffic",
    "我们班有45个人，我35", "我体重65，我老公80", "Perhaps I'm allergic to cats?", "我可能是对花生过敏吧？",
])
def test_what_the_new_rules_must_not_read(text: str) -> None:
    assert [s for s in _read(text) if s[1] in ("has_pet", "birthday", "job", "lives_in", "age", "allergic_to")] == []


@pytest.mark.parametrize(("text", "last"), [
    ("*sigh", ("user", "lives_in")), ("*shrugs", ("user", "name")), ("*their", ("user", "job")),
])
def test_a_starred_action_or_mended_word_corrects_nothing(text: str, last: tuple[str, str]) -> None:
    assert _read(text, fact_key(*last)) == []


@pytest.mark.parametrize(("text", "last", "expected"), [
    ("不对，是成都", ("user", "lives_in"), [("user", "lives_in", "成都", "correct", True)]),
    ("更正：京都", ("user", "lives_in"), [("user", "lives_in", "京都", "correct", True)]),
])
def test_a_chinese_bare_correction_to_a_place_whose_name_holds_a_common_word(
        text: str, last: tuple[str, str], expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text, fact_key(*last)) == expected


def test_the_speakers_half_of_a_predicate_denied_for_someone_else_stays() -> None:
    assert _read("I don't like cats, my wife does") == [("user", "dislikes", "cats", "add", True),
                                                        ("wife", "likes", "cats", "add", True)]


def test_long_messages_of_the_new_shapes_are_read_in_linear_time() -> None:
    """A bound on how far back a clause looks (and a cached key): 4,000 clauses of an age, each giving a statement,
    took 75 s when every clause scanned every statement before it. Counted, not timed: the statements a clause
    scans stay within PRONOUN_LOOKBACK, so reading twice the text reads about twice the keys."""
    from agentmem_nb.store import facts as store_facts

    def keys_read(count: int) -> int:
        store_facts.fact_key.cache_clear()
        OfflineExtractor().extract("我才40，" * count)
        info = store_facts.fact_key.cache_info()
        return info.hits + info.misses

    small, large = keys_read(500), keys_read(1000)
    assert large < 2.5 * small


@pytest.mark.parametrize(("text", "expected"), [
    ("我妻子特别喜欢韩剧，我倒是挺讨厌韩剧的。", [("wife", "likes", "韩剧", "add", True), ("user", "dislikes", "韩剧", "add", True)]),
    ("帮我写一段话：主人公住在重庆，是一名记者。", []),
    ("Write a scene where the protagonist lives in Paris", []),
    ("I speak Portuguese at home and Japanese at work.", [("user", "speaks", "Portuguese", "add", True),
                                                          ("user", "speaks", "Japanese", "add", True)]),
    ("Got promoted today!! I'm the store manager now.", [("user", "job", "store manager", "set", True)]),
    ("I'm the best", []),
    ("Quick one: since I work at Deloitte, is there a standard format for the self-review?",
     [("user", "works_at", "Deloitte", "set", True)]),
    ("I'm originally from Cork, and honestly I love hiking, so recommend boots that hold up on wet trails.",
     [("user", "hometown", "Cork", "set", True), ("user", "likes", "hiking", "add", True)]),
    ("Please only show stores that ship to Leeds, that's where I live.", [("user", "lives_in", "Leeds", "set", True)]),
    ("Could you suggest a restaurant for a small dinner? It's for my birthday, which is on 14 March.",
     [("user", "birthday", "03-14", "set", True)]),
    # a relative named in a question is whom the he/she after it names
    ("Can you help pick a present for my brother? He's 16 and his birthday is October 9.",
     [("brother", "age", "16", "set", True), ("brother", "birthday", "10-09", "set", True)]),
    ("My brother and his wife live in Cork.", [("brother", "lives_in", "Cork", "set", True)]),
    ("帮我给我妹妹挑个礼物，她今年15岁，生日是5月20号。", [("sister", "age", "15", "set", True),
                                         ("sister", "birthday", "05-20", "set", True)]),
    ("从这个月开始我升成产品经理了。", [("user", "job", "产品经理", "set", True)]),
    ("今天生日🎂，26啦", [("user", "age", "26", "set", True)]),
])
def test_asides_reasons_and_a_relative_asked_about(text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize(("text", "last", "expected"), [
    ("Sorry, I mistyped: it's June 15th.", ("user", "birthday"), [("user", "birthday", "06-15", "correct", True)]),
    # a suggestion ending in 吧 is no guess, and a state is no name
    ("今天有点累，随便聊聊吧。", ("user", "name"), []),
    ("也是咸阳吧，我不太确定", ("user", "hometown"), [("user", "hometown", "咸阳", "correct", False)]),
])
def test_a_mistyped_value_and_a_suggestion_that_is_no_guess(
        text: str, last: tuple[str, str], expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text, fact_key(*last)) == expected


@pytest.mark.parametrize(("text", "last", "expected"), [
    # a drug's name that ends in "-en" is no participle
    ("Sorry, I got that wrong, it's ibuprofen I'm allergic to, not penicillin.", ("user", "allergic_to"),
     [("user", "allergic_to", "ibuprofen", "add", True), ("user", "allergic_to", "penicillin", "end", True)]),
    # "today" as the subject, not a time before one ("Today's my birthday, …" was read as a question: "is my …")
    ("Today's my birthday, I just turned 30!", ("user", "age"), [("user", "age", "30", "set", True)]),
])
def test_a_value_ending_like_a_participle_and_a_time_that_is_the_subject(
        text: str, last: tuple[str, str], expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text, fact_key(*last)) == expected


@pytest.mark.parametrize("text", [
    # a reason said first is read only before a question to the assistant
    "Because I live in Boston I need a car.", "Since I turned 30, my back hurts.",
    # a role in a group, a game, a dream, a show or a costume is no job
    "In our family I'm the cook.", "In our band I'm the singer.", "Let's play a game, I'm the teacher now.",
    "I'm the designated driver.", "I'm the only nurse here.", "In my dream I was a pilot.", "For Halloween I was a nurse.",
    "In the play I was a teacher.",
    # a relative asked about is whom he/she names only when there is one and it is no one's
    "What do I get my son and my daughter? She's 8.", "Can my brother's wife stay with us? She's 30.",
    "帮我给我儿子和我女儿买书，她今年8岁", "帮我给我妹妹的老师挑个礼物，她今年50岁",
])
def test_what_the_last_round_must_not_read(text: str) -> None:
    assert [s for s in _read(text) if s[1] in ("job", "age", "lives_in", "works_at")] == []


@pytest.mark.parametrize(("text", "expected"), [
    ("I speak Spanish to my mom and dad.", [("user", "speaks", "Spanish", "add", True)]),
    ("I speak French in Paris and Lyon.", [("user", "speaks", "French", "add", True)]),
    ("我喜欢的小说主人公住在巴黎，我也住在巴黎。", [("user", "lives_in", "巴黎", "set", True)]),
    ("帮我写段话，我住在上海", [("user", "lives_in", "上海", "set", True)]),
    # a guess said as its own clause before 吧 is still a guess; a request or a suggestion is none
    ("我35了，应该吧。", [("user", "age", "35", "set", False)]),
    ("我住在上海，应该没错吧", [("user", "lives_in", "上海", "set", False)]),
])
def test_languages_with_whom_or_where_characters_and_guesses_before_ba(
        text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize(("text", "last", "expected"), [
    ("不对，太原", ("user", "lives_in"), [("user", "lives_in", "太原", "correct", True)]),
    ("I misread your message.", ("user", "lives_in"), []),
    ("I mistyped the name of the file.", ("user", "name"), []),
])
def test_a_place_that_starts_like_a_degree_and_a_mistake_that_is_no_correction(
        text: str, last: tuple[str, str], expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text, fact_key(*last)) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("下个月八号就是我生日啦，九月八号，记得祝我生日快乐哈。", [("user", "birthday", "09-08", "set", True)]),
    ("我在杭州待了四年了。", [("user", "lives_in", "杭州", "set", True)]),
    ("我在上海已经住了五年了。", [("user", "lives_in", "上海", "set", True)]),
    ("哎，昨天过完生日，正式三十了。", [("user", "age", "30", "set", True)]),
    ("我老婆之前在工商银行上班，今年跳到招商银行了。", [("wife", "works_at", "工商银行", "end", True),
                                      ("wife", "works_at", "招商银行", "set", True)]),
    ("准确说以前是，现在不当程序员了，在家歇着。", [("user", "job", "程序员", "end", True)]),
    ("陈明上个月辞职了，新来的老板叫刘洋。", [("boss", "name", "刘洋", "correct", True)]),  # (陈明's leaving is not ours;
    # another person in the post: the name it had makes way)
    ("我妈生日是十二月一号，我的是十二月十五号，所以每年干脆一起过。", [("mother", "birthday", "12-01", "set", True),
                                                ("user", "birthday", "12-15", "set", True)]),
    ("去年年底搬回老家绵阳了，离爸妈近一点。", [("user", "lives_in", "绵阳", "set", True), ("user", "hometown", "绵阳", "set", True)]),
])
def test_chinese_stays_transfers_a_new_boss_and_a_relative_mentioned_before(
        text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize("text", [
    # a stay that ended or is no home, a transfer to a shift or a department, a jump into a pond, someone else's
    # words, a date that is not the birthday, a pronoun that may be anyone, a purpose after 搬回老家, a sofa
    "我在国外待了三年，去年回国了。", "我在上海待了十年，去年回老家了。", "我在医院待了两年了", "在北京待了三年的人都知道。",
    "我调到静音了", "我调到销售部了", "我调到夜班了", "我跳到了学校的池塘里", "老板认真说他要辞职。", "我朋友认真说他住在杭州。",
    "5月9号不是我生日。", "今天跟我姐吃饭了。他是医生。", "我窝在沙发上看电视", "我一个人住在北京的时候很孤独",
])
def test_what_the_chinese_round_must_not_read(text: str) -> None:
    assert [s for s in _read(text) if s[0] != "mother" and s[1] in ("lives_in", "works_at", "birthday", "job", "name")] == []


def test_someone_named_with_what_they_did_frames_only_that_clause() -> None:
    assert _read("高中已经毕业了，现在在杭州工作。") == [("user", "works_at", "杭州", "set", True)]


# Round facts22: forms found in the first runs of blind sets 36-41 (each seen failing on 6b43889's extractor).
@pytest.mark.parametrize(("text", "expected"), [
    # a home or an employer in the simple past is over (kept as history); the present perfect is still true
    ("In January I lived in Austin.", [("user", "lives_in", "Austin", "end", True)]),
    ("Before I moved to Paris, I lived in Rome.", [("user", "lives_in", "Rome", "end", True)]),
    ("I have lived in Rome since 2010.", [("user", "lives_in", "Rome", "set", True)]),
    ("I worked at McDonald's in high school.", [("user", "works_at", "McDonald's", "end", True)]),
    # a time counted from the last news, before the subject
    ("Six months later I'm officially a research scientist", [("user", "job", "research scientist", "set", True)]),
    ("A week later we moved to Oslo.", [("user", "lives_in", "Oslo", "set", True)]),
    # the move said, then where to
    ("September: moved again, this time to Boulder.", [("user", "lives_in", "Boulder", "set", True)]),
    ("and now I've moved again, living in Dundee since the lease ran out.", [("user", "lives_in", "Dundee", "set", True)]),
    # another person in the post: the name it had makes way
    ("My new boss is called Marcus, he's way more hands-off.", [("boss", "name", "Marcus", "correct", True)]),
    # a doctor's or a test's finding about the speaker
    ("My doctor says I'm not allergic to penicillin anymore.", [("user", "allergic_to", "penicillin", "end", True)]),
    ("Before you suggest any recipes for the party: I'm allergic to shellfish.",
     [("user", "allergic_to", "shellfish", "add", True)]),
    ("医生说我已经不再对青霉素过敏了。", [("user", "allergic_to", "青霉素", "end", True)]),
    ("检查结果显示我对花粉过敏。", [("user", "allergic_to", "花粉", "add", True)]),
    # a negation closed by 了 is what no longer is, not a correction of which value
    ("我已经不是外卖骑手了。", [("user", "job", "外卖骑手", "end", True)]),
    # a past before the subject, and a taste said again after a trigger
    ("以前我很喜欢榴莲，现在闻到就讨厌。", [("user", "likes", "榴莲", "end", True), ("user", "dislikes", "榴莲", "add", True)]),
    # chat's clause edges: a space between characters, an emoji
    ("我搬到杭州啦 在阿里上班", [("user", "lives_in", "杭州", "set", True), ("user", "works_at", "阿里", "set", True)]),
    ("我叫王小明 今年25岁", [("user", "name", "王小明", "set", True), ("user", "age", "25", "set", True)]),
    ("我住在💕上海", [("user", "lives_in", "上海", "set", True)]),
    ("我对芒果过敏😭我老公对花生过敏", [("user", "allergic_to", "芒果", "add", True), ("husband", "allergic_to", "花生", "add", True)]),
])
def test_the_forms_of_blind_sets_36_to_41(text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize("text", [
    # someone's opinion of the speaker, a doctor's advice, a third person's doctor; a visit in the past; a plan
    # counted from now; a Latin word spaced as typography stays one value
    "My wife says I love her cooking.", "My doctor says I should move to Spain.", "My sister's doctor says she is allergic to nuts.",
    "I stayed in Rome last summer.", "我妈说我住得太远了", "A few months later I might move to Oslo.",
    # a one-day past, or a past still true; a disputed finding; an opinion said by a doctor
    "I worked at Google today on my laptop.", "I worked at Meta, and I still work there.",
    "I've lived and worked in Tokyo since 2015.", "My doctor says I'm allergic to eggs, but I don't believe her.",
    "My doctor says I live on coffee.", "医生说我对花生过敏，但我不信", "医生说我喜欢吃甜的不好",
])
def test_what_round_facts22_must_not_read(text: str) -> None:
    assert [s for s in _read(text) if s[1] in ("lives_in", "works_at", "allergic_to", "likes", "job")] == []


@pytest.mark.parametrize(("text", "expected"), [
    ("我在 Tencent Music 上班", [("user", "works_at", "Tencent Music", "set", True)]),  # a space as typography
    ("我叫 王小明", [("user", "name", "王小明", "set", True)]),
    ("我加入了 Google", [("user", "works_at", "Google", "set", True)]),
    ("我喜欢吃苹果🍎和香蕉", [("user", "likes", "苹果", "add", True), ("user", "likes", "香蕉", "add", True)]),
    ("我叫王芳，不是王方啦", [("user", "name", "王芳", "correct", True)]),  # (啦 softens a correction, 了 ends)
    ("Quick update since I moved to Portland last month: I'm loving it", [("user", "lives_in", "Portland", "set", True)]),
    ("My new friend is called Ann.", [("friend", "name", "Ann", "set", True)]),  # (one more friend: no one replaced)
])
def test_what_round_facts22_keeps_reading_as_before(text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize(("said", "later", "key", "value"), [
    ("My best friend Amara lives in Lagos.", "and Amara relocated to Toronto this summer", ("best_friend", "lives_in"),
     "Toronto"),
    ("我最好的朋友叫佳佳，住在大连。", "今年佳佳又搬到东京了", ("best_friend", "lives_in"), "东京"),
    ("我朋友小周在京东上班。", "小周今年搬到西安了", ("friend", "lives_in"), "西安"),
])
def test_a_person_known_by_name_is_whom_the_name_says(tmp_path: Path, said: str, later: str, key: tuple[str, str],
                                                      value: str) -> None:
    facts = MemoryStore(tmp_path).user("u").facts
    for number, text in enumerate((said, later), start=1):
        record_message(facts, OfflineExtractor(), text, source=FactSource("t", number))
    assert [f.value for f in facts.get(*key)] == [value]
    assert facts.get("user", "lives_in") == []


def test_a_name_being_given_is_not_replaced_and_an_old_extractor_is_called_as_before(tmp_path: Path) -> None:
    facts = MemoryStore(tmp_path).user("u").facts
    record_message(facts, OfflineExtractor(), "My best friend is called Amara.", source=FactSource("t", 1))
    # a name said to be someone else's is that person's, not the best friend's
    record_message(facts, OfflineExtractor(), "Amara is my sister now lol", source=FactSource("t", 2))
    assert [f.value for f in facts.get("sister", "name")] == ["Amara"]

    class OldExtractor:  # written before ``names`` was offered: it is called with ``last_key`` alone
        name = "old"

        def __init__(self) -> None:
            self.calls: list[str] = []

        def extract(self, text: str, *, last_key: FactKey | None = None) -> list[Statement]:
            self.calls.append(text)
            return []

    old = OldExtractor()
    record_message(facts, old, "Amara moved to Oslo.", source=FactSource("t", 3))
    assert old.calls == ["Amara moved to Oslo."]


# Round facts22, English: forms read in the failures of heldout36-43 (each seen failing on 2dd9947's extractor).
@pytest.mark.parametrize(("text", "last", "expected"), [
    ("also really into sushi 🍣", None, [("user", "likes", "sushi", "add", True)]),  # "I'm" dropped, as chat does
    ("ugh, I've gone off coffee completely. can't stand the taste now", None,
     [("user", "likes", "coffee", "end", True), ("user", "dislikes", "coffee", "add", True)]),
    ("and this summer we relocated again, to Aberdeen this time", None, [("user", "lives_in", "Aberdeen", "set", True)]),
    ("I'm allergic to cats, but my roommate has a cat anyway 🙃", None,
     [("user", "allergic_to", "cats", "add", True), ("roommate", "has_pet", "cat", "add", True)]),
    ("My daughter's name is Chloe and our dog is called Biscuit.", None,
     [("daughter", "name", "Chloe", "set", True), ("dog", "name", "Biscuit", "set", True)]),
    ("Karen left the company last month, my new boss is Steve.", None, [("boss", "name", "Steve", "correct", True)]),
    ("my partner now is Jo.", None, [("partner", "name", "Jo", "correct", True)]),
    ("good news: my doctor says I'm no longer allergic to eggs!", None, [("user", "allergic_to", "eggs", "end", True)]),
    ("I'm allergic to eggs and to pollen", None, [("user", "allergic_to", "eggs", "add", True),
                                                  ("user", "allergic_to", "pollen", "add", True)]),
    ("he's not at Amazon anymore, got laid off in the spring", FactKey("cousin", "works_at"),
     [("cousin", "works_at", "Amazon", "end", True)]),
    ("We both had birthdays this month: I'm 35 now and she's 33.", FactKey("wife", "age"),
     [("user", "age", "35", "set", True), ("wife", "age", "33", "set", True)]),
])
def test_the_english_forms_of_blind_sets_36_to_43(text: str, last: FactKey | None,
                                                  expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text, last) == expected


@pytest.mark.parametrize(("text", "expected"), [
    # a nationality, a faith, a state is not a name; a speaker's "is" names no one; a new friend replaces no one
    ("My sister is Canadian.", []), ("My wife is Catholic.", []), ("My mom is Irish.", []), ("It is Monday.", []),
    ("My new friend now is Ann.", []), ("my boss is German", []), ("my new boss is Dutch", []), ("Our dog is Cute.", []),
    # "went off" to a place, a plan after a colon, a clause without "I" that has another subject
    ("I went off to college in Boston.", []), ("into the wild we go", []), ("My plan for today: I work at home.", []),
    # someone else's friend's pet, and a pet named of a relative is not the speaker's cat
    ("My sister's friend has a dog.", []),
    ("My brother has a cat named Tom and I have a dog.", [("brother", "has_pet", "cat", "add", True),
                                                          ("user", "has_pet", "dog", "add", True)]),
])
def test_what_the_english_round_22_must_not_read(text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize(("text", "last", "expected"), [
    # chat's register: a statement said with surprise, chat's spellings and fillers, a bare "quit"
    ("turns out i'm not allergic to shellfish anymore?? allergist said i outgrew it", None,
     [("user", "allergic_to", "shellfish", "end", True)]),
    ("weirdly i don't hate cilantro anymore?? tried it again", None, [("user", "dislikes", "cilantro", "end", True)]),
    ("actually its edinburgh sorry, typing too fast", FactKey("user", "lives_in"),
     [("user", "lives_in", "edinburgh", "correct", True)]),
    ("ngl i don't like jazz anymore, it got old", None, [("user", "likes", "jazz", "end", True)]),
    ("i'm super into jazz rn", None, [("user", "likes", "jazz", "add", True)]),
    ("he quit last week tho, so he's home all day now lol", FactKey("husband", "works_at"),
     [("husband", "works_at", "", "end", True)]),
])
def test_chat_register_of_round_22(text: str, last: FactKey | None,
                                   expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text, last) == expected


@pytest.mark.parametrize(("text", "expected"), [
    # a question asked with surprise, a thing's own "its", a filler that is part of a name
    ("do I live in Oslo??", []), ("Where do I live??", []), ("I wonder if I live in Oslo??", []),
    ("its name is Rex", []), ("My name is Sorrya", [("user", "name", "Sorrya", "set", True)]),
])
def test_what_the_chat_register_must_not_read(text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    # an employer one is at for years, now, or happily; a home "up in"; "been in" with the "I've" dropped
    ("I'm at Oracle, been there three years.", [("user", "works_at", "Oracle", "set", True)]),
    ("i might apply to Spotify next month. currently at Klarna tho, been there 3 years",
     [("user", "works_at", "Klarna", "set", True)]),
    ("My cousin works at Tesla and keeps trying to get me to apply, but I'm happy at Ford.",
     [("cousin", "works_at", "Tesla", "set", True), ("user", "works_at", "Ford", "set", True)]),
    ("I live up in Nashville, about four hours away.", [("user", "lives_in", "Nashville", "set", True)]),
    ("been in Dublin since 2019", [("user", "lives_in", "Dublin", "set", True)]),
    # "mine is" with a month in lowercase; someone of ours shown with their name
    ("my wife's birthday is december 3rd and mine is december 5th so we just do one big party",
     [("wife", "birthday", "12-03", "set", True), ("user", "birthday", "12-05", "set", True)]),
    ("I'm Sam, and this is my dog Pickles 🐶", [("user", "name", "Sam", "set", True), ("dog", "name", "Pickles", "set", True)]),
    ("This is my friend Tom and his wife.", [("friend", "name", "Tom", "set", True)]),
    # where one is sitting is no employer; a thing's house is no name
    ("I'm at Starbucks.", []), ("I'm happy at home.", []), ("currently at the gym", []),
    ("This is my sister Anna's house.", []),
])
def test_employers_homes_and_names_of_round_22(text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize("text", [
    # found by the review of the English round: a nationality or a word after "new boss is", a habit quit, an idiom
    # gone off, where one is sitting or shopping, a holiday, a stay of days, a field of work, someone's quoted words,
    # a list, a question asked again after "??", "sorry" inside a like
    "my new boss is Dutch", "I quit a bad habit", "I went off the deep end", "I've gone off the idea",
    "currently at Heathrow", "Currently at McDonald's, what should I order?", "I'm happy with Tesla",
    "I'm happy at Christmas", "I'm at Disneyland, been there since 9am", "been in Dublin for a week on holiday",
    "Been in Marketing for ten years", "My sister always says: I hate coffee", "My friend Tom: I live in Leeds now",
    "I asked my sister: I live in Paris, why don't you visit?", "I live in Paris?? right", "I live in Oslo?? or was it Bergen",
    "this is my husband Mark speaking", "This is my sister Anna's house.",
])
def test_what_the_review_of_the_english_round_found(text: str) -> None:
    assert [s for s in _read(text) if s[1] in ("name", "works_at", "lives_in", "likes", "dislikes")
            and s[0] in ("user", "boss", "husband", "sister")] == []


@pytest.mark.parametrize(("text", "expected"), [
    ("I love my wife and our kids", [("user", "likes", "my wife", "add", True), ("user", "likes", "our kids", "add", True)]),
    ("allergic to eggs and to some extent dairy", [("user", "allergic_to", "eggs", "add", True),
                                                    ("user", "allergic_to", "dairy", "add", True)]),
    ("I love the smell of coffee but hate the taste", [("user", "likes", "the smell of coffee", "add", True),
                                                        ("user", "dislikes", "the taste", "add", True)]),
    ("大家都叫我小胖，我大名叫张伟。", [("user", "name", "张伟", "set", True)]),
])
def test_what_the_english_round_keeps_reading(text: str, expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


def test_many_names_in_one_message_are_read_in_linear_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """One pass over the text for the names it introduces formally: a search per name was quadratic (2,000 names in
    one message took 1.9 s). Asserted as the count of passes over the text, not seconds."""
    from agentmem_nb.facts._marks import one_name_each
    passes = 0
    real_finditer, real_search = re.finditer, re.search

    def counting_finditer(*args: Any, **kwargs: Any) -> Any:
        nonlocal passes
        passes += 1
        return real_finditer(*args, **kwargs)

    def counting_search(*args: Any, **kwargs: Any) -> Any:
        nonlocal passes
        passes += 1
        return real_search(*args, **kwargs)

    monkeypatch.setattr(re, "finditer", counting_finditer)
    monkeypatch.setattr(re, "search", counting_search)
    statements = [Statement(f"friend{i}", "name", f"Name{i}") for i in range(500)]
    kept = one_name_each(statements, " ".join(f"my friend's name is Name{i}," for i in range(500)))
    assert len(kept) == 500 and passes == 1


@pytest.mark.parametrize(("text", "last", "expected"), [
    # forms of heldout44/45 (each seen failing on 2dd9947)
    ("hi!! im Priya, 26, software developer at Shopify, living in Ottawa, i speak Hindi and English", None,
     [("user", "name", "Priya", "set", True), ("user", "age", "26", "set", True),
      ("user", "job", "software developer", "set", True), ("user", "works_at", "Shopify", "set", True),
      ("user", "lives_in", "Ottawa", "set", True), ("user", "speaks", "Hindi", "add", True),
      ("user", "speaks", "English", "add", True)]),
    ("I drink coffee all day, I love it.", None, [("user", "likes", "coffee", "add", True)]),
    ("Actually, it's John with an h. Sorry!", FactKey("user", "name"), [("user", "name", "John", "correct", True)]),
    ("my hubby's bday is nov 3 and mine is feb 9 lol", None, [("husband", "birthday", "11-03", "set", True),
                                                              ("user", "birthday", "02-09", "set", True)]),
    ("oops he's 62 actually 😅", FactKey("father", "age"), [("father", "age", "62", "correct", True)]),
    ("ok so i was at Google for like 4 yrs", None, [("user", "works_at", "Google", "end", True)]),
    ("I'm not allergic to cats; my husband is.", None, [("husband", "allergic_to", "cats", "add", True)]),
    ("And last weekend we adopted a cat! Her name is Luna", None, [("user", "has_pet", "cat", "add", True),
                                                                  ("cat", "name", "Luna", "set", True)]),
    ("We had a hamster for years.", None, [("user", "has_pet", "hamster", "end", True)]),
    ("my best friend Jake just moved to Austin for a job at Dell", None,
     [("best_friend", "name", "Jake", "set", True), ("best_friend", "lives_in", "Austin", "set", True),
      ("best_friend", "works_at", "Dell", "set", True)]),
])
def test_the_forms_of_blind_sets_44_and_45(text: str, last: FactKey | None,
                                           expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text, last) == expected


@pytest.mark.parametrize("text", [
    "I was at the park for two hours.", "I work every day.", "I had a dog for dinner once, a hot dog.",
    "I moved to Leeds for a job interview at Arup.", "I have a dog for you.",
])
def test_what_the_forms_of_44_and_45_must_not_read(text: str) -> None:
    assert [s for s in _read(text) if s[1] in ("works_at", "has_pet", "likes")] == []


@pytest.mark.parametrize(("text", "last", "expected"), [
    # found by the review of e0ae96f: an opinion said with "actually", a pet named sentences later, a name that holds
    # "All Day", a school or a stay, someone else's job, a job that fell through, a pet still kept, a place before
    # "we have", a statement after an introduction, a former job
    ("My sister lives in Rome. It's beautiful actually.", None, [("sister", "lives_in", "Rome", "set", True)]),
    ("It's nice actually", FactKey("user", "lives_in"), []),
    ("We adopted a cat. Then my aunt visited. Her name is Rosa.", None, [("user", "has_pet", "cat", "add", True)]),
    ("I work at All Day Cafe", None, [("user", "works_at", "All Day Cafe", "set", True)]),
    ("I was at Oxford for three years studying law", None, []), ("I was at Grandma's for a month", None, []),
    ("We moved to Denver for her job at Google", None, [("user", "lives_in", "Denver", "set", True)]),
    ("I moved to Austin for a job at Dell that fell through", None, [("user", "lives_in", "Austin", "set", True)]),
    ("We had a dog for years, and we still do", None, []), ("At work we have a cat", None, []),
    ("I'm Amy, 33, a teacher, I am probably burnt out", None, [("user", "name", "Amy", "set", True),
                                                              ("user", "age", "33", "set", True),
                                                              ("user", "job", "teacher", "set", True)]),
    ("I'm Dave, 45, ex nurse at NHS", None, [("user", "name", "Dave", "set", True), ("user", "age", "45", "set", True),
                                             ("user", "job", "nurse", "end", True), ("user", "works_at", "NHS", "end", True)]),
])
def test_what_the_review_of_e0ae96f_found(text: str, last: FactKey | None,
                                          expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text, last) == expected


@pytest.mark.parametrize(("text", "expected"), [
    # an introduction's pieces: where one comes from, lives, works and as what; statements after a name stay statements
    ("ok so quick intro: i'm Omar, 27, from Amman originally but i live in Berlin now, my partner Lena is German and "
     "she works at Zalando", [("user", "name", "Omar", "set", True), ("user", "age", "27", "set", True),
                              ("user", "hometown", "Amman", "set", True), ("user", "lives_in", "Berlin", "set", True),
                              ("partner", "name", "Lena", "set", True), ("partner", "works_at", "Zalando", "set", True)]),
    ("so im Sarah, 31, live in Leeds, work at the NHS as a physio and yeah I want to do my first triathlon",
     [("user", "name", "Sarah", "set", True), ("user", "age", "31", "set", True), ("user", "lives_in", "Leeds", "set", True),
      ("user", "works_at", "NHS", "set", True), ("user", "job", "physio", "set", True)]),
    ("I'm Sofia, I'm 34 and I live in Athens.", [("user", "name", "Sofia", "set", True), ("user", "age", "34", "set", True),
                                                 ("user", "lives_in", "Athens", "set", True)]),
    # a consequence is not what ended; what is so now after a plan; "down in"; work "from home as"
    ("my sister just moved to Austin though, so no more Saturday sessions together 😢",
     [("sister", "lives_in", "Austin", "set", True)]),
    ("We're planning to move to Utrecht in the summer, but right now we live in Rotterdam.",
     [("user", "lives_in", "Rotterdam", "set", True)]),
    ("My sister lives in Glasgow, I'm down in Brighton.", [("sister", "lives_in", "Glasgow", "set", True),
                                                           ("user", "lives_in", "Brighton", "set", True)]),
    ("I work from home as a software developer", [("user", "job", "software developer", "set", True)]),
    # guards: a plan with nothing said to be so now, a consequence that does end
    ("I might move to Paris, but right now I'm thinking about it.", []),
    ("I don't eat meat anymore, so no more burgers", [("user", "likes", "meat", "end", True)]),
])
def test_introductions_plans_and_consequences_of_round_22(text: str,
                                                          expected: list[tuple[str, str, str, str, bool]]) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize("text", [
    # found by the review of 1620023: a relative's home, a wish or an ended home among an introduction's pieces, a
    # department after a name, a nationality as a name, "as well" / "as a joke" as a job, a month or another
    # attribute beside a relative's, a job's place kept after a plan
    "I'm Zoe, 19, parents live in Leeds", "I'm Ann, 30, used to live in London", "I'm Ann, 30, want to live in Paris",
    "Hello, I'm Sarah, from HR", "I'm Canadian, live in Texas", "I work from home as well", "I work nights as a joke",
    "My brother lives in London and I'm out in March",
    "My husband works at Ford and I'm down in Brighton", "I want to move, but right now my job is in Leeds",
])
def test_what_the_review_of_1620023_found(text: str) -> None:
    assert [s for s in _read(text) if s[0] == "user" and s[1] not in ("name", "age")] == []
    assert [s for s in _read(text) if s[1] == "name" and s[2].casefold() in ("canadian", "irish")] == []


def test_a_joke_is_no_job_in_an_introduction() -> None:
    assert [s for s in _read("I'm Ann, 30, work at Google as a joke") if s[1] == "job"] == []


def test_a_known_name_said_many_times_is_read_beside_each_mention_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """What gives or names someone is read in a few words beside each mention of a known name, not in the whole text
    before and after it (that was quadratic: 2,000 mentions in one message took 22 s). Asserted as the longest text
    searched, which must not grow with the message."""
    import agentmem_nb.facts.extract as extract
    searched: list[int] = []

    class Recording:
        def __init__(self, pattern: re.Pattern[str]) -> None:
            self.pattern = pattern

        def search(self, text: str) -> re.Match[str] | None:
            searched.append(len(text))
            return self.pattern.search(text)

        def match(self, text: str) -> re.Match[str] | None:
            searched.append(len(text))
            return self.pattern.match(text)

    for name in ("_NAMING_BEFORE_EN", "_NAMING_AFTER_EN"):
        monkeypatch.setattr(extract, name, Recording(getattr(extract, name)))
    text = "Amara moved to Oslo. " * 300
    read = OfflineExtractor().extract(text, names={"Amara": "best_friend"})
    assert {(s.key.subject, s.value) for s in read} == {("best_friend", "Oslo")}
    assert len(searched) == 600 and max(searched) < 100


def test_a_sentence_of_many_past_homes_is_searched_for_still_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whether the simple past is over ("… and I still do") is read once a sentence, not once a clause (per clause it
    was quadratic: 1,000 "I lived in Rome and" took 2.9 s). Asserted as the count of searches."""
    import agentmem_nb.facts.english as english
    calls = 0
    real = english._NOT_OVER

    class Counting:
        def search(self, text: str) -> re.Match[str] | None:
            nonlocal calls
            calls += 1
            return real.search(text)

    monkeypatch.setattr(english, "_NOT_OVER", Counting())
    read = _read("I lived in Rome and " * 200 + "I lived in Oslo.")
    assert ("user", "lives_in", "Oslo", "end", True) in read and calls == 1
