"""Chinese forms behind the misses of the blind sets heldout36-43 (round 22), each with guards of the ordinary
sentences its rule must not misread."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agentmem_nb import MemoryStore
from agentmem_nb.facts import OfflineExtractor, record_message
from agentmem_nb.store import FactSource
from agentmem_nb.store.facts import FactKey

Read = list[tuple[str, str, str, str]]


def _read(text: str, last: FactKey | None = None) -> Read:
    return [(s.key.subject, s.key.attribute, s.value, s.op) for s in OfflineExtractor().extract(text, last_key=last)]


def _current(tmp_path: Path, messages: list[str], subject: str, attribute: str) -> list[str]:
    """The active values of one key after ``messages`` were recorded one by one, as the agent records them."""
    facts = MemoryStore(tmp_path).user("u").facts
    for number, text in enumerate(messages, start=1):
        record_message(facts, OfflineExtractor(), text, source=FactSource("t", number))
    return sorted(f.value for f in facts.get(subject, attribute))


# What each rule of the round starts from, repeated to 20,000 characters by the linear-time test.
_TRIGGERS = ("是王霆 ", "儿子", "又养了只", "家里有", "现在的对象", "海鲜也过敏", "哈哈", "日语", "学会了日语", "忘光了",
             "，法语不会说了", "不在京东了，去了", "干了一年转成", "换到银行")


def test_long_inputs_stay_linear() -> None:
    """Every rule of this round on 20,000 characters of its own trigger, in a child that must end in time."""
    code = ("from agentmem_nb.facts import OfflineExtractor as E; e = E(); "
            f"[e.extract(s * (20000 // len(s))) for s in {_TRIGGERS!r}]")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


# ---------------------------------------------------------------- a pause (a space) ends a value

@pytest.mark.parametrize(("text", "last", "expected"), [
    ("我老家其实是保定 刚才打错了", None, [("user", "hometown", "保定", "correct")]),
    ("不对 是李娜 木子李的李", FactKey("user", "name"), [("user", "name", "李娜", "correct")]),
    ("我住在西安 离公司挺近", None, [("user", "lives_in", "西安", "set")]),
    # the 了 of a remark after the pause does not end the taste said before it
    ("我不喜欢吃香菜 那个味道真的受不了", None, [("user", "dislikes", "香菜", "add")]),
])
def test_a_value_ends_at_a_pause(text: str, last: FactKey | None, expected: Read) -> None:
    """Failed on 2dd9947 (the remark was read into the value; the last one read a like ended)."""
    assert _read(text, last) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("我叫 王小明", [("user", "name", "王小明", "set")]),  # a space before the value is typography
    ("我在 Google 上班", [("user", "works_at", "Google", "set")]),
    ("我住在New York", [("user", "lives_in", "New York", "set")]),  # a space inside a Latin name stays
    ("我不吃香菜了", [("user", "likes", "香菜", "end"), ("user", "likes", "吃香菜", "end")]),
])
def test_a_pause_guard(text: str, expected: Read) -> None:
    assert _read(text) == expected


# ---------------------------------------------------------------- a relative said without 我

@pytest.mark.parametrize(("text", "expected"), [
    ("女儿6岁了，刚上一年级", [("daughter", "age", "6", "set")]),
    ("闺女对花生过敏", [("daughter", "allergic_to", "花生", "add")]),
    ("室友对猫毛过敏，我没事", [("roommate", "allergic_to", "猫毛", "add")]),
    ("老公生日是3月8号，我的是7月1号", [("husband", "birthday", "03-08", "set"), ("user", "birthday", "07-01", "set")]),
    ("我叫李娜，闺蜜叫小敏", [("user", "name", "李娜", "set"), ("best_friend", "name", "小敏", "set")]),
    ("我今年40，儿子刚满12岁", [("user", "age", "40", "set"), ("son", "age", "12", "set")]),
])
def test_a_relative_said_without_wo_is_ones_own(text: str, expected: Read) -> None:
    """Failed on 2dd9947 (the relative's fact was lost, or given to the speaker)."""
    assert _read(text) == expected


@pytest.mark.parametrize("text", [
    "老板娘在店里",  # a longer word (老板娘 is no boss), and no name in apposition
    "儿子们都住在北京",  # a plural is not one relative
    "朋友住在上海",  # said of anyone: 朋友, 孩子, 老师, 阿姨 are no one's in particular
    "孩子对花生过敏的很多",
    "阿姨住在楼上",
    "老师叫我们去操场",
])
def test_a_bare_relative_guard(text: str) -> None:
    assert _read(text) == []


# ---------------------------------------------------------------- a new person in a role

@pytest.mark.parametrize(("messages", "subject", "expected"), [
    (["我领导叫王伟", "王伟上个月调走了，新领导叫赵丽"], "boss", ["赵丽"]),
    (["我男朋友叫小杰", "我们分手了", "现在的男朋友叫阿伟，对我很好"], "boyfriend", ["阿伟"]),
])
def test_a_new_person_in_a_role_replaces_the_name(tmp_path: Path, messages: list[str], subject: str,
                                                  expected: list[str]) -> None:
    """Failed on 2dd9947 (the old name stayed, or a conflict was held)."""
    assert _current(tmp_path, messages, subject, "name") == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("现在的工作是老师", [("user", "job", "老师", "set")]),  # 现在的 before something not a person is still "now"
    ("现在住在北京", [("user", "lives_in", "北京", "set")]),
    ("我领导叫王伟", [("boss", "name", "王伟", "set")]),  # a role named plainly is set, not corrected
    ("新衣服很好看", []),  # 新 before no role
])
def test_a_new_person_guard(text: str, expected: Read) -> None:
    assert _read(text) == expected


# ---------------------------------------------------------------- a pet kept with the keeper unsaid

@pytest.mark.parametrize(("text", "expected"), [
    ("上周新养了只猫，叫团子", [("cat", "name", "团子", "set"), ("user", "has_pet", "猫", "add")]),
    ("家里养了两只猫", [("user", "has_pet", "猫", "add")]),
    ("前阵子又领养了一条狗", [("user", "has_pet", "狗", "add")]),
    ("家里有只狗，叫旺财", [("dog", "name", "旺财", "set"), ("user", "has_pet", "狗", "add")]),
    ("有个表妹，叫小雪", [("cousin", "name", "小雪", "set")]),
])
def test_a_pet_kept_with_the_keeper_unsaid(text: str, expected: Read) -> None:
    """Failed on 2dd9947 (nothing kept, and the pet's name read as the speaker's)."""
    assert _read(text) == expected


def test_a_second_pet_kept_unsaid_accumulates(tmp_path: Path) -> None:
    """Failed on 2dd9947 (the second pet was not read)."""
    assert _current(tmp_path, ["我养了一只猫", "最近又收养了一条狗 家里热闹多了"], "user", "has_pet") == sorted(["猫", "狗"])


@pytest.mark.parametrize("text", [
    "有只猫在楼下叫",  # 有 with no keeper: a cat somewhere
    "楼下养了一条狗，天天叫",  # a keeper named who is not the speaker
    "养了一只猫的人都知道",  # a kind of people
    "又买了一只猫爬架",  # a thing for a cat
    "有一只猫叫咪咪",
])
def test_a_pet_kept_guard(text: str) -> None:
    assert _read(text) == []


# ---------------------------------------------------------------- an allergy said with the thing first, no 对

@pytest.mark.parametrize(("text", "expected"), [
    ("我花生过敏的，麻烦别放", [("user", "allergic_to", "花生", "add")]),
    ("我女儿鸡蛋过敏", [("daughter", "allergic_to", "鸡蛋", "add")]),
    ("我对虾过敏，芒果也过敏", [("user", "allergic_to", "虾", "add"), ("user", "allergic_to", "芒果", "add")]),
])
def test_an_allergy_with_the_thing_first(text: str, expected: Read) -> None:
    """Failed on 2dd9947 (nothing read, or only the first)."""
    assert _read(text) == expected


@pytest.mark.parametrize("text", [
    "我皮肤过敏",  # a part of the body, not a thing one is allergic to
    "我季节性过敏",  # a kind of allergy
    "我有点过敏",  # how much
    "我一吃海鲜就过敏",  # when (left unread rather than misread)
    "今天又过敏了",
    "小时候过敏",
])
def test_an_allergy_with_the_thing_first_guard(text: str) -> None:
    assert _read(text) == []


# ---------------------------------------------------------------- laughter closing a clause

@pytest.mark.parametrize(("text", "expected"), [
    ("我以前很讨厌榴莲，现在居然爱上了哈哈哈", [("user", "dislikes", "榴莲", "end"), ("user", "likes", "榴莲", "add")]),
    ("现在居然爱上了，天天吃", []),  # what was fallen for is not 上
])
def test_laughter_is_no_part_of_a_clause(text: str, expected: Read) -> None:
    """Failed on 2dd9947 (a like of 上)."""
    assert _read(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("我住在哈尔滨", [("user", "lives_in", "哈尔滨", "set")]),  # laughter's characters inside a value stay
    ("我朋友叫嘻嘻", [("friend", "name", "嘻嘻", "set")]),  # a name after 叫 is no laughter
    ("我爱上了上海", [("user", "likes", "上海", "add")]),
])
def test_laughter_guard(text: str, expected: Read) -> None:
    assert _read(text) == expected


# ---------------------------------------------------------------- a language learned, forgotten, spoken now too

@pytest.mark.parametrize(("text", "expected"), [
    ("我学会了韩语", [("user", "speaks", "韩语", "add")]),
    ("现在德语也能说了，点菜没问题", [("user", "speaks", "德语", "add")]),
    ("法语早就忘光了", [("user", "speaks", "法语", "end")]),
    ("西班牙语好久没练，现在已经不会说了", [("user", "speaks", "西班牙语", "end")]),
    ("我不会说俄语了", [("user", "speaks", "俄语", "end")]),
    ("我妈上海话说得很溜", [("mother", "speaks", "上海话", "add")]),
])
def test_a_language_learned_or_forgotten(text: str, expected: Read) -> None:
    """Failed on 2dd9947 (nothing read)."""
    assert _read(text) == expected


def test_a_language_forgotten_ends_only_that_one(tmp_path: Path) -> None:
    """Failed on 2dd9947 (the forgotten language stayed)."""
    assert _current(tmp_path, ["我会说英语和意大利语", "意大利语早忘光了"], "user", "speaks") == ["英语"]


@pytest.mark.parametrize("text", [
    "电话忘了带",  # a kind of talk or a thing, not a language
    "论文忘了交",
    "笑话也会说了",
    "这句话太长，我不会说了",
    "我在学日语",  # learning is not speaking yet
    "学了两年日语",
    "我学过德语，现在不会说了",  # the language is not what the clause opened with
])
def test_a_language_guard(text: str) -> None:
    assert _read(text) == []


# ---------------------------------------------------------------- where one went next, when the talk is of work

@pytest.mark.parametrize(("text", "expected"), [
    ("我从网易辞职了，去了拼多多", [("user", "works_at", "网易", "end"), ("user", "works_at", "拼多多", "set")]),
    ("换工作了，去了滴滴", [("user", "works_at", "滴滴", "set")]),
    ("我已经跳到京东了 上周入职的", [("user", "works_at", "京东", "set")]),
    ("我爸换到农业银行了", [("father", "works_at", "农业银行", "set")]),
])
def test_where_one_went_next_at_work(text: str, expected: Read) -> None:
    """Failed on 2dd9947 (the new employer was not read)."""
    assert _read(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("我辞职了，去了大理", [("user", "works_at", "", "end")]),  # after quitting, a trip or a move
    ("我在腾讯上班，周末去了上海", [("user", "works_at", "腾讯", "set")]),  # no change of work spoken of
    ("我不在北京了，去了上海发展", [("user", "works_at", "北京", "end"), ("user", "lives_in", "北京", "end")]),
    ("我离职了，去了趟云南", [("user", "works_at", "", "end")]),
    ("我换到新房子了", []),
])
def test_where_one_went_next_guard(text: str, expected: Read) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize(("messages", "subject", "attribute", "expected"), [
    # a bare 现在在X continues what the conversation spoke of last
    (["我在滴滴上班", "去年换了，现在在快手"], "user", "works_at", ["快手"]),
    # a message naming no one goes on about the relative spoken of last, on the same attribute
    (["我姐在中国银行上班", "去年跳到了交通银行"], "sister", "works_at", ["交通银行"]),
    (["我老公在华硕做销售", "现在在戴尔当销售经理了"], "husband", "job", ["销售经理"]),
])
def test_a_message_goes_on_with_what_was_said_last(tmp_path: Path, messages: list[str], subject: str,
                                                    attribute: str, expected: list[str]) -> None:
    """Failed on 2dd9947 (nothing read, or read of the speaker)."""
    assert _current(tmp_path, messages, subject, attribute) == expected


@pytest.mark.parametrize(("messages", "subject", "attribute", "expected"), [
    (["我妈住在长沙", "我住在北京"], "user", "lives_in", ["北京"]),  # 我 said: the speaker
    (["我妈住在长沙", "在北京上班"], "mother", "works_at", []),  # another attribute: not carried over
    (["我妈住在长沙", "她喜欢跳舞"], "user", "likes", []),
    (["我在腾讯上班", "周末去了上海"], "user", "works_at", ["腾讯"]),  # a trip is no new employer
])
def test_a_message_goes_on_guard(tmp_path: Path, messages: list[str], subject: str, attribute: str,
                                 expected: list[str]) -> None:
    assert _current(tmp_path, messages, subject, attribute) == expected


# ---------------------------------------------------------------- a change of job

@pytest.mark.parametrize(("text", "expected"), [
    ("刚升了部门经理！", [("user", "job", "部门经理", "set")]),
    ("干了两年转成数据分析师了", [("user", "job", "数据分析师", "set")]),
    ("我弟不当保安了，考上了公务员", [("brother", "job", "保安", "end"), ("brother", "job", "公务员", "set")]),
    ("现在在京东当产品经理了", [("user", "works_at", "京东", "set"), ("user", "job", "产品经理", "set")]),
])
def test_a_change_of_job(text: str, expected: Read) -> None:
    """Failed on 2dd9947 (the new job was not read)."""
    assert _read(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("我考上了大学", []),  # a school got into, no job
    ("我升了一级", []),
    ("我在腾讯干了三年", [("user", "works_at", "腾讯", "set")]),  # a duration with no change after it
    ("我干了三年就不干了", []),
])
def test_a_change_of_job_guard(text: str, expected: Read) -> None:
    assert _read(text) == expected
