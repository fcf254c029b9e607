"""Helpers shared by the store tests: an independent model of the legacy id rule, raw file access, tree snapshots.

The model here is written from the documented contract (DESIGN §1), not from the store's code, so the property and
seed tests compare the store against a second implementation rather than against itself.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TESTS_DIR = Path(__file__).resolve().parent
REPO = TESTS_DIR.parents[1]
WORKER = TESTS_DIR / "store_worker.py"

# Ids from 2**53 up (beyond what every JSON reader keeps exact) are junk, like "abc": the store indexes ids in
# signed 64-bit arrays and must leave room for the running next id.
ID_LIMIT = 2**53


def usable_id(raw: object) -> int | None:
    """The documented reading of a ``message_id`` value: a positive int, or the decimal text of one; else None."""
    if type(raw) is int:
        value = raw
    elif type(raw) is str and raw.isascii() and raw.isdigit():
        value = int(raw)
    else:
        return None
    return value if 0 < value < ID_LIMIT else None


def content_text(raw: object) -> str:
    """How a non-text ``content`` value is shown (documented in ``agentmem_nb.messages``)."""
    if isinstance(raw, str):
        return raw
    return "" if raw is None else json.dumps(raw, ensure_ascii=False)


@dataclass(frozen=True)
class ModelRow:
    """One readable line as the contract says it must read back."""

    line: int  # 1-based physical line number
    message_id: int
    record: dict[str, Any]
    given_id: bool  # False when the legacy rule supplied the id

    @property
    def content(self) -> str:
        return content_text(self.record.get("content"))


@dataclass(frozen=True)
class Model:
    rows: list[ModelRow]
    bad_lines: dict[int, str]  # line number -> "invalid_utf8" | "malformed_json" | "not_an_object"
    next_id: int
    tail_fragment: bytes  # bytes after the last newline (not read)

    @property
    def ids(self) -> list[int]:
        return [row.message_id for row in self.rows]

    def position(self, message_id: int) -> int | None:
        return next((i for i, row in enumerate(self.rows) if row.message_id == message_id), None)


def model_of(data: bytes) -> Model:
    """Read ``data`` (a whole JSONL file) by the documented rule, independently of the store."""
    *complete, fragment = data.split(b"\n")
    rows: list[ModelRow] = []
    bad: dict[int, str] = {}
    next_id = 1
    for number, raw in enumerate(complete, start=1):
        if not raw.strip():
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            bad[number] = "invalid_utf8"
            continue
        try:
            record = json.loads(text)
        except ValueError:
            bad[number] = "malformed_json"
            continue
        if not isinstance(record, dict):
            bad[number] = "not_an_object"
            continue
        given = usable_id(record.get("message_id"))
        message_id = next_id if given is None else given
        next_id = max(next_id, message_id + 1)
        rows.append(ModelRow(number, message_id, record, given is not None))
    return Model(rows, bad, next_id, fragment)


def search_model(model: Model, keyword: str, limit: int) -> list[ModelRow]:
    """The last ``limit`` rows whose content contains ``keyword`` (casefold, spaces around it stripped), chronological."""
    keyword = keyword.strip()
    hits = [row for row in model.rows if not keyword or keyword.casefold() in row.content.casefold()]
    return hits[max(0, len(hits) - limit):]


def window_model(model: Model, message_id: int, before: int, after: int, max_side: int) -> list[ModelRow]:
    """The positional slice around the first row with ``message_id``, clamped at both edges."""
    pos = model.position(message_id)
    if pos is None:
        return []
    before = max(0, min(max_side, before))
    after = max(0, min(max_side, after))
    return model.rows[max(0, pos - before): pos + after + 1]


def line(record: dict[str, Any]) -> bytes:
    """A hand-written line (what an older program or a person might have put in the file)."""
    return json.dumps(record, ensure_ascii=False).encode("utf-8") + b"\n"


@dataclass(frozen=True)
class Legacy:
    """A line written by hand, the way the original demo or a person might have left it."""

    kind: str
    content: str
    delta: int  # for explicit ids: how far above the running next id
    ts: str  # "aware" | "naive" | "missing" | "garbage"


LEGACY_KINDS = [  # what Legacy.kind can be
    "no_id", "id_abc", "id_neg3", "id_zero", "id_null", "id_str", "id_int", "id_bool", "id_float", "id_huge",
    "content_dict", "content_list", "content_number", "content_null", "crlf", "bom",
    "json_list", "json_scalar", "malformed", "invalid_utf8", "blank", "blank_spaces", "blank_cr",
]

TS = {"aware": "2026-04-07T23:30:00+00:00", "naive": "2026-04-08T09:15:00", "garbage": "yesterday-ish"}


def legacy_bytes(op: Legacy, next_id: int) -> bytes:
    """The bytes of one hand-written line, given the running next id of the file so far."""
    record: dict[str, object] = {"role": "user", "content": op.content, "tags": ["session"], "meta": {}}
    if op.ts != "missing":
        record["ts"] = TS[op.ts]
    ids = {
        "id_abc": "abc", "id_neg3": -3, "id_zero": 0, "id_null": None, "id_str": str(next_id + op.delta),
        "id_int": next_id + op.delta, "id_bool": True, "id_float": float(next_id + op.delta), "id_huge": 10**20,
        "crlf": next_id + op.delta, "bom": next_id + op.delta,
    }
    if op.kind in ids:
        record["message_id"] = ids[op.kind]
    contents = {"content_dict": {"k": op.content}, "content_list": [op.content, 1], "content_number": 7.5,
                "content_null": None}
    if op.kind in contents:
        record["content"] = contents[op.kind]
    if op.kind == "crlf":
        return line(record)[:-1] + b"\r\n"
    if op.kind == "bom":
        return b"\xef\xbb\xbf" + line(record)
    if op.kind == "json_list":
        return json.dumps([op.content, 1], ensure_ascii=False).encode("utf-8") + b"\n"
    if op.kind == "json_scalar":
        return b"42\n"
    if op.kind == "malformed":
        return b'{"content": ' + json.dumps(op.content, ensure_ascii=False).encode("utf-8") + b", \n"
    if op.kind == "invalid_utf8":
        return b'{"content": "\xe8\x93", "message_id": ' + str(next_id + op.delta).encode() + b"}\n"
    if op.kind == "blank":
        return b"\n"
    if op.kind == "blank_spaces":
        return b"   \t \n"
    if op.kind == "blank_cr":
        return b"\r\n"
    return line(record)


def add_bytes(path: Path, data: bytes) -> None:
    """Append raw bytes to a file, creating its folder (bypasses the store on purpose)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "ab") as handle:
        handle.write(data)


def snapshot(root: Path) -> dict[str, tuple[bool, int]]:
    """Every path under ``root`` (directories included) with its kind and size: to prove nothing was created."""
    out: dict[str, tuple[bool, int]] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            full = Path(folder) / name
            out[str(full.relative_to(root))] = (full.is_dir(), 0 if full.is_dir() else full.stat().st_size)
    return out


def quarantine_entries(path: Path) -> list[dict[str, Any]]:
    """Entries of ``{path}.quarantine`` (empty if there is none)."""
    target = path.with_name(path.name + ".quarantine")
    if not target.exists():
        return []
    return [json.loads(raw) for raw in target.read_bytes().splitlines() if raw.strip()]


def start_worker(*args: str, **kwargs: Any) -> subprocess.Popen[str]:
    """Start ``store_worker.py`` with the repository importable; it waits for a line on stdin before working."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.Popen(
        [sys.executable, str(WORKER), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=str(REPO),
        **kwargs,
    )
