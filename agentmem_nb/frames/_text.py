"""Text columns that hold every string the store can hold — lone surrogates included.

pandas 3 stores a ``"str"`` column in pyarrow when pyarrow is installed, and pyarrow keeps strings as UTF-8. A Python
``str`` can hold a lone surrogate (``"\\ud800"``) that has no UTF-8 form: the store accepts one from a JSON escape in a
hand-written line (``"content": "a\\ud800"``) and returns it unchanged, so a frame must too. Building such a column
with ``dtype="str"`` raises ``UnicodeEncodeError``.

:func:`text_array` therefore builds the usual ``"str"`` column and, only when some value cannot be encoded as UTF-8,
builds that one column with pandas' python-storage string dtype instead (:data:`PYTHON_STR`:
``StringDtype(storage="python", na_value=nan)`` — the same ``"str"`` semantics, missing values as NaN, the values
as the very Python strings). Nothing is dropped or replaced. Its ``dtype == "str"`` is true like any ``"str"`` column;
only ``dtype.storage`` differs.

pandas converts a mix of the two storages to pyarrow when concatenating, which fails on such a value again, so frames
are combined with :func:`concat_frames`, which moves a column to python storage whenever one part has it there.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, cast

import numpy as np
import pandas as pd

__all__ = ["PYTHON_STR", "text_array", "concat_frames"]

PYTHON_STR = pd.StringDtype(storage="python", na_value=np.nan)
"""The fallback dtype of a text column with a value that has no UTF-8 form (a lone surrogate)."""


def text_array(values: Iterable[Any]) -> pd.api.extensions.ExtensionArray:
    """A ``"str"`` array of ``values`` (``None`` = missing); python storage if some value has no UTF-8 form."""
    if not isinstance(values, (list, tuple, np.ndarray, pd.Series, pd.api.extensions.ExtensionArray)):
        values = list(values)
    # cast: pd.array takes a Series or ExtensionArray too, but pandas-stubs' string overloads list only sequences,
    # ndarrays and string arrays.
    data = cast("Sequence[Any] | np.ndarray", values)
    try:
        return pd.array(data, dtype="str")
    except UnicodeEncodeError:
        # A lone surrogate: keep the exact Python strings rather than fail (or replace them).
        return pd.array(data, dtype=PYTHON_STR)


def _python_storage(dtype: Any) -> bool:
    return isinstance(dtype, pd.StringDtype) and dtype.storage == "python"


def concat_frames(frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """``pd.concat(frames, ignore_index=True)`` that keeps text with lone surrogates (see the module docstring)."""
    if len(frames) > 1:
        moved = {
            column: PYTHON_STR
            for column in frames[0].columns
            if any(column in f.columns and _python_storage(f[column].dtype) for f in frames)
            and any(column in f.columns and isinstance(f[column].dtype, pd.StringDtype)
                    and not _python_storage(f[column].dtype) for f in frames)
        }
        if moved:
            frames = [f.astype({c: t for c, t in moved.items() if c in f.columns}) for f in frames]
    return pd.concat(frames, ignore_index=True)
