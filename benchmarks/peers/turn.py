"""Workload 5 (placeholder until agentmem_nb.agent.service exists)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.peers.figures import Figure


def run_turn_workload(plan: Any, root: Path, *, progress: Callable[[str], None]) -> list[Figure]:
    return [Figure("turn", "agentmem_nb ChatService", n, "not run", note="agentmem_nb.agent.service not available")
            for n in plan.turn_sizes]
