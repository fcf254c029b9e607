"""Memory of the first ranked query is proportional to the text, with a small factor.

One Chinese message of a few megabytes is a single whitespace-free chunk: indexing it once made two Python strings
per character (unigram and bigram) and held them all at once, with orjson's working memory for the line on top —
850 MB for a 5 MB message. Measured with ``tracemalloc`` (the peak of Python's allocations, numpy's included) in a
fresh subprocess, so that nothing else in the test session is counted; bytes, not seconds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

_MEASURE = r"""
import json, random, sys, tempfile, tracemalloc
from pathlib import Path
from agentmem_nb import MemoryStore
from agentmem_nb.retrieval import retrieve

chars = int(sys.argv[1])
random.seed(7)
alphabet = "我们去西湖旅行找工作妹妹住在杭州北京上海天气很好喜欢蓝莓学习编程音乐电影朋友家人周末计划的了是"
text = "".join(random.choices(alphabet, k=chars))
size = len(text.encode("utf-8"))
user = MemoryStore(Path(tempfile.mkdtemp()), zone="UTC").user("u")
user.append("s1", "user", "去杭州之前")
user.append("s1", "user", text)
user.append("s1", "assistant", "好的")
del text
tracemalloc.start()
found = retrieve(user, "西湖 旅行 杭州", budget=5)
peak = tracemalloc.get_traced_memory()[1]
print(json.dumps({"size": size, "peak": peak, "ids": sorted(m.message.message_id for m in found.messages)}))
"""


def _peak(chars: int) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[2]),
                                                        os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", _MEASURE, str(chars)], capture_output=True, text=True, env=env,
                          check=True)
    return json.loads(done.stdout)


@pytest.mark.slow
def test_the_first_ranked_query_over_one_long_chinese_message_uses_memory_in_proportion() -> None:
    small, large = _peak(350_000), _peak(700_000)  # about 1 MB and 2 MB of UTF-8
    for run in (small, large):
        assert 2 in run["ids"]  # the long message is found (the query's words are in it)
        assert run["peak"] < 16 * run["size"], run  # was ~90x: 190 MB for 2 MB
    # Proportional, not worse: twice the text, about twice the memory (measured: 12.5 MB and 24.6 MB).
    assert large["peak"] < 2.5 * small["peak"], (small, large)
