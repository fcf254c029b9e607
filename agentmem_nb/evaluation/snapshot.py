"""Snapshots of recall cases: what each case retrieved and replied, recorded once, diffed on every later run.

A pass/fail answer hides a change that still passes (the evidence fell from rank 1 to rank 9; another message came
in). A snapshot keeps, per case, every retrieved message (``(layer, key, message_id)``, its text and the rank of the
hit that brought it), the reply and the tool calls; :meth:`Snapshot.diff` says, per case, what moved in, what moved
out, what changed rank or text, and whether the reply or the tools changed. That is what a change of retriever,
prompt or model is judged by::

    report = run_case_files(["recall.memcases.yaml"])
    Snapshot.of(report).save("recall.snapshot.json")          # once
    diff = Snapshot.load("recall.snapshot.json").diff(Snapshot.of(run_case_files([...])))
    print(diff.format())                                        # "sister-city: + #4 (daily 2026-04-06) ..."

Cases are keyed by ``file-name::case-name`` (:attr:`~agentmem_nb.evaluation.cases.CaseResult.test_id`; with the
trailing folders too when two case files of a run share a name, :func:`case_keys`). The file is
JSON with sorted keys, so it diffs well under version control too.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentmem_nb.errors import InvalidArgument
from agentmem_nb.evaluation.cases import CaseResult, CasesReport, tool_line

__all__ = ["SnapshotMessage", "CaseSnapshot", "Snapshot", "Moved", "CaseDiff", "SnapshotDiff", "FORMAT", "case_keys"]

FORMAT = "agentmem-cases-snapshot/1"


@dataclass(frozen=True, slots=True)
class SnapshotMessage:
    """One retrieved message as a snapshot keeps it. ``rank`` is the rank of the hit that brought it (``None``
    when the case has no ranking, e.g. an agent's tools); ``position`` is its place in what was retrieved (1-based)."""

    layer: str
    key: str
    message_id: int
    text: str
    position: int
    rank: int | None = None

    @property
    def item(self) -> tuple[str, str, int]:
        """``(layer, key, message_id)``."""
        return (self.layer, self.key, self.message_id)

    def label(self) -> str:
        """``#3 (daily 2026-04-06)``."""
        return f"#{self.message_id} ({self.layer} {self.key})"

    @property
    def order(self) -> int:
        """What a change of rank compares: the hit rank when known, else the position."""
        return self.rank if self.rank is not None else self.position


@dataclass(frozen=True, slots=True)
class CaseSnapshot:
    """What one case retrieved and replied."""

    passed: bool
    retrieved: tuple[SnapshotMessage, ...] = ()
    reply: str | None = None
    tools: tuple[str, ...] = ()

    @classmethod
    def of(cls, result: CaseResult) -> CaseSnapshot:
        """The snapshot of one result."""
        return cls(passed=result.passed,
                   retrieved=tuple(SnapshotMessage(m.layer, m.key, m.message_id, m.content, n, m.rank)
                                   for n, m in enumerate(result.retrieved, start=1)),
                   reply=result.reply, tools=tuple(tool_line(t) for t in result.tools))

    def to_dict(self) -> dict[str, Any]:
        """JSON shape."""
        return {"passed": self.passed, "reply": self.reply, "tools": list(self.tools),
                "retrieved": [{"item": [m.layer, m.key, m.message_id], "text": m.text, "rank": m.rank}
                              for m in self.retrieved]}

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], where: str) -> CaseSnapshot:
        """Read the JSON shape back (``where`` names the file and case in errors)."""
        try:
            retrieved = tuple(
                SnapshotMessage(str(m["item"][0]), str(m["item"][1]), int(m["item"][2]), str(m["text"]), n,
                                None if m.get("rank") is None else int(m["rank"]))
                for n, m in enumerate(raw.get("retrieved", []), start=1))
            reply = raw.get("reply")
            return cls(passed=bool(raw.get("passed")), retrieved=retrieved,
                       reply=None if reply is None else str(reply), tools=tuple(map(str, raw.get("tools", []))))
        except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
            raise InvalidArgument(f"{where}: not a snapshot entry ({type(exc).__name__}: {exc}); record the snapshot "
                                  "again with --update-snapshot") from None


@dataclass(frozen=True, slots=True)
class Moved:
    """A message that changed between two snapshots: in (``before`` is None), out (``after`` is None), re-ranked or
    re-worded (both set)."""

    before: SnapshotMessage | None
    after: SnapshotMessage | None

    def describe(self) -> str:
        """``+ #4 (daily 2026-04-06) at rank 2: "text"`` / ``- ...`` / ``~ #3 ... rank 1 -> 4``."""
        if self.before is None and self.after is not None:
            return f"+ {self.after.label()} in at rank {self.after.order}: {_short(self.after.text)!r}"
        if self.after is None and self.before is not None:
            return f"- {self.before.label()} out (was rank {self.before.order}): {_short(self.before.text)!r}"
        assert self.before is not None and self.after is not None
        parts = []
        if self.before.order != self.after.order:
            parts.append(f"rank {self.before.order} -> {self.after.order}")
        if self.before.text != self.after.text:
            parts.append(f"text {_short(self.before.text)!r} -> {_short(self.after.text)!r}")
        return f"~ {self.after.label()} {'; '.join(parts)}"

    def to_dict(self) -> dict[str, Any]:
        """JSON shape."""
        def one(m: SnapshotMessage | None) -> dict[str, Any] | None:
            return None if m is None else {"item": list(m.item), "text": m.text, "rank": m.order}

        return {"before": one(self.before), "after": one(self.after)}


@dataclass(frozen=True, slots=True)
class CaseDiff:
    """How one case changed. ``status``: ``changed``, ``added`` (not in the old snapshot) or ``removed``."""

    case: str
    status: str = "changed"
    moved_in: tuple[Moved, ...] = ()
    moved_out: tuple[Moved, ...] = ()
    reranked: tuple[Moved, ...] = ()
    reworded: tuple[Moved, ...] = ()
    reply: tuple[str | None, str | None] | None = None
    tools: tuple[tuple[str, ...], tuple[str, ...]] | None = None
    passed: tuple[bool, bool] | None = None

    @property
    def changed(self) -> bool:
        """True when anything differs."""
        return bool(self.status != "changed" or self.moved_in or self.moved_out or self.reranked or self.reworded
                    or self.reply or self.tools or self.passed)

    def format(self) -> str:
        """Lines for a person, the case first."""
        if self.status != "changed":
            return f"{self.case}: {self.status} ({'not in the snapshot' if self.status == 'added' else 'gone'})"
        lines = [f"{self.case}:"]
        if self.passed:
            lines.append(f"  {'passed' if self.passed[0] else 'failed'} -> {'passed' if self.passed[1] else 'failed'}")
        lines += [f"  {m.describe()}" for m in (*self.moved_in, *self.moved_out, *self.reranked, *self.reworded)]
        if self.reply:
            lines.append(f"  reply {_short(self.reply[0] or '')!r} -> {_short(self.reply[1] or '')!r}")
        if self.tools:
            lines.append(f"  tools {', '.join(self.tools[0]) or 'none'} -> {', '.join(self.tools[1]) or 'none'}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """JSON shape."""
        return {"case": self.case, "status": self.status,
                "moved_in": [m.to_dict() for m in self.moved_in], "moved_out": [m.to_dict() for m in self.moved_out],
                "reranked": [m.to_dict() for m in self.reranked], "reworded": [m.to_dict() for m in self.reworded],
                "reply": list(self.reply) if self.reply else None,
                "tools": [list(t) for t in self.tools] if self.tools else None,
                "passed": list(self.passed) if self.passed else None}


@dataclass(frozen=True, slots=True)
class SnapshotDiff:
    """Every case that changed between two snapshots (unchanged cases are left out)."""

    cases: tuple[CaseDiff, ...]

    @property
    def changed(self) -> bool:
        """True when any case changed."""
        return bool(self.cases)

    def case(self, name: str) -> CaseDiff | None:
        """The diff of one case (by ``file::name`` or the bare name), ``None`` when it did not change."""
        return next((c for c in self.cases if name in (c.case, c.case.split("::", 1)[-1])), None)

    def format(self) -> str:
        """``snapshot: no change`` or the changes, case by case."""
        if not self.cases:
            return "snapshot: no change"
        return "\n".join([f"snapshot: {len(self.cases)} case(s) changed", *(c.format() for c in self.cases)])

    def to_dict(self) -> dict[str, Any]:
        """JSON shape."""
        return {"changed": self.changed, "cases": [c.to_dict() for c in self.cases]}


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What every case of a run retrieved and replied, by ``file::case``."""

    cases: dict[str, CaseSnapshot] = field(default_factory=dict, hash=False)

    @classmethod
    def of(cls, report: CasesReport) -> Snapshot:
        """The snapshot of a run."""
        keys = case_keys([(r.file, r.name) for r in report.results])
        return cls({key: CaseSnapshot.of(r) for key, r in zip(keys, report.results, strict=True)})

    def to_dict(self) -> dict[str, Any]:
        """JSON shape."""
        return {"format": FORMAT, "cases": {name: snap.to_dict() for name, snap in sorted(self.cases.items())}}

    def save(self, path: str | Path) -> Path:
        """Write the snapshot as JSON (sorted, one key per line)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_dict(), ensure_ascii=False, indent=1, sort_keys=True) + "\n",
                        encoding="utf-8")
        return path

    @classmethod
    def load(cls, path: str | Path) -> Snapshot:
        """Read a snapshot written by :meth:`save`.

        Raises:
            InvalidArgument: the file is missing or not a snapshot (the message says how to record one).
        """
        path = Path(path)
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise InvalidArgument(f"no snapshot at {str(path)!r}: record one with `agentmem-nb eval cases FILE... "
                                  f"--snapshot {path} --update-snapshot`") from None
        except (OSError, ValueError) as exc:
            raise InvalidArgument(f"{path}: not a readable snapshot ({exc}); record it again with "
                                  "--update-snapshot") from None
        if not isinstance(raw, dict) or raw.get("format") != FORMAT or not isinstance(raw.get("cases"), dict):
            raise InvalidArgument(f"{path}: not a recall-case snapshot (expected format {FORMAT!r}); record it again "
                                  "with --update-snapshot")
        return cls({str(name): CaseSnapshot.from_dict(entry, f"{path}: case {name!r}")
                    for name, entry in raw["cases"].items()})

    def diff(self, current: Snapshot) -> SnapshotDiff:
        """What changed from this (older) snapshot to ``current``, case by case."""
        out = []
        for name in list(self.cases) + [n for n in current.cases if n not in self.cases]:
            old, new = self.cases.get(name), current.cases.get(name)
            if old is None:
                out.append(CaseDiff(name, status="added"))
            elif new is None:
                out.append(CaseDiff(name, status="removed"))
            else:
                diff = _case_diff(name, old, new)
                if diff.changed:
                    out.append(diff)
        return SnapshotDiff(tuple(out))


def case_keys(cases: Sequence[tuple[str, str]]) -> list[str]:
    """The snapshot key of each ``(file, case name)``: ``file-name::case`` (what :attr:`CaseResult.test_id` says),
    unless two case files of one run share a name in different folders — then as many of the trailing folders as
    tell them apart (``team-a/recall.memcases.yaml::car``), so neither case overwrites the other's snapshot."""
    parts = [Path(file).resolve().parts for file, _ in cases]
    depth = [1] * len(cases)
    while True:
        keys = ["/".join(p[-d:]) + f"::{name}" for p, d, (_, name) in zip(parts, depth, cases, strict=True)]
        seen: dict[str, list[int]] = {}
        for i, key in enumerate(keys):
            seen.setdefault(key, []).append(i)
        grow = [i for same in seen.values() if len({parts[j] for j in same}) > 1 for i in same
                if depth[i] < len(parts[i])]
        if not grow:  # unique, or the same file named twice (its cases are one case)
            return keys
        for i in grow:
            depth[i] += 1


def _case_diff(name: str, old: CaseSnapshot, new: CaseSnapshot) -> CaseDiff:
    before = {m.item: m for m in old.retrieved}
    after = {m.item: m for m in new.retrieved}
    moved_in = tuple(Moved(None, m) for item, m in after.items() if item not in before)
    moved_out = tuple(Moved(m, None) for item, m in before.items() if item not in after)
    both = [(before[item], after[item]) for item in after if item in before]
    reranked = tuple(Moved(b, a) for b, a in both if b.order != a.order)
    reworded = tuple(Moved(b, a) for b, a in both if b.text != a.text and b.order == a.order)
    return CaseDiff(name, moved_in=moved_in, moved_out=moved_out, reranked=reranked, reworded=reworded,
                    reply=(old.reply, new.reply) if old.reply != new.reply else None,
                    tools=(old.tools, new.tools) if old.tools != new.tools else None,
                    passed=(old.passed, new.passed) if old.passed != new.passed else None)


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
