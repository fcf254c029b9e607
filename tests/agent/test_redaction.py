"""Secrets never leave through error text (issue 11, defect 3): the four leaks, each end to end.

A 401 body quoting the key, a 500 quoting the ``Authorization`` header, ``base_url: http://user:PASSWORD@…`` and a
YAML number as ``api_key``: each against the real client and the loopback server, and each secret looked for in the
reply, the turn's events, every file of the memory folder, ``repr``/``str`` of the config, the service and the
model, the errors raised, the captured log output, and a widget's error box.
"""

from __future__ import annotations

import logging
import socket
import uuid
from pathlib import Path
from typing import Any

import pytest

from agentmem_nb import ConfigError, MemoryStore
from agentmem_nb.testing import fake_openai as fake
from agentmem_nb.agent import ChatService, LLMConfig, load_config
from agentmem_nb.redact import REDACTED, redact, register_secret, url_secrets


def _secret(prefix: str) -> str:
    """A secret no other test uses (the process-wide registry must not be what makes a test pass)."""
    return f"{prefix}{uuid.uuid4().hex}"


def _config(url: str, key: str) -> LLMConfig:
    return LLMConfig(api_key=key, model="fake-model", base_url=url, timeout=10, max_retries=0)


def _leaks(secret: str, root: Path, *texts: object) -> list[str]:
    """Where ``secret`` shows: which of ``texts`` (by index) and which files under ``root`` hold it."""
    found = [f"text #{i}: {str(t)[:200]!r}" for i, t in enumerate(texts) if secret in str(t)]
    for path in sorted(root.rglob("*")):
        if path.is_file() and secret.encode() in path.read_bytes():
            found.append(str(path))
    return found


@pytest.fixture
def logs(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.DEBUG)  # every logger, every level: httpx and openai log the request URL and options
    return caplog


def _turn_both_ways(svc: ChatService) -> list[object]:
    """One turn with ``turn`` and one with ``stream_turn``; everything they returned, as texts to search."""
    result = svc.turn("alice", "s1", "hello")
    events = list(svc.stream_turn("alice", "s1", "hello again"))
    return [result.reply, result.error, result, *(e.text for e in events), events[-1].result]


def test_a_401_body_quoting_the_key_is_redacted_everywhere(tmp_path: Path, fake_openai: fake.FakeOpenAI,
                                                           logs: pytest.LogCaptureFixture) -> None:
    key = _secret("sk-proj-")
    for _ in range(2):
        fake_openai.overrides.append(fake.Fault(401, f"Incorrect API key provided: {key}. You can find your API "
                                                     "key at https://platform.openai.com/account/api-keys."))
    config = _config(fake_openai.url, key)
    svc = ChatService(MemoryStore(tmp_path / "memory"), config=config)
    texts = _turn_both_ways(svc)
    assert "HTTP 401" in str(texts[0]) and "Incorrect API key provided: " + REDACTED in str(texts[0])
    assert "check llm.api_key" in str(texts[0])  # the hint survives: only the key is replaced
    assert _leaks(key, tmp_path / "memory", *texts, repr(config), str(config), repr(svc), repr(svc.model),
                  logs.text) == []


def test_a_500_echoing_the_authorization_header_is_redacted_everywhere(
        tmp_path: Path, fake_openai: fake.FakeOpenAI, logs: pytest.LogCaptureFixture) -> None:
    key = _secret("acme-")  # not an sk- shape: only the configured value and the header rule can catch it
    for _ in range(2):
        fake_openai.overrides.append(fake.Fault(500, "upstream refused", echo_authorization=True))
    svc = ChatService(MemoryStore(tmp_path / "memory"), config=_config(fake_openai.url, key))
    texts = _turn_both_ways(svc)
    assert "Authorization: Bearer " + REDACTED in str(texts[0])  # the server did echo the header
    assert _leaks(key, tmp_path / "memory", *texts, logs.text) == []


def test_a_password_in_base_url_is_redacted_and_still_sent(tmp_path: Path, fake_openai: fake.FakeOpenAI,
                                                           logs: pytest.LogCaptureFixture) -> None:
    password = _secret("PW")
    url = fake_openai.url.replace("http://", f"http://proxyuser:{password}@")
    for _ in range(2):
        fake_openai.overrides.append(fake.Fault(500, "proxy said no", echo_authorization=True))
    config = _config(url, _secret("key-"))
    svc = ChatService(MemoryStore(tmp_path / "memory"), config=config)
    texts = _turn_both_ways(svc)
    # the credentials still reach the server, as Basic auth exactly as when the client read them from the URL
    assert "Authorization: Basic " + REDACTED in str(texts[0])
    assert "HTTP Request: POST " + fake_openai.url in logs.text  # httpx logs the URL: without its userinfo
    secrets = [password, *url_secrets(url)]
    for secret in secrets:
        assert _leaks(secret, tmp_path / "memory", *texts, repr(config), str(config), repr(svc),
                      repr(svc.model), logs.text) == [], secret
    assert "http://<redacted>@127.0.0.1" in repr(config)


def test_an_unreachable_server_with_a_password_in_base_url(tmp_path: Path, logs: pytest.LogCaptureFixture) -> None:
    with socket.socket() as probe:  # a port nothing listens on once this socket is closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    password = _secret("PW")
    svc = ChatService(MemoryStore(tmp_path / "memory"),
                      config=_config(f"http://proxyuser:{password}@127.0.0.1:{port}/v1", _secret("key-")))
    result = svc.turn("alice", "s1", "hello")
    assert "could not reach the server http://<redacted>@127.0.0.1" in result.reply
    assert _leaks(password, tmp_path / "memory", result, logs.text) == []


def test_a_numeric_api_key_in_yaml_is_refused_without_printing_it(tmp_path: Path) -> None:
    digits = str(uuid.uuid4().int)[:14]
    path = tmp_path / "llm.yaml"
    path.write_text(f"llm:\n  api_key: {digits}\n  model: m\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(path, environ={})
    assert "quote it" in str(caught.value) and "llm.api_key" in str(caught.value)
    assert digits not in str(caught.value) and digits not in repr(caught.value)


def test_a_quoted_numeric_key_is_accepted_and_hidden_when_a_server_quotes_it(
        tmp_path: Path, fake_openai: fake.FakeOpenAI, logs: pytest.LogCaptureFixture) -> None:
    digits = str(uuid.uuid4().int)[:14]  # no key shape at all: only the configured value can be recognised
    path = tmp_path / "llm.yaml"
    path.write_text(f'llm:\n  api_key: "{digits}"\n  model: m\n  base_url: {fake_openai.url}\n  max_retries: 0\n',
                    encoding="utf-8")
    config = load_config(path, environ={})
    assert config.api_key == digits
    fake_openai.overrides.append(fake.Fault(401, f"Incorrect API key provided: {digits}"))
    svc = ChatService(MemoryStore(tmp_path / "memory"), config=config)
    result = svc.turn("alice", "s1", "hello")
    assert "Incorrect API key provided: " + REDACTED in result.reply
    assert _leaks(digits, tmp_path / "memory", result, repr(config), logs.text) == []


@pytest.mark.parametrize("text", [
    "llm:\n  api_key: [sk-proj-{s}, other]\n",         # a list: its repr was shown (cut at 40 characters)
    "llm:\n  base_url: ['http://me:{s}@proxy/v1']\n",  # the same for a URL with a password
    "llm: sk-proj-{s}\n",                              # the key put where the section belongs
    "llm:\n  api_key: *{s}\n",                         # an unquoted key read as a YAML alias: the problem quoted it
    "llm:\n  api_key: !{s}\n",                         # ... or as a YAML tag
])
def test_config_errors_never_quote_a_secret(tmp_path: Path, text: str) -> None:
    secret = uuid.uuid4().hex
    path = tmp_path / "llm.yaml"
    path.write_text(text.format(s=secret), encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(path, environ={})
    shown = str(caught.value)
    assert not any(secret[i:i + 8] in shown for i in range(len(secret) - 7)), shown  # not even a piece of it


@pytest.mark.parametrize("make_url", [
    lambda url, secret: url,                                    # a short key (LiteLLM's default is "sk-1234")
    lambda url, secret: url.replace("http://", f"http://me:{secret}@"),  # a short password in the URL
    lambda url, secret: f"{url}?key={secret}",                  # a key in the URL's query string
], ids=["short key", "short password", "query key"])
def test_short_secrets_and_query_keys_are_redacted_everywhere(tmp_path: Path, fake_openai: fake.FakeOpenAI,
                                                              logs: pytest.LogCaptureFixture,
                                                              make_url: Any) -> None:
    secret = "s" + uuid.uuid4().hex[:6]  # 7 characters: shorter than a key shape, not caught by any pattern
    url = make_url(fake_openai.url, secret)
    key = secret if url == fake_openai.url else _secret("key-")
    for _ in range(2):
        fake_openai.overrides.append(fake.Fault(401, f"Incorrect API key provided: {secret}. creds {secret}"))
    config = _config(url, key)
    svc = ChatService(MemoryStore(tmp_path / "memory"), config=config)
    texts = _turn_both_ways(svc)
    assert REDACTED in str(texts[0])
    # The HTTP library's own DEBUG log shows the request URL it sent, query string included: a key in the query is
    # hidden from every text this package writes, but only credentials given as auth stay out of that log.
    library_log = [] if "?key=" in url else [logs.text]
    assert _leaks(secret, tmp_path / "memory", *texts, repr(config), str(config), *library_log) == []


def test_a_short_secret_is_hidden_as_a_token_not_inside_other_words() -> None:
    register_secret("x7Q2")
    assert redact("key x7Q2, not ax7Q2b") == f"key {REDACTED}, not ax7Q2b"


def test_a_widget_shows_a_raised_error_redacted(tmp_path: Path, fake_openai: fake.FakeOpenAI) -> None:
    from agentmem_nb.widgets.chat import ChatWidget

    key = _secret("acme-")
    config = _config(fake_openai.url, key)  # configured in this process: the widget never sees the config

    class Raising:
        """A service whose turn raises with the key in its message (as a library error quoting a request might)."""

        def __init__(self, store: MemoryStore) -> None:
            self.store, self.offline, self.model_name = store, False, "m"

        def new_conversation(self, user_id: str, title: str = "") -> str:
            return self.store.user(user_id).conversations.create(title=title).session_id

        def turn(self, user_id: str, session_id: str, message: str) -> Any:
            raise RuntimeError(f"request with api_key {config.api_key} failed")

    store = MemoryStore(tmp_path / "memory")
    chat = ChatWidget(Raising(store), store, user_id="alice", session_id="s1")  # type: ignore[arg-type]
    seen: list[Any] = []
    chat.on_turn(seen.append)
    chat.input.value = "hello"
    chat.send_button.click()
    assert chat.last_error is not None and "RuntimeError: request with api_key " + REDACTED in chat.last_error.message
    assert _leaks(key, tmp_path / "memory", chat.error_area.value, chat.last_error.message, chat.last_error.traceback,
                  seen[-1].error) == []


def test_a_widget_shows_a_failed_turn_redacted(tmp_path: Path, fake_openai: fake.FakeOpenAI) -> None:
    from agentmem_nb.widgets.chat import ChatWidget

    key = _secret("sk-")
    fake_openai.overrides.append(fake.Fault(401, f"Incorrect API key provided: {key}"))
    store = MemoryStore(tmp_path / "memory")
    chat = ChatWidget(ChatService(store, config=_config(fake_openai.url, key)), store, user_id="alice",
                      session_id="s1")
    result = chat.send("hello")
    assert result.error and "HTTP 401" in chat.error_area.value
    assert _leaks(key, tmp_path / "memory", chat.error_area.value, chat.history.value, result) == []


@pytest.mark.parametrize(("text", "expected"), [
    ("Incorrect API key provided: sk-proj-abcdefghijklmnop1234", "Incorrect API key provided: sk-<redacted>"),
    ("half masked sk-proj-****************abcd echo", "half masked sk-<redacted> echo"),
    ('{"Authorization": "Bearer abc.DEF-123456"}', '{"Authorization": "Bearer <redacted>"}'),
    ("Proxy-Authorization: Basic Ym9iOnB3ZA==", "Proxy-Authorization: Basic <redacted>"),
    ("x-api-key: 0123456789 api_key='zz-top-secret'", "x-api-key: <redacted> api_key='<redacted>'"),
    ("the server refused the API key: check llm.api_key", "the server refused the API key: check llm.api_key"),
    ("AGENTMEM_API_KEY=abcdef123", "AGENTMEM_API_KEY=<redacted>"),
    ("GET https://tok@host/v1 and http://u:p@ss@h:8/x?y=a@b", "GET https://<redacted>@host/v1 and "
                                                             "http://<redacted>@h:8/x?y=a@b"),
    # prose that only looks near a credential is left alone
    ("check llm.api_key or AGENTMEM_API_KEY", "check llm.api_key or AGENTMEM_API_KEY"),
    ("basic usage: see the bearer of news", "basic usage: see the bearer of news"),
    ("LLMConfig(api_key=<set>, model='sk-learn')", "LLMConfig(api_key=<set>, model='sk-learn')"),
])
def test_credential_shapes(text: str, expected: str) -> None:
    assert redact(text) == expected


def test_explicit_and_short_secrets() -> None:
    # A short secret is replaced where it stands as a whole token, never inside a longer word; a value too short to
    # be anyone's secret (under MIN_TOKEN_CHARS) is left alone.
    assert redact("the key zq-4177 was refused, zq-41770 too", secrets=["zq-4177"]) == (
        f"the key {REDACTED} was refused, zq-41770 too")
    assert redact("the key zq4 was refused", secrets=["zq4"]) == "the key zq4 was refused"
    assert redact("refused: zq-417799 and zq-417799-long", secrets=["zq-417799", "zq-417799-long"]) == (
        f"refused: {REDACTED} and {REDACTED}")
