"""Spooling: the tables that grow with simulated time (buffer samples, queue samples, the packet
trace) leave the core in chunks while it runs and wait on disk, so that a run's memory is bounded
by its network and its packets in flight, not by how long it runs.

Why on disk and not in memory: the standard benchmark's 10 us buffer samples alone are 1.3
million rows, about 40 MB in the core and three times that as Arrow columns with their derived
columns; a 10 ms run of a 1024-host fat-tree has ten times more. The core hands chunks of about
65,536 rows to `Spool.add` (``crates/hopsim-py/src/lib.rs``, ``on_spill``), which appends them to
raw Parquet files as they are; at the end `results_from_native` turns each raw file, a row group
at a time, into the final table file with the same rows, in the same order, as an unspooled run.
The spool folder is removed when the results that use it are garbage-collected.
"""

from __future__ import annotations

import shutil
import tempfile
import weakref
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from . import arrow

__all__ = ["Spool", "Tables", "RAW"]

# the core's time-growing tables, as `_native.run` hands them over
RAW = ("buffer_switch", "buffer_port", "queues", "trace", "module_samples")


def _np(col: Any) -> np.ndarray:
    dtype, buf = col
    return np.frombuffer(buf, dtype=np.dtype(dtype))


class Spool:
    """Raw chunks of the time-growing tables in a temporary folder, and the final tables made
    from them."""

    def __init__(self, parent: Path | str | None = None):
        self.dir = Path(tempfile.mkdtemp(prefix="hopsim-spool-", dir=parent))
        self._cleanup = weakref.finalize(self, shutil.rmtree, str(self.dir), True)
        self._raw: dict[str, pq.ParquetWriter] = {}
        self.chunks = 0

    def add(self, tables: Mapping[str, Mapping[str, Any]]) -> None:
        """Append one chunk (`_native.run`'s ``on_spill`` argument, or the rows left at the end)."""
        self.chunks += 1
        for name in RAW:
            t = arrow.table({k: _np(v) for k, v in tables[name].items()})
            if t.num_rows == 0:
                continue
            w = self._raw.get(name)
            if w is None:
                # lz4: these files live for one run; writing fast matters more than their size
                w = self._raw[name] = pq.ParquetWriter(self.dir / f"raw-{name}.parquet", t.schema, compression="lz4")
            w.write_table(t)

    def read(self, name: str, empty: Mapping[str, Any]) -> Iterator[dict[str, np.ndarray]]:
        """The raw rows of table `name`, a row group at a time (`empty`: the core's columns with
        no rows, yielded once when nothing was spooled, so the final table has its schema)."""
        w = self._raw.pop(name, None)
        if w is not None:
            w.close()
        path = self.dir / f"raw-{name}.parquet"
        if not path.exists():
            yield {k: _np(v) for k, v in empty.items()}
            return
        f = pq.ParquetFile(path)
        for i in range(f.num_row_groups):
            rg = f.read_row_group(i)
            yield {c: arrow.to_numpy(rg.column(c)) for c in rg.column_names}

    def write(self, name: str, parts: Iterator[pa.Table]) -> Path:
        """Write the final table `name` from its parts, in order; returns its file."""
        path = self.dir / f"{name}.parquet"
        w: pq.ParquetWriter | None = None
        for t in parts:
            if w is None:
                w = pq.ParquetWriter(path, t.schema, compression="zstd")
            w.write_table(t.cast(w.schema))
        assert w is not None, "at least one part (possibly empty)"
        w.close()
        return path


class Tables(Mapping):
    """A run's tables by name: Arrow tables in memory, and spooled tables read from their file on
    each access (so holding a `Results` costs no memory for them)."""

    def __init__(self, mem: dict[str, pa.Table], files: dict[str, Path], spool: Spool | None = None):
        self._mem = mem
        self._files = files
        self._spool = spool  # keeps the folder alive as long as these tables are

    def __getitem__(self, name: str) -> pa.Table:
        if name in self._files:
            return pq.read_table(self._files[name])
        return self._mem[name]

    def __iter__(self) -> Iterator[str]:
        yield from self._mem
        yield from (n for n in self._files if n not in self._mem)

    def __len__(self) -> int:
        return len(set(self._mem) | set(self._files))

    def path(self, name: str) -> Path | None:
        """The file of a spooled table (None for one held in memory)."""
        return self._files.get(name)
