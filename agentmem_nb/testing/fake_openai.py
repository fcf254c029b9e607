"""A scripted OpenAI-compatible server on 127.0.0.1 for end-to-end tests of the real client path.

Public so that notebooks and your own tests can drive ``ChatOpenAI`` without a network or a key::

    from agentmem_nb.testing.fake_openai import FakeOpenAI, memory_policy, start, real_config
    server = FakeOpenAI(policy=memory_policy("Lyon")); httpd = start(server)
    svc = ChatService(store, config=real_config(server))

It speaks ``POST /v1/chat/completions``, JSON or SSE (``stream: true``). What it answers is decided by a *policy*
(a function of the request body) unless a queued override comes first: a :class:`Fault` (HTTP error), a
:class:`Stall` (silence), a :class:`Cut` (the answer stops midway and the connection closes), :class:`EmptyChoices`
(a 200 answer without any choice), a :class:`Drip` (keep-alive bytes, never an answer) or a :class:`Reply` (e.g. a
malformed tool call: arguments are sent as the raw text given). Every request body is recorded in ``requests``.

It also speaks ``POST /v1/embeddings``: deterministic vectors (:func:`fake_embedding`, hashed words and CJK
characters, so texts sharing words are near), every text embedded recorded in ``embedded`` (the count a test of
"vectors are kept, not recomputed" asserts on).
"""

from __future__ import annotations

import json
import re
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from agentmem_nb.agent import LLMConfig


@dataclass(frozen=True)
class Reply:
    """A normal answer: text, or tool calls given as ``(name, arguments as JSON text)``."""

    content: str | None = None
    tool_calls: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Fault:
    """An HTTP error status with an OpenAI-style error body. ``echo_authorization`` appends the request's
    ``Authorization`` header to the message, as some proxies do in their error pages."""

    status: int
    message: str = "simulated failure"
    echo_authorization: bool = False


@dataclass(frozen=True)
class Stall:
    """Answer nothing for ``seconds`` (the client should time out first)."""

    seconds: float = 3.0


@dataclass(frozen=True)
class Cut:
    """Begin the answer with ``text``, then close the connection: no ``finish_reason``, no ``data: [DONE]`` (JSON:
    the body stops after ``len(text)`` characters of the completion, short of its announced length)."""

    text: str = "Your sister lives in"


@dataclass(frozen=True)
class EmptyChoices:
    """A 200 answer whose ``choices`` list is empty (SSE: ``chunks`` chunks with ``choices: []``, then ``[DONE]``)."""

    chunks: int = 3


@dataclass(frozen=True)
class Drip:
    """Keep the request busy for ``seconds``, sending a keep-alive every ``every`` seconds (SSE: ``: keep-alive``
    comment lines; JSON: the spaces JSON allows before a value), so no read ever waits long enough to time out;
    then answer "too late" (if the client is still there)."""

    seconds: float = 30.0
    every: float = 0.05


Answer = Reply | Fault | Stall | Cut | EmptyChoices | Drip
Policy = Callable[[dict[str, Any]], Reply]


def chat_policy(body: dict[str, Any]) -> Reply:
    """Always a short text answer."""
    return Reply(content="Noted.")


def memory_policy(keyword: str) -> Policy:
    """What a good hosted model does: a question mentioning ``keyword`` -> search_session, then
    get_session_window on the first hit, then a reply quoting the anchor; anything else -> "Noted."."""

    def policy(body: dict[str, Any]) -> Reply:
        messages = body["messages"]
        last = messages[-1]
        if last["role"] == "user":
            text = str(last.get("content") or "")
            if keyword in text and text.rstrip().endswith(("?", "？")):
                return Reply(tool_calls=(("search_session", json.dumps({"keyword": keyword}, ensure_ascii=False)),))
            return Reply(content="Noted.")
        if last["role"] == "tool":
            # The call being answered is in the latest assistant message (ids may repeat across steps).
            issued = next(m for m in reversed(messages) if m["role"] == "assistant")
            call = next((c for c in issued.get("tool_calls") or [] if c["id"] == last["tool_call_id"]), None)
            name = call["function"]["name"] if call else None
            hits = re.findall(r"^#(\d+) \[[^\]]*\] (\w+): (.*)$", str(last["content"]), flags=re.M)
            if name == "search_session" and hits:
                anchor = next((h for h in hits if h[1] == "user"), hits[0])
                args = {"message_id": int(anchor[0]), "before": 1, "after": 1}
                return Reply(tool_calls=(("get_session_window", json.dumps(args)),))
            if name == "get_session_window" and call and hits:  # (a name implies a call)
                wanted = json.loads(call["function"]["arguments"])
                anchor = next(h for h in hits if int(h[0]) == wanted["message_id"])
                return Reply(content=f"You told me (#{anchor[0]}): {anchor[2]}")
            return Reply(content="I found nothing about that.")
        return Reply(content="Noted.")

    return policy


@dataclass
class FakeOpenAI:
    """The server state; ``url`` is the ``base_url`` to give the client.

    ``reuse_ids=True`` numbers tool calls per response (``call_0``, ``call_1``, ... in every model step), as some
    OpenAI-compatible servers do, instead of ids unique across the conversation.
    """

    policy: Policy = chat_policy
    requests: list[dict[str, Any]] = field(default_factory=list)
    overrides: deque[Answer] = field(default_factory=deque)
    stop: threading.Event = field(default_factory=threading.Event)
    url: str = ""
    reuse_ids: bool = False
    embedded: list[str] = field(default_factory=list)  # every text sent to /v1/embeddings, in order
    _counter: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def next_answer(self, body: dict[str, Any]) -> Answer:
        with self._lock:
            self.requests.append(body)
            self._counter += 1
            if self.overrides:
                return self.overrides.popleft()
        return self.policy(body)

    def new_id(self, index: int = 0) -> str:
        """The id of the ``index``-th tool call of a response."""
        if self.reuse_ids:
            return f"call_{index}"
        with self._lock:
            self._counter += 1
            return f"call_{self._counter}"


EMBEDDING_DIM = 64


def fake_embedding(text: str) -> list[float]:
    """A deterministic vector for ``text``: each lowercased word (and each CJK character) adds 1 to a dimension
    chosen by a stable hash. Not a model: texts that share words are near, paraphrases are not."""
    import hashlib

    vector = [0.0] * EMBEDDING_DIM
    for token in re.findall(r"[\u4e00-\u9fff]|[^\W_]+", text.lower()):
        digest = hashlib.blake2b(token.encode("utf-8"), digest_size=4).digest()
        vector[int.from_bytes(digest, "little") % EMBEDDING_DIM] += 1.0
    return vector


def _embeddings(server: FakeOpenAI, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    texts = body.get("input")
    if isinstance(texts, str):
        texts = [texts]
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        return 400, {"error": {"message": "input must be a string or a list of strings", "type": "invalid_request"}}
    with server._lock:
        server.embedded.extend(texts)
    data = [{"object": "embedding", "index": i, "embedding": fake_embedding(t)} for i, t in enumerate(texts)]
    return 200, {"object": "list", "data": data, "model": body.get("model", ""),
                 "usage": {"prompt_tokens": sum(len(t.split()) for t in texts), "total_tokens": 0}}


def _completion(reply: Reply, server: FakeOpenAI, model: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.tool_calls:
        message["tool_calls"] = [{"id": server.new_id(index), "type": "function",
                                  "function": {"name": name, "arguments": args}}
                                 for index, (name, args) in enumerate(reply.tool_calls)]
    return {"id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "message": message,
                         "finish_reason": "tool_calls" if reply.tool_calls else "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}


def _chunk(model: str, delta: dict[str, Any] | None, finish: str | None = None) -> dict[str, Any]:
    """One SSE chunk; ``delta=None`` gives a chunk with an empty ``choices`` list."""
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    return {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": model,
            "choices": choices}


def _chunks(reply: Reply, server: FakeOpenAI, model: str) -> list[dict[str, Any]]:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return _chunk(model, delta, finish)

    out = [chunk({"role": "assistant", "content": ""})]
    for index, (name, args) in enumerate(reply.tool_calls):
        out.append(chunk({"tool_calls": [{"index": index, "id": server.new_id(index), "type": "function",
                                          "function": {"name": name, "arguments": ""}}]}))
        for start in range(0, len(args), 7):  # arguments arrive in pieces, as real servers send them
            out.append(chunk({"tool_calls": [{"index": index, "function": {"arguments": args[start:start + 7]}}]}))
    text = reply.content or ""
    for start in range(0, len(text), 5):
        out.append(chunk({"content": text[start:start + 5]}))
    out.append(chunk({}, "tool_calls" if reply.tool_calls else "stop"))
    return out


def make_handler(server: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        disable_nagle_algorithm = True  # without it every JSON response stalls ~40 ms on delayed ACK

        def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
            return

        def do_POST(self) -> None:  # noqa: N802 - the http.server naming
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            if self.path.rstrip("/") == "/v1/embeddings":
                self._json(*_embeddings(server, body))
                return
            if self.path.rstrip("/") != "/v1/chat/completions":
                self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
                return
            answer = server.next_answer(body)
            model = body.get("model", "")
            try:
                if isinstance(answer, Drip):
                    self._drip(answer, stream=bool(body.get("stream")), model=model)
                elif isinstance(answer, Cut):
                    self._cut(answer, stream=bool(body.get("stream")), model=model)
                elif isinstance(answer, EmptyChoices):
                    if body.get("stream"):
                        self._sse([_chunk(model, None) for _ in range(answer.chunks)], done=True)
                    else:
                        empty = _completion(Reply(content=""), server, model)
                        self._json(200, {**empty, "choices": []})
                elif isinstance(answer, Stall):
                    server.stop.wait(answer.seconds)
                    self._json(200, _completion(Reply(content="too late"), server, model))
                elif isinstance(answer, Fault):
                    message = answer.message
                    if answer.echo_authorization:
                        message += f" (request had Authorization: {self.headers.get('Authorization', '')})"
                    self._json(answer.status, {"error": {"message": message, "type": "fake_error",
                                                         "code": str(answer.status)}})
                elif body.get("stream"):
                    self._sse(_chunks(answer, server, model), done=True)
                else:
                    self._json(200, _completion(answer, server, model))
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (the timeout case)

        def _sse_headers(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()

        def _sse(self, items: list[dict[str, Any]], *, done: bool) -> None:
            self._sse_headers()
            for item in items:
                self.wfile.write(f"data: {json.dumps(item)}\n\n".encode())
                self.wfile.flush()
            if done:
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()

        def _cut(self, cut: Cut, *, stream: bool, model: str) -> None:
            if stream:  # the text, then the connection closes: no finish_reason, no [DONE]
                first = _chunk(model, {"role": "assistant", "content": ""})
                self._sse([first, *(_chunk(model, {"content": cut.text[i:i + 5]})
                                    for i in range(0, len(cut.text), 5))], done=False)
                self.close_connection = True
                return
            data = json.dumps(_completion(Reply(content=cut.text), server, model)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[: data.index(cut.text.encode()) + len(cut.text.encode())])
            self.wfile.flush()
            self.close_connection = True

        def _drip(self, drip: Drip, *, stream: bool, model: str) -> None:
            answer = json.dumps(_completion(Reply(content="too late"), server, model)).encode()
            ticks = max(1, int(drip.seconds / drip.every))
            if stream:
                self._sse_headers()
            else:  # JSON allows whitespace before the value: announce the whole length, send it byte by byte
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(ticks + len(answer)))
                self.end_headers()
            for _ in range(ticks):
                if server.stop.wait(drip.every):
                    return
                self.wfile.write(b": keep-alive\n\n" if stream else b" ")
                self.wfile.flush()
            if stream:
                for item in _chunks(Reply(content="too late"), server, model):
                    self.wfile.write(f"data: {json.dumps(item)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")
            else:
                self.wfile.write(answer)
            self.wfile.flush()

        def _json(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


def start(server: FakeOpenAI) -> ThreadingHTTPServer:
    """Serve ``server`` on 127.0.0.1 (port chosen by the OS) in a daemon thread; sets ``server.url``."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(server))
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    server.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    return httpd


def real_config(server: FakeOpenAI, *, timeout: float = 10.0, turn_timeout: float = 300.0) -> LLMConfig:
    """A config pointing ChatOpenAI at the fake server (no retries, so faults surface at once)."""
    return LLMConfig(api_key="test-key", model="fake-model", base_url=server.url, timeout=timeout, max_retries=0,
                     turn_timeout=turn_timeout)
