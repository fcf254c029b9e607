"""Chinese forms behind the misses of the blind sets heldout36-43 (round 22), each with guards of the ordinary
sentences its rule must not misread."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

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
             "，法语不会说了", "不在京东了，去了", "干了一年转成", "换到银行", "要不要", "不干了", "我室友养了一只猫",
             "打算明年搬去，目前还住在", "我叫 28岁 ", "医生说我", "留在了", "去武汉上大学", "网球现在不喜欢了",
             "是喜欢", "现在倒是一直", "是护士不是医", "有个被试住在")


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


# ---------------------------------------------------------------- small openings: 但他, 三月份从, 前几个月, 过完生日,
# a name before 跟我, 家里的, 其实我 after a comma, 是真

@pytest.mark.parametrize(("text", "expected"), [
    ("我姐对花生过敏，但她很喜欢吃坚果", [("sister", "allergic_to", "花生", "add"), ("sister", "likes", "坚果", "add")]),
    ("我五月份从百度离职了", [("user", "works_at", "百度", "end")]),
    ("我前几个月搬到了厦门", [("user", "lives_in", "厦门", "set")]),
    ("过完生日41了", [("user", "age", "41", "set")]),
    ("我同事小刘跟我一起住，他对猫过敏", [("colleague", "name", "小刘", "set"), ("colleague", "allergic_to", "猫", "add")]),
    ("我儿子叫乐乐，家里的狗叫大黄", [("son", "name", "乐乐", "set"), ("dog", "name", "大黄", "set")]),
    ("查了一下，其实我对青霉素不过敏", [("user", "allergic_to", "青霉素", "end")]),
    ("我老婆爱吃辣，我是真受不了辣", [("wife", "likes", "辣", "add"), ("user", "dislikes", "辣", "add")]),
])
def test_small_openings(text: str, expected: Read) -> None:
    """Failed on 2dd9947 (each read nothing, or the wrong subject, or a value with its opening in it)."""
    assert _read(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("但他说他住在上海", []),  # 但 before a pronoun still reports what he says
    ("前几天下雨了", []),
    ("过了生日就去旅游", []),  # a plan after a birthday
    ("家里的事情很多", []),
    ("我是真正的上海人", []),  # 真正 is no "truly"
    ("我妹妹跟我一起住在北京", [("sister", "lives_in", "北京", "set")]),  # 妹妹 itself is no name
])
def test_small_openings_guard(text: str, expected: Read) -> None:
    assert _read(text) == expected


# ---------------------------------------------------------------- a finding after a clause; 不对X过敏

@pytest.mark.parametrize(("text", "expected"), [
    ("昨天复查了，医生说我现在对尘螨不过敏了", [("user", "allergic_to", "尘螨", "end")]),
    ("医生说我已经不对花粉过敏了", [("user", "allergic_to", "花粉", "end")]),
    ("去医院做了检查，检查结果显示我对乳糖过敏", [("user", "allergic_to", "乳糖", "add")]),
])
def test_a_finding_after_a_clause(text: str, expected: Read) -> None:
    """Failed on 2dd9947 (said later than the first clause, a doctor's finding was read as someone's words)."""
    assert _read(text) == expected


@pytest.mark.parametrize("text", [
    "我妈说我对芒果过敏",  # a relative's opinion, not a finding
    "医生说我对海鲜过敏，不对吧",  # a finding disputed
    "昨天去看病，医生说我得多喝水",  # a finding of no fact
    "我去看病，我朋友说她对猫过敏",
])
def test_a_finding_guard(text: str) -> None:
    assert _read(text) == []


# ---------------------------------------------------------------- a question asked as A-not-A

@pytest.mark.parametrize("text", ["在犹豫要不要换工作去京东", "在纠结搬不搬到深圳住", "我在琢磨换不换工作"])
def test_a_not_a_is_a_question(text: str) -> None:
    """Failed on 2dd9947 (a value read out of the question)."""
    assert _read(text) == []


@pytest.mark.parametrize(("text", "expected"), [
    ("我去上海工作了", [("user", "works_at", "上海", "set")]),  # a verb said once is no question
    ("他来不来都行，我住在北京", [("user", "lives_in", "北京", "set")]),  # the question is its own clause
    ("我会说英语", [("user", "speaks", "英语", "add")]),
    ("我不会不管的", []),
    ("我住在北京，要不要来玩", [("user", "lives_in", "北京", "set")]),  # the question is its own clause
])
def test_a_not_a_guard(text: str, expected: Read) -> None:
    assert _read(text) == expected


# ---------------------------------------------------------------- a trade or an employer given up, said first

@pytest.mark.parametrize(("text", "expected"), [
    ("程序员不干了，回老家开店", [("user", "job", "程序员", "end")]),
    ("美团那边我已经不干了", [("user", "works_at", "美团", "end")]),
])
def test_given_up_said_first(text: str, expected: Read) -> None:
    """Failed on 2dd9947 (nothing ended)."""
    assert _read(text) == expected


@pytest.mark.parametrize("text", [
    "老师不干了",  # a person of that kind, who quit: not the speaker's trade
    "这活我不干了",  # a task refused
    "我不干了",  # nothing named
])
def test_given_up_guard(text: str) -> None:
    assert _read(text) == []


# ---------------------------------------------------------------- a relative's pet

@pytest.mark.parametrize(("text", "expected"), [
    ("我舍友养了一只猫，我对猫过敏", [("roommate", "has_pet", "猫", "add"), ("user", "allergic_to", "猫", "add")]),
    ("我对狗过敏，可我老公偏偏养了两条狗", [("user", "allergic_to", "狗", "add"), ("husband", "has_pet", "狗", "add")]),
])
def test_a_relatives_pet(text: str, expected: Read) -> None:
    """Failed on 2dd9947 (the relative's pet was lost)."""
    assert _read(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("我室友养了很多花", []),  # no pet
    ("我室友养了一只猫爬架", []),  # a thing for a cat
    ("他养了一只猫", []),  # someone unnamed
    ("我同事养了一只猫", []),  # someone outside the home (as test_facts_extract's 我邻居养了一条狗叫饼干)
    ("我养了一只猫", [("user", "has_pet", "猫", "add")]),  # the speaker's stays the speaker's
])
def test_a_relatives_pet_guard(text: str, expected: Read) -> None:
    assert _read(text) == expected


# ---------------------------------------------------------------- a plan, then how things are now

@pytest.mark.parametrize(("text", "expected"), [
    ("我们计划年底搬去杭州，目前还住在南京", [("user", "lives_in", "南京", "set")]),
    ("打算明年换工作，现在还是做会计", [("user", "job", "会计", "set")]),
])
def test_a_plan_then_now(text: str, expected: Read) -> None:
    """Failed on 2dd9947 (the plan framed the whole sentence)."""
    assert _read(text) == expected


@pytest.mark.parametrize("text", [
    "如果搬去杭州，现在住的房子就卖了",  # a condition frames all
    "我打算明年搬去苏州，现在在看房子",  # now, doing something: no value
    "明年可能搬去杭州，现在可能住在南京",  # now, guessed
])
def test_a_plan_then_now_guard(text: str) -> None:
    assert _read(text) == []


# ---------------------------------------------------------------- a message with spaces for commas

@pytest.mark.parametrize(("text", "expected"), [
    ("我叫周强 35岁 住在成都 在银行上班", [("user", "name", "周强", "set"), ("user", "age", "35", "set"),
                                          ("user", "lives_in", "成都", "set"), ("user", "works_at", "银行", "set")]),
    ("我是护士 老家四川的 现在住重庆", [("user", "job", "护士", "set"), ("user", "hometown", "四川", "set"),
                                        ("user", "lives_in", "重庆", "set")]),
])
def test_spaces_for_commas(text: str, expected: Read) -> None:
    """Failed on 2dd9947 (one piece ran into the next, or nothing was read)."""
    assert _read(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("我叫 王小明", [("user", "name", "王小明", "set")]),  # one space, after a word that waits for its object
    ("我的生日 是 5月3号", [("user", "birthday", "05-03", "set")]),  # a space before a waiting word's object stays
    ("我在 Google 上班", [("user", "works_at", "Google", "set")]),  # spaces around a Latin name
    ("我住在北京，在 谷歌 上班", [("user", "lives_in", "北京", "set"), ("user", "works_at", "谷歌", "set")]),
])
def test_spaces_for_commas_guard(text: str, expected: Read) -> None:
    assert _read(text) == expected


# ---------------------------------------------------------------- a pet of a breed or a colour, and its name

@pytest.mark.parametrize(("text", "expected"), [
    ("我养了一只狸花猫，叫花花", [("user", "has_pet", "猫", "add"), ("cat", "name", "花花", "set")]),
    ("家里有只暹罗猫，叫可乐", [("user", "has_pet", "猫", "add"), ("cat", "name", "可乐", "set")]),
])
def test_a_cat_of_a_breed_and_its_name(text: str, expected: Read) -> None:
    """Failed on 2dd9947 (no pet kept, and the cat's name read as the speaker's)."""
    assert _read(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("我养了一只熊猫", []),  # a panda is no cat
    ("我买了一只猫爬架", []),
    ("我叫豆豆", [("user", "name", "豆豆", "set")]),  # a name with no pet named is the speaker's
    ("我养了一只猫", [("user", "has_pet", "猫", "add")]),
])
def test_a_cat_of_a_breed_guard(text: str, expected: Read) -> None:
    assert _read(text) == expected


# ---------------------------------------------------------------- corrections said the chat way

@pytest.mark.parametrize(("text", "last", "expected"), [
    ("哦不，我是说京东，刚才说错了", FactKey("user", "works_at"), [("user", "works_at", "京东", "correct")]),
    ("更正一下，她是会计不是出纳，老有人搞混", FactKey("sister", "job"), [("sister", "job", "会计", "correct")]),
    ("说错了，是喜欢游泳，不是跑步", FactKey("user", "likes"), [("user", "likes", "游泳", "correct")]),
])
def test_a_correction_said_the_chat_way(text: str, last: FactKey, expected: Read) -> None:
    """Failed on 2dd9947 (nothing read, or the wrong value or its verb read into the value)."""
    assert _read(text, last) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("我不是医生，是护士", [("user", "job", "护士", "set")]),  # (as on 2dd9947)
    ("我妹妹不是医生，是护士", [("sister", "job", "护士", "set")]),  # no value before 不是
    ("不是我说你，你住在哪", []),  # 不是 opening a phrase, not a "no"
    ("不是，我不知道", []),  # a "no" with no value after it
])
def test_a_correction_said_the_chat_way_guard(text: str, expected: Read) -> None:
    assert _read(text, FactKey("user", "works_at")) == expected


# ---------------------------------------------------------------- stayed on, or went to study

@pytest.mark.parametrize(("text", "expected"), [
    ("毕业后留在了深圳", [("user", "lives_in", "深圳", "set")]),
    ("我去武汉上大学了", [("user", "lives_in", "武汉", "set")]),
    ("我弟去日本留学了", [("brother", "lives_in", "日本", "set")]),
])
def test_stayed_on_or_went_to_study(text: str, expected: Read) -> None:
    """Failed on 2dd9947 (nothing read)."""
    assert _read(text) == expected


@pytest.mark.parametrize("text", [
    "我去图书馆读书了",  # reading somewhere is no home
    "下班后留在公司",  # staying late at work
    "我留在家里",
    "我想去美国留学",  # a wish
])
def test_stayed_on_guard(text: str) -> None:
    assert _read(text) == []


# ---------------------------------------------------------------- the thing first, no one named

@pytest.mark.parametrize(("text", "expected"), [
    ("网球现在不喜欢了", [("user", "likes", "网球", "end")]),
    ("我喜欢爬山，滑雪倒是一直喜欢", [("user", "likes", "爬山", "add"), ("user", "likes", "滑雪", "add")]),
    ("我妹妹爱吃辣，火锅最爱了", [("sister", "likes", "辣", "add"), ("sister", "likes", "火锅", "add")]),
])
def test_the_thing_first_no_one_named(text: str, expected: Read) -> None:
    """Failed on 2dd9947 (nothing read)."""
    assert _read(text) == expected


@pytest.mark.parametrize("text", [
    "好可爱",  # 可爱 is cute, no taste
    "大家都喜欢",  # everyone's taste
    "孩子们都喜欢",
    "妈妈最喜欢",  # a relative, not a thing
    "一点都不喜欢",  # how much, no thing
    "特别喜欢",
    "一闻就讨厌",  # when, read from the clause before if anywhere
])
def test_the_thing_first_guard(text: str) -> None:
    assert _read(text) == []


# ---------------------------------------------------------------- someone introduced by 有个, not one's own

@pytest.mark.parametrize("text", ["有个客户住在苏州，特别喜欢钓鱼", "有个网友住在成都，特别爱吃火锅", "有位病人住在郊区，很喜欢养花"])
def test_someone_introduced_by_you_ge(text: str) -> None:
    """Failed on 2dd9947 (what they like was read as the speaker's)."""
    assert _read(text) == []


@pytest.mark.parametrize(("text", "expected"), [
    ("有个习惯，喜欢早起", [("user", "likes", "早起", "add")]),  # a thing one has, then the speaker's taste
    ("有个学生住在上海，我住在北京", [("user", "lives_in", "北京", "set")]),  # 我 said again
    ("有个问题，我住在北京", [("user", "lives_in", "北京", "set")]),
])
def test_someone_introduced_guard(text: str, expected: Read) -> None:
    assert _read(text) == expected


# Found by the review of the merged round (480 sentences against 048b894), each mended: a trip or an errand after
# leaving a job, a chore or a shift given up, 留在了 a workplace, a pet kept once, a saying of any son or boss, a stay
# in hospital, spaces inside one clause or one name, an adverb after a thing liked, becoming a vegetarian.
@pytest.mark.parametrize(("text", "expected"), [
    ("我从百度离职了，去了健身房", [("user", "works_at", "百度", "end")]),
    ("我从百度离职了，去了欧洲旅游", [("user", "works_at", "百度", "end")]),
    ("我从百度离职了，去了小米", [("user", "works_at", "百度", "end"), ("user", "works_at", "小米", "set")]),
    ("洗碗我不干了", []), ("夜班不干了", []), ("会计不干了", [("user", "job", "会计", "end")]),
    ("我留在了公司", []), ("毕业后我留在了学校当老师", []),
    ("小时候家里养了一只狗", [("user", "has_pet", "狗", "end")]),
    ("养了一只猫，后来送人了", [("user", "has_pet", "猫", "end")]),
    ("儿子都喜欢玩具车", []), ("老板都喜欢听话的员工", []), ("老板是老板，我是我", []),
    ("老妈住院了", []),
    ("我 在 腾讯 上班", [("user", "works_at", "腾讯", "set")]), ("我叫李 明", [("user", "name", "李 明", "set")]),
    ("数学从小不喜欢", [("user", "dislikes", "数学", "add")]), ("我转成了素食者", []),
])
def test_what_the_review_of_the_round_found(text: str, expected: Read) -> None:
    assert _read(text) == expected


def test_a_language_given_up_looks_back_one_clause_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """"…，现在已经不会说了" looks back to the clause before it, not to all the text before (grown and searched in
    each clause, that was quadratic: 3,000 such pairs took 4.9 s). Asserted as the longest text looked back over."""
    import re
    looked_back: list[int] = []
    real = re.search

    def recording(pattern: Any, string: str, flags: int = 0) -> Any:
        if isinstance(pattern, str) and pattern.endswith("(?=[^，,。]{0,8}$)"):
            looked_back.append(len(string))
        return real(pattern, string, flags)

    monkeypatch.setattr(re, "search", recording)
    read = _read("法语好多年没用，现在已经不会说了，" * 200)
    assert ("user", "speaks", "法语", "end") in read and looked_back and max(looked_back) < 40
