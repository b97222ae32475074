"""A run's measurements as its users hold them: the tables a run has (`TABLES`) and `Results`, what
`hopsim.run` returns and `hopsim.load_run` reads back from a run folder."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Mapping

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    import pyarrow as pa

__all__ = ["TABLES", "IDENTIFYING", "Results"]

TABLES = ("flows", "pauses", "control", "buffer", "queues", "ports", "pfc_received", "qlen", "trace", "module_samples", "latency", "cwnd")

IDENTIFYING = {
    "flows": ("flow_id", "size_bytes"), "pauses": ("prio", "quanta"), "control": ("kind", "target"),
    "buffer": ("scope", "bytes"), "queues": ("node", "port", "bytes"), "ports": ("rate_bps", "tx_bytes"),
    "pfc_received": ("prio", "pause"), "qlen": ("kb", "count"), "trace": ("event", "seq"),
    "module_samples": ("metric", "value"), "latency": ("class", "p99_ns"), "cwnd": ("cwnd_bytes",),
}
"""Columns each table has had since it was first written, and that make it that table: a file
without them in a table's place (another table copied over it) is a damaged run folder, not data
to answer with."""


@dataclass
class Results:
    """One run's measurements: Arrow tables (``tables``) and whole-run numbers (``summary``).
    The table properties give pandas DataFrames."""

    # a run's `spool.Tables` (NumPy columns until read, spooled tables in files), or a dict (a
    # run folder read back)
    tables: "Mapping[str, pa.Table]"
    summary: dict[str, Any] = field(default_factory=dict)

    def df(self, name: str) -> "pd.DataFrame":
        return self._frames[name]

    @cached_property
    def _frames(self) -> dict[str, "pd.DataFrame"]:
        return {k: v.to_pandas() for k, v in self.tables.items()}

    @property
    def flows(self) -> "pd.DataFrame":
        return self.df("flows")

    @property
    def pauses(self) -> "pd.DataFrame":
        return self.df("pauses")

    @property
    def buffer(self) -> "pd.DataFrame":
        return self.df("buffer")

    @property
    def queues(self) -> "pd.DataFrame":
        return self.df("queues")

    @property
    def ports(self) -> "pd.DataFrame":
        return self.df("ports")

    @property
    def pfc_received(self) -> "pd.DataFrame":
        return self.df("pfc_received")

    @property
    def qlen(self) -> "pd.DataFrame":
        return self.df("qlen")

    @property
    def trace(self) -> "pd.DataFrame":
        return self.df("trace")

    @property
    def module_samples(self) -> "pd.DataFrame":
        return self.df("module_samples")

    @property
    def latency(self) -> "pd.DataFrame":
        return self.df("latency")

    def __repr__(self) -> str:
        s = self.summary
        return (f"Results({s.get('flows_finished')}/{s.get('flows')} flows finished, "
                f"{s.get('pause_frames')} pauses, {s.get('drops')} drops, {s.get('events')} events)")
