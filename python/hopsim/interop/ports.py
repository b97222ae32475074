"""Source ports as the ns-3 forks hand them out: a counter per source host, taken in the order
the simulator installs its flows (Floodgate-NS3's `portNumder[src]++`, the BFC simulator's
ephemeral ports). Each simulator maps the count to its own port range."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["nth_of_source"]


def nth_of_source(sources: Iterable[int]) -> list[int]:
    """For each flow, given by its source host in install order, how many flows of the same source
    came before it (0 for a host's first)."""
    seen: dict[int, int] = {}
    out = []
    for s in sources:
        out.append(seen.get(s, 0))
        seen[s] = out[-1] + 1
    return out
