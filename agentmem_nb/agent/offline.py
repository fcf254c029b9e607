"""A deterministic chat model that needs no network and still drives the real agent graph with real tool calls.

Policy, decided from the messages of the current turn only (so it is stateless and reproducible):

* **Recall** — a question about the past ("what did I say about…", "do you remember…", "where does my sister
  live?", "之前…", "上次…", "你还记得…吗"): ``search_session`` with a keyword taken from the question; on a hit,
  ``get_session_window`` around the best hit; with no hit, the next candidate keyword, then ``search_daily`` over
  every day (and its ``get_daily_window``); then the long-term memory in the prompt. The reply quotes what was
  found, or says that nothing was.
* **Remember** — a durable preference or fact ("I prefer…", "my name is…", "记住…", "我喜欢…"): ``remember_note``
  with a third-person note, then a confirmation.
* **Anything else** — a plain reply saying what the offline model can do.

The tool outputs it reads are the real ones (``#12 [2026-04-08 10:00] user: …``), so it exercises exactly the
memory flow a hosted model would.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult

from agentmem_nb.agent._text import CJK_RUN, EN_STOP_WORDS, WORD, has_cjk
from agentmem_nb.agent.prompt import LONG_TERM_CLOSE, LONG_TERM_OPEN

__all__ = ["OfflineChatModel", "classify", "keyword_candidates", "note_from", "Intent"]

Intent = Literal["recall", "remember", "chat"]

MAX_SESSION_SEARCHES = 3
MAX_DAILY_SEARCHES = 2
_QUOTE_CHARS = 300

# ---------------------------------------------------------------------------------------------- intent

_EN_QUESTION_START = re.compile(
    r"^\s*(what|what's|whats|who|who's|whom|whose|where|when|which|why|how|do|does|did|is|are|was|were|can|could|"
    r"would|will|have|has|had|remind)\b", re.IGNORECASE)
_EN_RECALL = re.compile(
    r"\b(remember|recall|remind me|did i|have i (?:told|said|mentioned)|earlier|before|previously|last time|"
    r"i (?:told|mentioned|said)|you know about)\b|\bmy\b", re.IGNORECASE)
_EN_REMEMBER = re.compile(
    r"^\s*(?:please\s+)?(?:remember|note|keep in mind|don't forget)\b|"
    r"\bi (?:really |also |now |still )?(?:prefer|like|love|hate|dislike|enjoy|don't like|do not like)\b|"
    r"\bmy name is\b|\bcall me\b|\bi live in\b|\bi(?:'m| am) (?:allergic|vegetarian|vegan|a |an )|"
    r"\bi work (?:as|at|for|in)\b|\bmy (?:favou?rite \w+|birthday|name|job|email|phone number) (?:is|are)\b",
    re.IGNORECASE)
_ZH_QUESTION = re.compile(r"[?？]|吗|什么|哪|谁|几|多少|怎么|是否")
_ZH_RECALL = re.compile(r"之前|上次|还记得|记得|我说过|我提过|我提到过|告诉过你|跟你说过|以前|刚才|前面")
_ZH_REMEMBER = re.compile(
    r"记住|记一下|帮我记|别忘了|我(?:很|也|还|最|比较|更)?(?:喜欢|不喜欢|讨厌|爱吃|偏好|习惯)|我叫|我的名字是|我是|"
    r"我住在|我的生日|过敏|我在\S{1,10}工作")


def _is_question(text: str) -> bool:
    stripped = text.strip()
    if stripped.endswith(("?", "？")):
        return True
    if has_cjk(stripped):
        return _ZH_QUESTION.search(stripped) is not None
    return _EN_QUESTION_START.match(stripped) is not None


def classify(text: str) -> Intent:
    """What the offline model will do with a user message.

    >>> classify("What did I tell you about my sister?"), classify("I prefer green tea"), classify("Hi!")
    ('recall', 'remember', 'chat')
    >>> classify("你还记得我的猫叫什么吗？"), classify("记住：我喜欢游泳")
    ('recall', 'remember')
    """
    question = _is_question(text)
    if has_cjk(text):
        if _ZH_RECALL.search(text) and (question or "记住" not in text):
            return "recall"
        if question and "我" in text:
            return "recall"
        if not question and _ZH_REMEMBER.search(text):
            return "remember"
        return "chat"
    if question and _EN_RECALL.search(text):
        return "recall"
    if not question and _EN_REMEMBER.search(text):
        return "remember"
    return "chat"


# ---------------------------------------------------------------------------------------------- keywords

# Longest first: the phrase list is applied in order, and "你还记得" must go before "记得".
_ZH_STOP_PHRASES = sorted("""
你还记得 还记得 记得吗 记得 之前 上次 以前 刚才 前面 我说过 我提过 我提到过 我告诉过你 告诉过你 告诉你 跟你说过 说过 提过 提到过 提到
你知道 知道 叫什么名字 什么名字 是什么 什么样 什么 一个 哪一天 哪天 哪里 哪儿 在哪 哪个 哪些 多少 几岁 几号 是谁 谁 怎么样 怎么 为什么 是否
请问 关于 一下 吗 呢 吧 啊 呀 嘛 的 了 过 是 我 你 叫 有 在 和 说 问 请 要 会 想 对 也 都 还 就 又 很
""".split(), key=len, reverse=True)
_ZH_STOP_RE = re.compile("|".join(map(re.escape, _ZH_STOP_PHRASES)))


def keyword_candidates(question: str) -> list[str]:
    """Search keywords for a recall question, most promising first.

    English: content words (after "about" first, then longer words first), with a singular form as a fallback.
    Chinese: what is left after removing question and recall phrases (之前, 上次, 还记得, 我说过, 什么 …), longest
    chunk first, then its two-character pieces.

    >>> keyword_candidates("What did I tell you about my sister?")
    ['sister']
    >>> keyword_candidates("你还记得我的猫叫什么名字吗？")
    ['猫']
    """
    folded = question.casefold().replace("’", "'")
    words = []
    for raw in WORD.findall(folded):
        word = raw.strip("'-")
        if word.endswith("'s"):
            word = word[:-2]
        if len(word) >= 3 and word not in EN_STOP_WORDS and not word.isdigit():
            words.append(word)
        elif word.isdigit() and len(word) >= 2:
            words.append(word)
    about = re.search(r"\babout\b(.*)", folded)
    after_about = [w for w in words if about and w in about.group(1)]
    ordered = after_about + sorted((w for w in words if w not in after_about), key=len, reverse=True)
    chunks: list[str] = []
    for run in CJK_RUN.findall(question):
        chunks += [c for c in _ZH_STOP_RE.split(run) if c]
    chunks.sort(key=len, reverse=True)
    pieces = [c[i : i + 2] for c in chunks if len(c) >= 3 for i in range(len(c) - 1)]
    singular = [w[:-1] for w in ordered if w.endswith("s") and len(w) > 4]
    return list(dict.fromkeys([*chunks, *ordered, *pieces, *singular]))


# ---------------------------------------------------------------------------------------------- notes

_EN_VERBS = {"prefer": "prefers", "like": "likes", "love": "loves", "hate": "hates", "dislike": "dislikes",
             "enjoy": "enjoys", "live": "lives", "work": "works", "am": "is", "have": "has", "don't": "doesn't",
             "do": "does", "study": "studies", "speak": "speaks", "own": "owns", "need": "needs", "want": "wants"}


def note_from(text: str) -> str:
    """A short third-person note for ``remember_note`` from what the user said.

    >>> note_from("Please remember that I prefer green tea."), note_from("记住：我喜欢游泳")
    ('User prefers green tea', '用户喜欢游泳')
    >>> note_from("Hi! My name is Maya."), note_from("I prefer short answers, please.")
    ("User's name is Maya", 'User prefers short answers')
    """
    body = " ".join(text.split()).strip()
    if has_cjk(body):
        body = re.sub(r"^(?:请|麻烦)?(?:你)?(?:帮我)?(?:记住|记一下|别忘了)[：:，,、\s]*", "", body)
        body = re.sub(r"我(?!们)", "用户", body).rstrip("。！!.，, ")
        return body or text.strip()
    # Greetings and politeness are not part of the fact: "Hi! My name is Maya, please." -> "User's name is Maya".
    body = re.sub(r"^(?:(?:hi|hello|hey|ok|okay|so|well)(?: there)?[!,.]*\s+)+", "", body, flags=re.IGNORECASE)
    body = re.sub(r"^(?:please\s+)?(?:remember|note|keep in mind|don't forget)(?:\s+that)?[:,]?\s*", "", body,
                  flags=re.IGNORECASE).rstrip(".! ")
    body = re.sub(r",?\s+please$", "", body, flags=re.IGNORECASE)
    body = re.sub(r"\bmy\b", "their", body, flags=re.IGNORECASE)
    body = re.sub(r"^their\b", "User's", body)
    body = re.sub(r"^I'm\b", "User is", body)
    match = re.match(r"^I (?:(really|also|now|still) )?(\S+)\b", body)
    if match:
        verb = _EN_VERBS.get(match.group(2).lower(), match.group(2))
        adverb = f"{match.group(1)} " if match.group(1) else ""
        body = f"User {adverb}{verb}" + body[match.end():]
    body = re.sub(r"\bI\b", "they", body)
    return body[:1].upper() + body[1:] if body else text.strip()


# ---------------------------------------------------------------------------------------------- reading tool output

_HIT = re.compile(r"^#(\d+)(?: day=(\d{4}-\d{2}-\d{2}))? \[([^\]]*)\] ([^:\s]+): (.*)$")


@dataclass(frozen=True, slots=True)
class _Hit:
    message_id: int
    day: str | None
    when: str
    role: str
    content: str


@dataclass(frozen=True, slots=True)
class _Step:
    name: str
    args: dict[str, Any]
    output: str
    ok: bool


def _hits(output: str) -> list[_Hit]:
    out = []
    for line in output.splitlines():
        match = _HIT.match(line)
        if match:
            out.append(_Hit(int(match.group(1)), match.group(2), match.group(3), match.group(4), match.group(5)))
    return out


def _best(hits: Sequence[_Hit], keywords: Sequence[str]) -> _Hit:
    # A fact is usually something the *user* stated (not asked, not an echo by the assistant): rank by keywords
    # matched, then user role, then statements over questions, then the newest.
    def score(hit: _Hit) -> tuple[int, bool, bool, int]:
        text = hit.content.casefold()
        return (sum(k.casefold() in text for k in keywords), hit.role == "user", not _is_question(hit.content),
                hit.message_id)

    return max(hits, key=score)


def _quote(text: str) -> str:
    return text if len(text) <= _QUOTE_CHARS else text[:_QUOTE_CHARS] + "…"


# ---------------------------------------------------------------------------------------------- the model


class OfflineChatModel(BaseChatModel):
    """The offline model: deterministic, tool-calling, no network (see the module docstring for the policy).

    >>> # ChatService(store, model=OfflineChatModel())  # what ChatService does when no API key is configured
    """

    model_name: str = "offline"
    tool_names: tuple[str, ...] = ()
    """Names of the tools bound with :meth:`bind_tools`; the model only calls tools it was given."""

    @property
    def _llm_type(self) -> str:
        return "agentmem-offline"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_name": self.model_name}

    def bind_tools(self, tools: Sequence[Any], *, tool_choice: Any = None, **kwargs: Any) -> OfflineChatModel:
        """Remember which tools exist (the agent calls this on every model step, so it only copies on change)."""
        names = tuple(_tool_name(t) for t in tools)
        return self if names == self.tool_names else self.model_copy(update={"tool_names": names})

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self.respond(messages))])

    def _stream(self, messages: list[BaseMessage], stop: list[str] | None = None,
                run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> Iterator[ChatGenerationChunk]:
        reply = self.respond(messages)
        if reply.tool_calls:
            yield ChatGenerationChunk(message=AIMessageChunk(content="", tool_call_chunks=[
                {"name": c["name"], "args": json.dumps(c["args"], ensure_ascii=False), "id": c["id"], "index": i}
                for i, c in enumerate(reply.tool_calls)]))
            return
        for piece in _pieces(str(reply.content)):
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=piece))
            if run_manager is not None:
                run_manager.on_llm_new_token(piece, chunk=chunk)
            yield chunk

    # ------------------------------------------------------------------ policy

    def respond(self, messages: Sequence[BaseMessage]) -> AIMessage:
        """The next message for this conversation state (a tool call or the final reply)."""
        start = max((i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=-1)
        if start < 0:
            return AIMessage(content="")
        question = messages[start].text
        steps = _steps(messages[start + 1:])
        zh = has_cjk(question)
        intent = classify(question)
        if intent == "remember" and "remember_note" in self.tool_names:
            if not steps:
                return self._call(question, 0, "remember_note", {"note": note_from(question)})
            return AIMessage(content=_remembered(steps[-1], zh))
        if intent == "recall" and "search_session" in self.tool_names:
            return self._recall(question, steps, messages, zh)
        return AIMessage(content=_CHAT_ZH if zh else _CHAT_EN)

    def _call(self, question: str, step: int, name: str, args: dict[str, Any]) -> AIMessage:
        digest = hashlib.sha1(question.encode("utf-8")).hexdigest()[:8]
        return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"call_{digest}_{step + 1}",
                                                  "type": "tool_call"}])

    def _recall(self, question: str, steps: list[_Step], messages: Sequence[BaseMessage], zh: bool) -> AIMessage:
        keywords = keyword_candidates(question)
        if not keywords:
            return AIMessage(content=_NO_TOPIC_ZH if zh else _NO_TOPIC_EN)
        long_term = _long_term_lines(messages, keywords)
        if not steps:
            return self._call(question, 0, "search_session", {"keyword": keywords[0]})
        last = steps[-1]
        if last.name in _WINDOW_FOR.values():
            search_step = next((s for s in reversed(steps[:-1]) if s.name in _WINDOW_FOR), None)
            wanted = _as_int(last.args.get("message_id"))
            anchor = next((h for h in _hits(last.output) if last.ok and h.message_id == wanted), None)
            if anchor is None and search_step is not None:
                anchor = next((h for h in _hits(search_step.output) if h.message_id == wanted), None)
            if anchor is None:
                return AIMessage(content=_nothing(keywords, long_term, zh))
            return AIMessage(content=_found(anchor, long_term, daily=last.name == "get_daily_window", zh=zh))
        # A user's statement is what a recall question is after; questions and the assistant's own echoes are only
        # used when no statement turns up anywhere.
        if last.name in _WINDOW_FOR and last.ok:
            strong = [h for h in _hits(last.output) if _is_statement(h)]
            if strong:
                return self._window(question, steps, last.name, _best(strong, keywords))
        tried = {(s.name, str(s.args.get("keyword"))) for s in steps}
        session_searches = sum(s.name == "search_session" for s in steps)
        daily_searches = sum(s.name == "search_daily" for s in steps)
        for keyword in keywords:
            if session_searches >= MAX_SESSION_SEARCHES:
                break
            if ("search_session", keyword) not in tried:
                return self._call(question, len(steps), "search_session", {"keyword": keyword})
        if "search_daily" in self.tool_names:
            for keyword in keywords:
                if daily_searches >= MAX_DAILY_SEARCHES:
                    break
                if ("search_daily", keyword) not in tried:
                    return self._call(question, len(steps), "search_daily", {"keyword": keyword, "day": ""})
        for name in _WINDOW_FOR:  # nothing better: the best weak hit, this conversation first
            weak = [h for s in steps if s.name == name and s.ok for h in _hits(s.output)]
            if weak:
                return self._window(question, steps, name, _best(weak, keywords))
        if long_term:
            shown = "；".join(long_term) if zh else "; ".join(long_term)
            return AIMessage(content=(f"长期记忆里记着：{shown}" if zh else f"From long-term memory: {shown}"))
        searched = [str(s.args.get("keyword")) for s in steps if "keyword" in s.args]
        return AIMessage(content=_nothing(searched or keywords, (), zh))

    def _window(self, question: str, steps: list[_Step], search: str, hit: _Hit) -> AIMessage:
        window = _WINDOW_FOR[search]
        if window not in self.tool_names:
            return AIMessage(content=_found(hit, (), daily=search == "search_daily", zh=has_cjk(question)))
        args: dict[str, Any] = {"message_id": hit.message_id, "before": 2, "after": 2}
        if search == "search_daily":
            args["day"] = hit.day or ""
        return self._call(question, len(steps), window, args)


_WINDOW_FOR = {"search_session": "get_session_window", "search_daily": "get_daily_window"}


def _is_statement(hit: _Hit) -> bool:
    return hit.role == "user" and not _is_question(hit.content)


_CHAT_EN = ("(offline model) I'm running without a language model, so I can't chat freely, but everything you say "
            "is kept in memory. Ask me \u201cwhat did I say about \u2026?\u201d, or tell me something to remember "
            "(\u201cI prefer \u2026\u201d).")
_CHAT_ZH = ("（离线模型）我现在没有接入语言模型，不能自由聊天，但你说的每句话都会记在记忆里。"
            "可以问我“我之前说过……吗？”，或者告诉我要记住的事（“记住……”、“我喜欢……”）。")
_NO_TOPIC_EN = "I couldn't tell what to look for. Ask me, for example, \u201cwhat did I say about my trip?\u201d"
_NO_TOPIC_ZH = "我没听出要找什么。可以这样问我：“我之前说过关于旅行的什么？”"


def _found(hit: _Hit, long_term: Sequence[str], *, daily: bool, zh: bool) -> str:
    who_en = "you said" if hit.role == "user" else ("I said" if hit.role == "assistant" else f"{hit.role} said")
    who_zh = "你说过" if hit.role == "user" else ("我说过" if hit.role == "assistant" else f"{hit.role} 说过")
    text = _quote(hit.content)
    if daily and hit.day:
        if zh:
            reply = f"我在 {hit.day} 的每日记录里找到了（#{hit.message_id}，{hit.when}）：{who_zh}“{text}”"
        else:
            reply = (f"I found it in the daily log of {hit.day} (#{hit.message_id}, {hit.when}): "
                     f"{who_en} \u201c{text}\u201d")
    elif zh:
        reply = f"记得。在本次对话里（#{hit.message_id}，{hit.when}）{who_zh}：“{text}”"
    else:
        reply = f"Yes. Earlier in this conversation (#{hit.message_id}, {hit.when}) {who_en}: \u201c{text}\u201d"
    extra = [line for line in long_term if line not in text]
    if extra:
        reply += ("\n长期记忆里也记着：" + "；".join(extra)) if zh else ("\nLong-term memory also has: " + "; ".join(extra))
    return reply


def _nothing(keywords: Sequence[str], long_term: Sequence[str], zh: bool) -> str:
    if long_term:
        shown = "；".join(long_term) if zh else "; ".join(long_term)
        return f"长期记忆里记着：{shown}" if zh else f"From long-term memory: {shown}"
    shown = "、".join(f"“{k}”" for k in dict.fromkeys(keywords)) if zh else ", ".join(
        f"\u201c{k}\u201d" for k in dict.fromkeys(keywords))
    if zh:
        return f"我在本次对话和所有每日记录里搜索了{shown}，没有找到相关内容，所以不能确定。"
    return (f"I searched this conversation and every daily log for {shown} and found nothing about it, "
            "so I can't say.")


def _remembered(step: _Step, zh: bool) -> str:
    if not step.ok:
        return f"没能记下来：{step.output}" if zh else f"I couldn't save that: {step.output}"
    note = step.output.split(": - ", 1)[-1]
    if step.output.startswith("Already"):
        return f"这条我已经记着了：{note}" if zh else f"I already had that in long-term memory: {note}"
    return f"好的，我记住了：{note}" if zh else f"Got it, I'll remember: {note}"


def _long_term_lines(messages: Sequence[BaseMessage], keywords: Sequence[str], *, limit: int = 3) -> list[str]:
    """Bullets of the long-term memory block in the system prompt that mention the first keyword that has any."""
    system = next((m.text for m in messages if isinstance(m, SystemMessage)), "")
    if LONG_TERM_OPEN not in system:
        return []
    body = system.split(LONG_TERM_OPEN, 1)[1].split(LONG_TERM_CLOSE, 1)[0]
    facts = [line.strip().lstrip("-*+ ").strip() for line in body.splitlines()
             if line.strip() and not line.lstrip().startswith("#")]
    for keyword in keywords:
        found = [fact for fact in facts if fact and keyword.casefold() in fact.casefold()]
        if found:
            return found[:limit]
    return []


def _steps(after: Sequence[BaseMessage]) -> list[_Step]:
    results = {m.tool_call_id: m for m in after if isinstance(m, ToolMessage)}
    steps = []
    for msg in after:
        if isinstance(msg, AIMessage):
            for call in msg.tool_calls:
                result = results.get(call.get("id") or "")
                steps.append(_Step(call["name"], dict(call.get("args") or {}),
                                   result.text if result is not None else "",
                                   result is not None and result.status != "error"))
    return steps


def _tool_name(tool: Any) -> str:
    if isinstance(tool, dict):
        return str(tool.get("name") or tool.get("function", {}).get("name", ""))
    return str(getattr(tool, "name", getattr(tool, "__name__", "")))


def _as_int(value: object) -> int | None:
    try:
        return int(str(value).lstrip("#"))
    except ValueError:
        return None


def _pieces(text: str) -> Iterator[str]:
    """Streaming pieces: words with their trailing space; long runs (CJK has no spaces) in short slices."""
    for token in re.findall(r"\S+\s*|\s+", text):
        for i in range(0, len(token), 8):
            yield token[i : i + 8]
