"""Search lives in one place: every caller (the agent's tools, the inspector, the CLI, the evaluation) runs
:func:`agentmem_nb.retrieval.search`, and no other module applies its rules.

The tools and the inspector are checked with a recording retriever passed to their constructors
(``tests/agent/test_agent_tools.py``, ``tests/widgets/test_inspector.py``); the evaluation here; the CLI, which has
no constructor, by its output and by the source check below.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import agentmem_nb
from agentmem_nb import MemoryStore
from agentmem_nb.cli import main
from agentmem_nb.evaluation.retrieval import evaluate_locomo
from agentmem_nb.retrieval import Retriever, Scope, SearchResult, search

PACKAGE = Path(agentmem_nb.__file__).parent
HOME = PACKAGE / "retrieval" / "retriever.py"
MINI = Path(__file__).parent / "data" / "synthetic_dialogues.json"

EXACT_PRIMITIVES = {"search_session", "search_daily"}  # UserMemory's exact search: the store's own business
RANKED_PATHS = {"rank_hits", "retrieve"}  # the ranked path of search(): retrieval's own business


def _rule_breaches(path: Path) -> list[str]:
    """Where a module outside the search's home applies one of its rules itself."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name in EXACT_PRIMITIVES | RANKED_PATHS:
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno} calls {name}")
        # the keyword-count rule: len(text.split()) compared with a number
        if (isinstance(node, ast.Compare) and isinstance(node.left, ast.Call)
                and isinstance(node.left.func, ast.Name) and node.left.func.id == "len"
                and node.left.args and isinstance(node.left.args[0], ast.Call)
                and isinstance(node.left.args[0].func, ast.Attribute) and node.left.args[0].func.attr == "split"):
            found.append(f"{path.relative_to(PACKAGE)}:{node.lineno} counts the words of a query")
    return found


def test_no_module_but_the_search_applies_its_rules() -> None:
    outside = [p for p in PACKAGE.rglob("*.py") if p != HOME and PACKAGE / "store" not in p.parents]
    breaches = [b for p in outside for b in _rule_breaches(p)]
    assert breaches == [], "search rules applied outside agentmem_nb/retrieval/retriever.py"
    assert _rule_breaches(HOME), "the check must see the rules where they do live"


class _Recording(Retriever):
    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[Scope | None, str, int]] = []

    def search(self, user, query, *, scope=None, budget=20, **options) -> SearchResult:  # noqa: ANN001
        self.seen.append((scope, query, budget))
        return super().search(user, query, scope=scope, budget=budget, **options)


def test_the_evaluation_searches_through_the_given_retriever() -> None:
    retriever = _Recording()
    report = evaluate_locomo([MINI], budget=5, retriever=retriever)
    assert report.overall.questions > 0
    assert len(retriever.seen) == report.overall.questions
    assert {(scope, budget) for scope, _, budget in retriever.seen} == {(Scope.everything(), 5)}


@pytest.mark.parametrize(("where", "keyword"), [((), "lena"), (("--session", "s1"), "LENA"),
                                                (("--day", "2026-04-08"), "lives in"), ((), "sister lyon")])
def test_the_cli_search_is_the_exact_search(store: MemoryStore, capsys: pytest.CaptureFixture[str],
                                            where: tuple[str, ...], keyword: str) -> None:
    alice = store.user("alice")
    for text in ("My sister Lena lives in Lyon", "Nice!", "Lena lives in a flat", "Noted"):
        alice.append("s1", "user", text)
    day = alice.days()[0]
    where = tuple(day if w == "2026-04-08" else w for w in where)
    assert main(["--root", str(store.root), "--zone", "Asia/Shanghai", "search", "--user", "alice", "--limit", "2", *where, keyword]) == 0
    printed = capsys.readouterr().out.splitlines()
    scope = (Scope.session("s1") if "--session" in where else Scope.day(day) if "--day" in where
             else Scope.everything())
    result = search(alice, keyword, scope=scope, budget=2, how="exact")
    assert result.mode == "exact"  # several words stay one substring on the command line, as before
    assert printed == [h.message.anchor_line(with_day="--session" not in where) for h in result.hits]
    assert len(printed) == {"lena": 2, "LENA": 2, "lives in": 2, "sister lyon": 0}[keyword]
