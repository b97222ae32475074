"""Arrow columns built from NumPy buffers (`hopsim.results.arrow`) equal pyarrow's own conversion (that a
`hopsim run` imports neither pandas nor pyarrow is tests/test_parquet_out.py's)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from hopsim.results import arrow

DTYPES = [np.uint8, np.uint16, np.uint32, np.uint64, np.int32, np.int64, np.float32, np.float64, np.bool_]


def _values(a: pa.Array) -> list:
    """a's values, NaN made comparable (NaN != NaN, and `equals` says so)."""
    return ["nan" if isinstance(v, float) and v != v else v for v in a.to_pylist()]


@pytest.mark.parametrize("dtype", DTYPES)
def test_array_equals_pyarrows_with_and_without_mask(dtype):
    rng = np.random.default_rng(7)
    for n in (0, 1, 7, 8, 9, 1000):
        x = (rng.integers(0, 200, n) % 2 == 0) if dtype is np.bool_ else rng.integers(0, 200, n).astype(dtype)
        if np.dtype(dtype).kind == "f" and n:
            x[0] = np.nan
        mask = rng.integers(0, 3, n) == 0
        for m in (None, mask, np.zeros(n, bool)):
            got, want = arrow.array(x, mask=m), pa.array(x, mask=m)
            assert got.type == want.type
            assert got.null_count == want.null_count
            assert _values(got) == _values(want), (dtype, n, m)
            got.validate(full=True)


def test_strings_and_tables():
    s = ["leaf-spine", "", "é", "host-leaf"]
    assert arrow.array(s, pa.string()).equals(pa.array(s, pa.string()))
    assert arrow.array([], pa.string()).equals(pa.array([], pa.string()))
    t = arrow.table({"a": np.arange(3, dtype=np.uint32), "b": arrow.array(["x", "y", "z"]), "c": np.array([True, False, True])})
    assert t.equals(pa.table({"a": np.arange(3, dtype=np.uint32), "b": ["x", "y", "z"], "c": [True, False, True]}))


@pytest.mark.parametrize("dtype", DTYPES)
def test_to_numpy_reads_offsets_and_chunks(dtype):
    x = (np.arange(37) % 3 == 0) if dtype is np.bool_ else np.arange(37).astype(dtype)
    a = pa.array(x)
    for piece in (a, a.slice(5, 20), a.slice(9, 0), pa.chunked_array([a.slice(0, 10), a.slice(13, 11)])):
        want = piece.to_numpy() if isinstance(piece, pa.ChunkedArray) else piece.to_numpy(zero_copy_only=False)
        got = arrow.to_numpy(piece)
        assert got.dtype == want.dtype and np.array_equal(got, want), (dtype, piece)

