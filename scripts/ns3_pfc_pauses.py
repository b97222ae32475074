"""PFC pause time of an ns-3 RDMA simulator run (Floodgate-NS3, the HPCC simulator), by the
paused device's class: the number hopsim's Table 2 claims of Floodgate (scenarios/papers/floodgate,
fig8-10-table2-*.toml) read from hopsim's own runs, so the two can be put side by side.

    python scripts/ns3_pfc_pauses.py PFC_FILE TOPOLOGY_FILE [END_NS]     (in .venv: it pairs frames with hopsim's reader)

PFC_FILE is the simulator's PFC_OUTPUT_FILE: one line per frame, `time_ns node node_type ifindex
type`, written by the device that RECEIVES the frame (type 1 = pause, 0 = resume). Why pause to
resume: a received pause sets the device's paused flag whatever its quanta, and only the resume
clears it (Floodgate-NS3's QbbNetDevice), so a device is paused from its first pause to the next
resume; repeated pauses in between extend nothing. A pause still open at the end runs to END_NS
(default: the last frame's time) and is reported apart. Classes from TOPOLOGY_FILE (the
simulators' formats, see `classes`): node_type 0 is a host NIC (paused by its ToR), a switch linked to a host is a ToR, any
other switch a core.
"""

from __future__ import annotations

import sys
from pathlib import Path

from hopsim.interop.floodgate.outputs import paired, pfc_events


def classes(topology: str) -> dict[int, str]:
    """Class of each node id: "hosts", "tors" or "cores". The first line is `nodes switches
    links` (the HPCC simulator) or `nodes switches hosts_per_tor tors cores links`
    (Floodgate-NS3's leaf-spine files); then the switch ids, then one line per link."""
    lines = topology.splitlines()
    head = [int(x) for x in lines[0].split()]
    n, s, nlinks = head[0], head[1], head[-1]
    rest = " ".join(lines[1:]).split()
    switches = set(map(int, rest[:s]))
    links = rest[s:]
    width = len(links) // nlinks if nlinks else 5
    hosts = set(range(n)) - switches
    tors = set()
    for k in range(nlinks):
        a, b = int(links[width * k]), int(links[width * k + 1])
        if a in hosts and b in switches:
            tors.add(b)
        if b in hosts and a in switches:
            tors.add(a)
    cls = {h: "hosts" for h in hosts}
    cls.update({t: "tors" for t in tors})
    cls.update({c: "cores" for c in switches - tors})
    return cls


def paused_ns(trace: str, end_ns: int | None = None) -> tuple[dict[tuple[int, int], int], dict[tuple[int, int], int]]:
    """Paused time of each (node, ifindex), and of that the part still open at `end_ns`
    (`hopsim.interop.floodgate.outputs.paired` over the trace's frames)."""
    return paired(pfc_events("PFC_FILE", trace), end_ns)


def by_class(total: dict[tuple[int, int], int], cls: dict[int, str]) -> dict[str, int]:
    """Paused time summed by class, in ns (every class present, 0 where nothing paused)."""
    out = {"hosts": 0, "tors": 0, "cores": 0}
    for (node, _), ns in total.items():
        out[cls[node]] += ns
    return out


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    end = int(argv[2]) if len(argv) == 3 else None
    total, still_open = paused_ns(Path(argv[0]).read_text(), end)
    sums = by_class(total, classes(Path(argv[1]).read_text()))
    print("PFC pause time, pause to resume, by the paused device's class (us):")
    for c, ns in sums.items():
        print(f"  {c:6s} {ns / 1e3:12.1f}")
    print(f"  total  {sum(sums.values()) / 1e3:12.1f}")
    if still_open:
        print(f"  of which still open at the end: {sum(still_open.values()) / 1e3:.1f} us on {sorted(still_open)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
