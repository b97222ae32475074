"""A flow's completion as the seed simulators' outputs state it (HPCC's fct.txt, Floodgate's fct
file, BFC's standard output) and as `hopsim compare-fct` compares it: one row type that each
simulator's reader makes and the comparison takes."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FctRow"]


@dataclass(frozen=True)
class FctRow:
    """One fct.txt line; node ids from the addresses."""

    src: int
    dst: int
    sport: int
    dport: int
    size: int
    start_ns: int
    fct_ns: int
    standalone_ns: int
    incast: bool | None = None
    """The flow's incast tag where the side knows it (a hopsim run folder), else None."""

    @property
    def slowdown(self) -> float:
        return self.fct_ns / self.standalone_ns
