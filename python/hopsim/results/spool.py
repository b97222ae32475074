"""Spooling: the tables that grow with simulated time (buffer samples, queue samples, the packet
trace) and the flows table leave the core in chunks while it runs and wait on disk, so that a
run's memory is bounded by its network and its packets in flight, not by how long it runs or how
many flows it has.

Why on disk and not in memory: the standard benchmark's 10 us buffer samples alone are 1.3
million rows, about 40 MB in the core and three times that as Arrow columns with their derived
columns; a 10 ms run of a 1024-host fat-tree has ten times more. The core hands chunks of about
65,536 rows to `Spool.add` (``crates/hopsim-py/src/lib.rs``, ``on_spill``), which appends them to
raw files as they are; at the end `results_from_native` turns each raw file, a batch
at a time, into the final table file with the same rows, in the same order, as an unspooled run.
The flows table's rows come as flows finish, not in flow-id order: `read_by_id` puts them back
in order a column at a time before they are read (`FLOWS`).
The spool folder is removed when the results that use it are garbage-collected. A process that
ends without that (SIGKILL, an allocation failure) leaves it behind: each spool holds a lock
in its folder while its process lives (`hopsim.results.locks`), and a new spool removes the folders whose
lock nobody holds any more (`remove_abandoned`).
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import weakref
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Iterator

import numpy as np

from . import columns

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa

__all__ = ["Spool", "Tables", "RAW", "FLOWS"]

# the core's time-growing tables, as `_native.run` hands them over; the logs of PFC and control
# frames sent and received grow with time too (a PFC storm sends them at tens of MB a second)
RAW = ("buffer_switch", "buffer_port", "queues", "trace", "module_samples", "pauses", "control", "pfc_received")
# the flows table, whose rows come in chunks too (in the order flows are freed) in a spooled run
FLOWS = "flows"
# rows per batch when the raw files are turned into the final tables
READ_ROWS = 16_384


PREFIX = "hopsim-spool-"


def _remove(d: str, lock: Any) -> None:
    shutil.rmtree(d, True)
    lock.close()


def remove_abandoned(parent: Path | str | None = None) -> int:
    """Remove the spool folders in `parent` (default: the temporary folder) whose process has
    ended without removing them (`hopsim.results.locks.is_abandoned`); returns how many."""
    from .locks import is_abandoned

    n = 0
    try:
        found = list(Path(parent or tempfile.gettempdir()).glob(PREFIX + "*"))
    except OSError:
        return 0
    for d in found:
        if d.is_dir() and is_abandoned(d):
            shutil.rmtree(d, ignore_errors=True)
            n += 1
    return n


def _np(col: Any) -> np.ndarray:
    dtype, buf = col
    return np.frombuffer(buf, dtype=np.dtype(dtype))


def column(col: Any) -> np.ndarray | columns.Strings:
    """A column as the core hands it over: `(dtype, bytes)`, or a list of text."""
    return columns.strings(col) if isinstance(col, list) else _np(col)


_CODE = np.dtype("<u4")  # a text column's rows on disk: the index of each row's text


class Spool:
    """Raw chunks of the time-growing tables and the flows table in a temporary folder, and the
    final tables made from them.

    The raw chunks are the core's column buffers appended as they come, one file per column
    (`raw-TABLE-COLUMN.bin`, native little-endian, the dtype the core names). Why not Arrow or
    Parquet while the core runs: the writer's pages and the Arrow copy of each chunk cost about
    20 MB on the standard benchmark, on top of the core itself, and that set the peak memory of
    `hopsim run`; appending bytes costs nothing, and reading them back is `numpy.fromfile`."""

    def __init__(self, parent: Path | str | None = None):
        from .locks import hold

        remove_abandoned(parent)
        self.dir = Path(tempfile.mkdtemp(prefix=PREFIX, dir=parent))
        try:
            self._lock = hold(self.dir)
        except BaseException:  # (a full disk: not even the lock's note fits)
            shutil.rmtree(self.dir, ignore_errors=True)
            raise
        self._cleanup = weakref.finalize(self, _remove, str(self.dir), self._lock)
        self._raw: dict[str, dict[str, BinaryIO]] = {}
        self._dtypes: dict[str, dict[str, np.dtype]] = {}
        self._texts: dict[str, dict[str, dict[str, int]]] = {}  # text columns: each text's code
        self.chunks = 0

    def _path(self, name: str, column: str) -> Path:
        return self.dir / f"raw-{name}-{column}.bin"

    def add(self, tables: Mapping[str, Mapping[str, Any]]) -> None:
        """Append one chunk (`_native.run`'s ``on_spill`` argument, or the rows left at the end).
        A signal that arrives meanwhile is delivered once the chunk is whole (`interrupts`)."""
        from ..interrupts import deferred

        with deferred(), self._named():
            self._add(tables)

    @contextlib.contextmanager
    def _named(self) -> Iterator[None]:
        """An OSError from writing the spool (a full disk where TMPDIR points) names the spool's
        folder and says what it is: a file object's write error names no file, and "No space
        left on device" alone does not say which device."""
        try:
            yield
        except OSError as e:
            if e.filename:
                raise
            raise OSError(e.errno, f"{e.strerror or e} (the run's spool of samples, in TMPDIR "
                          f"{self.dir.parent}; point TMPDIR at a disk with room)", str(self.dir)) from None

    def _add(self, tables: Mapping[str, Mapping[str, Any]]) -> None:
        self.chunks += 1
        for name in (*RAW, FLOWS):
            cols = {c: self._encode(name, c, v) if isinstance(v, list) else v for c, v in tables[name].items()}
            if not any(len(memoryview(buf)) for _, buf in cols.values()):
                continue
            files = self._raw.get(name)
            if files is None:
                self._dtypes[name] = {c: np.dtype(dt) for c, (dt, _) in cols.items()}
                files = self._raw[name] = {c: open(self._path(name, c), "wb") for c in cols}
            for c, (_, buf) in cols.items():
                files[c].write(buf)

    def _encode(self, name: str, col: str, texts: list[str]) -> tuple[str, bytes]:
        """A text column's rows as codes (a log's few distinct texts, numbered as they come)."""
        codes = self._texts.setdefault(name, {}).setdefault(col, {})
        return _CODE.str, np.fromiter((codes.setdefault(t, len(codes)) for t in texts), _CODE, len(texts)).tobytes()

    def read(self, name: str, empty: Mapping[str, Any]) -> Iterator[dict[str, np.ndarray]]:
        """The raw rows of table `name`, `READ_ROWS` at a time (`empty`: the core's columns with
        no rows, yielded once when nothing was spooled, so the final table has its schema). Its
        raw files are gone afterwards (the disk holds one copy of the samples at a time)."""
        files = self._raw.pop(name, None)
        if files is None:
            yield {k: column(v) for k, v in empty.items()}
            return
        for f in files.values():
            f.close()
        dtypes = self._dtypes.pop(name)
        texts = {c: list(codes) for c, codes in self._texts.pop(name, {}).items()}
        first = next(iter(dtypes))
        rows = self._path(name, first).stat().st_size // dtypes[first].itemsize
        handles = {c: open(self._path(name, c), "rb") for c in dtypes}
        try:
            # batches smaller than the core's chunks: the conversion's working set (a batch's
            # columns, their derived columns, the writer's pages) sets the end of `hopsim run`'s
            # peak memory; 16,384 rows kept it near 5 MB where 65,536 took about 20 MB more
            for start in range(0, rows, READ_ROWS):
                n = min(READ_ROWS, rows - start)
                part = {c: np.fromfile(h, dtype=dtypes[c], count=n) for c, h in handles.items()}
                yield {c: columns.Strings(texts[c], v.astype(np.int32)) if c in texts else v for c, v in part.items()}
        finally:
            for c, h in handles.items():
                h.close()
                self._path(name, c).unlink(missing_ok=True)

    def read_by_id(self, name: str, key: str, empty: Mapping[str, Any]) -> Iterator[dict[str, np.ndarray]]:
        """`read`, with the rows in the order of column `key` (the flows table's `flow_id`). The
        raw files are put in that order first, a column at a time. When the keys number the rows
        0..rows-1 once each (a whole run), each row goes to its key's place (no sort), so the
        memory this takes is the key column and two copies of one column, not the table. A run
        stopped by Ctrl-C (``--keep-partial``) may lack some flows, so that a key is past the last
        row: its rows are sorted by key instead."""
        files = self._raw.get(name)
        if files is not None:
            for f in files.values():
                f.close()
            dtypes = self._dtypes[name]
            ids = np.fromfile(self._path(name, key), dtype=dtypes[key])
            rows = min(self._path(name, c).stat().st_size // dt.itemsize for c, dt in dtypes.items())
            ids = ids[:rows]  # (every column is whole: `add` defers signals; the shortest sets the rows anyway)
            place = _places(ids)
            if place is None:  # some keys missing: gather in key order
                order = np.argsort(ids, kind="stable")
                if rows > 1 and (ids[order][1:] == ids[order][:-1]).any():
                    raise ValueError(f"{name}: column {key} holds a value twice")
            for c, dt in dtypes.items():
                col = np.fromfile(self._path(name, c), dtype=dt, count=rows)
                if place is not None:
                    out = np.empty_like(col)
                    out[place] = col
                else:
                    out = col[order]
                del col
                out.tofile(self._path(name, c))
                del out
        yield from self.read(name, empty)

    def write(self, name: str, parts: Iterator[columns.Table]) -> Path:
        """Write the final table `name` from its parts (`hopsim.results.columns` tables), in order, a
        row group each; returns its file."""
        with self._named():
            return columns.write(self.dir / f"{name}.parquet", parts)


def _places(ids: np.ndarray) -> np.ndarray | None:
    """`ids` when they number their rows 0..len-1 once each (each row's place), else None."""
    n = len(ids)
    if n == 0 or ids.min() < 0 or ids.max() >= n:
        return None if n else ids
    check = np.zeros(n, dtype=bool)
    check[ids] = True
    return ids if check.all() else None


class Tables(Mapping):
    """A run's tables by name, as Arrow tables: those held in memory as NumPy columns
    (`hopsim.results.columns`) made into Arrow on first access, and spooled tables read from their file
    on each access (so holding a `Results` costs no memory for them). Nothing here loads pyarrow
    until a table is read, so `hopsim run`, which only writes them, never does."""

    def __init__(self, mem: dict[str, columns.Table], files: dict[str, Path], spool: Spool | None = None):
        self._mem = mem
        self._arrow: dict[str, pa.Table] = {}
        self._files = files
        self._spool = spool  # keeps the folder alive as long as these tables are

    def __getitem__(self, name: str) -> pa.Table:
        if name in self._files:
            import pyarrow.parquet as pq

            return pq.read_table(self._files[name])
        t = self._arrow.get(name)
        if t is None:
            from .arrow import from_columns

            t = self._arrow[name] = from_columns(self._mem[name])
        return t

    def columns_of(self, name: str) -> columns.Table | None:
        """The NumPy columns of a table held in memory (None for a spooled one)."""
        return None if name in self._files else self._mem.get(name)

    def __iter__(self) -> Iterator[str]:
        yield from self._mem
        yield from (n for n in self._files if n not in self._mem)

    def __len__(self) -> int:
        return len(set(self._mem) | set(self._files))

    def path(self, name: str) -> Path | None:
        """The file of a spooled table (None for one held in memory)."""
        return self._files.get(name)
