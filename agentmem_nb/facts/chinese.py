"""Offline extraction of facts from Chinese statements, by grammar patterns.

The same rules as :mod:`agentmem_nb.facts.english`, for a language that drops subjects and writes no spaces: a
clause (split at ，。；！ and at 但是/而且/不过) takes the subject it names — 我, 我(的)妹妹, or someone else's (他, 她,
a name: no fact) — or, naming none, the subject of the clause before it ("我住在北京，在谷歌工作"). The predicate is
anchored right after the subject and a few adverbs (也, 现在, 已经 …). Questions (？, 吗, 什么, 哪 …), hypotheticals and
plans (如果, 打算, 想要, 明年 …) and reported speech (他说, 听说 …) give nothing; quoted text is removed first. A plan,
a guess or someone's words in a *later* clause drop that clause and those after it, not the speaker's clauses before
("我在腾讯工作，可能明年会换" states 腾讯); a condition (如果, 的话) anywhere still frames the whole sentence, except a
的话 whose consequence follows it in its own clause ("我会说粤语，去香港玩的话沟通没问题": 粤语 stands). Hedges
(好像, 可能, 我觉得 …) keep the fact unsure; 不再/已经不/再也不/以前 and a negated predicate closed by 了 end a value;
其实/不对/说错了 make a correction, and a bare "其实是上海" corrects the last attribute spoken about. One's own family
may go without 我 ("儿子4岁了", "闺女对海鲜过敏"), and a message that names no one goes on with the relative the
conversation spoke of last, on the same attribute ("我妈在工商银行上班。" then "去年跳到了建设银行"). Chat writes a
space for a pause ("是王霆 雷霆的霆": the value ends there) and, in a message without punctuation, for a comma.
"""

from __future__ import annotations

import re

from agentmem_nb.facts._marks import PLURAL_RELATIONS, PRONOUN_LOOKBACK, last_relative, marked, said_of_both
from agentmem_nb.facts._values import normalise_date, normalise_number
from agentmem_nb.store.facts import ACCUMULATING, FactKey, FactOp, Statement

__all__ = ["extract_chinese", "RELATIONS_ZH"]

RELATIONS_ZH = {
    "哥": "brother", "姐": "sister", "妹": "sister", "弟": "brother",
    "妹妹": "sister", "姐姐": "sister", "姊姊": "sister", "哥哥": "brother", "弟弟": "brother", "妈妈": "mother",
    "母亲": "mother", "老妈": "mother", "妈": "mother", "爸爸": "father", "父亲": "father", "老爸": "father",
    "爸": "father", "老婆": "wife", "妻子": "wife", "太太": "wife", "媳妇": "wife", "老公": "husband",
    "丈夫": "husband", "先生": "husband", "爱人": "spouse", "儿子": "son", "女儿": "daughter", "男朋友": "boyfriend",
    "男友": "boyfriend", "女朋友": "girlfriend", "女友": "girlfriend", "最好的朋友": "best_friend",
    "好朋友": "best_friend", "闺蜜": "best_friend", "好友": "best_friend", "朋友": "friend", "同事": "colleague",
    "老板": "boss", "领导": "boss", "上司": "boss", "室友": "roommate", "舍友": "roommate", "表哥": "cousin",
    "表姐": "cousin", "表妹": "cousin", "表弟": "cousin", "堂哥": "cousin", "堂姐": "cousin", "堂妹": "cousin",
    "堂弟": "cousin", "爷爷": "grandfather", "外公": "grandfather", "姥爷": "grandfather", "奶奶": "grandmother",
    "外婆": "grandmother", "姥姥": "grandmother", "叔叔": "uncle", "舅舅": "uncle", "伯伯": "uncle", "阿姨": "aunt",
    "姑姑": "aunt", "小姨": "aunt", "邻居": "neighbour", "孩子": "child", "宝宝": "baby", "未婚夫": "fiance",
    "未婚妻": "fiancee", "狗": "dog", "小狗": "dog", "猫": "cat", "小猫": "cat", "猫咪": "cat", "父母": "parents",
    "爸妈": "parents", "导师": "mentor", "老师": "teacher", "对象": "partner", "伴侣": "partner",
    "嫂子": "sister_in_law", "弟妹": "sister_in_law", "弟媳": "sister_in_law", "姐夫": "brother_in_law",
    "妹夫": "brother_in_law", "岳父": "father_in_law", "公公": "father_in_law", "岳母": "mother_in_law",
    "婆婆": "mother_in_law", "女婿": "son_in_law", "儿媳": "daughter_in_law", "儿媳妇": "daughter_in_law",
    "侄子": "nephew", "侄女": "niece", "外甥": "nephew", "外甥女": "niece", "孙子": "grandson", "孙女": "granddaughter",
    "闺女": "daughter",
}
_REL = "|".join(sorted((re.escape(r) for r in RELATIONS_ZH), key=len, reverse=True))
# Which one of several, before a relation: 大哥, 二姐, 小儿子, 亲妹妹, 大女儿 — the same relation (the longer words in the
# table, 小姨 and 小猫, still match whole first).
_KIN_ORDER = r"(?:(?:大|二|三|四|小|亲|老|最小的|最大的|双胞胎|同父异母的|同母异父的)(?=" + "|".join(sorted((re.escape(r) for r in RELATIONS_ZH), key=len,
                                                                                reverse=True)) + r"))?"
# The relatives a clause may open with and no 我 and still be the speaker's ("儿子4岁了", "闺女对海鲜过敏", "领导生日是
# 9月18号"): one's own family and the people of one's life. Not the words said of anyone (朋友, 孩子, 老师, 邻居, and
# 阿姨, 叔叔, 爷爷, 奶奶 said to strangers), nor 先生/太太/对象/爱人 (a form of address, a thing aimed at), nor a
# one-character word (妈呀, 哥们).
_OWN_BARE = "|".join(sorted((re.escape(r) for r in RELATIONS_ZH if len(r) > 1 and RELATIONS_ZH[r] not in (
    "friend", "child", "baby", "teacher", "neighbour", "dog", "cat", "uncle", "aunt", "grandfather", "grandmother",
    "partner", "spouse", "mentor", "father_in_law", "mother_in_law") and r not in ("先生", "太太", "好朋友", "好友")),
    key=len, reverse=True))
# Who may be new in a role ("新老板叫陈静", "现在的对象叫阿杰"): another person there, whose name replaces the last.
_NEW_IN_ROLE = r"(?:老板|领导|上司|同事|室友|舍友|邻居|老师|导师|对象|男朋友|女朋友|男友|女友)"
_QUOTED = re.compile(r"“[^”]*”|「[^」]*」|\"[^\"]*\"|『[^』]*』")
_SENTENCES = re.compile(r"[。！!？?；;\n…]+")
_CLAUSES = re.compile(r"[，,：:]|但是|不过(?!敏(?!感))|可是|而且|并且|然后|所以|因为|虽然|尽管|虽说")  # ("不过敏": not allergic, no "but")
# ("要不要换工作", "去不去": a verb asked as itself-or-not is a question, said or wondered)
_QUESTION = re.compile(r"[？?]|吗$|吗[呀啊]?$|呢$|(?P<asked>[要去换搬该能会想用买回来做考住])不(?P=asked)|(?<!没)(?<!没有)什么|哪里|哪儿|哪个|哪家|哪|谁|多少|(?<!不)怎么|为什么|为啥|是不是|有没有|"
                       r"(?<!不)对不对$|是否|几岁|几月|几号|吗")
_HYPOTHETICAL = re.compile(r"如果|要是|假如|假设|万一|的话|打算|计划|准备|想要|想去|想搬|想换|想在|想当|想做|想学|考虑|"
                           r"希望|梦想|将来|(?:^|[，,]|我|我们|咱们)以后|未来|明年|下个月|下月|下周|下星期|下半年|可能会|也许会|或许会|会搬|要搬|"
                           r"要去|将要|将会|即将|快要|想象|假装|但愿|要是能|不如|建议|应该去|该去|会不会|说不定会|"
                           # "帮我写个故事，主人公住在巴黎": what a story asked for says is no fact
                           r"(?:写|编)(?:一)?(?:个|篇|首|段)(?:小)?(?:故事|小说|剧本|童话|诗|段子)|(?:写|编)(?:一)?(?:段|篇)(?:话|文字|文章)[：:]|"
                           # "他六月就51了", "到年底就三十了": an age that comes at a later time
                           r"(?:(?:\d{1,2}|[一二三四五六七八九十]{1,3})月(?:份)?(?:底|初)?|到(?:年底|月底))就(?:满|要)?"
                           r"(?:\d{1,3}|[一二两三四五六七八九十]{1,3})(?:周)?岁?(?:了|啦)?(?:[，,。！!]|$)")
# A figure of speech ("我简直就是专业睡觉选手", "堪称吃货", "跟猫一样"): what it says is no fact.
_FIGURATIVE = re.compile(r"简直|堪称|基本上就是|就像|像个|像是个|活像|跟[^，,。]{1,6}(?<!不)一样|称得上|开玩笑|开个玩笑|逗你的|"
                         r"逗你玩")
_SAY = re.compile(r"说|讲|告诉|提到|声称|表示")
_SAY_COMPOUND = re.compile(r"说(?:错|实话|真的|来|起来|白了|过|一下|明)|(?:老实|话|比如|就是|总的来|怎么|小|传|解|演|"
                           r"游|劝|虽|再|且|听|据|来|地|格|会|能|只会|我是|我想|我就是)说|(?:说|讲)得")
_HEDGE = re.compile(r"好像|可能|大概|也许|或许|应该|我觉得|我感觉|我记得|估计|似乎|不太确定|不确定|不太记得|貌似|"
                    r"记不清|吧$|严格(?:来|地)?(?:说|讲)|技术上(?:来说|讲)?|理论上|名义上")
_CORRECTION = re.compile(r"^(?:其实|实际上|事实上|准确地说|确切地说|准确来说|更正一下|更正|纠正一下|纠正|不对|不是的|"
                         # a bare 不 or 不是 said alone first ("哦不，我是说小米", "啊不是，34"): no
                         r"不是?(?=[，,\s])|"
                         r"说错了|我说错了|搞错了|我搞错了|哦不|噢不|不好意思|抱歉|对不起|等等|等一下|错了|口误|"
                         r"我记错了|记错了|改一下|应该说|我是说|我的意思是|我想说的是|我指的是|(?:我)?(?:打|写|拼|输)错(?:字)?了|(?:我)?(?:之前|刚才|刚刚|前面|上次)(?:说|记|搞|弄|写)错了)[，,：:、\s]*")
_LEADING = re.compile(r"^(?:(?:上|这|下)?(?:周|星期|礼拜)[一二三四五六日天](?=我)|(?:好|坏)消息是|好在|幸好|还好|"
                      r"(?:幸运|不幸|可惜|遗憾|巧)的是|可惜|不巧|哎呀|哎哟|哎|唉|呃|天哪|天啊|哇|"
                      r"[一二三四五六七八九十两几半\d]{1,3}(?:个)?(?:天|周|星期|月|年)(?:前|以前|之前)|"
                      r"(?:这|上|下|本)(?:个)?(?:学期|季度|月|周|星期)(?:开始|起)|(?:上|这|上个|这个)?(?:周末|礼拜天)|后来|随后|接着|这段时间|这阵子|这些天|这几天|(?:严格|准确|确切|老实|坦白|认真)(?:来|地)?(?:说|讲)|说真的|讲真|说起来|按理说|技术上|嗯|哦|噢|啊|哈哈|呵呵|对了|对(?=[，,])|是的|昨天|今天|前天|前几天|这周|本周|那天|好的|好吧|那个|另外|还有|而且|然后|现在(?!的" + _NEW_IN_ROLE + r")|目前|最近|如今|"
                      r"今年|去年|前年|上个月|上周|前段时间|前阵子|刚刚|刚才|前几(?:个)?(?:天|周|星期|月|年)|(?:刚)?过(?:完|了)(?:今年的)?生日(?:以后|之后|后)?|顺便说一下|顺便说|顺便|话说|跟你说|"
                      r"告诉你|说实话|老实说|其实吧|总之|反正|所以|从小|小时候|这几年|近几年|这些年|平时|一直以来|"
                      r"没想到|想不到|谁知道|谁能想到|谁想到|万万没想到|开春|入春|入夏|入秋|入冬|开年|"
                      r"自从\S{1,6}以后|自从\S{1,6}|\d{4}年(?:以后|之后|以来|起|开始)?|年初|年底|年中|月初|月底|"
                      r"[^，,。我]{1,10}?(?:以后|之后|以来|的时候)(?=我)|(?:但|可|而|却)(?=我|他|她)|(?:其实|实际上|事实上)(?=我)|比起[^，,。我]{1,8}(?=我)|(?:后来|结果)?发现(?:其实|原来)?(?=是|我|对)|"
                      # a time before the subject: "业余时间我…", "大学毕业后我…", "周末我…"
                      r"[^，,。我你他她它]{0,6}?(?:后|时间|期间|时|周末|晚上|早上|春天|夏天|秋天|冬天)(?=我)|"
                      r"(?:\d{1,2}|[一二三四五六七八九十]{1,3})月份?(?:初|底|中|的时候)?(?=我)|从[^，,。我]{1,8}?(?:开始|起)|就)+[，,、\s]*")
_ADVERBS = re.compile(r"^(?:以[^，,。以]{1,10}?的?身份|是(?=真(?!正))|"  # ("我是真受不了跳舞": how truly, no copula)
                      # "干了一年转成算法工程师了": how long before a change
                      r"(?:干|做|当|工作|待|呆)了(?:快|近)?[一二三四五六七八九十两几半\d]{1,3}(?:个)?(?:年|月)多?(?:后|之后|以后)?"
                      r"(?=转|升|改|换|跳|被|当|成)|算是(?=住|在)|(?:去年|今年|前年)?(?:春天|夏天|秋天|冬天)|是(?=对[^，,。]{1,10}过敏)|是(?=在[^，,。]{1,12}?(?:工作|上班|住|生活))|(?:可|却|但)?(?:偏偏|竟然|居然|反而)|却|倒是|正式|晚上|早上|白天|每天|天天|(?:上|这)?(?:周|星期|礼拜)[一二三四五六日天](?:起)?|"
                      r"开始(?=去|在|到|当|做|住|搬|喜欢|爱|学)|(?:转行|改行)(?=当|做|成)|[一二三四五六七八九十两几半\d]{1,3}(?:个)?(?:天|周|星期|月|年)(?:前|以前|之前)|超级|实在|真心|简直|完全|根本|十分|相当|极其|尤其|格外|始终|老是|常年|长期|长年|"
                      r"一点儿?(?:都|也)|从来|压根儿?|丝毫|[^，,。以之]{1,6}?(?:以后|之后|后)(?=搬|去|来|在|住|开始|就|留)|这段时间|这阵子|(?:\d{1,2}|[一二三四五六七八九十]{1,3})月份?(?:初|底|中|的时候)?(?=入职|搬|去|来|开始|加入|跳槽|离|从|"
                      r"辞职|在|就|被|又)|也|都|还|一直|现在|目前|已经|刚|刚刚|真的|真|非常|特别|很|超|挺|比较|就|又|才|本来|终于|"
                      r"最近|其实|确实|当然|同时|主要|平时|一般|经常|总是|特|蛮|还是|依然|仍然|照样|今年|去年|"
                      r"自己|本人|个人|从小就|一向|向来|全家|一家人|一家|俩|一起|都|更加|更|有点儿|有点|有些|蛮|最|实在|真心|简直|"
                      r"完全|根本|十分|相当|极其|超级|尤其|格外|始终|老是|常年|长期|长年|一整年|平常|"
                      r"如今|眼下|暂时|依旧|一点儿?(?:都|也)|从来|压根儿?|丝毫)+")
_END = re.compile(r"不再|再也不|已经不|早就不|现在不|不怎么|没再")
_PAST = re.compile(r"^(?:以前|过去|曾经|原来|之前|从前|早年)")
# Closing words after a value, a few at most: an open "(?:…)+$" was retried at every 了 of a long run (20,000 took 50 s).
_TAIL = re.compile(r"(?:就行|就好|就可以|就成|了|啦|呢|啊|呀|哦|喔|哈|吧|的|嘛|噢|咯|喽|哟|呗|一下|而已|罢了|这样|这个|那种|之类|等等|"
                   r"工作|上班|生活|居住|住|去了|来了|过|着|一带|附近|这边|那边|呀){1,6}$")
_NOT_JOBS = frozenset({"新手", "高手", "老手", "对手", "好手", "能手", "菜鸟", "新人", "选手", "吃货", "路痴", "宅男", "宅女"})
_PRONOUN_VALUES = {"它", "他", "她", "这", "那", "这个", "那个", "你", "我", "他们", "东西", "什么", "一切", "这些",
                   "那些", "这里", "那里", "哪里", "都", "家", "家里", "这儿", "那儿", "屋里", "宿舍", "一个人", "某人",
                   "别人", "人家"}
# What an organisation's name ends with: "同仁医院", "招商银行", "字节跳动公司".
_ORGANISATION = (r"(?:医院|诊所|公司|银行|集团|学校|大学|学院|中学|小学|幼儿园|研究所|研究院|中心|工厂|报社|电视台|杂志社|"
                 r"事务所|律所|保险|证券|基金|酒店|餐厅|超市|商场|书店|咖啡馆|药房|药店|政府|法院|检察院|派出所|部门|局)")
_JOB_SUFFIX = (r"(?:师|士|员|生|家|手|工|者|官|(?<![家成延增生兄学])长|医生|护士|律师|演员|歌手|记者|翻译|会计|销售|老师|教授|学生|经理|老板|"
               r"代表|出纳|审计|文案|策划|编剧|主管|总监|司机|厨师|模特|警察|军人|农民|工人|博士|硕士|研究生|本科生|主播|博主|自由职业者|公务员|"
               r"创业者|店主|保安|快递员|外卖员|程序员|工程师|设计师|产品经理|运营|编辑|导演|作家|画家|摄影师|博士后|博后|"
               r"医生|兽医|牙医|药剂师|教练|秘书|助理|实习生|保姆|法官|科学家|研究员|顾问|CEO|CTO|HR)")

# A language named first ("日语忘光了", "粤语也会说了"): not a kind of talk (电话, 笑话, 这句话) nor a text (论文, 作文).
_LANGUAGE = (r"(?P<v>(?!这|那|哪|一|每|几|两|某|句|段)(?!(?:电|笑|废|真|实|假|坏|好|大|空|闲|胡|鬼|情|脏|粗|怪|狠|傻|谎|瞎|蠢|套|客气|悄悄|说|讲|这|那|啥|什么|"
             r"对|一句|有的|心里|官)话)(?!(?:论|作|课|原|公|短|散|全|正|本|征|碎|范|条|引|译|汉语言)文)[^，,。的我你他她]{1,4}?"
             r"(?:语|话|文))")

_RULES: list[tuple[str, FactOp, str]] = [
    ("name", "set", r"^(?:的)?(?:名字|姓名|全名|大名)(?:叫|是|叫做)(?P<v>.+)"),
    ("name", "set", r"^(?:叫|名叫|叫做|的名字叫)(?P<v>.+)"),
    ("birthday", "set", r"^(?:的)?生日(?:是|在|为)?(?P<v>.+)"),
    # The month is the first 月 ("[^月]*?" before it): an open ".*?" was tried at every 月 of a long run, each time
    # to the end (quadratic: 40k characters took 18 s).
    ("birthday", "set", r"^(?:是)?(?P<v>[^月]*?\d{1,2}\s*月.*?|[^月]*?[一二三四五六七八九十]{1,3}月.*?)(?:出生|生)的?$"),
    ("birthday", "set", r"^(?:是)?(?P<v>[^月]*?\d{1,2}\s*月.*?|[^月]*?[一二三四五六七八九十]{1,3}月.*?)(?:的)?生日$"),
    ("birthday", "set", r"^(?:出生|生)(?:于|在|日期是|日期为)(?P<v>.*?\d{1,2}\s*月.+|.*?[一二三四五六七八九十]{1,3}月.+)"),
    ("hometown", "set", r"^(?:的)?老家(?:在|是)(?P<v>.+)"),
    ("hometown", "set", r"^(?:的)?老家(?P<v>[^，,。在是]{2,8}?)的$"),  # "老家长春的"
    ("hometown", "set", r"^(?:从小)?(?:长大|出生|土生土长)的(?:地方|城市|小城|村子|小镇)(?:是|在)(?P<v>.+)"),
    ("hometown", "set", r"^(?:是)?(?:在)?(?P<v>[^，,。]{1,8}?)(?:土生土长|长大)的?$"),
    ("hometown", "set", r"^(?:来自|出生于|出生在|生在)(?P<v>.+)"),
    ("hometown", "set", r"^(?:是)?在(?P<v>[^，,。]{1,10}?)(?:出生|出世)的?$"),
    # "我是湖南人": a place before 人 — not a kind of person ("好人", "一个很懒的人", "成年人", "外地人", "北方人")
    ("hometown", "set", r"^(?:算是|算|是)(?:土生土长的|地道的|正宗的|纯正的)?(?P<v>(?!个|一|位|名|很|非常|特别|挺|超|最|比较|好|坏|小|年轻|成年|外地|本地|外国|"
                        r"外省|中国|城里|乡下|农村|普通|有钱|穷|老实|好心|聪明|文化|局外|局内|内行|外行|自己|家里|男|女|中年|"
                        r"老年|北方|南方|明白|急性|慢性|夜|懒|宅|打工|读书|单身|过来|自由|可怜|幸运|正常|同龄|年长|病|残|盲|聋|"
                        r"文明|大(?!连|同|理|庆|兴|冶)|老(?!挝)|新(?!疆|乡|余|竹))"
                        r"[^，,。的]{2,6}?)人$"),
    ("hometown", "set", r"^(?:是)?从(?P<v>[^搬]+?)来的$"),  # not "从X搬过来的": moved from X
    ("age", "set", r"^(?:是)?(?:今年|已经|都|快|刚满|满|刚|快要)?(?P<v>\d{1,3}|[一二两三四五六七八九十百]{1,4})(?:周)?岁"),
    ("speaks", "add", r"^(?:的)?母语是(?P<v>[^，,。]+?(?:语|话|文))$"),
    ("name", "correct", r"^(?:改名(?:字)?|改了名(?:字)?)(?:叫做|叫|为|成)(?P<v>.+)"),
    # a language, not what was said (说了很多废话, 讲笑话, 说的是真话, 讲电话): no 了/的 after the verb, no kind of talk
    ("speaks", "add", r"^(?:只|还|也)?(?:会说|能说|会讲|能讲|说|讲|会)(?:一口|一点点?|一些|点儿?)?(?:流利的)?(?!了|的|过|着)"
                      r"(?![^，,。]*?(?:笑|废|真|实|假|坏|好|大|空|闲|胡|鬼|情|里|脏|粗|梦|怪|狠|傻|谎|电|瞎|蠢|套|悄悄|客气)话$)"
                      r"(?P<v>[^，,。]+?(?:语|话|文))$"),
    # "今年三十了": an age without 岁 is still an age when it is the whole clause
    ("age", "set", r"^(?P<v>\d{1,3}|[一二两三四五六七八九十]{1,3})(?:周岁|岁)?了$"),
    # an age just celebrated: "刚过完五岁生日", "过了40岁生日"
    ("age", "set", r"^(?:刚)?(?:过完了?|过了|庆祝了?|庆祝完)(?P<v>\d{1,3}|[一二两三四五六七八九十]{1,3})(?:周)?岁(?:的)?生日"),
    # an age said as what one is: "作为一个34岁的人", "是个三十岁的程序员"
    ("age", "set", r"^(?:作为|身为|是)(?:一个|一名|一位|个|名)?(?P<v>\d{1,3}|[一二两三四五六七八九十]{1,3})(?:周)?岁的"),
    ("age", "set", r"^(?:的)?年龄是(?P<v>\d{1,3}|[一二两三四五六七八九十百]{1,4})"),
    # "搬回老家绵阳了": where one lives now, and where one is from
    ("home_again", "set", r"^搬回(?:了)?(?:到)?(?:老家|家乡)(?P<v>(?:(?!发展|养|段|住|那|这|边|工作|生活|休息|照顾|陪)[^，,。]){2,6}?)"
                          r"(?:了|啦)?$"),
    ("from_to", "set", r"^(?:刚|已经|终于)?从(?P<old>[^，,。到去来]{1,12}?)(?:搬|迁|移居|移民)(?:家)?(?:到|去|来)了?(?P<v>[^，,。]+)"),
    ("lives_in", "set", r"^(?:搬到了?|搬去了?|搬家到了?|搬回了?|搬来了?|搬进了?|迁到了?|移居到?|移民到?|定居到?)(?P<v>.+)"),
    # "在杭州待了四年了": where one has stayed for years
    # (年了: still there — "待了三年" alone is a stay that may have ended; a place, not a post or a position)
    ("lives_in", "set", r"^在(?!国外|上面|里面|外面|这|那|家)(?P<v>[^，,。在]{1,10}?)(?<!医院)(?<!部队)(?<!公司)(?<!学校)(?<!大学)"
                        r"(?<!监狱)(?:已经|一直|都|也)?(?:待|呆)了?(?:快|近|差不多)?(?:[一二三四五六七八九十两几\d半]+|好几)(?:多)?年了$"),
    # "毕业后留在北京", "去北京上大学了", "去美国留学了": stayed on, or went to study, and so lives there
    ("lives_in", "set", r"^留在(?!了?(?:家|原地|原|身边|公司|学校|单位|医院))了?(?P<v>(?:(?!当|做|工作|上班|读|学)[^，,。]){2,10}?)"
                        r"(?:了|啦)?$"),
    ("lives_in", "set", r"^(?:去|到)了?(?P<v>[^，,。去到]{2,8}?)(?:上大学|读大学|读研究生|读研|读博|留学)(?:了|啦)?$"),
    ("lives_in", "set", r"^(?:常驻在?|常住在?|待在|呆在|扎根在?|落户在?|住在|住(?!院|校|酒店|宾馆|旅馆)|居住在|居住于|定居在|定居于|生活在|家住|家在|常住在|现居|现住)(?P<v>.+)"),
    ("lives_in", "set", r"^(?:的)?(?:家|公寓|房子|住处|住的地方|现在住的地方)(?:在|是在|是)(?P<v>.+)"),
    # "在上海已经住了五年了", "在北京工作和生活": the place before the verb of living (and what joins it)
    ("lives_in", "set", r"^在(?P<v>[^，,。]+?)(?:(?:工作|上班|学习)(?:和|与|并|、))?(?:已经|一直|都|也)?"
                        r"(?:住|居住|定居|生活|安家)(?:了)?(?:\S{0,4}年)?(?:了|啦)?$"),
    # "我们在通州买了房", "我在朝阳区租了五年房子": a home there
    ("lives_in", "set", r"^在(?P<v>[^，,。在]{1,12}?)(?:买了?|租了?|置办了?)(?:[^，,。]{0,4}?)(?:房子?|公寓|套房|一套|"
                        r"新家|别墅)"),
    ("works_at", "end", r"^(?:从)?(?P<v>[^，,。]*?)(?:离职|辞职|辞掉了?工作|被裁|被开除|退休)了?"),
    ("works_at", "end", r"^被(?P<v>[^，,。]+?)(?:裁员|裁掉|裁|开除|辞退|解雇|炒鱿鱼)了?"),
    ("works_at", "end", r"^(?:辞职|离职|退休|失业|辞掉了工作|丢了工作|被裁员?)了?(?P<v>)"),
    ("works_at", "set", r"^(?:在|于)(?P<v>[^，,。]+?)(?:(?:找到|找|谋到|得到|有)了?(?:一份)?(?:新)?)?"
                        r"(?:工作|上班|任职|就职|实习|打工|干活|干(?=了|着|过|$)|当\S+|做\S+|上(?:夜|白|早|晚|中)班|"
                        r"值(?:夜)?班|倒班)"),  # (干: the spoken "work", "在华为干了三年")
    ("left", "end", r"^(?:离开了?|离开)(?P<v>[^，,。]+)"),
    ("works_at", "set", r"^(?:就职于|任职于|供职于|受雇于|入职了?|跳槽到了?|跳槽去了?|加盟了?|加入了?|进了)(?P<v>.+)"),
    ("works_at", "set", r"^(?:去了?|到了?)(?P<v>[^，,。]+?)(?:工作|上班)"),
    # "给腾讯打工", "远程给一家叫路米的公司干活", "换到了阿里巴巴工作": whom one works for, where one moved to work
    # ("给一家多伦多的公司工作" names no employer: an unnamed one is none)
    ("works_at", "set", r"^(?:在家|远程|全职|兼职){0,2}(?:给|替)(?!别人|自己|人家|大家|家里|家人|老板)(?!(?:一|某)(?:家|个|所|间)(?![^，,。]*叫))(?P<v>[^，,。]+?)(?:远程|全职|兼职)?(?:打工|干活|工作|上班|做事|办公)"),
    ("works_at", "set", r"^(?:换到了?|换去了?|转到了?|调到了?)(?P<v>[^，,。]+?)(?:工作|上班)"),
    ("works_at", "set", r"^(?:的)?工作(?:换成|换到|换去|调到)了?(?P<v>[^，,。]{2,12}?)(?:了|啦)?$"),  # "工作换成平安保险了"
    # "后来我调到了同仁医院": moved to an organisation, named as one (its kind last)
    # (调/跳槽: a move of one's work; "去了趟医院", "转到了…医院" are a visit or a patient's transfer)
    ("works_at", "set", r"^(?:调到了?|调去了?|跳槽到了?|跳槽去了?|跳到了?|跳去了?|换到了?|换去了?)(?!市中心)(?P<v>[^，,。]{1,10}?" + _ORGANISATION
                        + r")(?:了|啦)?(?:上班|工作)?(?:了|啦)?$"),
    ("works_at", "set", r"^(?:的)?(?:公司|单位|东家)是(?P<v>.+)"),
    ("job", "set", r"^(?:的)?(?:职业|工作|本职工作)是(?P<v>.+)"),
    ("job", "set", r"^(?:算是|算|是|当上了?|当|做|成了|成为了?|当了|升为|升职为|升职成了?|升成了?|升到了?|升了|转成(?!了?(?:素食者|吃素))了?|转为|考上了?|晋升为|升任|担任|转行做了?|改行当了?|转行当了?|改行做了?|改做了?|改当了?)(?:一名|一个|一位|个|名|位)?"
                   r"(?:[^，,。的]{1,10}的)?(?:一名|一个|一位|个|名|位)?(?P<v>[^，,。的]{0,8}?" + _JOB_SUFFIX + r")(?:了|啦)?"
                   # ("当急救员已经十二年了": for years, still)
                   r"(?:(?:已经|都)?(?:[一二三四五六七八九十两几\d]{1,3}|好几)(?:个)?(?:年|月)(?:多)?了?)?$"),
    # "我是做设计的": a trade of two characters or more ("做梦的", "搞笑的" are no trade)
    ("job", "set", r"^(?:是)?(?:做|干|搞)(?P<v>[^，,。]{2,8}?)的(?:啦|呀|啊|哦|哈|呢|嘛)*$"),
    ("job", "set", r"^从事(?P<v>[^，,。]{1,10}?)(?:工作|行业)?$"),
    # "对牛奶不过敏了", "对花粉已经不过敏了": the allergy ended (before the rule below, which would read "牛奶不")
    ("allergic_to", "end", r"^对(?P<v>[^，,。不]+?)(?:已经|早就|现在|也|都)?不(?:再)?过敏"),
    ("allergic_to", "add", r"^对(?P<v>[^，,。]+?)(?:都|也)?(?:有点儿?|有些|非常|特别|很|严重|轻微|比较|超级|极度)?过敏"),
    ("allergic_to", "add", r"^(?:对)?过敏的(?:东西|食物|是)?是?(?P<v>[^，,。]+)"),
    # "我海鲜过敏", "花生也过敏", "是菠萝过敏": what one is allergic to said before the word, no 对 (not a part of the
    # body or a kind of allergy — 皮肤过敏, 季节性过敏 — nor how or when: 有点过敏, 一吃就过敏)
    ("allergic_to", "add", r"^(?:是)?(?!皮肤|鼻子|鼻炎|眼睛|身体|体质|季节|容易|经常|总是|老是|常|又|有点|有些|很|特别|非常|严重|"
                           r"轻微|过度|一直|从小|天生|先天|突然|好像|会|真|超|挺|比较|极|重度|轻度|药物|接触|食物|花粉症)"
                           r"(?P<v>[^，,。对的了不没就吃喝碰一]{1,8}?)(?:都|也)?(?:有点儿?|有些|非常|特别|很|严重|轻微|比较|超级|"
                           r"极度)?过敏(?:的|啦|呀|哦|呢)?$"),  # "我过敏的是虾": what one is allergic to
    ("dislikes", "add", r"^(?:不喜欢|不太喜欢|不怎么喜欢|讨厌|很讨厌|不爱吃|不爱喝|不爱看|不爱玩|不爱听|不爱|受不了|"
                        r"忍受不了|不能忍受|反感|厌恶|烦|最讨厌|恨|不太感冒|不感冒|无感|不吃|不喝|吃不了|喝不了|讨厌吃|讨厌喝)(?P<v>.+)"),
    ("dislikes", "add", r"^对(?P<v>[^，,。]+?)(?:都|也)?(?:不(?:太|怎么|是很|大)?感兴趣|没兴趣|没有兴趣|没什么兴趣|不太?感冒|无感)"),
    ("likes", "end", r"^把(?P<v>[^，,。]+?)(?:给)?(?:戒掉了?|戒了)"),
    ("dislikes", "add", r"^(?:最)?(?:不喜欢|讨厌)的\S{0,4}?是(?P<v>.+)"),
    ("likes", "add", r"^(?:最)?喜欢的\S{0,6}?是(?P<v>.+)"),
    # "最常喝的是冰拿铁": what one has most often is a like
    ("likes", "add", r"^(?:平时)?(?:最)?(?:常|爱)(?:喝|吃|听|看|玩|去)的\S{0,4}?是(?P<v>.+)"),
    # "我日语说得很流利": a language spoken well
    ("speaks", "add", r"^(?P<v>[^，,。]{1,6}?(?:语|话|文))(?:说|讲)得(?:很|非常|挺|特别|还算|比较)?(?:流利|好|地道|不错|溜)"),
    # a language learned, forgotten, or now spoken too: "学会了日语", "日语早忘光了", "现在日语也能说了"
    ("speaks", "add", r"^学会了?" + _LANGUAGE + r"(?:了|啦)?$"),
    ("speaks", "end", r"^" + _LANGUAGE + r"(?:早就|早|已经|全|都|基本|差不多)?(?:忘光了?|忘了|忘完了?|忘得差不多了|全忘了)"),
    ("speaks", "add", r"^" + _LANGUAGE + r"(?:现在)?(?:也|都)?(?:会|能)(?:说|讲)了$"),
    ("likes", "add", r"^(?:的)?爱好是(?P<v>.+)"),
    ("likes", "end", r"^(?:戒掉了?|戒了|戒)(?P<v>[^，,。]+)"),
    # "现在改喝茶了": the habit now
    ("likes", "add", r"^(?:改|换成|改成)(?:喝|吃|抽|玩|听|看)(?P<v>[^，,。]+)"),
    ("likes", "add", r"^(?:爱死了?|喜欢死了?|喜欢|迷(?!路|信|糊|惑|茫|失|住|人|你|恋)|爱吃|爱喝|爱看|爱玩|爱听|爱|热爱|迷上了?|爱上了?|钟爱|偏爱|钟情于|痴迷于?|沉迷于?|"
                     r"喜爱|酷爱|特爱|超爱|好喜欢|超喜欢|很喜欢|挺喜欢|最爱|最喜欢|爱好)(?P<v>.+)"),
    ("likes", "add", r"^对(?P<v>[^，,。]+?)(?:很|特别|非常|超级|挺|比较)?(?:感兴趣|着迷|上瘾|有兴趣)"),
    ("likes", "add", r"^是(?:个|一个)?(?P<v>[^，,。的]{1,8}?)(?:的(?:铁杆|忠实|资深|狂热|死忠|超级)?(?:球|歌|影|书|剧)?)?"
                     r"(?:迷|粉|粉丝|爱好者|控)$"),
]
_PREDICATES = [(attribute, op, re.compile(pattern)) for attribute, op, pattern in _RULES]


# A space between two Chinese words in chat: a pause, after which a remark of its own follows.
# (not a single character on either side: "我叫李 明", "我叫小 王" space one name)
_PAUSE = re.compile(r"(?<=[\u4e00-\u9fff]{2})[ \t\u3000]+(?=[\u4e00-\u9fff]{2})")


def _clean(raw: str, attribute: str) -> str:
    value = re.split(r"[，,。；;！!？?]", raw)[0].strip()
    # a space between two Chinese words in chat is a pause: what follows it is a remark of its own ("是王霆 雷霆的霆",
    # "其实是邯郸 刚才说错了"), not more of the value
    value = _PAUSE.split(value)[0]
    value = re.sub(r"[^\w）)]{1,16}$", "", value)  # a trailing emoji or symbol (bounded: an open run is quadratic)
    for _ in range(3):
        value = _TAIL.sub("", value).strip() if attribute not in ("job",) else re.sub(
            r"(?:了|啦|呢|啊|呀|哦|吧|嘛){1,6}$", "", value)
    value = re.sub(r"^(?:了|在|是|于)", "", value) if attribute not in ("birthday", "age") else value
    if attribute == "job":  # "还是做硬件工程师": the trade, not the verb of doing it
        value = re.sub(r"^(?:做|当|干)(?=\S{2})", "", value)
    if attribute in ("lives_in", "works_at", "hometown") and (called := re.search(r"叫(?P<x>[^的，,。]{1,10})的", value)):
        value = called.group("x")  # "一个叫丽江的小城": the name
    if attribute == "lives_in":  # "嘉兴的一个小镇", "老家那不勒斯": where one lives is the named place (a hometown
        # keeps its kind: "威尔士的一个小村子")
        value = re.sub(r"(?<=\S{2})的(?:一个|一座|一处)?(?:小镇|小城|小县城|县城|村子|小村子?|乡下|郊区|镇上|农村|小区)$", "", value)
        value = re.sub(r"^(?:老家|家乡)(?=\S{2})", "", value)
    if attribute in ("lives_in", "hometown"):  # a place ends before a purpose: "墨尔本读大学", "深圳发展", "杭州陪爸妈"
        # (whom one is with is bounded: an open "陪\S*$" was tried at every 陪 of a long run, 20,000 took seconds)
        value = re.sub(r"(?<=\S{2})(?:读书|读大学|读研究生|读研|读博|读|上学|上大学|念书|留学|工作|上班|打工|发展|养老|"
                       r"学习|进修|陪\S{0,8}|照顾\S{0,8})$", "", value)
        # … and before whom one lives there with: "青岛跟我们一起住", "成都和男朋友一起" (bounded, as above)
        value = re.sub(r"(?<=\S{2})(?:跟|和|与|同)\S{1,8}?一起\S{0,3}$", "", value)
    if attribute == "birthday":
        value = normalise_date(value)
    if attribute == "age":
        value = normalise_number(value)
    value = re.sub(r"^[《〈]|[》〉]$", "", value)  # 《三体》: the title
    if attribute in ACCUMULATING:  # "不是所有海鲜": the kind, not how much of it
        value = re.sub(r"^(?:所有的?|全部的?|一切)(?=\S)", "", value)
    if attribute == "likes":  # "铁杆球迷": the thing, not how devoted
        value = re.sub(r"^(?:铁杆|忠实|资深|狂热|死忠|超级|骨灰级)(?=\S)", "", value)
    if attribute in ("likes", "dislikes"):
        # "喜欢吃榴莲", "爱看恐怖片": what one eats, drinks, watches or hears is the thing liked (one character
        # after the verb is an activity: 吃辣, 看书; other verbs make one too: 打游戏, 弹钢琴)
        value = re.sub(r"^(?:吃|喝|看|听)(?=\S{2,})", "", value)
        value = re.sub(r"^上了?(?=\S)", "", value)  # "喜欢上了X", "爱上了X": X
        value = "" if value == "上" else value  # ("现在爱上了": fell for what was said before, no thing named here)
    return value.strip()


def _values(value: str) -> list[str]:
    return [v for v in (p.strip() for p in re.split(r"[、/]|和|跟|以及|还有|与|或者|或", value)) if v]


def _ok(value: str) -> bool:
    if re.match(r"^(?:的|得|地|着|过)", value):  # "住的地方离公司很远": a clause went on past the verb, no value
        return False
    # (a value that opens with someone is a clause the pattern over-captured: "讨厌别人迟到" dislikes no 别人迟到)
    return (bool(value) and value not in _PRONOUN_VALUES and len(value) <= 20 and not re.search(r"我|你", value)
            and not re.match(r"^(?:别人|人家|大家|有人|他|她|它)\S", value)
            and not re.match(r"^(?:这|那)(?:个|首|部|件|种|本|家|只|位|些|里|儿)", value))  # "这首歌": what, unsaid


# "X叫我…" names the speaker only as a habit of calling ("大家都叫我小王", "你可以叫我老王", "叫我阿杰就行"): a bare
# someone ("同事叫我", "你叫我") asks or tells the speaker to do something unless a closing 就行/吧 makes it a name; and
# a name is short and no action (帮忙, 出去玩, 去吃饭, 等一下, 干嘛) nor a count of one (一声, 一下).
_CALLED = re.compile(r"^(?:(?:你们?|您)(?:可以|就|也可以)|(?:大家|朋友们?|别人|家里人|家人|同事们?)都|大家|可以|就|"
                     r"(?P<bare>你们?|您|朋友们?|别人|家里人|家人|同事们?))?(?:直接)?(?:叫|喊|称呼)我"
                     r"(?P<v>(?!(?:去|来|帮|等|干|做|弄|吃|喝|出|回|起|给|陪|别|不|没|快|赶紧|过去|过来|(?:上|下|进)(?:来|去)|"
                     r"一[声下起块会次趟遍句个])|\S{0,3}(?:一下|一声)$)(?:[\u4e00-\u9fff]{1,4}?|[A-Za-z][A-Za-z'-]*(?:\s+[A-Z][A-Za-z'-]*)?))"
                     r"(?P<tail>就行|就好|就可以|就成|就是了|好了|吧)?(?:啦|呀|哈|嘛|了|吧)*$")


# One's relative or pet named with nothing said of them yet ("我们家养了一只猫", "我新养了一只小狗"): the clause, or
# the sentence, after it speaks of them ("…，叫咪咪", "它叫肉肉").
# Who keeps or has: the speaker, said or dropped ("上周新养了只狗", "家里养了一条狗"). A pet is kept by 有 only when
# the keeper is said ("家里有只猫"): "有只猫在楼下叫" is a cat somewhere.
_KEEPER = r"(?:我(?:们)?(?:家)?|家里|家)"
_KEEP_ADVERBS = r"(?:刚|最近|也|还|新|又|现在){0,2}"
_INTRODUCED = re.compile(r"^" + _KEEPER + r"?" + _KEEP_ADVERBS + r"(?:有|养了?|养着|领养了?|收养了?|捡了?|买了?|添了?|"
                         r"新添了?|生了?|接回了?|迎来了?)(?:一|两|三)?(?:个|位|只|条)?" + _KIN_ORDER + r"(?P<rel>" + _REL
                         + r")$")
_ANIMALS = frozenset({"dog", "cat"})
# The people of one's life who live outside one's home and family.
_OUTSIDE_HOME = ("neighbour", "colleague", "boss", "teacher", "mentor", "friend", "best_friend")
# The pets one keeps (``has_pet``), kept ("我养了一只狗和一只兔子": what one keeps or has, right after the verb) or gone
# ("兔子送给朋友了", "我家的狗去年走了", "不养猫了"). A pet word is a whole word: 马桶, 猫爪杯, 狗链, 鸟笼, 兔子玩偶 are things;
# a fish or a horse is as often a meal or a ride, and someone else's pet ("同事家的狗") is not the speaker's.
def _pet_zh(group: str = "") -> str:
    """A pet's word (captured as ``group`` when one is named)."""
    return (f"(?P<{group}>" if group else "(?:") + (r"[\u4e00-\u9fff]{0,3}?犬|狗狗|小狗|狗|猫咪|小猫|猫|(?!熊猫)[\u4e00-\u9fff]{1,2}?猫|兔子|仓鼠|鹦鹉|乌龟|金鱼|"
                                                  r"龙猫|刺猬|蜥蜴|荷兰猪|豚鼠|八哥)")


def _pet_measured(group: str = "") -> str:
    """A pet counted ("一只狗", "两只猫"), as a whole word ("猫爪杯" is none)."""
    return r"(?:一|两|三|四|几|\d+)?(?:只|条|个|匹)" + _pet_zh(group) + r"(?=$|[，,。！!？?、\s和跟还叫了呢啊呀吧])"


_PETS_KEPT = re.compile(_pet_measured("kind"))
_KEEPS_PETS = re.compile(r"^(?:" + _KEEPER + _KEEP_ADVERBS + r"有|" + _KEEPER + r"?" + _KEEP_ADVERBS
                         + r"(?:养了?|养着|领养了?|收养了?|捡了?|买了?))(?=" + _pet_measured() + ")")
_PET_GONE = re.compile(r"(?:^|[，,]|(?<=我家的)|(?<=我们家的)|(?<=我的))" + _pet_zh("kind")
                       + r"(?:去年|前年|上个月|上周|前几天|前阵子|最近|已经|刚刚|刚)?(?:送人了|送给[^，,。]{1,6}了|死了|去世了|走了|"
                       r"没了|丢了|跑丢了|被领养了)|不养" + _pet_zh("kind2") + r"了")
_PET_NAMES = {"狗狗": "狗", "小狗": "狗", "猫咪": "猫", "小猫": "猫"}


def _pets(body: str, *, past: bool = False) -> list[Statement]:
    """The user's pets a sentence says are kept or gone (``past``: the sentence speaks of a time gone, "小时候…")."""
    gone = [Statement("user", "has_pet", k, "end")
            for m in _PET_GONE.finditer(body) if (k := _pet_name(m.group("kind") or m.group("kind2")))]
    if gone or not _KEEPS_PETS.match(body):
        return gone
    # ("养了一只狗，后来死了", "小时候家里养了一只狗": kept once, and no more)
    lost = past or re.search(r"[，,](?:后来|结果|可惜|去年|前年|之后)?[^，,。]{0,3}(?:死了|走了|跑了|跑丢了|丢了|送人了|送给[^，,。]{1,6}了|"
                             r"没了|去世了)", body) is not None
    return [Statement("user", "has_pet", _pet_name(m.group("kind")), "end" if lost else "add")
            for m in _PETS_KEPT.finditer(body)]


def _pet_name(kind: str) -> str:
    return "狗" if kind.endswith("犬") else "猫" if kind.endswith("猫") else _PET_NAMES.get(kind, kind)  # (a breed:
    # "比格犬" is a dog, "橘猫" a cat)


def _subject(clause: str) -> tuple[str | None, str, list[Statement]]:
    names: list[Statement] = []
    has = re.match(r"^我(?:们)?(?:家)?有(?:一|两|三)?(?:个|位|只|条)?(?P<rel>" + _REL + r")(?:，|,)?(?:叫|名叫|叫做|名字叫)"
                   r"(?P<name>[^，,。的]{1,6})", clause)
    if has:
        names.append(Statement(RELATIONS_ZH[has.group("rel")], "name", has.group("name")))
        rest = clause[has.end():]
        return RELATIONS_ZH[has.group("rel")], rest, names
    introduced = _INTRODUCED.match(clause)
    if introduced:  # "我们家养了一只猫，叫咪咪": the clause after it speaks of the cat
        return RELATIONS_ZH[introduced.group("rel")], "", names
    found = re.match(r"^(?:(?P<own>我(?:们)?(?:家)?(?:的)?|家里的)|(?:新来的|新的|新|现在的)(?=" + _NEW_IN_ROLE + r")|(?=(?:"
                     + _OWN_BARE + r")(?!们|娘|辈|饼|国)))" + _KIN_ORDER
                     + r"(?P<rel>" + _REL + r")(?P<poss>的)?(?P<rest>.*)$", clause)  # ("新来的老板叫刘洋": ours, new)
    if found and found.group("own") is None and not found.group("poss") and (
            re.match(r"(?:都|总是|总|就是这样|一般|通常|嘛|这种|这东西|是" + re.escape(found.group("rel")) + ")",
                     found.group("rest")) or re.search(r"的(?:人|员工|孩子|下属)$", found.group("rest"))):
        return "other", found.group("rest"), names  # "儿子都喜欢玩具车", "老板是老板": a saying of any such person
    if found and found.group("own") is None and not found.group("poss"):
        return RELATIONS_ZH[found.group("rel")], found.group("rest"), names  # (said bare: no name in apposition,
        # "老板娘在店里" is no boss called 娘)
    if found:
        relation = RELATIONS_ZH[found.group("rel")]
        rest = found.group("rest")
        # "我哥和我嫂子住在科克", "我妈跟她男朋友都住在上海": what they do together is said of the relative too
        rest = re.sub(r"^(?:和|跟|与)(?:我|他|她)?(?:的)?(?:" + _REL + r"|[\u4e00-\u9fff]{1,4}?)(?=都|也|一起|住|在|搬|定居|生活)",
                      "", rest) if not found.group("poss") else rest
        if found.group("poss"):
            return relation, rest, names
        # An appositive name: "我妹妹小美住在上海" — a few characters before a predicate word.
        apposition = re.match(r"^(?P<name>[\u4e00-\u9fff]{1,4}?|[A-Z][a-zA-Z]+)(?=(?:也|现在|目前|已经|一直|还|很|非常|特别|超|最|挺|"
                              r"真|都|又|就|不)?"
                              r"(?:住|在|喜欢|爱|迷|是|叫|搬|今年|讨厌|不喜欢|的生日|生日|从事|当|做|对|会说|会讲|能说|跟我|和我|"
                              r"(?:今|明|昨)(?:天|晚)|(?:这|上|下)?(?:周末|个月|星期)|正在|要来|要去|会来|来我|刚|结婚|"
                              r"晚上|早上|白天|平时|每天|(?:\d{1,3}|[一二两三四五六七八九十]{1,3})(?:周)?岁|"
                              r"(?:\d{1,2}|[一二三四五六七八九十]{1,3})月份?|明年|今年|去年))", rest)
        if apposition and re.search(r"(?:后|前|时|里|中|上|下|都|也|就|又|刚|才)$", apposition.group("name")):
            apposition = None  # "我爸退休后搬到了海南": a time clause, not a name
        if apposition and not re.match(r"^(?:也|现在|目前|已经|一直|还|最|很|就|都|不|又|刚|住|在|喜|爱|是|叫|搬|今|去|"
                                       r"明|前|上|昨|对|从|做|当|的|没|特|超|真|挺|比|曾|以|过|和|跟|这|下|周|要|会|正|"
                                       r"每|晚|早|来|快|马|后来|转行|改行|平时|经常|偶尔|终于|总是|老家|名字|生日|工作|公司|"
                                       r"职业|年龄|爱好|家)", rest):
            names.append(Statement(relation, "name", apposition.group("name")))
            rest = rest[apposition.end():]
        return relation, rest, names
    both = re.match(r"^我(?:和|跟|与)(?:[^，,。]{1,6}?(?=都|也|一起)|(?:我)?(?:的)?(?:" + _REL + r")(?=住|在|搬|定居|生活|喜欢|讨厌|爱|一起|都|也))"
                    r"(?P<rest>.*)$", clause)
    if both:  # "我和我老公都讨厌冷天": what both say is the speaker's too
        return "user", both.group("rest"), names
    found = re.match(r"^(?:我们(?:全家|一家|一家人|家)?|咱们|我|本人|咱)(?P<rest>.*)$", clause)
    if found:
        return "user", found.group("rest"), names
    call = _CALLED.match(clause)
    if call and (call.group("tail") or not call.group("bare")):  # "你可以叫我小王", "大家都叫我…": the speaker's name,
        return "user", "叫" + call.group("v"), names  # whoever calls them so
    if re.match(r"^有(?:一)?(?:个|位|名)(?!" + _KIN_ORDER + r"(?:" + _REL + r"))[\u4e00-\u9fff]{1,6}?"
                r"(?=住|在|是|喜欢|爱|讨厌|叫|对|会|搬|今年)", clause):
        return "other", "", names  # "有个被试住在哈尔滨，特别喜欢滑雪": someone, not one's own, and what they do
    if re.match(r"^[" + _SURNAMES + r"][\u4e00-\u9fff]{1,2}(?=上个月|上周|昨天|今天|前天|最近|去年|刚刚|已经|辞职|离职|跳槽)",
                clause):
        return None, "", names  # "陈明上个月辞职了": someone named, then what they did (this clause only: "高中已经毕业了，
        # 现在在杭州工作" goes on about the speaker)
    if re.match(r"^(?:他|她|它|他们|她们|你|您|你们|大家|别人|有人|人家|某人|这|那|主人公|主角|女主|男主|[A-Za-z]|"
                r"(?!(?:还|也|都|只|就)?(?:会|能)(?:说|讲))[\u4e00-\u9fff]{1,3}(?:说|觉得))", clause):  # (会说: speaks, no one's words)
        return "other", "", names
    return None, clause, names


def _predicates(rest: str, subject: str) -> list[Statement]:
    rest = re.sub(r"[^\w）)]{1,16}$", "", rest)  # a trailing emoji or symbol ("…的啦😂")
    for _ in range(3):  # time words and adverbs in any order: "上个月也搬到了…"
        rest = _ADVERBS.sub("", _LEADING.sub("", rest.strip()))
    rest = re.sub(r"^(?:的)(?=名字|生日|老家|家|职业|工作|公司|爱好|年龄|最)", "的", rest)
    for attribute, op, pattern in _PREDICATES:
        found = pattern.match(rest)
        if found is None:
            continue
        raw = found.group("v") or ""
        value = _clean(raw, attribute)
        if attribute == "name" and op != "correct" and re.search(r"^(?:不|没|了)|[他她的]|(?:了|过)$", raw.rstrip("。！!，, ")):
            continue  # "我叫不出他的名字", "我叫外卖了": 叫 as a verb of calling or ordering, not a name
        if attribute == "lives_in" and re.search(r"酒店|宾馆|旅馆|民宿|青旅|客栈|招待所", value):
            continue  # "住在马德里的一家酒店": a stay, no home
        if attribute == "hometown" and re.search(r"(?:医院|家里|路上|车上|飞机上|火车上)$", value):
            continue  # "我出生在医院": where, not which town
        if attribute == "job" and (value in _NOT_JOBS or re.match(r"^(?:好|坏|乖|差|笨)(?=\S{2})", value)):
            continue  # ("老师眼里的好学生": a praise, no trade)
        if attribute == "birthday" and not re.search(r"\d", value):
            continue  # "生日刚过": the birthday spoken of, no date said
        if attribute == "home_again":
            value = _clean(raw, "lives_in")
            return [Statement(subject, a, value, op) for a in ("lives_in", "hometown")] if _ok(value) else []
        if attribute == "from_to":  # "从杭州搬到了成都": the origin was true until the move
            old = _clean(found.group("old"), "lives_in")
            return [Statement(subject, "lives_in", v, op) for v in (old, value) if _ok(v)]
        role = re.search(r"(?:当|做|担任)(?:一名|一个|一位|个|名|位)?(?P<v>[^，,。的]{0,8}?" + _JOB_SUFFIX + r")(?:了|啦)?$",
                         rest) if attribute == "works_at" and op == "set" else None
        if role and re.match(r"^(?:一|某|这|那)(?:家|个|所|间)", value):  # "在一家餐厅当厨师": the job, no employer named
            return [Statement(subject, "job", role.group("v"), op)]
        if role and _ok(value):  # "在腾讯当产品经理": the job too
            return [Statement(subject, "works_at", value, op), Statement(subject, "job", role.group("v"), op)]
        if attribute == "left":  # "我离开了苹果": end whichever of works_at / lives_in has that value
            return [Statement(subject, a, value, "end") for a in ("works_at", "lives_in")] if _ok(value) else []
        if attribute == "likes" and op == "end":  # "把咖啡戒了": the thing, and the habit of it ("喝咖啡")
            return [Statement(subject, attribute, form, op) for v in _values(value) if _ok(v)
                    for form in (v, *(verb + v for verb in "喝吃抽" if not v.startswith(verb)))]
        if attribute in ACCUMULATING:
            return [Statement(subject, attribute, v, op) for v in _values(value) if _ok(v)]
        if op == "end":
            return [Statement(subject, attribute, value if _ok(value) else "", "end")]
        if not _ok(value) or (attribute == "age" and not value.isdigit()):
            return []
        return [Statement(subject, attribute, value, op)]
    return []


# Activities said by their verb alone ("不跑了", "不游泳了"): a habit, liked or kept; a bare verb names its activity.
_ACTIVITY = r"(?:跑步|跑|游泳|健身|滑雪|画画|跳舞|唱歌|钓鱼|爬山|骑车|做饭|熬夜|抽烟|喝酒|打游戏|打球)"
_ACTIVITY_NAMES = {"跑": "跑步"}


def _ended_without_predicate(rest: str, subject: str) -> list[Statement]:
    """What an end with no predicate of its own ends: "不在腾讯了" the employer or the place of that name,
    "再也不吃麻辣烫了" a like of the food (or of eating it)."""
    where = re.match(r"^在(?P<v>[^，,。]+?)(?:了|啦)?$", rest)
    if where and _ok(value := _clean(where.group("v"), "works_at")):
        return [Statement(subject, a, value, "end") for a in ("works_at", "lives_in")]
    activity = re.fullmatch(r"(?P<a>" + _ACTIVITY + r")(?:了|啦)?", rest)
    if activity:  # "现在不跑了": the activity, as a like that ended (跑 is 跑步)
        return [Statement(subject, "likes", _ACTIVITY_NAMES.get(activity.group("a"), activity.group("a")), "end")]
    habit = re.match(r"^(?P<verb>吃|喝|抽|玩|看|听|追|打)(?P<v>[^，,。]+?)(?:了|啦)?$", rest)
    if habit and _ok(thing := _clean(habit.group("v"), "likes")):
        return [Statement(subject, "likes", v, "end") for v in (thing, habit.group("verb") + thing)]
    return []


def _as_end(statements: list[Statement], *, aversion: bool = False) -> list[Statement]:
    """``statements`` as ended; a dislike read from a like denied ("不喜欢X了") as the like that ended, one read from
    an ``aversion`` ("以前讨厌香菜") as the dislike that ended."""
    return [Statement(s.subject, "likes" if s.attribute == "dislikes" and not aversion else s.attribute, s.value,
                      "end", s.certain) for s in statements]


_AVERSION = re.compile(r"^(?:特别|非常|很|超|最|好|挺|真的|真)?(?:讨厌|反感|厌恶|恨|受不了|忍受不了)")


def _said_value(clause: str, last: FactKey) -> str:
    """The value a bare correction's clause gives ``last``: said with its predicate ("是喜欢匹克球", "是住在福州"),
    or bare (:func:`_bare_value`)."""
    said = [s.value for s in _predicates(re.sub(r"^(?:也|或者|还是|应该)?是(?=\S{3})", "", clause.strip()), last.subject)
            if s.key.attribute == last.attribute and s.op != "end" and s.value]
    return said[0] if said else _bare_value(clause, last.attribute)


def _bare_value(body: str, attribute: str) -> str:
    if re.match(r"^(?:有点儿?|有些|很|非常|太|挺|特别|比较|真|好)(?:累|忙|困|饿|烦|难受|开心|高兴|无聊|冷|热|好|差|不错|舒服|"
                r"闷|晕|惨|爽|紧张|郁闷)", _LEADING.sub("", body.strip())):
        return ""  # a degree, then a state ("今天有点累"): how one is, no value (太原, 太仓 are places)
    for _ in range(2):  # "也现在算是在蚂蚁集团了": the adverbs left by the hedge, then the copula
        body = _ADVERBS.sub("", _LEADING.sub("", body.strip()))
    body = re.sub(r"^(?:也|或者|还是|或)?(?:(?:应该是|应该|算是|是在|是|在|叫|改成|改为|为)){1,2}", "", body.strip())
    body = re.sub(r"^(?:住在|在)(?=\S{2})", "", body) if attribute in ("works_at", "lives_in") else body
    if re.match(r"^(?:我|他|她|你)", body) or re.search(r"啥|什么|(?:都|也|就|还)(?:干|做|是|在|要|会|能|有|行|好|可以|没)", body):
        return ""  # (a clause, not a value: "活儿啥都干"; 成都, 京都, 也门 are names)
    value = _clean(body, attribute)
    if attribute == "age":
        value = re.sub(r"岁.*$", "", value)
        value = normalise_number(value)
        return value if value.isdigit() else ""
    if attribute == "name" and re.fullmatch(r"[\u4e00-\u9fff]", value):
        return ""  # (a Chinese name has two characters at least)
    return value if _ok(value) else ""


# A say-clause that attributes what came before it ("…，他说的", "…，我妈告诉我的"): the whole sentence is theirs.
# A doctor's or a test's finding about the speaker ("医生说我已经不再对青霉素过敏了", "检查结果显示我对尘螨过敏"):
# what the speaker reports of themself on an authority, not someone's opinion of them.
_FINDING = re.compile(r"(?:^|(?<=[，,]))(?:我的)?(?:(?:主治|过敏科|皮肤科|家庭)?医生|大夫|(?:过敏|皮肤|血液)?(?:检查|化验|检测|测试|体检)(?:结果|报告)?)"
                      r"(?:跟我|对我)?(?:说|讲|告诉我|显示|证实|确认)(?:了)?[，,：:]?\s*(?=我(?!们))")
_ATTRIBUTION = re.compile(r"(?:说|讲|告诉我|提到)(?:的|过)?(?:啦|呀|啊)?$")


def _reported(sentence: str) -> bool:
    """Whether someone other than the speaker says it: a say-verb whose speaker (the characters before it, less
    "跟我"/"对你") is not 我; compounds such as 说实话, 说错了, 比如说 are no saying."""
    if re.search(r"听说|据说|告诉我", sentence):
        return True
    for found in _SAY.finditer(sentence):
        if _SAY_COMPOUND.match(sentence, max(0, found.start() - 3)) or _SAY_COMPOUND.search(
                sentence[max(0, found.start() - 3): found.end() + 3]):
            continue
        before = re.sub(r"(?:跟|对|和|给|同)(?:我|你|您|他|她)$", "", sentence[: found.start()])
        to_you = re.match(r"(?:诉)?(?:你|您)", sentence[found.end():]) or re.search(r"(?:跟|对|和|给|同)(?:你|您)$",
                                                                                sentence[: found.start()])
        if not before.endswith("我") and not (to_you and not before.strip()):
            return True
    return False


# A condition frames the whole sentence wherever it is said ("我就搬去上海，如果…"); a plan or a guess only its clause.
_CONDITIONAL = re.compile(r"如果|要是|假如|假设|万一|的话|要是能|但愿|想象|假装")
# A guess that opens a clause and governs what follows it in that clause ("我觉得这里挺好的"); one closing a clause
# ("…吧，我不太确定") looks back, and stays the sentence's.
_FORWARD_HEDGE = re.compile(r"^(?:我觉得|我感觉|估计|好像|可能|大概|也许|或许|似乎|貌似)")


_NOW = re.compile(r"^(?:我|我们)?(?:目前|现在|眼下|如今)(?:我|我们)?(?:还|仍然|依然|暂时|也)?(?:是|在|住|做|当)")


def _before_later_clause(clauses: list[str]) -> list[str]:
    """``clauses`` less a later clause that only plans or guesses, and those after it: "我在腾讯工作，可能明年会换"
    states 腾讯; "我住在成都，我觉得这里挺好的" states 成都 for sure. (As :func:`english._before_later_clause`.)"""
    if clauses and _HYPOTHETICAL.search(clauses[0]) and not _CONDITIONAL.search("，".join(clauses)):
        # "打算明年搬去苏州，目前还住在上海": the plan first, then how things are now, said as now
        now = next((at for at, clause in enumerate(clauses) if at and _NOW.match(clause.strip())
                    and not _HYPOTHETICAL.search(clause) and not _HEDGE.search(clause)), None)
        if now is not None:
            return clauses[now:]
    for at, clause in enumerate(clauses):
        if _HYPOTHETICAL.search(clauses[at - 1] if at else clause) or _HEDGE.search(clauses[at - 1] if at else clause):
            return clauses  # a plan or a guess in the first clauses: the sentence is one ("我也不确定，可能…")
        if at == 0:
            continue
        if _CONDITIONAL.search(clause) and not re.search(r"的话[^了吧啊呀呢。！!？?]", clause):
            # ("…，如果可以的话": governs what came before; "…，去香港玩的话沟通没问题" — its consequence said after
            # it in the same clause — governs its own clause)
            return clauses
        hedge = _FORWARD_HEDGE.match(clause)
        if _HYPOTHETICAL.search(clause) or (hedge and clause[hedge.end():].strip()):
            return clauses[:at]
    return clauses


# Chat's punctuation: a space, or an emoji, where a new clause starts ("啊说错了 是宁波", "我住杭州哈 我老家是杭州",
# "我对芒果过敏😭我老公对花生过敏") is where a clause ends. Elsewhere a space is typography ("我叫 王小明", "我在 Google
# 上班", "1990 05 20") and stays, and an emoji inside what is said ("苹果🍎和香蕉", "我住在💕上海") goes.
_EMOJI = re.compile(r"[\U0001F000-\U0001FAFF\u2600-\u27BF\u2B00-\u2BFF\uFE0F\u200D]+")
_CLAUSE_START = (r"(?:我|你|他|她|它|咱|现在|目前|以前|之前|原来|今年|去年|最近|后来|不过|但是|可是|而且|所以|然后|不是|不对|"
                 r"说错|对了|其实|" + _REL + r")")
_CHAT_EDGE = re.compile(r"(?<=[\u4e00-\u9fff])[ \t\u3000]+(?=" + _CLAUSE_START + r")|"
                        r"(?<=[哈啊呢吧嘛呀哦哇啦])[ \t\u3000]+(?=\S)|(?<=了)[ \t\u3000]+(?=[\u4e00-\u9fff])|"
                        # (from the start of a run of emoji only: tried inside a run, each try went to its end)
                        r"(?<!" + _EMOJI.pattern[:-1] + r")" + _EMOJI.pattern + r"[ \t\u3000]*(?=" + _CLAUSE_START + r")")


# In a message written without punctuation, with a space between every piece ("我叫刘芳 32岁 住在武汉 在同济医院当
# 护士"), each space is a comma: a space between Chinese words or a number and a word, not after a word that waits
# for what follows it (叫, 是, 在 …: "我叫 王小明"), and not between two numbers ("1990 05 20").
_LIST_SPACE = re.compile(r"(?<=[\u4e00-\u9fff\d])(?<![叫是在住到去为于和跟与对给把被从向往])[ \t\u3000]+"
                         r"(?=[\u4e00-\u9fff])|(?<=[\u4e00-\u9fff])(?<![叫是在住到去为于和跟与对给把被从向往])[ \t\u3000]+(?=\d)")


def _chat_edges(text: str) -> str:
    """``text`` with chat's clause edges (:data:`_CHAT_EDGE`, :data:`_LIST_SPACE`) written as commas, and the other
    emoji gone."""
    pieces = text.split()
    if (not re.search(r"[，,。！!？?；;：:\n]", text) and len(_LIST_SPACE.findall(text)) >= 2
            and min(len(p) for p in pieces) >= 2
            and not any(re.fullmatch(r"我们?|喜欢(?:吃|喝)?|爱吃|讨厌|住在|住|在|叫|是", p) for p in pieces)):
        # (not "我 在 腾讯 上班", "我叫李 明", "我喜欢 篮球 足球": spaces inside one clause)
        text = _LIST_SPACE.sub("，", text)
    return _EMOJI.sub("", _CHAT_EDGE.sub("，", text))


def extract_chinese(text: str, *, last_key: FactKey | None = None) -> list[Statement]:
    """The statements of a Chinese message (see the module docstring); ``last_key`` as in
    :func:`~agentmem_nb.facts.english.extract_english`."""
    out: list[Statement] = []
    greeted = False  # the sentence before was a bare greeting ("你好！我是李娜")
    introduced: str | None = None  # a relative or pet the sentence before named with nothing said of them
    text = _chat_edges(_QUOTED.sub("", text))
    for found_sentence in re.finditer(r"[^。！!？?；;\n…]+[。！!？?；;\n…]*", text):
        sentence = found_sentence.group(0).strip()
        # "准确说，…", "老实讲…" opening the sentence: how the speaker says it, no one's words
        sentence = re.sub(r"^(?:准确|确切|严格|坦白|认真|老实)(?:来|地)?(?:说|讲)[，,]?", "", sentence)
        if re.search(r"过敏", sentence) and not re.search(r"不信|不相信|搞错|弄错|错了|不对(?![^，,。]{1,8}过敏)|怀疑|误诊", sentence):
            # "医生说我对青霉素过敏": a doctor's finding of an allergy is the speaker's to state (not an opinion of
            # them, and not a finding they dispute; "不对海鲜过敏" is the finding, no dispute)
            sentence = _FINDING.sub("", sentence)
        asked = bool(re.search(r"[？?]\s*$", sentence))
        guessed = bool(asked and re.search(r"吧[？?]+\s*$", sentence) and _HEDGE.search(sentence))
        if guessed:
            asked = False  # "现在大概算产品经理了吧？": a guess said with a rising tone, not a question
        sentence = sentence.rstrip("。！!？?；;\n… ")
        clauses = [c for c in _CLAUSES.split(sentence) if c.strip()]
        if asked and clauses:  # the clause before the question mark is the question; the ones before it may state
            clauses = clauses[:-1]
        clauses = [c for c in clauses if not _QUESTION.search(c)]
        # What someone else says, from the clause that says it on: the speaker's own clauses before it still state
        # ("严格来说是佛山，不过大家都说广州"); said first, it frames the whole sentence ("我同事说，她住在朝阳区").
        said = next((i for i, c in enumerate(clauses) if _reported(c)), None) if _reported("，".join(clauses)) else None
        if said is not None:
            clauses = clauses[:said] if said > 0 and not _ATTRIBUTION.search(clauses[said]) else []
        if re.search(r"生日", sentence) and re.fullmatch(r"(?:\d{4}-)?\d\d-\d\d", normalise_date(sentence)):
            # a birthday with its date, less when it next comes ("生日是下周二，5月9号"): a date that recurs is no plan
            joined = re.sub(r"(?:(?:下|这)(?:个)?(?:周|星期|礼拜|月)[一二三四五六日天末]?|快(?:要)?到了)[，,]?", "",
                            "，".join(clauses))
            clauses = [c for c in _CLAUSES.split(joined) if c.strip()]
            if clauses and re.fullmatch(r"(?:(?!不)[^，,]){0,6}?(?:就)?是我(?:的)?生日(?:了|啦)?", clauses[0]):  # "是我生日，9月12号": said the
                clauses = [f"我的生日是{normalise_date(sentence)}"] + clauses[1:]  # plain way
        clauses = _before_later_clause(clauses)
        sentence = "，".join(clauses)
        guessed = guessed and bool(_HEDGE.search(sentence))  # (the guess may be in a clause left out: "…的话…应该…吧？")
        if not sentence or _HYPOTHETICAL.search(sentence) or _FIGURATIVE.search(sentence) or _reported(sentence):
            continue
        # (a request or a suggestion closing the sentence ends in 吧 as one does, not as a guess: "…，帮我翻成德语吧",
        # "今天有点累，随便聊聊吧"; a value guessed is said with 是/在/叫/住: "也是咸阳吧")
        certain = not _HEDGE.search(re.sub(r"[，,](?![^，,]*(?:应该|猜|差不多|可能|大概|也许|或许|好像|估计))[^，,是在叫住]*吧$",
                                           "", sentence))
        body = _HEDGE.sub("", sentence) if not certain else sentence
        correction = bool(re.search(r"其实|实际上|事实上", sentence))  # "我生日其实是5月4号": a correction inside
        # (and the word goes, so that the predicate reads as said plainly: "我老家其实是宁波")
        explicit = False  # a correction said as one ("不对", "说错了"), not a "其实" that may only add
        for _ in range(4):
            before = body
            body = _LEADING.sub("", body)
            marker = _CORRECTION.match(body)
            if marker and marker.end() > 0:
                correction, body = True, body[marker.end():]
                explicit = explicit or bool(re.search(r"不对|不是的|错|更正|纠正|我是说|我的意思是|我指的是", marker.group(0)))
            if body == before:
                break
        body = re.sub(r"(?<=[^，,\s])(?:其实|实际上|事实上)(?=是|在|住|叫|对)", "", body)
        greeting = re.match(r"^(?:嗨|你好|您好|大家好|哈喽|哈啰|hi|hello|hey)[，,！!\s]*(?:我是|我叫)(?P<name>[\u4e00-\u9fff]{2,3}|"
                            r"[A-Za-z][\w'-]*)$", body, re.I)
        if greeting and not re.search(_JOB_SUFFIX + r"$|人$", greeting.group("name")):
            out.append(Statement("user", "name", greeting.group("name")))  # "嗨，我是小静": an introduction
            continue
        not_old = re.search(r"[，,]?\s*(?:而)?不是(?P<old>[^，,。]+)$", body)
        # "他是护士不是医生，老被人搞错": the wrong value right after the right one (said with 是), a remark after it
        wrong_after = None if not_old else re.search(
            r"(?<=[\u4e00-\u9fffA-Za-z0-9])(?<![我你他她它们就也都还并可而又])不是(?P<old>[^，,。]{1,10}?)(?=[，,])", body)
        if wrong_after and "是" in re.split(r"[，,]", body[: wrong_after.start()])[-1]:
            not_old = wrong_after
        old_value = ""
        # (not "我已经不是外卖骑手了": a negation closed by 了 says what no longer is, not which value is wrong)
        if not_old and not_old.start() > 0 and not not_old.group("old").endswith("了"):
            correction, body, old_value = True, body[: not_old.start()], not_old.group("old")
        if re.match(r"^(?:不是|并不是)(?P<old>[^，,]+)[，,](?:而)?是(?P<new>.+)$", body):
            correction = True
            body = re.sub(r"^(?:不是|并不是)[^，,]+[，,](?:而)?", "", body)
        body = _ellipsis_filled(body)
        named_first = re.match(r"^(?P<n>[\u4e00-\u9fff]{2,3}|[A-Z][a-z]+)是我(?:的)?(?P<rel>" + _REL + r")(?P<rest>(?:[，,].*)?)$",
                               body)
        if named_first and not re.match(r"^(?:这|那|他|她|它|谁)", named_first.group("n")):  # "安娜是我老婆，她是兽医"
            body = f"我{named_first.group('rel')}叫{named_first.group('n')}{named_first.group('rest')}"
        body = re.sub(r"的(?P<a>一个|一座)?(?P<k>小村子|村子|小镇|小城|县城|村庄)[，,]\s*(?:名字)?叫(?P<n>[^，,。]{2,6})",
                      r"的一个叫\g<n>的\g<k>", body)  # "…的一个小村子，叫石门坎": the name
        inverted = re.match(r"^(?P<v>[^，,。是]{1,12}?)(?:就)?是(?P<who>我(?:的)?(?:" + _REL + r")?)(?P<pred>(?:最|最不|不)?(?:喜欢|爱|讨厌)的"
                            r"[^，,。]{0,4}|(?:从小)?(?:长大|出生)的(?:地方|城市)|(?:现在)?住的地方|的?老家|的?家)$", body)
        if inverted:  # the value first: said again in the order the predicates read
            pred = inverted.group("pred")
            verb = ("讨厌" if re.search(r"讨厌|不喜欢|不爱", pred) else "喜欢" if re.search(r"喜欢|爱", pred)
                    else "住在" if "住" in pred or pred.lstrip("的") == "家" else "的老家是")  # (X是我的家: I live in X)
            speaker = re.sub(r"的$", "", inverted.group("who"))  # ("是我的家": 我, then the verb)
            body = f"{speaker}{verb}{inverted.group('v')}"
        # "我今年39": a number said as this year's is an age, with or without 岁
        body = re.sub(r"(?:今年(?:刚满|刚|已经|都|才)?|^(?:刚满|满)(?=\d))(?P<n>\d{1,3}|[一二两三四五六七八九十]{1,3})"
                      r"(?![\d一二两三四五六七八九十岁年月号日个块次只天度分%])", r"今年\g<n>岁", body)
        # "我才40就天天腰疼", "我都30了": an age said as only or already that many (two digits: not a price or count)
        body = re.sub(r"(?:^|(?<=[，,]))(?P<who>我(?:" + _REL + r")?)(?:才|都|已经)(?P<n>[1-9]\d)(?=就|了|[，,]|$)", r"\g<who>\g<n>岁", body)
        if _STAY.search(body):  # "在柏林待了五年后，我又回到了慕尼黑": back where one lived, after years elsewhere (alone,
            body = re.sub(r"(?:又)?回到了?(?:老家)?(?=[^，,。]{2})", "搬回", body)  # 回到 is coming back from a day out)
        renamed = _RENAMED.search(body)
        if renamed and (who := last_relative([], out, last_key)) is not None:  # "我们给它改名叫盐巴了"
            out.append(Statement(who, "name", renamed.group("v"), "correct"))
            continue
        # "你好！我是李娜，…", "我是李思琪，想问问…": an introduction — after a greeting, or a full name (a common surname
        # and one or two characters)
        introduced_as = re.match(r"^我是(?P<name>[\u4e00-\u9fff]{2,3})(?=[，,]|$)" if greeted else
                                 r"^我是(?P<name>[" + _SURNAMES + r"][\u4e00-\u9fff]{1,2})(?=[，,]|$)", body)
        if introduced_as and not re.search(_JOB_SUFFIX + r"$|人$", introduced_as.group("name")):
            out.append(Statement("user", "name", introduced_as.group("name")))  # "你好！我是李娜，…": an introduction
            body = body[introduced_as.end():].lstrip("，, ")
        greeted = bool(re.fullmatch(r"(?:嗨|你好|您好|大家好|哈喽|哈啰|hi|hello|hey)[呀啊]?", body, re.I))
        found = _sentence_statements(body, introduced or last_relative([], out, last_key), None if out else last_key)
        introduced = None
        if found and not out and last_key is not None and last_key.subject != "user" and _opens_bare(body) and all(
                s.key.subject == "user" for s in found) and any(s.key.attribute == last_key.attribute for s in found):
            # "我妈在工商银行上班。" then "去年跳到了建设银行": a message that names no one and goes on with what was
            # said of a relative last goes on about that relative
            found = [Statement(last_key.subject, s.attribute, s.value, s.op, s.certain) for s in found]
        pair = re.match(r"^我(?:和|跟|与)(?:我)?(?:的)?(?P<rel>" + _REL + r")(?:都|也|一起)", body)
        if pair and found:  # "我和我老公都在协和医院上班": said of the speaker, and of the relative too
            found = said_of_both(found, RELATIONS_ZH[pair.group("rel")])
        if found is None and (new := _INTRODUCED.match(_LEADING.sub("", body))):
            introduced = RELATIONS_ZH[new.group("rel")]  # "我新养了一只小狗。它叫肉肉。": 它 is the dog
        elif found is None and (spoken := _subject(_LEADING.sub("", _CLAUSES.split(body)[0]))[0]) not in (
                None, "user", "other"):
            introduced = spoken  # "我老婆以前教高中数学。现在她…": one's relative spoken about, with no fact read
        pets = _pets(body, past=re.match(r"(?:小时候|以前|从前|那时候|上大学时|小学时|读书时|年轻时)", sentence) is not None)
        if pets:
            kept = {s.value for s in found or [] if s.key.attribute == "has_pet"}
            found = [*(found or []), *(p for p in pets if p.value not in kept)]
        if re.match(r"^(?:" + _KEEPER + _KEEP_ADVERBS + r"有|" + _KEEPER + r"?" + _KEEP_ADVERBS + r"养)", body):  # "我养了一条比格犬叫旺财，还有一只猫叫咪咪"
            pets = [Statement("cat" if pet.group("kind").endswith("猫") else "dog", "name", pet.group("name"))
                    for pet in _PET_NAMED.finditer(body)]
            known = {(s.key.subject, s.value) for s in found or []}
            found = (found or []) + [p for p in pets if (p.key.subject, p.value) not in known] if pets else found
            given = {p.value for p in pets}  # ("我养了一只橘猫，叫豆豆": 豆豆 is the cat's, not the speaker's name)
            found = [s for s in found if not (s.key == FactKey("user", "name") and s.value in given)] if found else found
        if found is None:
            if (correction or not certain) and (last := (out[-1].key if out else last_key)) is not None:
                # the first clause that names a value: "其实是张玮，玉字旁的玮", "也是咸阳吧，我不太确定"
                value = next((v for v in (_said_value(p, last) for p in re.split(r"[，,]", body)) if v), "")
                if value:
                    out.append(Statement(last.subject, last.attribute, value, "correct", certain))
            continue
        ends = [Statement(s.subject, s.attribute, old, "end") for s in found if old_value and s.op == "add"
                and s.key.attribute in ACCUMULATING and _ok(old := _clean(old_value, s.attribute)) and old != s.value]
        # ("其实是对灰尘过敏，不是猫": a list keeps its other values, so the one named as wrong ends)
        if explicit and not ends and not re.search(r"也|还|另外|以及", body):
            # "哦不对，是对虾过敏": the item said last was the wrong one (the store ends it); not "其实…也…"
            found = [Statement(s.subject, s.attribute, s.value, "correct", s.certain)
                     if s.key.attribute in ACCUMULATING and s.op == "add" else s for s in found]
        out.extend(marked(found + ends, correction=correction, certain=certain, asked=guessed))
    return out


def _opens_bare(body: str) -> bool:
    """Whether ``body``'s first clause names no one (no 我, no relative, no pronoun, no name)."""
    first = _LEADING.sub("", _CLAUSES.split(body)[0].strip())
    return bool(first) and _subject(first)[0] is None and not re.match(r"^(?:他|她|它)", first)


# Ellipsis: a predicate said once and meant twice. "我不是老师，我姐姐才是": the relative's is the predicate denied;
# "我室友的生日是12月3号，我的是12月30号": 我的 is my own of the noun just named.
_DENIED_THEN_OTHER = re.compile(r"^我(?:并)?不是(?P<pred>[^，,。]{1,12})[，,](?:而|但)?(?:是(?P<who>我?的?(?:" + _REL + r"))|"
                                r"(?P<who2>我?的?(?:" + _REL + r"))(?:才是|是))(?:啦|呢|哦)?$")
_NOUN_OF_OTHER = re.compile(r"(?:的|" + _REL + r")(?P<noun>生日|名字|年龄|老家|工作|职业|公司)是")


def _ellipsis_filled(body: str) -> str:
    """``body`` with an elided predicate written out (:data:`_DENIED_THEN_OTHER`, :data:`_NOUN_OF_OTHER`)."""
    denied = _DENIED_THEN_OTHER.match(body)
    if denied:
        who = denied.group("who") or denied.group("who2")
        who = who if who.startswith("我") else "我" + who
        return f"{who}是{denied.group('pred')}"
    other = _NOUN_OF_OTHER.search(body)
    if other:
        body = re.sub(r"(?<=[，,])(?:而)?我的(?=是(?!个|一个))", f"我的{other.group('noun')}", body)
    return body


# The most common Chinese surnames: "我是李思琪" names the speaker ("我是高手", "我是王老师" are kinds: _JOB_SUFFIX).
_SURNAMES = ("王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈姚卢姜崔钟谭陆"
             "汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤欧阳")


# A stay of years somewhere: "待了五年", "住了十年后", "三年后".
_STAY = re.compile(r"(?:待|呆|住|生活|工作)了?[^，,。]{0,3}?(?:[一二三四五六七八九十两几\d]+|半)年|"
                   r"(?:[一二三四五六七八九十两几\d]{1,4})年(?:后|之后|以后)")  # bounded: an open run was tried from every digit
# A dog or cat of the speaker's, of any breed, with its name: "一条比格犬叫旺财", "一只英短，叫咪咪".
_PET_NAMED = re.compile(r"(?:只|条|个)(?P<kind>[\u4e00-\u9fff]{0,4}?(?:犬|狗|猫|猫咪))[，,]?(?:叫|名叫|叫做|名字叫)"
                        r"(?P<name>[^，,。的和跟]{1,6})")
# A new name given to someone spoken about: "给它改名叫盐巴", "把他改名为小明".
_RENAMED = re.compile(r"(?:给|把)(?:它|他|她)(?:改了?名(?:字)?|改名字?)(?:叫做|叫|为|成)(?P<v>[^，,。了的]{1,6})")
_TASTE_VERB = re.compile(r"(?:不太感冒|不感冒|没兴趣|不感兴趣|无感|不喜欢|不太喜欢|不爱吃|不爱喝|不爱|讨厌|受不了|忍受不了|吃不了|喝不了|反感|最爱吃|最爱喝|"
                         r"爱吃|爱喝|最爱|超爱|很喜欢|最喜欢|喜欢|爱)")


_JOINING = re.compile(r"^(?:但|可|而|却|就|也|又|还|所以|因为|不过|然后|其实|现在|以前|后来|反正|总之|嗯|哦|啊|哈|对|是|真|都|只|连|"
                      r"至于|说到)")


def _fronted(clause: str) -> str:
    """A clause with its object put first ("香菜我是真受不了", "火锅我最爱吃了") said in the order the predicates
    read ("我受不了香菜"); any other clause as it is."""
    found = re.match(r"^(?P<v>[^，,。我你他她它这那]{1,8}?)(?P<who>我(?:的)?(?:" + _REL + r")?)(?:是|也|真的|真|就|最)*"
                     r"(?P<rest>[^，,。]*)$", clause)
    bare = re.match(r"^(?P<v>[^，,。我你他她它这那不没]{1,8}?)(?P<adv>(?:现在|已经|早就|早|倒是|一直|还是|也|都|真的|真|最|就|其实)*)"
                    r"(?<!可)(?<!恋)(?P<verb>不太喜欢|不喜欢|不爱吃|不爱喝|讨厌|受不了|最爱吃|最爱喝|爱吃|爱喝|最爱|超爱|很喜欢|最喜欢|喜欢)"
                    r"(?P<end>了|啦)?$", clause) if found is None else None  # (not 可爱, 恋爱: no taste)
    if bare and not _JOINING.match(bare.group("v")) and _ADVERBS.sub("", bare.group("v")) == bare.group("v") and _ADVERBS.sub(
            "", bare.group("v") + bare.group("adv")) and not (
            bare.group("v") in RELATIONS_ZH or re.search(r"(?:们|人|家|的|就|到|起|见)$|^(?:大家|别人|人家|谁|有人|没人|所有|每个)|"
                                                         r"^一?(?:闻|看|吃|喝|听|想|见|碰|提|说)", bare.group("v"))):
        # (nor when it is: "一闻就讨厌", "闻到就讨厌" are read from the clause before)
        # "篮球现在不喜欢了", "游泳倒是一直喜欢": the thing first and no one named — whoever the clause is of
        ended = "了" if bare.group("verb").startswith("不") and bare.group("end") else ""
        thing = re.sub(r"(?:从小|一直|向来|现在|以前|平时|其实|本来)+$", "", bare.group("v"))  # ("数学从小不喜欢")
        return f"{bare.group('verb')}{thing}{ended}" if thing else clause
    if found is None or _JOINING.match(found.group("v")):
        return clause  # "但我很喜欢": a joining word before 我, no object
    rest = _ADVERBS.sub("", found.group("rest"))
    verb = _TASTE_VERB.fullmatch(rest) or _TASTE_VERB.fullmatch(re.sub(r"(?:了|啦|的|呀|啊)+$", "", rest))
    ended = "了" if verb and verb.group(0).startswith("不") and re.search(r"了$|已经|早就|再也", found.group("rest")) else ""
    # ("豆腐我已经不爱吃了": 了 after a negated taste says it ended, kept for the clause's reading)
    return f"{found.group('who')}{verb.group(0)}{found.group('v')}{ended}" if verb else clause


def _sentence_statements(body: str, relative: str | None = None,
                         last_key: FactKey | None = None) -> list[Statement] | None:
    """The statements of one sentence's clauses; ``last_key``: what the conversation spoke of last, when this
    message has said nothing yet."""
    found: list[Statement] = []
    matched = False
    subject: str | None = None
    said_before = ""  # the clause before this one, as said (what "现在已经不会说了" looks back to)
    # (what the sentence is about, read once: searched in each clause, it was quadratic in a long message)
    talk_of_new_work = re.search(r"换(?:了)?(?:个|份)?工作|跳槽|入职", body) is not None
    talk_of_work = talk_of_new_work or re.search(r"辞职|上班|工作", body) is not None
    for as_said in _CLAUSES.split(body):
        # (the clause before only: the whole text before, grown and searched each clause, was quadratic)
        said_before, as_said_before = "，" + as_said, said_before
        # laughter closing a clause is how it was said, not part of it ("现在居然爱上了哈哈哈", "…专家哈哈哈哈")
        clause = _LEADING.sub("", re.sub(r"(?<![叫是])(?:[哈呵嘿嘻]{2,6}|233+|lol|LOL)$", "", as_said.strip()))
        if not clause:
            continue
        # "以前我很喜欢榴莲": a past said before the subject is the same past said after it ("我以前很喜欢榴莲")
        clause = _fronted(re.sub(r"^(?P<when>以前|过去|曾经|原来|之前|从前|早年)(?P<who>我(?:的)?(?:" + _REL + r")?)(?!们)",
                                 r"\g<who>\g<when>", clause))
        who, rest, names = _subject(clause)
        found += names
        matched = matched or bool(names)
        # the relation spoken about last: in a statement, or introduced by the clause before ("我有一个妹妹，她…")
        recent = found[-PRONOUN_LOOKBACK:]  # (what a clause refers back to is near: a bound keeps long text linear)
        spoken_of = next((s.key.subject for s in reversed(recent) if s.key.subject != "user"),
                         subject if subject not in (None, "user", "other") else relative)
        pronoun = re.match(r"^(?:他|她|它)(?!们)(?P<rest>.*)$" if spoken_of in _ANIMALS else r"^(?:他|她)(?!们)(?P<rest>.*)$",
                           clause) if spoken_of not in PLURAL_RELATIONS else re.match(
            r"^(?:他们|她们|两人|二老|两位老人)(?:俩)?(?P<rest>.*)$", clause)  # "我爸妈…，他们…": the pair
        if pronoun and spoken_of is not None:  # "我姐姐是护士。——不对，她其实是医生": 她 is the sister
            who, rest = spoken_of, _LEADING.sub("", pronoun.group("rest"))
        unnamed = who is None
        if who is None:
            if subject == "other":
                continue
            who = subject or "user"  # Chinese drops the subject: an opening clause without one is the speaker's
        subject = who
        if who == "other":
            continue
        rest = _ADVERBS.sub("", rest)
        past = bool(_PAST.match(rest))  # ("以前不喜欢香菜": what was said, negation and all, is what ended)
        ending = bool(_END.search(rest)) or past
        if ending:
            rest = _PAST.sub("", _END.sub("", rest, count=1))
            rest = _ADVERBS.sub("", rest)
        # "不住在那了", "不吃肉了": 了 closes a change, so a value ends (a habit stopped is no dislike)
        # (the 了 of the predicate, not of a remark after a pause: "不喜欢吃榴莲 味道实在受不了")
        negated_then = re.match(r"^(?:不|没)(?=住|在|喜欢|爱|讨厌|是|做|当|吃|喝|抽|对|会说|会讲|" + _ACTIVITY + r")(?P<rest>.+?)了$",
                                _PAUSE.split(rest)[0])
        if negated_then and not ending:
            ending, rest = True, negated_then.group("rest") if not rest.startswith("不喜欢") else rest
        other = next((s for s in reversed(recent) if s.key.subject != who and s.key.attribute in ("lives_in", "works_at")
                      and s.op == "set"), None)
        # (a place or employer named, not what one is doing somewhere: "我在家带娃", "我在学校上课")
        parallel = re.fullmatch(r"(?:一直|还|现在|目前|则|就)?在(?!家)(?P<v>(?:(?!带|休息|上课|睡|吃|玩|等|看|做|写|学|忙|加班|开会|"
                                r"排队|准备|考虑|路上)[^，,。在]){2,8}?)(?:呢|啦|了|哈)?", rest) if other else None
        if parallel and other is not None and _ok(value := _clean(parallel.group("v"), other.key.attribute)):
            found.append(Statement(who, other.key.attribute, value, "set"))  # "我姐姐住在上海，我在苏州": the same of me
            matched = True
            continue
        age = re.fullmatch(r"(?P<v>[1-9]\d)(?:岁)?(?:了|啦)?", rest)
        if age and (any(s.key.attribute == "age" and s.key.subject != who for s in recent) or "生日" in body):
            # "我爸今年60了，我妈58", "今天生日，26啦": an age, as the one before or on a birthday (a bare number
            # elsewhere counts something else: "我们班有45个人，我35", "我体重65")
            found.append(Statement(who, "age", age.group("v"), "set"))
            matched = True
            continue
        taste = next((s for s in reversed(recent) if s.key.attribute in ("likes", "dislikes")), None)
        if taste is not None and (bare := re.fullmatch(r"(?:(?:一)?(?:闻|看|吃|喝|听|想)(?:到|见|起)?(?:它)?就)?"
                                                       r"(?P<verb>爱上|喜欢上|迷上|爱|喜欢|讨厌|受不了)了?", rest)):
            # "以前讨厌香菜，现在爱上了", "…，现在闻到就讨厌": what the clause before named
            rest = bare.group("verb") + taste.value
        statements = _predicates(rest, who)
        quit_ = re.fullmatch(r"(?P<v>[^，,。我你他她]{1,8}?)(?:那边|那儿|那里|这边|这份工作|的工作)?(?:我)?(?:已经|早就|早|也)?"
                             r"不(?:干|做)了", clause) if not statements else None
        if quit_ and _ok(value := _clean(quit_.group("v"), "job")) and value not in RELATIONS_ZH and (
                re.search(_JOB_SUFFIX + "$", value) or re.search(_ORGANISATION + "$", value)
                or re.fullmatch(r"[A-Za-z][\w&.' -]*", value) or re.search(r"那边|那儿|那里|这份工作|的工作", clause)) and not re.search(
                    r"活|家务|饭|班|碗|作业|卫生", value):
            # "会计不干了": a trade given up; "星巴克那边我已经不干了": an employer left ("洗碗我不干了", "夜班不干了":
            # a chore or a shift, no job)
            statements = [Statement(who, "job" if re.search(_JOB_SUFFIX + "$", value) else "works_at", value, "end")]
        if not statements and who not in ("user", "other", *_OUTSIDE_HOME) and re.match(
                r"^(?:也|还|偏偏|新|又|刚|最近)*(?:养了?|养着|领养了?|收养了?|捡了?)" + _pet_measured(), rest):
            # "我室友养了一只猫": a pet of the household's or the family's, not the speaker's (one of the people
            # outside the home, "我邻居养了一条狗", is no fact kept of them)
            statements = [Statement(who, "has_pet", _pet_name(m.group("kind")), "add") for m in _PETS_KEPT.finditer(rest)]
        # (not "在家休息", "在家带娃": at home, doing something — no place of work or home named)
        elliptic = (re.match(r"^在(?!家(?:里|中)?(?:休息|待|呆|养|带|躺|歇|陪|办公|$))(?P<v>[^，,。在]{1,12}?)(?:了|呢|啦)?$",
                             rest) if not statements and not ending
                    and re.search(r"(?:现在|目前|如今|后来|眼下)(?:则|就|又|已经)?在", as_said) else None)
        kinds = {s.key.attribute for s in recent if s.key.subject == who and s.key.attribute in ("works_at", "lives_in")}
        if elliptic and not kinds and any(s.key.subject == who and s.key.attribute == "job" for s in recent):
            kinds = {"works_at"}  # "我是软件工程师，目前在Shopify": where one does that job
        before = next((s for s in reversed(recent) if s.key.subject == who and s.key.attribute in kinds), None) if (
            elliptic and len(kinds) == 1) else None
        if before is None and elliptic and kinds == {"works_at"}:
            before = Statement(who, "works_at", "", "set")  # ("离开了X" ends either: which one goes on is unsaid)
        if elliptic and not kinds and talk_of_work:
            # "我换工作了，现在在Spotify": no employer said before, but the sentence is about work
            before = Statement(who, "works_at", "", "set")
        if elliptic and before is None and last_key is not None and last_key.subject == who and (
                last_key.attribute in ("works_at", "lives_in")):
            # "今年又换了，现在在美团": what the conversation spoke of last, said now of its new place
            before = Statement(who, last_key.attribute, "", "set")
        moved = re.fullmatch(r"(?:又|就|则|最后|后来|然后)?(?:去了|到了|进了|跳到了?|跳去了?|换到了?|换去了?|转到了?)"
                             r"(?!趟|一趟|国外|外地|老家|医院|海边|旅游|旅行|[一二三四五六七八九十两几半\d]+个?(?:天|周|星期|月|年))"
                             r"(?P<v>(?:(?!旅游|旅行|吃饭|发展|接|看病|玩|逛|出差|度假|休息|学习|读书|上学|买|看|散心)[^，,。在]){2,10}?)"
                             r"(?:了|啦)?", rest) if not statements and not ending else None
        if moved and re.search(r"(?:健身房|餐厅|饭店|学校|超市|商场|公园|机场|车站|酒店|海边|山里|家里|医院|市|省|县|区)$",
                               moved.group("v")):
            moved = None  # (a place one went to, not an employer: "去了健身房", "然后去了上海市")
        left = {s.value for s in recent if s.key.subject == who and s.op == "end" and s.value and s.key.attribute == "works_at"}
        if moved and (left - {s.value for s in recent if s.key.attribute == "lives_in" and s.op == "end"}
                      or talk_of_new_work
                      or (moved.group(0).startswith("跳") and last_key == FactKey(who, "works_at"))) \
                and _ok(value := _clean(moved.group("v"), "works_at")):
            # "他也不在京东了，去了华为", "换工作了，去了小米": where one went next, when the talk is of a change of work
            # (an employer left by name, a new job; "我辞职了，去了大理" is a trip or a move, and "不在北京了，去了上海"
            # left a city as likely as an employer)
            statements = [Statement(who, "works_at", value, "set")]
        if elliptic and before is not None and _ok(value := _clean(elliptic.group("v"), before.key.attribute)):
            # "我以前在IBM工作，现在在甲骨文": a bare 在X marked as now continues the clause before (where one
            # works or lives); unmarked it is as often a state ("还在适应")
            statements = [Statement(who, before.key.attribute, value, "set")]
        if ending and not statements:
            statements = _predicates(re.sub(r"^(?:不|没)", "", rest), who)
        if ending and not statements:
            statements = _ended_without_predicate(re.sub(r"^(?:不|没)", "", rest), who)
        if ending and not statements and re.fullmatch(r"(?:不|没)?(?:会|能)?(?:说|讲)了?", rest) and (
                language := re.search(r"[，,]" + _LANGUAGE + r"(?=[^，,。]{0,8}$)", as_said_before)):
            # "法语好多年没用，现在已经不会说了": the language the clause before opened with
            statements = [Statement(who, "speaks", language.group("v"), "end")]
        if ending:
            statements = _as_end(statements, aversion=past or bool(_AVERSION.match(rest)))
        if re.match(r"^(?:新来的|新的|新|现在的)(?=" + _NEW_IN_ROLE + ")", clause):  # "新来的老板叫刘洋": another person in that place, so the name the
            # place had makes way (not a contradiction to hold for review)
            statements = [Statement(s.subject, s.attribute, s.value, "correct", s.certain) if s.op == "set" else s
                          for s in statements]
        if statements:
            matched = True
            found += statements
        elif unnamed and _NOUN_SUBJECT.match(clause):
            subject = "other"  # "剧里女主是律师，住在上海": someone named by a noun is spoken about, here and after
        elif unnamed and len(mentions := re.findall(r"我(?:的)?" + _KIN_ORDER + r"(" + _REL + r")(?![\u4e00-\u9fff]{0,2}的)", clause)) == 1:
            relative = RELATIONS_ZH[mentions[0]]  # "帮我给我妹妹挑个礼物，她今年15岁": 她 is the sister (one relative,
            # and not someone's: "我妹妹的老师", "我儿子和我女儿" name no one)
    return found if matched else None


# A clause whose subject is a noun of someone else's ("女主是律师", "房东是上海人"): not an adverb or verb first.
_NOUN_SUBJECT = re.compile(r"^(?!(?:就|也|都|还|又|真|确实|其实|应该|可能|现在|目前|以前|原来|本来|不|没|这|那|在|是|住|叫|最|很|"
                           r"好|可|但|而|却|才|只|总|一直|已经|刚|从|对|给|跟|和|老家|家|工作|职业|生日|名字|年龄))"
                           r"[\u4e00-\u9fff]{1,4}?是")
