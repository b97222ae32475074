"""Arrow arrays and tables from NumPy columns, built from their buffers.

Why not ``pa.array`` / ``pa.table``: each call asks pyarrow's pandas shim whether its argument
is a pandas object, and the first such question imports pandas — 0.7 s and about 48 MB of a
``hopsim run`` that never uses pandas (measured on the standard benchmark). Building arrays from
their buffers asks nothing, and gives the same arrays (``tests/test_arrow.py`` checks them against
``pa.array``). Anything that is not a plain NumPy column goes to ``pa.array`` as before.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import pyarrow as pa

from . import columns as cols

__all__ = ["array", "table", "strings", "from_columns", "to_numpy"]


def _validity(mask: np.ndarray | None, n: int) -> tuple[pa.Buffer | None, int]:
    """Arrow's validity bitmap for `mask` (True = null), and the null count."""
    if mask is None:
        return None, 0
    valid = ~np.asarray(mask, dtype=bool)
    nulls = int(n - np.count_nonzero(valid))
    if nulls == 0:
        return None, 0
    return pa.py_buffer(np.packbits(valid, bitorder="little")), nulls


def array(values: Any, type: pa.DataType | None = None, mask: np.ndarray | None = None) -> pa.Array:
    """`pa.array(values, type, mask=mask)` for a 1-D NumPy column of numbers or booleans, or a
    list of strings, without touching pandas."""
    if isinstance(values, pa.Array):
        return values
    if isinstance(values, (list, tuple)) and (type is None or type == pa.string()) and all(isinstance(v, str) for v in values) and mask is None:
        return strings(values)
    if not isinstance(values, np.ndarray) or values.ndim != 1 or values.dtype.kind not in "biuf":
        return pa.array(values, type, mask=mask)
    at = pa.from_numpy_dtype(values.dtype)
    if type is not None and type != at:
        return pa.array(values, type, mask=mask)
    n = len(values)
    validity, nulls = _validity(mask, n)
    if values.dtype.kind == "b":
        data = pa.py_buffer(np.packbits(values, bitorder="little"))
    else:
        data = pa.py_buffer(np.ascontiguousarray(values))
    return pa.Array.from_buffers(at, n, [validity, data], null_count=nulls)


def strings(values: list[str] | tuple[str, ...]) -> pa.Array:
    """A UTF-8 string array of `values` from offsets and bytes."""
    raw = [v.encode() for v in values]
    offsets = np.zeros(len(raw) + 1, dtype=np.int32)
    np.cumsum([len(b) for b in raw], out=offsets[1:])
    data = b"".join(raw)
    return pa.Array.from_buffers(pa.string(), len(raw), [None, pa.py_buffer(np.asarray(offsets)), pa.py_buffer(data)])


def table(columns: Mapping[str, Any]) -> pa.Table:
    """`pa.table(columns)` with every column made by `array`."""
    names = list(columns)
    return pa.Table.from_arrays([array(v) for v in columns.values()], names=names)


def from_columns(columns: "cols.Table") -> pa.Table:
    """The Arrow table of a `hopsim.results.columns` table: the table a run's Parquet file reads back as
    (``tests/test_parquet_out.py`` checks that they are equal)."""
    arrays = []
    for c in columns.values():
        if isinstance(c, cols.Strings):
            idx = array(np.asarray(c.idx, dtype=np.int32), mask=c.mask)
            arrays.append(pa.DictionaryArray.from_arrays(idx, strings(c.values)).cast(pa.string()))
        elif isinstance(c, cols.Masked):
            arrays.append(array(c.values, mask=c.mask))
        else:
            arrays.append(array(c))
    return pa.Table.from_arrays(arrays, names=list(columns))


def to_numpy(col: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """`col.to_numpy()` for a null-free column of numbers or booleans, read from its buffers (the
    same values; `to_numpy` would import pandas). Other columns go to `to_numpy`."""
    if isinstance(col, pa.ChunkedArray):
        parts = [to_numpy(c) for c in col.chunks]
        if not parts:
            return np.zeros(0, col.type.to_pandas_dtype())
        return parts[0] if len(parts) == 1 else np.concatenate(parts)
    t = col.type
    if col.null_count or not (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t)):
        return col.to_numpy(zero_copy_only=False)
    n, off = len(col), col.offset
    data = col.buffers()[1]
    if pa.types.is_boolean(t):
        if n == 0:
            return np.zeros(0, bool)
        bits = np.unpackbits(np.frombuffer(data, np.uint8), bitorder="little")
        return bits[off:off + n].astype(bool)
    dt = np.dtype(t.to_pandas_dtype())
    return np.frombuffer(data, dt)[off:off + n] if n else np.zeros(0, dt)
