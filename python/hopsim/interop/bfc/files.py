"""The standard output of the BFC paper's simulator (prateshg/BFC_NS3_NSDI2022, program
``scratch/nsdifinal.cc``), which is where it writes everything: read for `hopsim import-bfc
--flows` (the flows it drew) and `hopsim compare-fct` (its per-flow and buffer lines), and written
by `hopsim export-bfc` (`exporter`).

Lines used (``+Xns`` is an ns-3 time in ns; ``qbbid`` a device counter, host h's NIC is ``2h +
2``; ``IP 1.X`` names host ``X - 1``, as its ``calculate_fct_slowdown.py`` reads them):

- ``New Flow Created Src S Dst D Size B Time T``: every flow it generates, before the simulation
  (nsdifinal.cc:605 background, :642 an incast's member); ``B`` = packets x bytes per packet,
  ``T`` in seconds (printed with 10 significant digits).
- ``Starting flow at +Tns port P qbbid Q qindex G IP 1.X``: a flow's first packet enters its
  sender's NIC (qbb-net-device.cc:839).
- ``Received the last packet on port P at +Tns qbbid Q IP 1.X size S``: the receiver got the last
  packet in order (qbb-net-device.cc:1122); ``S`` is the flow's bytes per packet less 2 (998 for
  full 1000 B packets).
- ``Flow finished at qbbid Q at +Tns at portP Num packets:N, Time taken :+Fns qindex G``: the
  sender got the final ACK (qbb-net-device.cc:650); ``F`` is measured from "Starting flow".
- ``T: +Tns At SW used = B``: switch SW's shared-buffer bytes, every 10 us (broadcom-node.cc:344).
- ``DATA_RATE\\t\\t\\t100Gbps``, ``WORKLOAD\\t\\t\\tW4``, ``Incast info- Packet size
  200Num of sources 100``: settings its script reads.

A flow is (sender, source port): ports are numbered per sender host from 49153 as its UDP
sockets bind. Each reader names the file, line and field of what it cannot read (a
`ScenarioError`, exit 2).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ...errors import ScenarioError
from ..ports import nth_of_source

__all__ = ["FLOW_LINE", "drawn_flows", "read_drawn_flows", "priority_groups", "source_ports", "PG_SEED", "SERVER_PORT", "BfcFlow", "BfcRun", "parse_stdout", "is_bfc_stdout",
           "host_of_qbbid", "qbbid_of_host", "FIRST_PORT", "EPHEMERAL_FIRST", "HOSTS_PER_TOR"]

FLOW_LINE = re.compile(r"^New Flow Created Src (\d+) Dst (\d+) Size (\d+) Time (\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)\s*$")
STARTING = re.compile(r"^Starting flow at \+(\d+)(?:\.\d+)?ns port (\d+) qbbid (\d+) qindex (\d+) IP \d+\.(\d+)\s*$")
RECEIVED = re.compile(r"^Received the last packet on port (\d+) at \+(\d+)(?:\.\d+)?ns qbbid (\d+) IP \d+\.(\d+) size (\d+)\s*$")
FINISHED = re.compile(r"^Flow finished at qbbid (\d+) at \+(\d+)(?:\.\d+)?ns at port(\d+) Num packets:(\d+), "
                      r"Time taken :\+(\d+)(?:\.\d+)?ns qindex (\d+)\s*$")
BUFFER = re.compile(r"^T: \+(\d+)(?:\.\d+)?ns At (\d+) used = (\d+)\s*$")
DATA_RATE = re.compile(r"^DATA_RATE\s+(\d+)Gbps\s*$")
INCAST = re.compile(r"^Incast info- Packet size (\d+)Num of sources (\d+)\s*$")

EPHEMERAL_FIRST, EPHEMERAL_PORTS = 49152, 16384
"""ns-3's ephemeral port range, 49152-65535 (Ipv4EndPointDemux); hopsim's own ports start at 10000."""
FIRST_PORT = EPHEMERAL_FIRST + 1
"""The first source port ns-3 gives a UDP socket of a node (incremented before use)."""
HOSTS_PER_TOR = 16
"""nsdifinal.cc:483: host i hangs off ToR 128 + i / 16."""

Flow = tuple[int, int, int, str]
"""(src, dst, size in bytes, start in seconds as printed)."""


def host_of_qbbid(q: int) -> int:
    """The host whose NIC device is `q` (the ToR side of host i's link is created first, so the
    NIC is device 2i + 2; RUNS.md checks it against the flow lines)."""
    return q // 2 - 1


def qbbid_of_host(h: int) -> int:
    return 2 * h + 2


def drawn_flows(stdout: str) -> list[Flow]:
    """Every flow its standard output shows created, in creation order (an incast's members right
    after the background flow that opened it, at the same time)."""
    out = []
    for line in stdout.splitlines():
        m = FLOW_LINE.match(line)
        if m:
            out.append((int(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(4)))
    return out


PG_SEED = 5489
"""`std::mt19937 gen2(5489U)` (nsdifinal.cc:537): the same seed in every run of it."""
SERVER_PORT = 40000
"""Its flows' destination port is `dst + 40000` (the UdpServer of each host, nsdifinal.cc:468, 612)."""


def priority_groups(n: int, qcount: int) -> list[int]:
    """The priority group (PG) its first `n` flows carry in their packets' header, in creation
    order: each flow, background or incast member, draws `5 * qcount + uint32_t(dis(gen2) * 1e9)`
    (nsdifinal.cc:574, 641) from its own generator, `std::mt19937` seeded 5489, through
    `std::uniform_real_distribution<>`, which libstdc++ builds from two 32-bit draws
    ((a + b * 2^32) / 2^64, `generate_canonical`); the header field is 16 bits (`UdpClientHelper`
    takes `uint16_t pg`). Its ECMP hashes it (`routing.ecmp = "ns3_global"`)."""
    import numpy as np

    raw = np.random.RandomState(PG_SEED).randint(0, 2**32, size=2 * n, dtype=np.uint64)
    out = []
    for a, b in zip(raw[0::2].tolist(), raw[1::2].tolist()):
        u = (a + b * 2**32) / 2**64
        if u >= 1.0:
            u = float(np.nextafter(1.0, 0.0))
        out.append((5 * qcount + int(u * 1_000_000_000)) & 0xFFFF)
    return out


def source_ports(flows: list[Flow]) -> list[int]:
    """The source port of each of its flows, in creation order: ns-3 gives a node's UDP sockets
    ephemeral ports from 49153 up (Ipv4EndPointDemux::AllocateEphemeralPort, ephemeral range
    49152-65535, incremented before use), each flow's client binding one when it starts
    (UdpClient::StartApplication); its flows are created in start order, so a host's k-th flow
    has port 49153 + k. Its flow-table index reads them (`flow_control.bfc.flow_index`)."""
    return [EPHEMERAL_FIRST + (k + 1) % EPHEMERAL_PORTS for k in nth_of_source(f[0] for f in flows)]


def read_drawn_flows(path: Path, text: str) -> list[Flow]:
    """The flows of its standard output; an error naming the file when there is none."""
    out = drawn_flows(text)
    if not out:
        raise ScenarioError(f"{path}: no `New Flow Created Src S Dst D Size B Time T` line (as nsdifinal.cc prints "
                            "every flow it generates); give the BFC simulator's standard output")
    return out


@dataclass
class BfcFlow:
    """One finished flow as its script pairs the lines: by (sender, source port)."""

    src: int
    port: int
    packets: int
    fct_ns: int
    finish_ns: int
    dst: int | None = None
    """From the "Received" line (None when that line is missing, e.g. lost at the crash)."""
    packet_size: int | None = None
    """Its "Received" line's size: bytes per packet less 2."""
    start_ns: int | None = None


@dataclass
class BfcRun:
    data_rate_gbps: int | None
    incast_packets: int | None
    """Packets per incast flow (its "Incast info" line); None without incasts."""
    flows: list[BfcFlow]
    buffer: list[tuple[int, int, int]]
    """(time ns, switch id, bytes) of its ``T:`` lines."""
    started: int


def is_bfc_stdout(text: str) -> bool:
    """Whether a text is the BFC simulator's standard output (a per-flow or flow-creation line)."""
    for line in text.splitlines()[:20000]:
        if line.startswith(("Flow finished at qbbid", "Received the last packet", "New Flow Created Src", "Starting flow at")):
            return True
    return False


LINES = (
    ("Flow finished at", FINISHED, "`Flow finished at qbbid Q at +Tns at portP Num packets:N, Time taken :+Fns qindex G` "
     "(qbb-net-device.cc:650)"),
    ("Received the last packet", RECEIVED, "`Received the last packet on port P at +Tns qbbid Q IP 1.X size S` "
     "(qbb-net-device.cc:1122)"),
    ("Starting flow at", STARTING, "`Starting flow at +Tns port P qbbid Q qindex G IP 1.X` (qbb-net-device.cc:839)"),
    ("T: ", BUFFER, "`T: +Tns At SW used = B` (broadcom-node.cc:344)"),
    ("DATA_RATE", DATA_RATE, "`DATA_RATE` and a rate in whole Gbps such as `100Gbps`"),
    ("Incast info-", INCAST, "`Incast info- Packet size N Num of sources M` (nsdifinal.cc:551)"),
)
"""The lines read: how each starts, its pattern, and what an error says was expected."""


def parse_stdout(text: str, name: str) -> BfcRun:
    """Its per-flow, buffer and settings lines. A line that starts as one of them but does not
    read as it is an error naming `name`, the line and what was expected (its script skips such
    lines silently; a damaged file should not pass unnoticed here)."""
    rate = incast = None
    starts: dict[tuple[int, int], int] = {}
    recv: dict[tuple[int, int], tuple[int, int]] = {}
    fin: list[tuple[int, int, int, int, int]] = []
    buffer: list[tuple[int, int, int]] = []
    started = 0
    for no, line in enumerate(text.splitlines(), 1):
        kind = next((k for k in LINES if line.startswith(k[0])), None)
        if kind is None:
            continue
        m = kind[1].match(line)
        if not m:
            raise ScenarioError(f"{name} line {no}: expected {kind[2]}")
        g = [int(x) for x in m.groups()]
        if kind[1] is FINISHED:
            q, t, port, n, f, _ = g
            if n < 1:
                raise ScenarioError(f"{name} line {no}: Num packets: {n}; allowed: 1 or more")
            fin.append((host_of_qbbid(q), port, n, f, t))
        elif kind[1] is RECEIVED:
            port, t, q, x, size = g
            recv[(x - 1, port)] = (host_of_qbbid(q), size)
        elif kind[1] is STARTING:
            starts[(host_of_qbbid(g[2]), g[1])] = g[0]
            started += 1
        elif kind[1] is BUFFER:
            buffer.append((g[0], g[1], g[2]))
        elif kind[1] is DATA_RATE:
            rate = g[0]
        else:
            incast = g[0]
    flows = []
    for src, port, n, f, t in fin:
        r = recv.get((src, port))
        flows.append(BfcFlow(src, port, n, f, t, r[0] if r else None, r[1] if r else None, starts.get((src, port))))
    return BfcRun(rate, incast, flows, buffer, started)
