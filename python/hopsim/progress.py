"""Live progress of a run or a sweep, on stderr.

On a terminal it is a rich progress bar; when stderr is piped (a log file, CI) rich draws
nothing live, so a plain line is printed every ``plain_every`` seconds instead. The core reports
a run's progress about twice a second (``_native.run``'s ``on_progress``); how far a run is
comes from simulated time over the stop time when the scenario has a ``duration``, else from
flows finished over flows (a run without a stop time ends when its last flow finishes).
"""

from __future__ import annotations

import time
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

__all__ = ["RunProgress", "SweepProgress", "fraction", "describe"]


def fraction(p: dict[str, Any]) -> float:
    """How far a run is, 0..1. A run ends at its stop time or when its last flow finishes,
    whichever comes first, so this is the further of the two. (The simulated time alone
    estimated the standard benchmark, whose imported stop time is 200 ms and whose flows all
    finish by 19 ms, at six minutes left when it had seconds.)"""
    done = p["flows_done"] / p["flows"] if p["flows"] else 1.0
    end = p.get("end_ns")
    return max(min(1.0, p["now_ns"] / end), done) if end else done


def _time(ns: float) -> str:
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns:.3g} ns"


def _eta(s: float | None) -> str:
    if s is None:
        return "?"
    s = int(s)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


def describe(p: dict[str, Any]) -> str:
    """One line: simulated time, flows, events/s and the estimated time left."""
    sim = f"sim {_time(p['now_ns'])}" + (f" / {_time(p['end_ns'])}" if p.get("end_ns") else "")
    eps = p["events"] / p["wall_s"] if p["wall_s"] > 0 else 0.0
    f = fraction(p)
    left = p["wall_s"] * (1 - f) / f if f > 0 else None
    return (f"{sim}, flows {p['flows_done']:,}/{p['flows']:,} finished, {eps / 1e6:.1f} M events/s, "
            f"{100 * f:.0f}%, about {_eta(left)} left")


class RunProgress:
    """Progress of one run: pass `update` as `hopsim.run`'s ``on_progress``."""

    def __init__(self, console: Console, label: str, plain_every: float = 5.0):
        self.console = console
        self.label = label
        self.plain_every = plain_every
        self.live = console.is_terminal
        self._last_plain = time.monotonic()
        self._bar: Progress | None = None
        self._task: Any = None

    def __enter__(self) -> "RunProgress":
        if self.live:
            self._bar = Progress(
                TextColumn("{task.fields[label]}"), BarColumn(), TextColumn("{task.percentage:>3.0f}%"),
                TextColumn("{task.fields[detail]}"), TimeElapsedColumn(), TextColumn("eta"), TimeRemainingColumn(),
                console=self.console, transient=True,
            )
            self._bar.__enter__()
            self._task = self._bar.add_task("", total=1.0, label=self.label, detail="building")
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._bar is not None:
            self._bar.__exit__(*exc)

    def update(self, p: dict[str, Any]) -> None:
        if self._bar is not None:
            sim = _time(p["now_ns"]) + (f"/{_time(p['end_ns'])}" if p.get("end_ns") else "")
            eps = p["events"] / p["wall_s"] if p["wall_s"] > 0 else 0.0
            detail = f"sim {sim}  flows {p['flows_done']:,}/{p['flows']:,}  {eps / 1e6:.1f} M ev/s"
            self._bar.update(self._task, completed=fraction(p), detail=detail)
        elif time.monotonic() - self._last_plain >= self.plain_every:
            self._last_plain = time.monotonic()
            self.console.print(f"{self.label}: {describe(p)}", markup=False, highlight=False)


class SweepProgress:
    """Progress of a sweep: runs done of runs planned, with the time left; plain lines (one per
    finished run) when piped."""

    def __init__(self, console: Console):
        self.console = console
        self.live = console.is_terminal
        self._bar: Progress | None = None
        self._task: Any = None
        self._t0 = time.monotonic()
        self._done = 0
        self._total = 0
        self._todo = 0

    def __enter__(self) -> "SweepProgress":
        if self.live:
            self._bar = Progress(
                TextColumn("sweep"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TextColumn("eta"),
                TimeRemainingColumn(), TextColumn("{task.description}"), console=self.console,
            )
            self._bar.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._bar is not None:
            self._bar.__exit__(*exc)

    def stop(self) -> None:
        if self._bar is not None:
            self._bar.stop()

    def on_plan(self, total: int, todo: int) -> None:
        # a new plan (`hopsim reproduce` runs one sweep after another) counts from zero
        self._total, self._todo, self._t0, self._done = total, todo, time.monotonic(), 0
        if self._bar is not None:
            self._task = self._bar.add_task("", total=total, completed=total - todo)
        else:
            self.console.print(f"sweep: {total} runs, {total - todo} already complete, {todo} to run",
                               markup=False, highlight=False)

    def on_done(self, run_id: str) -> None:
        self._done += 1
        if self._bar is not None:
            self._bar.update(self._task, advance=1, description=run_id)
            return
        wall = time.monotonic() - self._t0
        left = wall * (self._todo - self._done) / self._done
        self.console.print(f"sweep: {self._total - self._todo + self._done}/{self._total} runs done "
                           f"({run_id}), about {_eta(left)} left", markup=False, highlight=False)
