"""Recall case files (``*.memcases.yaml``): what a memory regression test says, read into frozen value objects.

A file names where the memory comes from and what must be recalled from it::

    user: alice                     # optional (default "user"); the session lines go to
    session: s1                     # optional (default "s1")
    zone: Europe/Paris              # optional (default UTC): which day file a message lands in
    model: offline                  # optional: "offline" pins the offline model for agent cases (default: the
                                    # configured model, offline when no API key is configured)
    conversation:                   # written into a fresh store before the cases run ...
      - {session: s1, role: user, content: "My sister Ana lives in Porto.", ts: "2026-04-06T09:00:00+02:00"}
      - {role: assistant, content: "Noted."}
    # memory: ../memory             # ... or an existing memory folder (copied first: the original is never written)
    # memory: postgresql://…        # ... or a PostgreSQL store (the case's user exported first: the database is only read)
    # long_term: "- User prefers tea"   # optional memory.md text
    cases:
      - name: sister-city
        question: "Where does my sister live?"
        expect_retrieved: ["Ana lives in Porto"]     # each inside a retrieved message, within the budget
        expect_not_retrieved: ["Noted."]
        budget: 10
      - name: sister-moved
        question: "Where does my sister live?"
        expect_facts:                                 # facts extracted from the memory's user messages
          - {key: sister.lives_in, value: Porto}      # status defaults to active (the current value)
          - {key: user.lives_in, value: Paris, status: superseded}
      - name: sister-city-agent
        question: "Where does my sister live?"
        agent: true                                   # the whole turn: tools, reply
        expect_reply: ["Porto"]
        expect_tools: ["search_session"]

A case may bring its own ``conversation``/``memory``/``long_term`` (replacing the file's), name its ``user`` and
``session``, search a ``scope`` (``all``: every day file, the default; ``session``: the case's session;
``sessions``: every thread; or one day ``YYYY-MM-DD``), force a search mode with ``how`` (``auto``, ``exact``,
``ranked``), and look at the memory ``as_of`` a moment (only the messages written before it; how exported logged
turns are replayed). Expected texts match case-insensitively (casefolded), as the store's keyword search does.

Everything is checked when the file is read: an unknown key, a wrong type or a missing field raises
:class:`~agentmem_nb.errors.InvalidArgument` naming the file, the case and the field, and saying what to write.
``expect_facts`` names facts (:mod:`agentmem_nb.store.facts`) by ``key`` (``subject.attribute``, normalised as the
store does), ``value`` and ``status`` (``active``, the default, ``superseded``, ``conflict`` or ``deleted``); the
runner first records the facts of every user message of the memory not recorded yet (the offline extractor, in time
order), then each expected fact must be among them. The runner is :mod:`agentmem_nb.evaluation.cases`.
"""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from agentmem_nb.errors import ConfigError, InvalidArgument, InvalidIdentifier
from agentmem_nb.identifiers import check_day, check_session_id, check_user_id
from agentmem_nb.timeutil import resolve_zone

__all__ = ["ConversationLine", "MemorySource", "ExpectedFact", "Case", "CaseFile", "load_case_file",
           "parse_case_file", "CASE_FILE_SUFFIXES", "is_case_file", "ModelChoice", "SearchHow", "FACT_STATUSES"]

CASE_FILE_SUFFIXES = (".memcases.yaml", ".memcases.yml", ".memcases.json")
"""The names pytest collects (and ``agentmem-nb eval cases`` is meant for)."""

ModelChoice = Literal["configured", "offline"]
SearchHow = Literal["auto", "exact", "ranked"]
"""As :func:`agentmem_nb.retrieval.search`'s ``how`` (spelled here so that reading a case file, which pytest does for
every run, loads no retrieval index code)."""

DEFAULT_USER = "user"
DEFAULT_SESSION = "s1"
DEFAULT_BUDGET = 10
DEFAULT_START = _dt.datetime(2026, 1, 5, 9, 0)
"""When the first conversation line without a ``ts`` is dated (in the file's zone); each next one a minute later."""

_FILE_KEYS = ("user", "session", "zone", "model", "conversation", "memory", "long_term", "budget", "cases")
_CASE_KEYS = ("name", "question", "user", "session", "scope", "budget", "how", "agent", "expect_retrieved",
              "expect_not_retrieved", "expect_reply", "expect_tools", "expect_facts", "conversation", "memory",
              "long_term", "as_of")
_FACT_KEYS = ("key", "value", "status")
FACT_STATUSES = ("active", "superseded", "conflict", "deleted")
"""As :data:`agentmem_nb.store.facts.FactStatus` (spelled here so that reading a case file loads no store code)."""
_LINE_KEYS = ("session", "role", "content", "ts")
_RETRIEVAL_ONLY = ("budget", "scope", "how")
_AGENT_ONLY = ("expect_reply", "expect_tools")


def is_case_file(path: str | Path) -> bool:
    """True for a file name ending in ``.memcases.yaml`` (or ``.yml``, ``.json``)."""
    return str(path).endswith(CASE_FILE_SUFFIXES)


@dataclass(frozen=True, slots=True)
class ConversationLine:
    """One message of an inline conversation (``ts=None``: a minute after the previous line)."""

    session: str
    role: str
    content: str
    ts: _dt.datetime | None = None


@dataclass(frozen=True, slots=True)
class MemorySource:
    """Where a case's memory comes from: an inline ``conversation`` written into a fresh store, or an existing
    ``folder`` (a memory root holding user folders, or one user's folder), copied before use; plus an optional
    ``memory.md`` text."""

    conversation: tuple[ConversationLine, ...] = ()
    folder: Path | None = None
    long_term: str = ""
    url: str | None = field(default=None, repr=False)
    """A PostgreSQL store's URL (``memory: postgresql://…``): the case's user is exported into a temporary folder
    first, so nothing is written to the database. Never shown: :meth:`describe` hides its credentials."""

    def describe(self) -> str:
        """One line: ``3 inline messages``, ``folder /x/memory`` or ``database postgresql://[hidden]@host/db``."""
        if self.folder is not None:
            return f"folder {self.folder}"
        if self.url is not None:
            from agentmem_nb.redact import redact, redact_url, url_secrets

            return f"database {redact(redact_url(self.url), secrets=url_secrets(self.url))}"
        return f"{len(self.conversation)} inline message(s)"


@dataclass(frozen=True, slots=True)
class ExpectedFact:
    """A fact a case expects: ``key`` as written (``sister.lives_in``), its ``value`` and ``status``."""

    key: str
    value: str
    status: str = "active"

    def describe(self) -> str:
        """``sister.lives_in = Porto (active)``."""
        return f"{self.key} = {self.value} ({self.status})"


@dataclass(frozen=True, slots=True)
class Case:
    """One recall case.

    Retrieval cases (``agent=False``) run the one search (:func:`agentmem_nb.retrieval.search`) for ``question``
    under ``budget`` messages in ``scope``; agent cases run a whole turn in ``session`` and check its reply, the
    tools it called and the messages those tools returned.
    """

    name: str
    question: str
    user: str = DEFAULT_USER
    session: str = DEFAULT_SESSION
    scope: str = "all"
    budget: int = DEFAULT_BUDGET
    how: SearchHow = "auto"
    agent: bool = False
    expect_retrieved: tuple[str, ...] = ()
    expect_not_retrieved: tuple[str, ...] = ()
    expect_reply: tuple[str, ...] = ()
    expect_tools: tuple[str, ...] = ()
    expect_facts: tuple[ExpectedFact, ...] = ()
    source: MemorySource = MemorySource()
    as_of: _dt.datetime | None = None
    line: int | None = None
    """The line of the file where the case starts (for test reports), when known."""


@dataclass(frozen=True, slots=True)
class CaseFile:
    """A parsed case file: its cases (in file order), the zone its messages are dated in, and which model agent
    cases use."""

    path: Path
    cases: tuple[Case, ...]
    zone: str = "UTC"
    model: ModelChoice = "configured"

    def case(self, name: str) -> Case:
        """The case called ``name``."""
        for case in self.cases:
            if case.name == name:
                return case
        raise InvalidArgument(f"{self.path}: no case {name!r} (cases: {', '.join(c.name for c in self.cases)})")


class _Where:
    """Builds error messages that name the file, the case and the field."""

    def __init__(self, path: Path, case: str | None = None) -> None:
        self.path = path
        self.case = case

    def error(self, field: str | None, problem: str, fix: str) -> InvalidArgument:
        where = [str(self.path)]
        if self.case is not None:
            where.append(f"case {self.case!r}")
        if field is not None:
            where.append(f"field {field!r}")
        return InvalidArgument(f"{': '.join(where)}: {problem}; {fix}")


def load_case_file(path: str | Path) -> CaseFile:
    """Read and check a case file (YAML, or JSON for ``.json``).

    Raises:
        InvalidArgument: the file is missing, unreadable, not valid YAML/JSON, or does not follow the format (the
            message names the file, the case and the field, and the fix).
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InvalidArgument(f"no case file {str(path)!r}: give the path of a *.memcases.yaml file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidArgument(f"cannot read the case file {str(path)!r}: {exc}; save it as UTF-8 text") from None
    return parse_case_file(text, path=path)


def parse_case_file(text: str, *, path: str | Path = "<cases>") -> CaseFile:
    """Check the text of a case file (see the module docstring); ``path`` names it in errors and anchors relative
    ``memory:`` folders (they are relative to the file's folder)."""
    path = Path(path)
    lines: list[int | None] = []
    if path.suffix == ".json":
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise _Where(path).error(None, f"not valid JSON ({exc})", "fix the JSON syntax") from None
    else:
        data, lines = _yaml_with_case_lines(text, path)
    where = _Where(path)
    if not isinstance(data, dict):
        raise where.error(None, f"the file holds {type(data).__name__}, not a mapping",
                          "start it with keys such as `conversation:` and `cases:`")
    if "expect_facts" in data:
        raise where.error("expect_facts", "facts are expected per case, not for the whole file",
                          "move `expect_facts:` into the case(s) that check them")
    _known_keys(data, _FILE_KEYS, where)
    zone = _text(data, "zone", where, default="UTC")
    try:
        zone_info = resolve_zone(zone)
    except ConfigError as exc:
        raise where.error("zone", str(exc), "use an IANA zone name such as 'Europe/Paris'") from None
    model = data.get("model", "configured")
    if model not in ("configured", "offline"):
        raise where.error("model", f"unknown model choice {model!r}",
                          "write `model: offline` (the deterministic offline model) or leave it out (the configured "
                          "model)")
    user = _identifier(data, "user", where, check_user_id, DEFAULT_USER)
    session = _identifier(data, "session", where, check_session_id, DEFAULT_SESSION)
    base_source = _source(data, where, path, session, zone_info, MemorySource())
    default_budget = _budget(data, where, DEFAULT_BUDGET)
    raw_cases = data.get("cases")
    if not isinstance(raw_cases, list) or not raw_cases:
        raise where.error("cases", "no cases" if raw_cases in (None, []) else
                          f"expected a list of cases, got {type(raw_cases).__name__}",
                          "add `cases:` with at least one `- name: ...` and `question: ...`")
    cases: list[Case] = []
    seen: set[str] = set()
    for index, raw in enumerate(raw_cases):
        case = _case(raw, index, path, user=user, session=session, zone=zone_info, source=base_source,
                     budget=default_budget, line=lines[index] if index < len(lines) else None)
        if case.name in seen:
            raise _Where(path, case.name).error("name", "two cases have this name",
                                                "give every case its own name (test ids and snapshots use it)")
        seen.add(case.name)
        cases.append(case)
    for case in cases:
        if case.source.folder is None and case.source.url is None and not case.source.conversation:
            raise _Where(path, case.name).error(
                None, "there is no memory to search", "add a `conversation:` (file-wide or in the case) or "
                "`memory: FOLDER` naming an existing memory folder")
    return CaseFile(path=path, cases=tuple(cases), zone=zone, model=model)


def _yaml_with_case_lines(text: str, path: Path) -> tuple[Any, list[int | None]]:
    """The YAML data, and the line where each item of ``cases:`` starts (for test reports)."""
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise _Where(path).error(None, f"not valid YAML{at} ({problem})", "fix the YAML syntax there") from None
    finally:
        loader.dispose()
    lines: list[int | None] = []
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode) and key.value == "cases" and isinstance(value, yaml.SequenceNode):
                lines = [item.start_mark.line + 1 for item in value.value]
    return data, lines


def _known_keys(data: Mapping[str, Any], allowed: Sequence[str], where: _Where) -> None:
    unknown = [str(k) for k in data if k not in allowed]
    if unknown:
        import difflib

        hints = [f"{k!r} (did you mean {close[0]!r}?)" if (close := difflib.get_close_matches(k, allowed, 1)) else
                 repr(k) for k in unknown]
        raise where.error(None, f"unknown key(s) {', '.join(hints)}", f"the keys are {', '.join(allowed)}")


def _expected_facts(data: Mapping[str, Any], where: _Where) -> tuple[ExpectedFact, ...]:
    raw = data.get("expect_facts", [])
    example = "write e.g. `- {key: sister.lives_in, value: Porto}` (status: active, superseded, conflict or deleted)"
    if not isinstance(raw, list):
        raise where.error("expect_facts", f"expected a list of facts, got {raw!r:.80}", example)
    out = []
    for number, item in enumerate(raw, start=1):
        field = f"expect_facts[{number}]"
        if not isinstance(item, dict):
            raise where.error(field, f"expected a mapping, got {item!r:.60}", example)
        unknown = [str(k) for k in item if k not in _FACT_KEYS]
        if unknown:
            raise where.error(field, f"unknown key(s) {', '.join(map(repr, unknown))}",
                              f"an expected fact has {', '.join(_FACT_KEYS)}")
        key = item.get("key")
        subject, dot, attribute = key.strip().partition(".") if isinstance(key, str) else ("", "", "")
        if not isinstance(key, str) or not (subject.strip() and dot and attribute.strip()):
            raise where.error(f"{field}.key", f"expected subject.attribute, got {key!r:.60}",
                              "write e.g. `key: sister.lives_in` or `key: user.likes`")
        value = item.get("value")
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            value = str(value)  # YAML reads `value: 1990` as a number; the store keeps text
        if not isinstance(value, str) or not value.strip():
            raise where.error(f"{field}.value", f"expected the fact's value as text, got {value!r:.60}",
                              "write e.g. `value: Porto`")
        status = item.get("status", "active")
        if status not in FACT_STATUSES:
            raise where.error(f"{field}.status", f"unknown status {status!r}",
                              f"write one of {', '.join(FACT_STATUSES)} (or leave it out: active)")
        out.append(ExpectedFact(key=key.strip(), value=value.strip(), status=status))
    return tuple(out)


def _text(data: Mapping[str, Any], key: str, where: _Where, *, default: str | None = None) -> str:
    value = data.get(key, default)
    if not isinstance(value, str) or not value.strip():
        shown = "nothing" if value is None else f"{type(value).__name__} {value!r:.60}"
        raise where.error(key, f"expected text, got {shown}", f"write `{key}: some text`")
    return value


def _identifier(data: Mapping[str, Any], key: str, where: _Where, check: Any, default: str) -> str:
    value = data.get(key, default)
    try:
        return str(check(str(value) if isinstance(value, int) and not isinstance(value, bool) else value))
    except InvalidIdentifier as exc:
        raise where.error(key, str(exc), f"write a plain name such as `{key}: {default}`") from None


def _budget(data: Mapping[str, Any], where: _Where, default: int) -> int:
    value = data.get("budget", default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise where.error("budget", f"expected a whole number of messages >= 1, got {value!r}",
                          "write e.g. `budget: 10` (anchors plus their windows count toward it)")
    return value


def _texts(data: Mapping[str, Any], key: str, where: _Where) -> tuple[str, ...]:
    value = data.get(key, [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise where.error(key, f"expected a list of non-empty texts, got {value!r:.80}",
                          f'write e.g. `{key}: ["Ana lives in Porto"]`')
    return tuple(value)


def _moment(value: object, where: _Where, field: str, zone: _dt.tzinfo | None) -> _dt.datetime:
    if isinstance(value, _dt.datetime):  # YAML reads an unquoted timestamp itself
        moment = value
    elif isinstance(value, str):
        try:
            moment = _dt.datetime.fromisoformat(value)
        except ValueError:
            raise where.error(field, f"{value!r} is not an ISO 8601 time",
                              'write e.g. "2026-04-06T09:00:00+02:00" (quoted)') from None
    else:
        raise where.error(field, f"expected an ISO 8601 time, got {type(value).__name__} {value!r:.40}",
                          'write e.g. "2026-04-06T09:00:00+02:00" (quoted)')
    if moment.tzinfo is None:  # a time without offset is wall-clock time in the file's zone
        moment = moment.replace(tzinfo=zone or _dt.timezone.utc)
    return moment


def _source(data: Mapping[str, Any], where: _Where, path: Path, session: str, zone: _dt.tzinfo | None,
            inherited: MemorySource) -> MemorySource:
    has_conversation = "conversation" in data
    has_memory = "memory" in data
    if has_conversation and has_memory:
        raise where.error("memory", "both `conversation:` and `memory:` are given",
                          "keep one: an inline conversation or an existing memory folder")
    long_term = inherited.long_term
    if "long_term" in data:
        value = data["long_term"]
        if not isinstance(value, str):
            raise where.error("long_term", f"expected text, got {type(value).__name__}",
                              "write `long_term: |` followed by the lines of memory.md")
        long_term = value
    if has_memory:
        raw = _text(data, "memory", where)
        raw = raw.removeprefix("file://")
        from agentmem_nb.store.memory_store import is_database_url  # (the store's one rule for a database URL)

        if is_database_url(raw):  # a database store: the case's user is exported for the run, the database untouched
            return MemorySource(url=raw, long_term=long_term)
        if "://" in raw:
            raise where.error("memory", f"{raw.split('://', 1)[0]}:// URLs cannot be opened",
                              "give a memory folder path, a file:// URL or a postgresql:// URL")
        folder = Path(raw).expanduser()
        if not folder.is_absolute():
            folder = path.parent / folder
        if not folder.is_dir():
            raise where.error("memory", f"no memory folder at {str(folder)!r}",
                              "give the path of an existing memory folder, relative to the case file")
        return MemorySource(folder=folder, long_term=long_term)
    if has_conversation:
        return MemorySource(conversation=_conversation(data["conversation"], where, session, zone),
                            long_term=long_term)
    return MemorySource(conversation=inherited.conversation, folder=inherited.folder, long_term=long_term,
                        url=inherited.url)


def _conversation(raw: object, where: _Where, session: str, zone: _dt.tzinfo | None) -> tuple[ConversationLine, ...]:
    if not isinstance(raw, list) or not raw:
        raise where.error("conversation", f"expected a list of messages, got {raw!r:.60}",
                          "write `- {role: user, content: \"...\"}` lines")
    out = []
    for number, item in enumerate(raw, start=1):
        field = f"conversation[{number}]"
        if not isinstance(item, dict):
            raise where.error(field, f"expected a mapping, got {item!r:.60}",
                              'write `- {role: user, content: "..."}`')
        unknown = [k for k in item if k not in _LINE_KEYS]
        if unknown:
            raise where.error(field, f"unknown key(s) {', '.join(map(repr, unknown))}",
                              f"a message has {', '.join(_LINE_KEYS)}")
        role = item.get("role")
        if not isinstance(role, str) or not role.strip():
            raise where.error(f"{field}.role", f"expected a role, got {role!r}", "write `role: user` or "
                              "`role: assistant`")
        content = item.get("content")
        if not isinstance(content, str):
            raise where.error(f"{field}.content", f"expected text, got {content!r:.40}", 'write `content: "..."`')
        try:
            line_session = check_session_id(str(item.get("session", session)))
        except InvalidIdentifier as exc:
            raise where.error(f"{field}.session", str(exc), "write a plain name such as `session: s1`") from None
        ts = _moment(item["ts"], where, f"{field}.ts", zone) if item.get("ts") is not None else None
        out.append(ConversationLine(line_session, role, content, ts))
    return tuple(out)


def _case(raw: object, index: int, path: Path, *, user: str, session: str, zone: _dt.tzinfo | None,
          source: MemorySource, budget: int, line: int | None) -> Case:
    if not isinstance(raw, dict):
        raise _Where(path).error(f"cases[{index + 1}]", f"expected a mapping, got {raw!r:.60}",
                                 "write `- name: ...` followed by `question: ...`")
    name = raw.get("name")
    if not isinstance(name, str) or not name.strip():
        raise _Where(path).error(f"cases[{index + 1}].name", f"every case needs a name, got {name!r}",
                                 "write `name: some-name` (it becomes the test id)")
    where = _Where(path, name)
    _known_keys(raw, _CASE_KEYS, where)
    question = _text(raw, "question", where)
    agent = raw.get("agent", False)
    if not isinstance(agent, bool):
        raise where.error("agent", f"expected true or false, got {agent!r}", "write `agent: true` to run a turn")
    if agent:
        misplaced = [k for k in _RETRIEVAL_ONLY if k in raw]
        if misplaced:
            raise where.error(misplaced[0], "applies to retrieval cases only",
                              "remove it, or drop `agent: true` (the agent's tools choose their own scope and limit)")
    else:
        misplaced = [k for k in _AGENT_ONLY if k in raw]
        if misplaced:
            raise where.error(misplaced[0], "needs a whole turn", "add `agent: true` to the case")
    case_user = _identifier(raw, "user", where, check_user_id, user)
    case_session = _identifier(raw, "session", where, check_session_id, session)
    scope = raw.get("scope", "all")
    if scope not in ("all", "session", "sessions"):
        try:
            scope = check_day(scope)
        except InvalidIdentifier:
            raise where.error("scope", f"unknown scope {scope!r}",
                              "write `all` (every day file), `session` (this case's session), `sessions` (every "
                              "thread) or one day as YYYY-MM-DD") from None
    how = raw.get("how", "auto")
    if how not in ("auto", "exact", "ranked"):
        raise where.error("how", f"unknown search mode {how!r}", "write `auto`, `exact` or `ranked`")
    expectations = {key: _texts(raw, key, where) for key in
                    ("expect_retrieved", "expect_not_retrieved", "expect_reply", "expect_tools")}
    expect_facts = _expected_facts(raw, where)
    if not any(expectations.values()) and not expect_facts:
        raise where.error(None, "the case expects nothing, so it could never fail",
                          "add expect_retrieved, expect_not_retrieved, expect_facts, or (with agent: true) "
                          "expect_reply or expect_tools")
    as_of = _moment(raw["as_of"], where, "as_of", zone) if raw.get("as_of") is not None else None
    return Case(
        name=name, question=question, user=case_user, session=case_session, scope=str(scope),
        budget=_budget(raw, where, budget), how=how, agent=agent, source=_source(raw, where, path, case_session,
                                                                                 zone, source),
        as_of=as_of, line=line, expect_facts=expect_facts, **expectations,
    )
