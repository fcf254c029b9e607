"""Run recall cases (:mod:`~agentmem_nb.evaluation.casefile`) and say why each passed or failed.

::

    from agentmem_nb.evaluation.cases import run_case_files
    report = run_case_files(["examples/recall.memcases.yaml"])
    print(report.format())          # PASS/FAIL per case, the reasons, a summary line
    report.to_frame()               # one row per case (pandas)

A retrieval case runs the one search, :func:`agentmem_nb.retrieval.search`, exactly as every caller does; an agent
case runs a whole turn through :class:`~agentmem_nb.agent.ChatService` (the offline model unless a model is
configured, or the case file says ``model: offline``). A failure says what was retrieved instead (the top hits),
where the evidence was when it lay beyond the budget (its rank, and the budget that would have reached it), whether
the memory holds the text at all, the reply and the tools called.

A case's ``expect_facts`` are checked against the user's facts (:mod:`agentmem_nb.store.facts`) after every user
message of the memory not recorded yet has been through the offline extractor, in time order (the agent's path,
:func:`agentmem_nb.facts.record_message`); a failure names the facts the key has instead.

Each memory is prepared once per runner in a temporary folder: an inline conversation written through the store
(with its timestamps), or a copy of an existing folder — the user's folder is never written, not even the index
cache a read leaves behind. Retrieval cases only read messages, so they share that store (the facts ``expect_facts``
records go into that copy, once per message); an agent case writes its turn, so it gets a fresh copy and cannot change
what the next case sees.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import shutil
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from agentmem_nb.errors import AgentMemError, InvalidArgument
from agentmem_nb.evaluation.casefile import (DEFAULT_START, Case, CaseFile, ExpectedFact, MemorySource,
                                             load_case_file)
from agentmem_nb.evaluation.rebuild import copy_database_user, copy_memory_folder, rebuild_until
from agentmem_nb.facts import OfflineExtractor, record_message
from agentmem_nb.items import ItemKey
from agentmem_nb.messages import Message, ToolCall
from agentmem_nb.retrieval import Retriever, Scope, SearchResult
from agentmem_nb.retrieval.retriever import SearchHow
from agentmem_nb.store import MAX_SEARCH_LIMIT, MemoryStore, UserMemory
from agentmem_nb.store.facts import Fact, FactSource, fact_key, normalise_value
from agentmem_nb.testing.demo import SteppingClock
from agentmem_nb.textutil import displayable
from agentmem_nb.timeutil import resolve_zone, system_clock

if TYPE_CHECKING:
    import pandas as pd
    from langchain_core.language_models import BaseChatModel

    from agentmem_nb.turns import TurnResult

__all__ = ["RecalledMessage", "Check", "CheckKind", "CaseResult", "CasesReport", "CaseRunner", "run_case_files",
           "check_recall", "check_facts", "record_user_facts", "recalled_by_tools", "tool_line"]

CheckKind = Literal["retrieved", "not_retrieved", "reply", "tool", "fact"]
_TOP_SHOWN = 3
_TEXT_SHOWN = 160


# ---------------------------------------------------------------------------------------------- results


@dataclass(frozen=True, slots=True)
class RecalledMessage:
    """A message a case retrieved, with the anchor that brought it.

    ``anchor_id`` is the message id of the hit whose window brought it (its own id when it is a hit itself);
    ``rank`` is that hit's rank (``None`` for what an agent's tools returned without a ranking).
    """

    layer: str
    key: str
    message_id: int
    role: str
    content: str
    anchor_id: int
    rank: int | None = None
    explain: str = ""

    @property
    def item(self) -> ItemKey:
        """``(layer, key, message_id)``."""
        return ItemKey(self.layer, self.key, self.message_id)  # type: ignore[arg-type]  # layer is a LayerKind

    @property
    def is_anchor(self) -> bool:
        """True when the search found this message itself (not as a neighbour of another hit)."""
        return self.anchor_id == self.message_id

    def where(self) -> str:
        """``#3 (session s1, hit rank 1)`` or ``#4 (daily 2026-04-06, in the window of #3, rank 1)``."""
        how = "hit" if self.is_anchor else f"in the window of #{self.anchor_id}"
        rank = f", rank {self.rank}" if self.rank is not None else ""
        return f"#{self.message_id} ({self.layer} {self.key}, {how}{rank})"

    def line(self) -> str:
        """``#3 (session s1, hit rank 1) user: My sister Ana lives in Porto.``"""
        return f"{self.where()} {self.role}: {_short(self.content)}"

    def to_dict(self) -> dict[str, Any]:
        """JSON shape."""
        return {"layer": self.layer, "key": self.key, "message_id": self.message_id, "role": self.role,
                "content": self.content, "anchor_id": self.anchor_id, "rank": self.rank}


@dataclass(frozen=True, slots=True)
class Check:
    """One expectation of a case and its outcome. ``found_at`` indexes :attr:`CaseResult.retrieved`: the message
    that satisfied (``retrieved``) or broke (``not_retrieved``) it."""

    kind: CheckKind
    expected: str
    passed: bool
    reason: str
    found_at: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON shape."""
        return {"kind": self.kind, "expected": self.expected, "passed": self.passed, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class CaseResult:
    """What one case did: its checks, what it retrieved, and (agent cases) the reply and the tools called."""

    name: str
    file: str
    question: str
    agent: bool
    checks: tuple[Check, ...]
    retrieved: tuple[RecalledMessage, ...] = ()
    reply: str | None = None
    tools: tuple[ToolCall, ...] = ()
    error: str | None = None
    budget: int | None = None
    mode: str = ""
    hits: tuple[RecalledMessage, ...] = field(default=(), repr=False)
    """The search's hits in rank order (retrieval cases), for "what was retrieved instead"."""

    @property
    def passed(self) -> bool:
        """Every check passed and nothing went wrong."""
        return self.error is None and all(c.passed for c in self.checks)

    @property
    def test_id(self) -> str:
        """``recall.memcases.yaml::sister-city``: the file's name and the case's (snapshots key cases by it)."""
        return f"{Path(self.file).name}::{self.name}"

    @property
    def reasons(self) -> tuple[str, ...]:
        """Why the case failed, one line per failed check (empty when it passed)."""
        out = [f"error: {self.error}"] if self.error else []
        return tuple(out + [c.reason for c in self.checks if not c.passed])

    def explain(self) -> str:
        """A readable account: the question, each failed check, then what was retrieved instead, the reply and the
        tools called (the failure text of ``agentmem-nb eval cases`` and of the pytest item)."""
        lines = [f"question: {self.question!r}"]
        lines += [f"  ✗ {reason}" for reason in self.reasons]
        lines += [f"  ✓ {c.reason}" for c in self.checks if c.passed]
        if not self.agent:
            shown = self.hits[:_TOP_SHOWN] or self.retrieved[:_TOP_SHOWN]
            label = f"top hits ({self.mode}, budget {self.budget}, {len(self.retrieved)} message(s) retrieved)"
            lines.append(f"{label}:" if shown else f"{label}: nothing")
            lines += [f"    {m.line()}" for m in shown]
        else:
            lines.append(f"reply: {_short(self.reply or '', 400)!r}")
            lines.append("tools called: " + (", ".join(tool_line(t) for t in self.tools) or "none"))
            lines.append(f"messages the tools returned: {len(self.retrieved)}")
            lines += [f"    {m.line()}" for m in self.retrieved[:_TOP_SHOWN * 2]]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """JSON shape (``agentmem-nb eval cases --json``)."""
        out: dict[str, Any] = {"name": self.name, "file": self.file, "passed": self.passed,
                               "kind": "agent" if self.agent else "retrieval", "question": self.question,
                               "reasons": list(self.reasons), "checks": [c.to_dict() for c in self.checks],
                               "retrieved": [m.to_dict() for m in self.retrieved]}
        if self.agent:
            out["reply"] = self.reply
            out["tools"] = [{"name": t.name, "input": t.input} for t in self.tools]
        else:
            out["budget"] = self.budget
            out["mode"] = self.mode
        if self.error:
            out["error"] = self.error
        return out


@dataclass(frozen=True, slots=True)
class CasesReport:
    """The results of a run, in file and case order."""

    results: tuple[CaseResult, ...]

    @property
    def passed(self) -> int:
        """How many cases passed."""
        return sum(r.passed for r in self.results)

    @property
    def failed(self) -> int:
        """How many cases failed."""
        return len(self.results) - self.passed

    @property
    def ok(self) -> bool:
        """True when every case passed."""
        return self.failed == 0

    def result(self, name: str) -> CaseResult:
        """The result of the case called ``name`` (or ``file::name``)."""
        for r in self.results:
            if name in (r.name, r.test_id):
                return r
        raise InvalidArgument(f"no case {name!r} in this report (cases: {', '.join(r.name for r in self.results)})")

    def summary(self) -> str:
        """``3 passed, 1 failed``."""
        return f"{self.passed} passed, {self.failed} failed"

    def format(self) -> str:
        """``PASS``/``FAIL`` per case, the explanation of each failure, and the summary line."""
        lines = []
        for r in self.results:
            lines.append(f"{'PASS' if r.passed else 'FAIL'} {r.test_id}")
            if not r.passed:
                lines += [f"    {line}" for line in r.explain().splitlines()]
        lines.append(self.summary())
        return displayable("\n".join(lines))

    def to_dict(self) -> dict[str, Any]:
        """``{"cases": [{"name", "passed", ...}], "passed": N, "failed": M}``."""
        return {"cases": [r.to_dict() for r in self.results], "passed": self.passed, "failed": self.failed}

    def to_frame(self) -> pd.DataFrame:
        """One row per case: file, case, kind, passed, question, budget, retrieved count, reasons, reply, tools."""
        import pandas as pd

        rows = [{"file": Path(r.file).name, "case": r.name, "kind": "agent" if r.agent else "retrieval",
                 "passed": r.passed, "question": r.question, "budget": r.budget, "retrieved": len(r.retrieved),
                 "reasons": "; ".join(r.reasons), "reply": r.reply, "tools": ", ".join(t.name for t in r.tools)}
                for r in self.results]
        frame = pd.DataFrame(rows, columns=["file", "case", "kind", "passed", "question", "budget", "retrieved",
                                            "reasons", "reply", "tools"])
        return frame.astype({"budget": "Int64"})  # agent cases have no budget: <NA>, not a float NaN

    def retrieved_frame(self, name: str) -> pd.DataFrame:
        """One row per message the case ``name`` retrieved: where it is, the anchor that brought it, its rank,
        and which expected texts it satisfies (or breaks)."""
        import pandas as pd

        r = self.result(name)
        matched: dict[int, list[str]] = {}
        for check in r.checks:
            if check.found_at is not None:
                mark = "" if check.kind == "retrieved" else "NOT "
                matched.setdefault(check.found_at, []).append(f"{mark}{check.expected}")
        rows = [{"layer": m.layer, "key": m.key, "message_id": m.message_id, "anchor_id": m.anchor_id,
                 "is_anchor": m.is_anchor, "rank": m.rank, "role": m.role, "content": m.content,
                 "matches": "; ".join(matched.get(i, [])), "explain": m.explain}
                for i, m in enumerate(r.retrieved)]
        return pd.DataFrame(rows, columns=["layer", "key", "message_id", "anchor_id", "is_anchor", "rank", "role",
                                           "content", "matches", "explain"])


# ---------------------------------------------------------------------------------------------- the runner


@dataclass(slots=True)
class _Prepared:
    root: Path
    zone: _dt.tzinfo | None
    start: _dt.datetime | None  # when the agent's clock starts (None: the system clock)
    store: MemoryStore | None = None  # the shared read-only store of retrieval cases


class CaseRunner:
    """Runs cases; prepares each memory once and removes its temporary folders on :meth:`close` (or at the end of
    a ``with`` block).

    Args:
        model: the chat model of agent cases (default: the offline model when the file says ``model: offline`` or
            ``offline=True``, else the configured one, which is the offline model without an API key).
        retriever: what retrieval cases and the agent's tools search with (default configuration if ``None``).
        offline: use the offline model for every agent case, whatever is configured.
    """

    def __init__(self, *, model: BaseChatModel | None = None, retriever: Retriever | None = None,
                 offline: bool = False) -> None:
        self.model = model
        self.retriever = retriever if retriever is not None else Retriever()
        self.offline = offline
        self._tmp = Path(tempfile.mkdtemp(prefix="agentmem-cases-"))
        self._prepared: dict[tuple[Any, ...], _Prepared] = {}
        self._count = 0

    def __enter__(self) -> CaseRunner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Remove every temporary memory this runner made."""
        shutil.rmtree(self._tmp, ignore_errors=True)
        self._prepared.clear()

    # ------------------------------------------------------------------ public

    def run_file(self, case_file: CaseFile | str | Path) -> list[CaseResult]:
        """Run every case of a file, in order."""
        parsed = case_file if isinstance(case_file, CaseFile) else load_case_file(case_file)
        return [self.run_case(parsed, case) for case in parsed.cases]

    def run_case(self, case_file: CaseFile, case: Case) -> CaseResult:
        """Run one case of ``case_file``. A case that cannot run (an unknown session in its scope, an unreadable
        memory file) fails with the error as its reason; bugs still raise."""
        try:
            prepared = self._prepare(case_file, case)
            if case.agent:
                return self._run_agent(case_file, case, prepared)
            return self._run_retrieval(case_file, case, prepared)
        except (AgentMemError, OSError) as exc:  # the case could not run: its failure, not the whole run's
            return CaseResult(name=case.name, file=str(case_file.path), question=case.question, agent=case.agent,
                              checks=(), error=f"{type(exc).__name__}: {exc}",
                              budget=None if case.agent else case.budget)

    # ------------------------------------------------------------------ memory

    def _fresh_dir(self, label: str) -> Path:
        self._count += 1
        return self._tmp / f"{self._count:03d}-{label}"

    def _prepare(self, case_file: CaseFile, case: Case) -> _Prepared:
        key = (case.source, case.user, case.as_of, case_file.zone)
        found = self._prepared.get(key)
        if found is not None:
            return found
        zone = resolve_zone(case_file.zone)
        root = self._fresh_dir("memory")
        start: _dt.datetime | None
        if case.source.folder is not None:
            copy_memory_folder(case.source.folder, root, case.user)
            start = None
        elif case.source.url is not None:
            copy_database_user(case.source.url, root, case.user)
            start = None
        else:
            start = _write_conversation(MemoryStore(root, zone=zone), case.user, case.source)
        if case.as_of is not None:
            rebuilt = self._fresh_dir("as-of")
            source = MemoryStore(root, zone=zone).user(case.user)
            rebuild_until(source, MemoryStore(rebuilt, zone=zone).user(case.user), before=case.as_of)
            root, start = rebuilt, case.as_of
        if case.source.long_term.strip():  # given by the case: there whatever the moment
            MemoryStore(root, zone=zone).user(case.user).long_term.write(case.source.long_term, source="case file")
        root.mkdir(parents=True, exist_ok=True)  # an empty memory (as_of before the first message) is a memory too
        prepared = _Prepared(root=root, zone=zone, start=start)
        self._prepared[key] = prepared
        return prepared

    def _store_for_agent(self, prepared: _Prepared) -> MemoryStore:
        root = self._fresh_dir("turn")
        shutil.copytree(prepared.root, root, ignore=shutil.ignore_patterns(".index"))
        clock = SteppingClock(prepared.start) if prepared.start is not None else system_clock
        return MemoryStore(root, zone=prepared.zone, clock=clock)

    # ------------------------------------------------------------------ retrieval cases

    def _run_retrieval(self, case_file: CaseFile, case: Case, prepared: _Prepared) -> CaseResult:
        if prepared.store is None:
            prepared.store = MemoryStore(prepared.root, zone=prepared.zone)
        user = prepared.store.user(case.user)
        result = check_recall(user, case.question, expected=case.expect_retrieved,
                              not_expected=case.expect_not_retrieved, budget=case.budget, scope=_scope(user, case),
                              how=case.how, retriever=self.retriever, name=case.name, file=str(case_file.path))
        if not case.expect_facts:
            return result
        # Writes facts.jsonl into the shared temporary copy: idempotent (a recorded message is skipped), and the
        # search reads messages only, so the next retrieval case sees the same memory.
        return dataclasses.replace(result, checks=result.checks + tuple(check_facts(user, case.expect_facts)))

    # ------------------------------------------------------------------ agent cases

    def _run_agent(self, case_file: CaseFile, case: Case, prepared: _Prepared) -> CaseResult:
        from agentmem_nb.agent import ChatService, OfflineChatModel

        store = self._store_for_agent(prepared)
        model = self.model
        if model is None and (self.offline or case_file.model == "offline"):
            model = OfflineChatModel()
        # facts "hot": written before the turn returns, so nothing runs on in a thread when the copy is deleted
        service = ChatService(store, model=model, retriever=self.retriever, facts="hot")
        user = store.user(case.user)
        if case.expect_facts:  # the memory's facts first, so the turn's own message comes after them in time
            record_user_facts(user)
        turn = service.turn(case.user, case.session, case.question)
        retrieved = recalled_by_tools(user, turn.tool_calls, turn.memory_items, session_id=turn.session_id,
                                      today=turn.user_message.day)
        checks = [_expect_in_turn(text, retrieved, turn) for text in case.expect_retrieved]
        checks += [_expect_absent(text, retrieved) for text in case.expect_not_retrieved]
        checks += [_expect_reply(text, turn.reply) for text in case.expect_reply]
        checks += [_expect_tool(name, turn.tool_calls) for name in case.expect_tools]
        if case.expect_facts:
            checks += check_facts(user, case.expect_facts)
        return CaseResult(name=case.name, file=str(case_file.path), question=case.question, agent=True,
                          checks=tuple(checks), retrieved=retrieved, reply=turn.reply, tools=turn.tool_calls,
                          error=turn.error)


def check_recall(user: UserMemory, question: str, *, expected: Sequence[str] = (), not_expected: Sequence[str] = (),
                 budget: int = 10, scope: Scope | None = None, how: SearchHow = "auto",
                 retriever: Retriever | None = None, name: str = "recall", file: str = "") -> CaseResult:
    """Search ``user``'s memory for ``question`` (the one search, ``budget`` messages) and check that every text of
    ``expected`` is inside a retrieved message and no text of ``not_expected`` is: the retrieval case, on any store.

    >>> # check_recall(store.user("alice"), "Where does my sister live?", expected=["Porto"]).passed
    """
    retriever = retriever if retriever is not None else Retriever()

    def search(size: int) -> SearchResult:
        return retriever.search(user, question, scope=scope, budget=size, how=how)

    result = search(budget)
    retrieved = _recalled(result)
    by_item = {m.item: m for m in retrieved}
    hits = tuple(by_item[h.item] for h in result.hits if h.item in by_item)
    checks = [_expect_retrieved(text, retrieved, budget, user, search) for text in expected]
    checks += [_expect_absent(text, retrieved) for text in not_expected]
    return CaseResult(name=name, file=file, question=question, agent=False, checks=tuple(checks),
                      retrieved=retrieved, budget=budget, mode=result.mode, hits=hits)


def record_user_facts(user: UserMemory) -> int:
    """Record the facts of every user message of ``user``'s threads that no fact came from yet, oldest first, with
    the offline extractor (what the agent's facts queue would have done); returns how many facts changed."""
    extractor = OfflineExtractor()
    messages = [m for sid in user.session_ids() for m in user.session(sid).messages() if m.role == "user"]
    changed = 0
    for message in sorted(messages, key=lambda m: (m.ts, m.session_id or "", m.message_id)):
        session_id = message.session_id or ""
        if user.facts.has_source(session_id, message.message_id):
            continue
        changed += len(record_message(user.facts, extractor, message.content,
                                      source=FactSource(session_id, message.message_id), valid_from=message.ts))
    return changed


def check_facts(user: UserMemory, expected: Sequence[ExpectedFact]) -> list[Check]:
    """Record the facts of the user messages not recorded yet (:func:`record_user_facts`), then check that each
    expected fact is among ``user.facts.all()`` with its key, value and status: a case's ``expect_facts``."""
    record_user_facts(user)
    facts = user.facts.all()
    checks = []
    for want in expected:
        subject, _, attribute = want.key.partition(".")
        key = fact_key(subject, attribute)
        same_key = [f for f in facts if f.key == key]
        if any(normalise_value(f.value) == normalise_value(want.value) and f.status == want.status
               for f in same_key):
            checks.append(Check("fact", want.describe(), True, f"fact {want.describe()} recorded"))
            continue
        if same_key:
            found = "the facts for it are " + ", ".join(_fact_line(f) for f in same_key)
        else:
            keys = sorted({str(f.key) for f in facts})
            found = f"no fact with key {key} (keys: {', '.join(keys[:10]) or 'none'})"
        checks.append(Check("fact", want.describe(), False, f"expected fact {want.describe()}; {found}"))
    return checks


def _fact_line(fact: Fact) -> str:
    """``Lisbon (active, from s1#3)``."""
    where = f", from {fact.source}" if fact.source is not None else ""
    return f"{fact.value} ({fact.status}{where})"


def run_case_files(files: Iterable[str | Path | CaseFile], *, model: BaseChatModel | None = None,
                   retriever: Retriever | None = None, offline: bool = False) -> CasesReport:
    """Load and run every case of ``files`` (see :class:`CaseRunner` for the options).

    Raises:
        InvalidArgument: a file is missing or malformed (nothing runs: a typo in one file must not look like a pass).
    """
    parsed = [f if isinstance(f, CaseFile) else load_case_file(f) for f in files]
    with CaseRunner(model=model, retriever=retriever, offline=offline) as runner:
        return CasesReport(tuple(r for f in parsed for r in runner.run_file(f)))


# ---------------------------------------------------------------------------------------------- helpers


def _write_conversation(store: MemoryStore, user_id: str, source: MemorySource) -> _dt.datetime:
    """Write the inline conversation; returns when the next turn happens (a minute after the last line)."""
    user = store.user(user_id)
    zone = store.zone or _dt.timezone.utc
    moment = DEFAULT_START.replace(tzinfo=zone)
    for number, line in enumerate(source.conversation):
        if line.ts is not None:
            moment = line.ts
        elif number:
            moment = moment + _dt.timedelta(minutes=1)
        user.append(line.session, line.role, line.content, ts=moment)
    return moment + _dt.timedelta(minutes=1)


def _scope(user: UserMemory, case: Case) -> Scope:
    if case.scope == "all":
        return Scope.everything()
    if case.scope == "sessions":
        return Scope.everything(layer="session")
    if case.scope == "session":
        if case.session not in user.session_ids():
            raise InvalidArgument(f"scope 'session': user {case.user!r} has no session {case.session!r} (sessions: "
                                  f"{', '.join(map(repr, user.session_ids()[:10])) or 'none'}); set `session:` to "
                                  "one of them")
        return Scope.session(case.session)
    if case.scope not in user.days():
        raise InvalidArgument(f"scope {case.scope!r}: user {case.user!r} has no messages that day (days: "
                              f"{', '.join(user.days()[-10:]) or 'none'})")
    return Scope.day(case.scope)


def _recalled(result: SearchResult) -> tuple[RecalledMessage, ...]:
    ranks = {(h.layer, h.key, h.message.message_id): h for h in result.hits}
    out = []
    for m in result.messages:
        anchor = ranks.get((m.layer, m.key, m.anchor_id))
        out.append(RecalledMessage(layer=m.layer, key=m.key, message_id=m.message.message_id, role=m.message.role,
                                   content=m.message.content, anchor_id=m.anchor_id,
                                   rank=anchor.rank if anchor is not None else None,
                                   explain=anchor.explain() if anchor is not None else ""))
    return tuple(out)


def _find(text: str, messages: Sequence[RecalledMessage]) -> int | None:
    folded = text.casefold()
    return next((i for i, m in enumerate(messages) if folded in m.content.casefold()), None)


def _expect_retrieved(text: str, retrieved: tuple[RecalledMessage, ...], budget: int, user: UserMemory,
                      search: Callable[[int], SearchResult]) -> Check:
    at = _find(text, retrieved)
    if at is not None:
        return Check("retrieved", text, True, f"{text!r} retrieved in {retrieved[at].where()}", at)
    reason = f"{text!r} not retrieved within the budget of {budget} message(s)"
    deeper = _recalled(search(MAX_SEARCH_LIMIT)) if budget < MAX_SEARCH_LIMIT else ()
    if _find(text, deeper) is not None:
        needed, message = _budget_needed(text, budget, search)
        reason += f"; beyond it, {message.where()}: retrieved from budget {needed} on"
    else:
        holders = _messages_containing(user, text)
        if holders:
            shown = ", ".join(f"#{m.message_id} (session {m.session_id})" for m in holders[:3])
            reason += (f"; the memory holds it in {shown}, but the search does not reach it even with budget "
                       f"{MAX_SEARCH_LIMIT}")
        else:
            reason += "; no message of the memory contains it (is the expected text spelled as stored?)"
    return Check("retrieved", text, False, reason)


def _budget_needed(text: str, budget: int, search: Callable[[int], SearchResult]) -> tuple[int, RecalledMessage]:
    """The smallest budget above ``budget`` whose result holds ``text`` (bisection: a larger budget only adds
    messages), with the message found there."""
    low, high = budget + 1, MAX_SEARCH_LIMIT
    while low < high:
        middle = (low + high) // 2
        if _find(text, _recalled(search(middle))) is not None:
            high = middle
        else:
            low = middle + 1
    found = _recalled(search(low))
    at = _find(text, found)
    assert at is not None  # MAX_SEARCH_LIMIT holds it (checked by the caller), so the bisection ends on a hit
    return low, found[at]


def _messages_containing(user: UserMemory, text: str) -> list[Message]:
    """Messages of any thread containing ``text`` (the one search, exact), to tell "not reached" from "absent"."""
    found = Retriever().search(user, text, scope=Scope.everything(layer="session"), budget=3, how="exact")
    return [hit.message for hit in found.hits]


def _expect_absent(text: str, retrieved: tuple[RecalledMessage, ...]) -> Check:
    at = _find(text, retrieved)
    if at is None:
        return Check("not_retrieved", text, True, f"{text!r} not retrieved, as expected")
    return Check("not_retrieved", text, False,
                 f"{text!r} must not be retrieved, but {retrieved[at].where()} contains it", at)


def _expect_in_turn(text: str, retrieved: tuple[RecalledMessage, ...], turn: TurnResult) -> Check:
    at = _find(text, retrieved)
    if at is not None:
        return Check("retrieved", text, True, f"{text!r} returned by the tools in {retrieved[at].where()}", at)
    return Check("retrieved", text, False,
                 f"{text!r} was in no message the tools returned ({len(retrieved)} message(s); tools called: "
                 f"{', '.join(tool_line(t) for t in turn.tool_calls) or 'none'})")


def _expect_reply(text: str, reply: str) -> Check:
    if text.casefold() in reply.casefold():
        return Check("reply", text, True, f"the reply mentions {text!r}")
    return Check("reply", text, False, f"the reply does not mention {text!r}; it was {_short(reply, 300)!r}")


def _expect_tool(name: str, calls: Sequence[ToolCall]) -> Check:
    if any(call.name == name for call in calls):
        return Check("tool", name, True, f"the tool {name} was called")
    called = ", ".join(tool_line(c) for c in calls) or "no tool at all"
    return Check("tool", name, False, f"the tool {name} was not called; the agent called {called}")


def tool_line(call: ToolCall) -> str:
    """``search_session(keyword='sister')``: a tool call in one short line."""
    args = ", ".join(f"{k}={v!r}" for k, v in call.input.items())
    status = " [error]" if call.status == "error" else ""
    return f"{call.name}({_short(args, 80)}){status}"


def recalled_by_tools(user: UserMemory, calls: Sequence[ToolCall], items: Iterable[ItemKey], *, session_id: str,
                      today: str | None) -> tuple[RecalledMessage, ...]:
    """The messages a turn's tools returned (``items``, e.g. ``TurnResult.memory_items``), read from ``user``, each
    with the anchor of the window call that covered it (a window's ``message_id``); a search hit is its own anchor.
    ``today`` is the day a daily window without a day opened (the turn's day)."""
    windows: list[tuple[str, str, int, int, int]] = []
    for call in calls:
        if call.name in ("get_session_window", "get_daily_window") and call.status != "error":
            layer = "session" if call.name == "get_session_window" else "daily"
            key = session_id if layer == "session" else str(call.input.get("day") or today or "")
            anchor = _int(call.input.get("message_id"))
            if anchor is not None:
                windows.append((layer, key, anchor, _int(call.input.get("before")) or 0,
                                _int(call.input.get("after")) or 0))
    out = []
    for item in items:
        layer_file = user.session(item.key) if item.layer == "session" else user.daily(item.key)
        message = layer_file.get(item.message_id)
        if message is None:
            continue
        anchor_id = item.message_id
        for layer, key, anchor, before, after in windows:
            if (layer, key) == (item.layer, item.key) and anchor - before <= item.message_id <= anchor + after:
                anchor_id = anchor
                break
        out.append(RecalledMessage(layer=item.layer, key=item.key, message_id=item.message_id, role=message.role,
                                   content=message.content, anchor_id=anchor_id))
    return tuple(out)


def _int(value: object) -> int | None:
    try:
        return int(str(value).lstrip("#"))
    except ValueError:
        return None


def _short(text: str, limit: int = _TEXT_SHOWN) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
