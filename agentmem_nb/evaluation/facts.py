"""How well facts are extracted and merged: ``agentmem-nb eval facts FILE... [--json]``.

A case file holds cases; a case is what a user says, line by line, then what the facts must be afterwards::

    == moved within France              a case starts with "==" and its title
    > I live in Paris.                  a user message (each is one source message, in order)
    > We moved to Lyon last month.
    = user.lives_in: Lyon               the current (active) values of a key, "|" between several; empty: none
    ~ user.lives_in: Paris              values that were true and stopped (superseded, corrected, ended)
    ! user.name: Alicia                 a value held as a conflict for review
    = nothing                           no fact at all (active or held): a distractor
    # a comment

Every case runs in a fresh store through :func:`~agentmem_nb.facts.record_message`, the path the agent uses. Scores:

* **current-value accuracy** — ``=`` lines whose key has exactly the listed active values (as sets, compared after
  :func:`~agentmem_nb.store.facts.normalise_value`), ``= nothing`` when the case has no fact at all;
* **superseded accuracy** — ``~`` lines whose every value is among the key's ended values;
* **conflict precision** — held conflicts (over every case) that a ``!`` line expects; **recall** the other way;
* **unexpected facts** — active facts on keys no line of their case names (reported, not scored).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from agentmem_nb.errors import InvalidArgument
from agentmem_nb.facts import Extractor, OfflineExtractor, record_message
from agentmem_nb.store import MemoryStore
from agentmem_nb.store.facts import Fact, FactKey, FactSource, MergePolicy, fact_key, normalise_value

__all__ = ["FactCase", "Expectation", "FactsReport", "load_cases", "evaluate_cases", "add_parser", "run"]


@dataclass(frozen=True, slots=True)
class Expectation:
    """One expectation line: ``kind`` is ``current`` (``=``), ``superseded`` (``~``), ``conflict`` (``!``) or
    ``nothing``."""

    kind: str
    key: FactKey | None
    values: tuple[str, ...]
    line: int


@dataclass(frozen=True, slots=True)
class FactCase:
    """One case: its title, the user's messages and the expectations, with where it was read."""

    title: str
    messages: tuple[str, ...]
    expectations: tuple[Expectation, ...]
    file: str
    line: int


@dataclass(frozen=True, slots=True)
class FactsReport:
    """The scores over a set of cases, and each failed expectation (``file:line: what was found``)."""

    cases: int
    current_total: int
    current_correct: int
    superseded_total: int
    superseded_correct: int
    conflicts_predicted: int
    conflicts_expected: int
    conflicts_correct_predicted: int
    conflicts_found: int
    unexpected_facts: int
    failures: tuple[str, ...] = field(default=())

    @property
    def current_accuracy(self) -> float:
        return self.current_correct / self.current_total if self.current_total else 1.0

    @property
    def superseded_accuracy(self) -> float:
        return self.superseded_correct / self.superseded_total if self.superseded_total else 1.0

    @property
    def conflict_precision(self) -> float:
        return self.conflicts_correct_predicted / self.conflicts_predicted if self.conflicts_predicted else 1.0

    @property
    def conflict_recall(self) -> float:
        return self.conflicts_found / self.conflicts_expected if self.conflicts_expected else 1.0

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["failures"] = list(self.failures)
        out.update(current_accuracy=round(self.current_accuracy, 4),
                   superseded_accuracy=round(self.superseded_accuracy, 4),
                   conflict_precision=round(self.conflict_precision, 4),
                   conflict_recall=round(self.conflict_recall, 4))
        return out


def _parse_key(text: str, where: str) -> FactKey:
    subject, dot, attribute = text.strip().partition(".")
    if not dot:
        raise InvalidArgument(f"{where}: key {text.strip()!r} is not subject.attribute (e.g. user.lives_in)")
    return fact_key(subject, attribute)


def load_cases(path: str | Path) -> list[FactCase]:
    """The cases of one file (format in the module docstring); :class:`~agentmem_nb.errors.InvalidArgument` names
    the file and line of anything it cannot read."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidArgument(f"cannot read the case file {path}: {exc}; give a UTF-8 text file of cases") from None
    cases: list[FactCase] = []
    title: str | None = None
    start = 0
    messages: list[str] = []
    expected: list[Expectation] = []

    def close() -> None:
        if title is not None:
            if not messages or not expected:
                raise InvalidArgument(f"{path}:{start}: case {title!r} needs '>' messages and expectation lines")
            cases.append(FactCase(title, tuple(messages), tuple(expected), str(path), start))

    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        where = f"{path}:{number}"
        if not line or line.startswith("#"):
            continue
        if line.startswith("=="):
            close()
            title, start, messages, expected = line[2:].strip() or f"case at line {number}", number, [], []
            continue
        if title is None:
            raise InvalidArgument(f"{where}: {line!r} comes before the first case; start a case with '== title'")
        mark, body = line[0], line[1:].strip()
        if mark == ">":
            messages.append(body)
        elif mark == "=" and body.casefold() == "nothing":
            expected.append(Expectation("nothing", None, (), number))
        elif mark in "=~!" and ":" in body:
            key_text, _, values = body.partition(":")
            kind = {"=": "current", "~": "superseded", "!": "conflict"}[mark]
            parts = tuple(v.strip() for v in values.split("|") if v.strip())
            expected.append(Expectation(kind, _parse_key(key_text, where), parts, number))
        else:
            raise InvalidArgument(f"{where}: cannot read {line!r}; lines start with '==', '>', '=', '~', '!' or '#' "
                                  "(expectations read 'subject.attribute: value | value')")
    close()
    return cases


def _values(facts: list[Fact], key: FactKey, statuses: tuple[str, ...]) -> set[str]:
    return {normalise_value(f.value) for f in facts if f.key == key and f.status in statuses}


def evaluate_cases(cases: Sequence[FactCase], *, extractor: Extractor | None = None,
                   policy: MergePolicy = "supersede") -> FactsReport:
    """Run every case in a fresh store with ``extractor`` (default: the offline one) and score it."""
    extractor = extractor or OfflineExtractor()
    counts = dict.fromkeys(["current_total", "current_correct", "superseded_total", "superseded_correct",
                            "conflicts_predicted", "conflicts_expected", "conflicts_correct_predicted",
                            "conflicts_found", "unexpected_facts"], 0)
    failures: list[str] = []
    start = _dt.datetime(2026, 1, 1, 9, 0, tzinfo=_dt.timezone.utc)
    with tempfile.TemporaryDirectory(prefix="agentmem-facts-eval-") as tmp:
        store = MemoryStore(Path(tmp), zone="UTC", fact_policy=policy)
        for number, case in enumerate(cases):
            facts_layer = store.user(f"case{number}").facts
            for i, text in enumerate(case.messages):
                record_message(facts_layer, extractor, text, source=FactSource("eval", 2 * i + 1),
                               valid_from=start + _dt.timedelta(days=i))
            facts = facts_layer.all()
            named = {e.key for e in case.expectations if e.key is not None}
            counts["unexpected_facts"] += sum(1 for f in facts if f.status == "active" and f.key not in named)
            held = {(f.key, normalise_value(f.value)) for f in facts if f.status == "conflict"}
            wanted = {(e.key, normalise_value(v)) for e in case.expectations if e.kind == "conflict"
                      for v in e.values}
            counts["conflicts_predicted"] += len(held)
            counts["conflicts_correct_predicted"] += len(held & wanted)
            counts["conflicts_expected"] += len(wanted)
            counts["conflicts_found"] += len(held & wanted)
            for fact_key_, value in sorted(held - wanted, key=str):
                failures.append(f"{case.file}:{case.line}: {case.title}: unexpected conflict {fact_key_} = {value}")
            for e in case.expectations:
                where = f"{case.file}:{e.line}: {case.title}"
                if e.kind == "nothing":
                    counts["current_total"] += 1
                    live = [f.describe() for f in facts if f.status in ("active", "conflict")]
                    if live:
                        failures.append(f"{where}: expected no fact, got {live}")
                    else:
                        counts["current_correct"] += 1
                elif e.kind == "current":
                    assert e.key is not None
                    counts["current_total"] += 1
                    got = _values(facts, e.key, ("active",))
                    if got == {normalise_value(v) for v in e.values}:
                        counts["current_correct"] += 1
                    else:
                        failures.append(f"{where}: {e.key} expected {sorted(e.values)}, got {sorted(got)}")
                elif e.kind == "superseded":
                    assert e.key is not None
                    counts["superseded_total"] += 1
                    ended = _values(facts, e.key, ("superseded",))
                    if {normalise_value(v) for v in e.values} <= ended:
                        counts["superseded_correct"] += 1
                    else:
                        failures.append(f"{where}: {e.key} expected ended {sorted(e.values)}, got {sorted(ended)}")
                elif e.kind == "conflict":
                    assert e.key is not None
                    missing = {normalise_value(v) for v in e.values} - {v for k, v in held if k == e.key}
                    if missing:
                        failures.append(f"{where}: {e.key} expected conflict {sorted(missing)}, none held")
    return FactsReport(cases=len(cases), failures=tuple(failures), **counts)


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """Add ``facts`` to the ``eval`` subcommands (``agentmem-nb eval facts FILE...``)."""
    parser = subparsers.add_parser("facts", help="accuracy of fact extraction and merging on case files",
                                   description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("files", nargs="+", metavar="FILE", help="case files (format: agentmem_nb.evaluation.facts)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--policy", choices=["supersede", "review", "latest"], default="supersede",
                        help="the merge policy of the store (default: supersede)")
    parser.add_argument("--failures", type=int, default=20, help="failed expectations to list (default 20)")
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    """Run ``eval facts``: prints the report, returns 0 (2 for a file that cannot be read)."""
    missing = [f for f in args.files if not Path(f).is_file()]
    if missing:
        print(f"no such file: {', '.join(map(str, missing))} (give fact case files)", file=sys.stderr)
        return 2
    cases = [case for name in args.files for case in load_cases(name)]
    report = evaluate_cases(cases, policy=args.policy)
    if args.json:
        print(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
        return 0
    print(f"cases: {report.cases}")
    print(f"current-value accuracy: {report.current_accuracy:.3f} ({report.current_correct}/{report.current_total})")
    print(f"superseded accuracy:    {report.superseded_accuracy:.3f} "
          f"({report.superseded_correct}/{report.superseded_total})")
    print(f"conflict precision:     {report.conflict_precision:.3f} "
          f"({report.conflicts_correct_predicted}/{report.conflicts_predicted} held)")
    print(f"conflict recall:        {report.conflict_recall:.3f} ({report.conflicts_found}/{report.conflicts_expected})")
    print(f"unexpected facts:       {report.unexpected_facts}")
    for line in report.failures[: max(0, args.failures)]:
        print(f"  FAIL {line}")
    if len(report.failures) > args.failures:
        print(f"  ... {len(report.failures) - args.failures} more (--failures N)")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m agentmem_nb.evaluation.facts FILE...``"""
    parser = argparse.ArgumentParser(prog="agentmem_nb.evaluation.facts")
    sub = parser.add_subparsers(dest="command", required=True)
    add_parser(sub)
    return run(parser.parse_args(["facts", *(sys.argv[1:] if argv is None else argv)]))


if __name__ == "__main__":
    raise SystemExit(main())
