"""Nothing outside the store reaches into it: no private store module or name is imported, and no private member
of a message layer or its line file is used (the layer's public methods and its scan are the way in)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from store_testlib import REPO

from agentmem_nb.store import MessageFile

PACKAGE = REPO / "agentmem_nb"
OUTSIDE = sorted(p for p in PACKAGE.rglob("*.py") if PACKAGE / "store" not in p.parents)
# Callers of the layer (the store's own user.py included: it uses the layer like everyone else).
# (frames/_lg_*.py read LangGraph's own savers and stores through *their* private members — SqliteStore._cursor —
# never a layer of ours: a name check cannot tell the two ``_cursor``s apart, so those modules are not callers.)
CALLERS = [PACKAGE / "store" / "user.py"] + [p for p in OUTSIDE if p.parent.name in
                                             ("agent", "frames", "widgets", "retrieval", "cli", "evaluation")
                                             and not p.name.startswith("_lg_")]


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_store_imports(source: str) -> list[str]:
    """``module:name`` of every import of a private store module or a private name from a store module."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("agentmem_nb.store"):
            module = node.module or ""
            if any(_private(part) for part in module.split(".")):
                found.append(module)
            found += [f"{module}:{alias.name}" for alias in node.names if _private(alias.name)]
        elif isinstance(node, ast.Import):
            found += [alias.name for alias in node.names
                      if alias.name.startswith("agentmem_nb.store") and any(map(_private, alias.name.split(".")))]
    return found


def layer_private_members(tmp: Path) -> set[str]:
    layer = MessageFile(tmp / "s.jsonl", kind="session", key="s", zone=None)
    names = set(vars(layer)) | set(vars(layer._file))
    for cls in (*type(layer).__mro__, *type(layer._file).__mro__):
        names |= set(vars(cls))
    return {name for name in names if _private(name)}


def private_member_uses(source: str, members: set[str]) -> list[str]:
    """``line: expr._name`` for every use of a layer's private member on anything but ``self``/``cls`` — names the
    module's own classes define (``self._ids = ...`` in a class of its own) are that class's business."""
    tree = ast.parse(source)
    own = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
           and node.value.id == "self" and isinstance(node.ctx, ast.Store)}
    own |= {item.name for cls in ast.walk(tree) if isinstance(cls, ast.ClassDef) for item in cls.body
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in members - own:
            owner = node.value
            if not (isinstance(owner, ast.Name) and owner.id in ("self", "cls")):
                found.append(f"{node.lineno}: {ast.unparse(node)}")
    return found


@pytest.mark.parametrize("path", OUTSIDE, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_private_store_import_outside_the_store(path: Path) -> None:
    assert private_store_imports(path.read_text(encoding="utf-8")) == []


def test_no_caller_uses_a_private_member_of_a_layer(tmp_path: Path) -> None:
    members = layer_private_members(tmp_path)
    found = {str(p.relative_to(PACKAGE)): private_member_uses(p.read_text(encoding="utf-8"), members)
             for p in CALLERS}
    assert {path: uses for path, uses in found.items() if uses} == {}


def test_the_checks_would_notice(tmp_path: Path) -> None:
    assert private_store_imports("from agentmem_nb.store._fs import flocked") == ["agentmem_nb.store._fs"]
    assert private_store_imports("from agentmem_nb.store.jsonl import _ID_LIMIT, loads_record") == [
        "agentmem_nb.store.jsonl:_ID_LIMIT"]
    assert private_store_imports("from agentmem_nb.store import _fs") == ["agentmem_nb.store:_fs"]
    members = layer_private_members(tmp_path)
    assert private_member_uses("layer._messages(layer.read_records(0, 10))", members) == [
        "1: layer._messages"]
    assert private_member_uses("self.session(s)._message(1, {})\nself._lock", members) == [
        "1: self.session(s)._message"]
