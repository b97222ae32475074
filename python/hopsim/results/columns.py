"""A run's tables as NumPy columns, written to Parquet without pyarrow.

`hopsim.run` turns the core's buffers into tables of plain columns (``{name: column}``, a
`Table`); they become Parquet files through the Rust writer (``_native.TableWriter``,
``crates/hopsim-py/src/parquet_out.rs``), and Arrow tables only when someone reads one
(`hopsim.results.arrow.from_columns`). Why: pyarrow, its Parquet writer and its cast kernels took about
55 MB of `hopsim run`'s 115 MB peak, and writing a run folder needs none of it (issue 14).

A column is one of:

- a 1-D NumPy array of numbers or booleans (no nulls);
- `Masked`: such an array with a null mask;
- `Strings`: text as a dictionary and `int32` indices into it (one Python string per distinct
  value, not per row), optionally with a null mask.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Union

import numpy as np

__all__ = ["Masked", "Strings", "Column", "Table", "strings", "write", "schema"]


@dataclass(frozen=True)
class Masked:
    """Numbers or booleans with nulls where `mask` is True (the values there are not read)."""

    values: np.ndarray
    mask: np.ndarray


@dataclass(frozen=True)
class Strings:
    """Text: ``values[idx]`` per row, null where `mask` is True."""

    values: list[str]
    idx: np.ndarray
    mask: np.ndarray | None = None


Column = Union[np.ndarray, Masked, Strings]
Table = Mapping[str, Column]


def strings(values: list[str] | tuple[str, ...], idx: np.ndarray | None = None) -> Strings:
    """`values[idx]` as a text column; without `idx`, the list itself, row for row."""
    values = list(values)
    i = np.arange(len(values), dtype=np.int32) if idx is None else np.asarray(idx, dtype=np.int32)
    return Strings(values, i)


def _dtype(col: Column) -> str:
    if isinstance(col, Strings):
        return "str"
    values = col.values if isinstance(col, Masked) else col
    return values.dtype.str


def schema(table: Table) -> list[tuple[str, str]]:
    """`[(name, dtype string), ...]`: the NumPy dtype string of each column, ``"str"`` for text."""
    return [(name, _dtype(col)) for name, col in table.items()]


def _bytes(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(np.uint8)


def _native_column(col: Column) -> tuple[str, np.ndarray, np.ndarray | None, list[str] | None]:
    """`col` as the Rust writer takes it: (dtype, data bytes, mask bytes or None, dictionary)."""
    if isinstance(col, Strings):
        mask = None if col.mask is None else _bytes(np.asarray(col.mask, dtype=bool))
        return _dtype(col), _bytes(np.asarray(col.idx, dtype=np.int32)), mask, col.values
    if isinstance(col, Masked):
        return _dtype(col), _bytes(col.values), _bytes(np.asarray(col.mask, dtype=bool)), None
    return _dtype(col), _bytes(col), None, None


def write(path: Path | str, parts: Iterable[Table]) -> Path:
    """Write a Parquet file from `parts` (at least one, possibly without rows), a row group per
    part, in order; every part must have the first one's columns and dtypes. Returns `path`."""
    from .. import _native

    w, names = None, []
    for t in parts:
        if w is None:
            names = list(t)
            w = _native.TableWriter(str(path), schema(t))
        elif list(t) != names:
            raise ValueError(f"{path}: a part with columns {list(t)}, the first had {names}")
        w.write([_native_column(c) for c in t.values()])
    assert w is not None, "at least one part (possibly empty)"
    w.close()
    return Path(path)
