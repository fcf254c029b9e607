"""The report turns figures into the right ratios, verdicts and rows (synthetic figures: no timing involved)."""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:  # the benchmarks package sits at the repo root and is not installed
    sys.path.insert(0, str(REPO))

import pytest  # noqa: E402

from benchmarks.peers.data import TERM, anchors, chunk, conversation, term_ids  # noqa: E402
from benchmarks.peers.figures import Figure  # noqa: E402
from benchmarks.peers.report import evaluate_targets, fmt_ratio, fmt_seconds, render_markdown  # noqa: E402
from benchmarks.peers.runner import FULL, Results  # noqa: E402

SQLITE = "LangGraph SqliteStore"


def _results(figures: list[Figure]) -> Results:
    machine = {"date": "2026-01-01 00:00 UTC", "cpu": "Test CPU", "cores": 2, "usable_cores": 2, "memory_gb": 4.0,
               "os": "Linux", "python": "CPython 3.11.7", "sqlite": "3.40.1", "packages": {"langgraph": "1.0"},
               "data_folder_fs": "ext4"}
    return Results(plan=FULL, machine=machine, figures=figures, conditions={"duration_s": 12.0})


def _verdicts(figures: list[Figure]) -> dict[str, str]:
    return {t.name.split(":")[0]: t.verdict for t in evaluate_targets(figures)}


def test_window_ratio_is_peer_time_over_agentmem_time() -> None:
    figures = [Figure("window", "agentmem_nb", 100_000, "measured", {"median_us": 100.0}),
               Figure("window", SQLITE, 100_000, "measured", {"median_us": 1000.0})]
    markdown = render_markdown(_results(figures))
    assert f"| {SQLITE} | 1.0 ms · **×10** |" in markdown
    assert "| agentmem_nb | 100 µs |" in markdown


def test_append_ratio_uses_rates_and_marks_estimates() -> None:
    figures = [
        Figure("append", "agentmem_nb", 10_000, "measured",
               {"msgs_per_s": 5000.0, "first_us": 200.0, "last_us": 210.0, "last_first_ratio": 1.05}),
        Figure("append", "FileChatMessageHistory", 10_000, "estimated",
               {"msgs_per_s": 10.0, "first_us": 500.0, "last_us": 200_000.0, "last_first_ratio": 400.0},
               note="extrapolated from both ends"),
    ]
    markdown = render_markdown(_results(figures))
    assert "| FileChatMessageHistory | ≈10/s · **≈×500** [1] |" in markdown
    assert "[1] extrapolated from both ends" in markdown
    assert _verdicts(figures)["append at N=10k"] == "met"


@pytest.mark.parametrize(("ours_us", "theirs_us", "verdict"), [(100.0, 100.0, "met"), (109.0, 100.0, "met"),
                                                                 (120.0, 100.0, "not met")])
def test_on_par_means_within_ten_percent(ours_us: float, theirs_us: float, verdict: str) -> None:
    figures = [Figure("window", "agentmem_nb", 100_000, "measured", {"median_us": ours_us}),
               Figure("window", SQLITE, 100_000, "measured", {"median_us": theirs_us})]
    assert _verdicts(figures)["window at N=100k"] == verdict


def test_flat_append_needs_1m_and_growth_at_most_1_3() -> None:
    def append(n: int, rate: float) -> Figure:
        return Figure("append", "agentmem_nb", n, "measured",
                      {"msgs_per_s": rate, "first_us": 1.0, "last_us": 1.0, "last_first_ratio": 1.0})

    name = "append flat from 1k to 1M (µs/message at the largest N ≤ 1.3 × at the smallest)"
    assert _verdicts([append(1000, 5000.0), append(1_000_000, 4000.0)])[name] == "met"
    assert _verdicts([append(1000, 5000.0), append(1_000_000, 3000.0)])[name] == "not met"
    assert _verdicts([append(1000, 5000.0), append(100_000, 5000.0)])[name] == "not measured"


def test_missing_and_not_run_cells_are_explained() -> None:
    figures = [Figure("cold", "agentmem_nb", 100_000, "measured",
                      {"open_query_ms": 500.0, "import_s": 0.05, "peak_rss_mb": 80.0, "rss_growth_mb": 50.0}),
               Figure("cold", SQLITE, 1_000_000, "not run", note="peers stop at 100k")]
    markdown = render_markdown(_results(figures))
    assert "not run [1]" in markdown and "[1] peers stop at 100k" in markdown
    assert "80 (+50) / — MiB" in markdown  # no keyword-first sample: shown as missing, not invented


@pytest.mark.parametrize(("window_ms", "keyword_ms", "verdict"), [(400.0, 900.0, "met"), (400.0, 1200.0, "not met"),
                                                                  (1100.0, 300.0, "not met")])
def test_cold_target_judges_the_slower_first_query(window_ms: float, keyword_ms: float, verdict: str) -> None:
    metrics = {"open_query_ms": window_ms, "open_keyword_ms": keyword_ms, "import_s": 0.05, "peak_rss_mb": 30.0,
               "rss_growth_mb": 5.0, "keyword_peak_rss_mb": 60.0, "keyword_rss_growth_mb": 35.0}
    figures = [Figure("cold", "agentmem_nb", 100_000, "measured", metrics)]
    assert _verdicts(figures)["cold open + first query of a 100k-message user < 1 s (whichever query comes "
                              "first)"] == verdict


def test_formatting() -> None:
    assert [fmt_seconds(s) for s in (5e-6, 118e-6, 4.2e-3, 0.25, 1.5, 600.0, 36_000.0)] == \
        ["5.0 µs", "118 µs", "4.2 ms", "250 ms", "1.50 s", "10 min", "10 h"]
    assert [fmt_ratio(r) for r in (690.4, 12.3, 3.44, 0.523)] == ["×690", "×12", "×3.4", "×0.52"]


@pytest.mark.parametrize("n", [1, 7, 999, 1000, 2500, 100_000])
def test_the_keyword_is_in_exactly_the_planted_messages(n: int) -> None:
    planted = term_ids(n)
    assert planted and abs(len(planted) - n / 1000) <= 1  # 0.1% of the messages, at least one
    if n <= 2500:  # scanning 100k generated messages would be slow for a unit test
        found = [m.message_id for m in conversation(n) if TERM in m.content.casefold()]
        assert found == planted


def test_chunks_are_the_conversation_and_anchors_leave_room_for_a_window() -> None:
    assert chunk(50, 10, 12) == list(conversation(50))[9:12]
    assert all(3 <= a <= 48 for a in anchors(50, 100))
