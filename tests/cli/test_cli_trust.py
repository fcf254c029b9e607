"""The command line as a user runs it (issue 11): the real ``python -m agentmem_nb.cli`` in a folder outside the
checkout, checked by exit status and by what it prints.

Exit statuses: 0 done, 1 ``problems`` found some, 2 the command could not do what was asked (bad argument, unknown
user, bad config) — always one line on stderr, never a traceback.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentmem_nb import ConfigError, MemoryStore
from agentmem_nb.testing import fake_openai as fake

REPO = Path(__file__).resolve().parents[2]


def cli(cwd: Path, *args: str, stdin: str = "", env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run the command line in ``cwd`` with no model configured in the environment and a strict UTF-8 stdout."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTMEM_", "OPENAI_"))}
    clean.update(PYTHONPATH=str(REPO), PYTHONIOENCODING="utf-8", **(env or {}))
    return subprocess.run([sys.executable, "-m", "agentmem_nb.cli", *args], cwd=cwd, input=stdin, env=clean,
                          capture_output=True, text=True, encoding="utf-8", timeout=120)


def one_error_line(out: subprocess.CompletedProcess) -> str:
    """The single error line of a failed command (exit status 2)."""
    assert out.returncode == 2, (out.returncode, out.stdout, out.stderr)
    assert "Traceback" not in out.stderr
    lines = [line for line in out.stderr.splitlines() if "error:" in line]
    assert len(lines) == 1, out.stderr
    return lines[0]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A working folder outside the checkout holding ``memory/alice`` with one session (s1) of four messages."""
    store = MemoryStore(tmp_path / "memory", zone="UTC")
    alice = store.user("alice")
    for role, text in (("user", "My sister lives in Lyon"), ("assistant", "Noted"), ("user", "I prefer tea"),
                       ("assistant", "Noted")):
        alice.append("s1", role, text)
    return tmp_path


def test_the_command_line_imports_nothing_heavy() -> None:
    """The CLI prints with the widgets' text rule (agentmem_nb.textutil) without importing the widgets."""
    code = ("import sys, agentmem_nb.cli; "
            "print(sorted(m for m in ('ipywidgets', 'pandas', 'langchain', 'nh3', 'agentmem_nb.widgets') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(REPO)})
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stderr[-600:]


# ---------------------------------------------------------------------- chat and its config


def test_chat_outside_the_checkout_uses_the_offline_model(tmp_path: Path) -> None:
    assert not (tmp_path / "config").exists()
    out = cli(tmp_path, "--root", "memory", "chat", "--user", "alice", stdin="I prefer green tea\n")
    assert out.returncode == 0, out.stderr
    assert "offline model" in out.stdout and "agent> " in out.stdout
    assert len(list((tmp_path / "memory" / "alice" / "sessions").glob("*.jsonl"))) == 1


def test_chat_with_a_named_config_that_is_missing_is_an_error(tmp_path: Path) -> None:
    line = one_error_line(cli(tmp_path, "--root", "memory", "chat", "--config", "nope.yaml", stdin="hi\n"))
    assert "'nope.yaml' does not exist" in line
    assert not (tmp_path / "memory").exists(), "nothing is written when the chat cannot start"


# ---------------------------------------------------------------------- zones


@pytest.mark.parametrize(("zone", "hint"), [
    ("America", "'America/"),          # a region folder of the zone database ("Is a directory" before)
    ("europe/paris", "'Europe/Paris'"),
    ("Mars/Olympus_Mons", "'Europe/Paris'"),
])
def test_a_bad_zone_is_refused_with_a_suggestion(folder: Path, zone: str, hint: str) -> None:
    line = one_error_line(cli(folder, "--zone", zone, "users"))
    assert f"--zone: unknown time zone {zone!r}" in line and hint in line
    line = one_error_line(cli(folder, "seed", "--demo-zone", zone))
    assert f"unknown time zone {zone!r}" in line


def test_the_zone_rule_lives_in_timeutil() -> None:
    from agentmem_nb.timeutil import resolve_zone, zone_named

    assert zone_named("America") is None and zone_named("../etc/passwd") is None
    assert zone_named("Europe/Paris") is not None
    with pytest.raises(ConfigError, match="'America': that is a region"):
        resolve_zone("America")
    with pytest.raises(ConfigError, match="'Mars': use an IANA zone name"):
        MemoryStore("unused", zone="Mars")


def test_tz_naming_a_region_does_not_break_the_frames(folder: Path) -> None:
    """``TZ=America`` (no zone) made the frames' local-zone lookup raise IsADirectoryError."""
    code = ("from agentmem_nb import MemoryStore; from agentmem_nb.frames import session_messages; "
            "print(len(session_messages(MemoryStore('memory').user('alice'), 's1')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=folder, capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(REPO), "TZ": "America"})
    assert out.returncode == 0 and out.stdout.strip() == "4", out.stderr[-600:]


# ---------------------------------------------------------------------- numeric options


@pytest.mark.parametrize(("args", "option", "value"), [
    (("search", "--user", "alice", "--limit", "-5", "tea"), "--limit", "-5"),
    (("search", "--user", "alice", "--limit", "0", "tea"), "--limit", "0"),
    (("search", "--user", "alice", "--limit", "many", "tea"), "--limit", "'many'"),
    (("window", "--user", "alice", "--session", "s1", "--before", "-1", "2"), "--before", "-1"),
    (("window", "--user", "alice", "--session", "s1", "--after", "-3", "2"), "--after", "-3"),
    (("window", "--user", "alice", "--session", "s1", "0"), "message_id", "0"),
    (("lab", "--port", "70000"), "--port", "70000"),
])
def test_out_of_range_numbers_are_refused(folder: Path, args: tuple[str, ...], option: str, value: str) -> None:
    out = cli(folder, *args)
    line = one_error_line(out)
    assert f"argument {option}: {value}" in line and "whole number" in line
    assert out.stdout == "" and "no message contains" not in out.stderr


# ---------------------------------------------------------------------- users


@pytest.mark.parametrize("args", [
    ("search", "--user", "nobody", "tea"),
    ("problems", "--user", "nobody"),
    ("window", "--user", "nobody", "--session", "s1", "1"),
])
def test_an_unknown_user_is_an_error_that_lists_the_users(folder: Path, args: tuple[str, ...]) -> None:
    out = cli(folder, *args)
    line = one_error_line(out)
    assert "no user 'nobody' in 'memory'" in line and "'alice'" in line and "agentmem-nb --root memory users" in line
    assert not (folder / "memory" / "nobody").exists()


@pytest.mark.parametrize("args", [
    ("search", "--user", "alice", "--session", "nope", "tea"),
    ("window", "--user", "alice", "--session", "nope", "1"),
    ("search", "--user", "alice", "--day", "1999-01-01", "tea"),
])
def test_an_unknown_session_or_day_is_an_error_not_an_empty_answer(folder: Path, args: tuple[str, ...]) -> None:
    line = one_error_line(cli(folder, *args))
    assert ("no session 'nope'" in line and "'s1'" in line) or "no messages on '1999-01-01'" in line
    assert "no message contains" not in line


def test_a_missing_memory_folder_is_named(tmp_path: Path) -> None:
    line = one_error_line(cli(tmp_path, "--root", "elsewhere", "problems", "--user", "alice"))
    assert "memory folder 'elsewhere' does not exist" in line and "--root" in line


# ---------------------------------------------------------------------- problems


def test_problems_exits_1_on_any_problem_and_0_on_none(folder: Path) -> None:
    clean = cli(folder, "problems", "--user", "alice")
    assert clean.returncode == 0 and "no problems" in clean.stdout
    with open(folder / "memory" / "alice" / "sessions" / "s1.jsonl", "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"role": "user", "content": "an id-less legacy row", "ts": "2026-04-08T10:00:00"})
                     + "\n")
    legacy = cli(folder, "problems", "--user", "alice")
    assert legacy.returncode == 1, legacy.stdout
    assert "legacy_id_normalised" in legacy.stdout


# ---------------------------------------------------------------------- printing stored text


@pytest.fixture
def surrogate(folder: Path) -> Path:
    """alice's s1 (and today's day file) gain a message holding a lone surrogate, as a JSON escape keeps it."""
    MemoryStore(folder / "memory", zone="UTC").user("alice").append("s1", "user", "half an emoji \ud83d here")
    return folder


@pytest.mark.parametrize("args", [
    ("search", "--user", "alice", "--session", "s1", "emoji"),
    ("search", "--user", "alice", "emoji"),  # across the day files
    ("window", "--user", "alice", "--session", "s1", "5", "--before", "1"),
])
def test_a_lone_surrogate_prints_as_a_replacement_character(surrogate: Path, args: tuple[str, ...]) -> None:
    out = cli(surrogate, "--zone", "UTC", *args)
    assert out.returncode == 0, out.stderr[-600:]
    assert "half an emoji \ufffd here" in out.stdout


def test_json_output_keeps_a_lone_surrogate_exactly(surrogate: Path) -> None:
    out = cli(surrogate, "--zone", "UTC", "search", "--user", "alice", "--session", "s1", "--json", "emoji")
    assert out.returncode == 0, out.stderr[-600:]
    assert [row["content"] for row in json.loads(out.stdout)] == ["half an emoji \ud83d here"]


# ---------------------------------------------------------------------- secrets


@pytest.fixture
def server() -> Iterator[fake.FakeOpenAI]:
    state = fake.FakeOpenAI()
    httpd = fake.start(state)
    try:
        yield state
    finally:
        state.stop.set()
        httpd.shutdown()
        httpd.server_close()


@pytest.mark.parametrize("case", ["401 quotes the key", "500 echoes Authorization", "password in base_url",
                                  "numeric api_key"])
def test_the_chat_never_prints_or_stores_a_secret(tmp_path: Path, server: fake.FakeOpenAI, case: str) -> None:
    secret = "acme-" + uuid.uuid4().hex  # not an sk- shape: only the configured value itself can be recognised
    key, url = secret, server.url
    if case == "401 quotes the key":
        server.overrides.append(fake.Fault(401, f"Incorrect API key provided: {secret}"))
    elif case == "500 echoes Authorization":
        server.overrides.append(fake.Fault(500, "upstream refused", echo_authorization=True))
    elif case == "password in base_url":
        key, url = "acme-key-" + uuid.uuid4().hex, server.url.replace("http://", f"http://proxy:{secret}@")
        server.overrides.append(fake.Fault(500, "proxy refused", echo_authorization=True))
    else:
        secret = str(uuid.uuid4().int)[:14]
        key = secret
    quoted = key if case == "numeric api_key" else json.dumps(key)
    (tmp_path / "llm.yaml").write_text(f"llm:\n  api_key: {quoted}\n  model: m\n  base_url: {url}\n"
                                       "  max_retries: 0\n", encoding="utf-8")
    out = cli(tmp_path, "--root", "memory", "chat", "--config", "llm.yaml", stdin="hello\n")
    if case == "numeric api_key":
        assert "llm.api_key" in one_error_line(out) and "quote it" in out.stderr
    else:
        assert out.returncode == 0, out.stderr[-600:]
        assert "agent> ⚠️ The model call failed: HTTP " in out.stdout and "<redacted>" in out.stdout
    assert secret not in out.stdout and secret not in out.stderr
    for path in (tmp_path / "memory").rglob("*"):
        assert not path.is_file() or secret.encode() not in path.read_bytes(), path
