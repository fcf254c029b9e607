"""A user's facts as a DataFrame: every fact the events made (current and history), one row each."""

from __future__ import annotations

import datetime as _dt

import numpy as np
import pandas as pd

from agentmem_nb.frames._text import text_array
from agentmem_nb.frames._time import datetimes_to_series, frame_zone
from agentmem_nb.store import Fact, UserMemory
from agentmem_nb.store.facts import fact_key

__all__ = ["FACT_COLUMNS", "facts", "facts_frame"]

FACT_COLUMNS = ("fact_id", "key", "subject", "attribute", "value", "status", "source", "session_id", "message_id",
                "valid_from", "valid_to", "extracted_by", "certain", "ended_by")


def facts_frame(rows: list[Fact], *, zone: _dt.tzinfo) -> pd.DataFrame:
    """``rows`` as a frame with :data:`FACT_COLUMNS` (times in ``zone``)."""
    return pd.DataFrame({
        "fact_id": np.asarray([f.fact_id for f in rows], dtype=np.int64),
        "key": text_array([str(f.key) for f in rows]),
        "subject": text_array([f.subject for f in rows]),
        "attribute": text_array([f.attribute for f in rows]),
        "value": text_array([f.value for f in rows]),
        "status": text_array([f.status for f in rows]),
        "source": text_array([str(f.source) if f.source else None for f in rows]),
        "session_id": text_array([f.source.session_id if f.source else None for f in rows]),
        "message_id": pd.array([f.source.message_id if f.source else None for f in rows], dtype="Int64"),
        "valid_from": datetimes_to_series([f.valid_from for f in rows], zone).array,
        "valid_to": datetimes_to_series([f.valid_to for f in rows], zone).array,
        "extracted_by": text_array([f.extracted_by for f in rows]),
        "certain": np.asarray([f.certain for f in rows], dtype=bool),
        "ended_by": text_array([f.ended_by for f in rows]),
    })


def facts(mem: UserMemory, *, current: bool = False, key: str | None = None) -> pd.DataFrame:
    """Every fact of the user with its status, source and validity, in the order recorded (the full history);
    ``current=True`` keeps the active facts and the conflicts waiting for review; ``key="user.lives_in"`` keeps
    one key's timeline, as :meth:`~agentmem_nb.store.facts.FactsLayer.history` orders it (oldest ``valid_from``
    first; a value known only to have ended stands where it ended).

    >>> # frames.facts(mem, current=True)[["key", "value", "status", "source"]]
    """
    if key is not None:
        subject, _, attribute = key.partition(".")
        wanted = fact_key(subject, attribute)
        rows = mem.facts.history(wanted.subject, wanted.attribute)
    else:
        rows = mem.facts.all()
    if current:
        rows = [f for f in rows if f.status in ("active", "conflict")]
    return facts_frame(rows, zone=frame_zone(mem.store.zone))
