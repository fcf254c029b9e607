"""The unit of a benchmark result: one :class:`Figure` per (workload, store row, N)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["Figure", "Status", "WORKLOADS"]

Status = Literal["measured", "estimated", "not run", "n/a", "error"]

WORKLOADS: dict[str, str] = {
    "append": "1. Append N messages to one conversation",
    "window": "2. Window of 5 messages around a given message (warm)",
    "keyword": "3. Keyword lookup, term in 0.1% of messages (warm, last 20 hits)",
    "cold": "4. Cold open of a store + first query (a fresh process)",
    "turn": "5. Chat turn: memory overhead with the offline model",
}
"""Workload key → table heading, in report order."""


@dataclass(frozen=True, slots=True)
class Figure:
    """One cell of the report.

    ``metrics`` holds plain numbers (seconds are stored as ``*_s``, microseconds as ``*_us``, …); ``status`` says how
    far to trust them: ``"estimated"`` figures are extrapolated from real measurements named in ``note``; ``"not run"``
    and ``"n/a"`` carry no metrics and say why in ``note``.
    """

    workload: str
    peer: str
    n: int
    status: Status
    metrics: dict[str, float] = field(default_factory=dict, hash=False)
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"workload": self.workload, "peer": self.peer, "n": self.n, "status": self.status,
                "metrics": dict(self.metrics), "note": self.note}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Figure:
        """Inverse of :meth:`to_dict` (used to read a worker's output)."""
        return cls(workload=str(raw["workload"]), peer=str(raw["peer"]), n=int(raw["n"]), status=raw["status"],
                   metrics={str(k): float(v) for k, v in dict(raw.get("metrics", {})).items()},
                   note=str(raw.get("note", "")))
