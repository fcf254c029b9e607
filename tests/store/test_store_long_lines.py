"""A very long line (a pasted document in one message) is parsed by the standard parser, whose working memory is
about twice the line where orjson's was about twelve times (a 3 MB line peaked at 38 MB). The records are the same
whichever parser reads them; memory is measured in a fresh subprocess so that nothing else is counted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from agentmem_nb import MemoryStore
from agentmem_nb.store.lines import LONG_LINE as _LONG_LINE


def test_long_lines_read_back_as_written_and_by_the_legacy_rule(store: MemoryStore) -> None:
    mem = store.user("u")
    long_text = "蓝莓 and 西湖, " * (_LONG_LINE // 8)
    mem.append("s1", "user", "short")
    mem.append("s1", "user", long_text, meta={"big": 2**70})  # an integer orjson would round
    path = mem.directory / "sessions" / "s1.jsonl"
    with open(path, "ab") as handle:  # a hand-written long legacy line: no id, so it takes the running next
        handle.write(json.dumps({"role": "user", "content": "x" * (2 * _LONG_LINE)}).encode() + b"\n")
    fresh = MemoryStore(store.root, zone=store.zone).user("u")
    got = fresh.session("s1").messages()
    assert [m.message_id for m in got] == [1, 2, 3]
    assert got[1].content == long_text and got[1].meta["big"] == 2**70 and got[2].content == "x" * (2 * _LONG_LINE)
    assert [m.message_id for m in fresh.search_session("s1", "西湖")] == [2]
    assert fresh.append("s1", "user", "after").session.message_id == 4


_MEASURE = r"""
import json, sys, tempfile, tracemalloc
from pathlib import Path
from agentmem_nb import MemoryStore
root = Path(tempfile.mkdtemp())
text = "蓝莓西湖旅行找工作" * 120_000  # 1.08 million characters, 3.2 MB of UTF-8
MemoryStore(root).user("u").append("s1", "user", text)
size = (root / "u" / "sessions" / "s1.jsonl").stat().st_size
del text
layer = MemoryStore(root).user("u").session("s1")
tracemalloc.start()
assert len(layer) == 1  # indexing parses the line
indexing = tracemalloc.get_traced_memory()[1]
tracemalloc.reset_peak()
assert layer.messages()[0].content.startswith("蓝莓")
print(json.dumps({"size": size, "indexing": indexing, "reading": tracemalloc.get_traced_memory()[1]}))
"""


def test_indexing_and_reading_a_long_line_take_a_small_multiple_of_it() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[2]),
                                                        os.environ.get("PYTHONPATH", "")])}
    run = json.loads(subprocess.run([sys.executable, "-c", _MEASURE], capture_output=True, text=True, env=env,
                                    check=True).stdout)
    assert run["indexing"] < 8 * run["size"] and run["reading"] < 8 * run["size"], run  # 6x and 5x; orjson: 16x
