"""`hopsim import-bfc CONFIG --out SCENARIO.toml [--flows STDOUT]`: a run configuration of the BFC
paper's simulator (prateshg/BFC_NS3_NSDI2022, ``mix/nsdiconfig.txt`` as read by
``scratch/nsdifinal.cc``) as a hopsim scenario that runs that simulator's model.

Its network is hard-coded (nsdifinal.cc:430-512): 128 hosts, 8 ToRs of 16 hosts, 8 spines, every
ToR to every spine, every link DATA_RATE and LINK_DELAY. Its traffic: flow sizes from a CDF
(WORKLOAD), arrivals lognormal (sigma 2) or Poisson, a load of UTILIZATION_FACTOR x 64 links
(the ToR uplinks), of which 5 % are 100-to-1 incasts when CREATE_INCAST is 1
(nsdifinal.cc:422-428, 546-548). With ``--flows`` (its standard output) the scenario gets the
exact flows it drew, incast members included (``NAME.flows.txt`` beside the scenario, an HPCC
flow file), so the two runs are flow-for-flow comparable; without, hopsim draws statistically
the same traffic (`incast_mix`).

What its switches and NICs do that differs from the paper's text is set by named options (see
`MODEL`, listed in the written file's header with the source line each follows). Nothing is
written when anything fails.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from .. import ns3_config as C
from ..hpcc import importer as H
from .files import SERVER_PORT, priority_groups, read_drawn_flows, source_ports
from ...errors import ScenarioError
from ..floodgate.files import hpcc_flows
from ...scenario.paths import read_text, resolve, write_text_atomic

__all__ = ["import_bfc", "HONOURED", "IGNORED", "MODEL", "HOSTS", "TORS", "SPINES"]

HOSTS, TORS, SPINES = 128, 8, 8
"""nsdifinal.cc:430-432 and 483 (node_num 144, switch_num 16, end_num 128; host i on ToR 128 + i/16)."""
CORE_LINKS = 64
"""Its load is a share of 64 x DATA_RATE (nsdifinal.cc:422): the 8 x 8 ToR-spine links."""
INCAST_SHARE = 0.05
"""nsdifinal.cc:426 and 546: 5 % of those 64 links' capacity goes to incasts."""
QCOUNT_DEFAULT = 128
"""nsdifinal.cc:69: `qcount` without a QCOUNT key; it enters only the flows' priority groups."""
PAYLOAD = 1000
"""packet_payload_size (nsdifinal.cc:47): the bytes per packet of a flow's size."""
DATA_HEADER = 20
"""A packet of P bytes is P + 20 on the wire: UdpClient's payload P - 32 (udp-client.cc:222), its
SeqTsHeader 22 (seq-ts-header.cc:127), UDP 8, IPv4 20, PPP 2."""
ACK_BYTES = 30
"""qbbHeader 8 (qbb-header.h:53-55) + IPv4 20 + PPP 2."""
PAUSE_FRAME = 156
"""PauseHeader 6 + 2 x 64 (pause-header.cc:170, a 1,024-bit bitmap) + IPv4 20 + PPP 2."""
DATA_QUEUES = 31
"""Its switches assign flows to queues 3..33 of qCnt 36 (qbb-net-device.cc:1291-1312); hopsim's
BFC leaves one of `queues.count` to control frames: 32."""
TABLE_ENTRIES = 7200
"""Flow-table entries per egress port: hqCnt / pCnt = 36 x 200 (qbb-net-device.h:50-53)."""
WORKLOADS = {"W4": "BFC_W4_FacebookHadoop.txt", "W3": "BFC_W3_GoogleAllRPC.txt"}
"""nsdifinal.cc:341-404: mix/w4.txt, mix/W3.txt; any other value is its DCTCP table."""

MODEL: dict[str, tuple[Any, str]] = {
    "flow_control.bfc.hrtt": ("2us", "Th and the sticky threshold use a fixed 2 us (qbb-net-device.cc:1199, 1351)"),
    "flow_control.bfc.th_hrtt": (1.5, "Th = 1.5 x rate x 2 us / active queues (mark_up, qbb-net-device.cc:1186-1200)"),
    "flow_control.bfc.sticky_hrtt": (3.0, "a flow keeps its queue for 6 us after its last packet (qbb-net-device.cc:1351)"),
    "flow_control.bfc.pause_counts_arrival": (True, "the pause test counts the arriving packet (qbb-net-device.cc:907-911, 1200)"),
    "flow_control.bfc.pause_delivery": ("next_refresh", "a pause rides on the periodic bitmap frame, every 1 us on every "
                                        "port; a resume goes at once (broadcom-node.cc:165-173, qbb-net-device.cc:1209-1245)"),
    "flow_control.bfc.refresh": ("1us", "that frame's period (broadcom-node.cc:166)"),
    "flow_control.bfc.lone_packet_pauses": (False, "no pause test for a flow's only packet at the switch (qbb-net-device.cc:910)"),
    "flow_control.bfc.assign_paused_queues": (False, "a new flow gets an empty queue that is not paused, else a random one "
                                              "(Assign_hqCnt_qCnt, qbb-net-device.cc:1291-1312)"),
    "flow_control.bfc.queue_search": ("random", "the search for an empty queue starts at a random queue each time "
                                      "(seed = rand(), qbb-net-device.cc:1294-1303)"),
    "flow_control.bfc.collision_queue": ("per_entry", "with no queue empty, one fixed per flow-table entry "
                                         "(srand(p_hqCnt); 3 + rand() % (qCnt - 5), qbb-net-device.cc:1305-1308)"),
    "flow_control.bfc.bitmap_frame": ("whole", "its pause bitmap is one frame per port, whatever the number of queues "
                                      "(PauseHeader's 1,024 bits, pause-header.cc:170; SendPauseFrame, broadcom-node.cc:165-173)"),
    "tx_time": ("whole_ns", "ns-3's transmission times at its 1 ns resolution, cut down to whole ns "
                "(Seconds(m_bps.CalculateTxTime(size)), qbb-net-device.cc:1036; nstime.h:466-467)"),
    "flow_control.bfc.updown_only": (False, "every packet may pause its upstream: no up-down check (qbb-net-device.cc:907-911, 1200)"),
    "flow_control.bfc.unlimited_buffer": (True, "its admission never refuses (broadcom-node.cc:142-197)"),
    "flow_control.bfc.nic_queues": ("free_list", "a free NIC queue per flow, from its first packet to its last ACK "
                                    "(available_sending_queues, qbb-net-device.cc:136-160, 653, 824-827)"),
    "flow_control.bfc.table_entries": (TABLE_ENTRIES, "flow-table entries per egress: hqCnt / pCnt (qbb-net-device.h:50-53)"),
    "flow_control.bfc.flow_index": ("ns3_header", "a flow's entry: (source address x 1235 + source port + 13 x its "
                                    "packets) mod 7200, and its srand(entry x 64 + port) for the collision queue "
                                    "(GethqCnt, qbb-net-device.cc:1271-1289, 1305-1308)"),
    "queues.count": (DATA_QUEUES + 1, "31 data queues (qbb-net-device.cc:1297) and the control class"),
    "queues.scheduler": ("rr", "one packet per queue per round (DoDequeueRR, broadcom-egress-queue.cc:193-276)"),
    "control.queue_pause": (PAUSE_FRAME, "its pause frame's bytes (pause-header.cc:170)"),
    "transport.mtu": (PAYLOAD, "nsdifinal.cc:47"),
    "transport.header": (DATA_HEADER, "udp-client.cc:222, seq-ts-header.cc:127"),
    "transport.ack": (ACK_BYTES, "qbb-header.h:53-55"),
    "transport.ack_every": (256, "L2AckInterval 256 (nsdifinal.cc:47, 332; qbb-net-device.cc:1117-1128)"),
    "transport.window": ("off", "EnableWindow false (nsdifinal.cc:65, 334): flows send as fast as the NIC allows"),
    "transport.rto": ("off", "no retransmission (nothing is lost)"),
    "transport.nic_queues": (1024, "a queue per flow at the NIC (it has 2,047, qbb-net-device.h:52; hopsim at most 1,024)"),
    "congestion_control.algorithm": ("none", "no end-to-end congestion control"),
    "record.buffer_interval": ("10us", "its buffer lines every 10 us (broadcom-node.cc:345)"),
}
"""Every setting of the written scenario that mirrors a behaviour of the BFC simulator, with the
source it follows (the header of the written file lists them)."""

HONOURED = {
    "DATA_RATE": "every link's rate (topology host_rate and fabric_rate)",
    "LINK_DELAY": "every link's delay (host_delay and fabric_delay)",
    "APP_START_TIME": "the flows' time offset (workload.time_offset) or the start of hopsim's drawn traffic",
    "APP_STOP_TIME": "without --flows: the drawn traffic's duration",
    "SIMULATOR_STOP_TIME": "duration = SIMULATOR_STOP_TIME - APP_START_TIME (flows still in flight then never finish, as there)",
    "WORKLOAD": "without --flows: W4 -> BFC_W4_FacebookHadoop.txt, W3 -> BFC_W3_GoogleAllRPC.txt",
    "UTILIZATION_FACTOR": "without --flows: workload.load on the 64 core links, less 5 % with CREATE_INCAST 1",
    "POISSON_DISTRIBUTION": "without --flows: 0 -> lognormal arrivals (sigma 2), 1 -> Poisson",
    "CREATE_INCAST": "without --flows: 1 -> incasts of 5 % of the core links' capacity",
    "NUMBER_OF_INCAST_SOURCES": "without --flows: workload.incast.degree",
    "FLOW_SIZE_IN_INCAST": "without --flows: packets per incast flow (x 1000 B)",
    "ENABLE_BUFFER_STATS": "1 -> record.buffer_interval 10us (its `T:` lines)",
    "QCOUNT": "with --flows: the base of the flows' priority groups (5 x QCOUNT + a draw, nsdifinal.cc:574), which its "
              "ECMP hashes; the queues are its compiled qCnt (36, qbb-net-device.h:50)",
}
IGNORED = {
    "PAUSE_TIME": "PFC pause time: BFC's pauses last until resumed",
    "L2_TEST_READ": "a test switch of its go-back-N (nothing is lost)",
    "SEND_IN_CHUNKS": "deprecated there (its own warning)",
}
KEYS = set(HONOURED) | set(IGNORED)

_TIME = re.compile(r"^(\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)(s|ms|us|ns)?$")
_UNIT_NS = {"s": Decimal(10**9), "ms": Decimal(10**6), "us": Decimal(1000), "ns": Decimal(1), None: Decimal(10**9)}


def _ns3_time(cfg: C.Config, key: str) -> Decimal:
    """An ns-3 time string (`0.001ms`; a bare number is seconds) in ns."""
    v = C._one(cfg, key, str)
    m = _TIME.match(v)
    if not m:
        raise ScenarioError(f"{C._key(cfg, key)}: {v!r} is not a time; allowed: a number with s, ms, us or ns (e.g. 0.001ms)")
    return Decimal(m.group(1)) * _UNIT_NS[m.group(2)]


def _seconds(cfg: C.Config, key: str, default: str) -> Decimal:
    v = C._one(cfg, key, str, default)
    try:
        d = Decimal(v)
    except InvalidOperation:
        d = Decimal("NaN")
    if not d.is_finite() or d < 0:
        raise ScenarioError(f"{C._key(cfg, key)}: {v!r}; allowed: a time in seconds, 0 or more")
    return d


def _flag(cfg: C.Config, key: str, default: int) -> int:
    v = C._one(cfg, key, int, default)
    if v not in (0, 1):
        raise ScenarioError(f"{C._key(cfg, key)}: {v}; allowed: 0 or 1")
    return v


def _fmt(ns: Decimal) -> str:
    """A whole or fractional number of ns as a hopsim time."""
    return f"{ns.normalize():f}ns"


def import_bfc(config: Path | str, out: Path | str, flows: Path | str | None = None) -> tuple[Path, list[str]]:
    """Write the scenario (and with `flows` its flow file); returns the scenario's path and the
    notes for the user. Nothing is left behind when anything fails."""
    config, out = resolve(config), resolve(out)
    cfg = C.parse_config(read_text(config))
    flows_out = out.with_name(out.stem + ".flows.txt")
    return H.imported(config, out, lambda written: _import(config, cfg, out, flows, flows_out, written))


def _import(config: Path, cfg: C.Config, out: Path, flows: Path | str | None, flows_out: Path,
            written: list[Path]) -> tuple[str, list[str]]:
    unknown = sorted(k for k in cfg if k not in KEYS)
    if unknown:
        raise ScenarioError([f"{C._key(cfg, k)}: not a key nsdifinal.cc reads; allowed: {', '.join(sorted(KEYS))}"
                             for k in unknown])
    notes: list[str] = []
    rate = C._one(cfg, "DATA_RATE", str, "100Gbps")
    m = re.fullmatch(r"(\d+)Gbps", rate)
    if not m or int(m.group(1)) == 0:
        # nsdifinal.cc:189 reads the number before its last four characters as whole Gb/s
        raise ScenarioError(f"{C._key(cfg, 'DATA_RATE')}: {rate!r}; allowed: whole Gb/s above 0 such as 100Gbps")
    gbps = int(m.group(1))
    delay = _ns3_time(cfg, "LINK_DELAY") if "LINK_DELAY" in cfg else None
    if delay is None:
        raise ScenarioError("LINK_DELAY: missing; it is required (nsdifinal.cc leaves it empty otherwise)")
    start = _seconds(cfg, "APP_START_TIME", "1.0")
    app_stop = _seconds(cfg, "APP_STOP_TIME", "9.0")
    stop = _seconds(cfg, "SIMULATOR_STOP_TIME", "3.01")
    if stop <= start:
        raise ScenarioError(f"{C._key(cfg, 'SIMULATOR_STOP_TIME')}: {stop} s; allowed: after APP_START_TIME ({start} s)")
    incast = _flag(cfg, "CREATE_INCAST", 0)
    poisson = _flag(cfg, "POISSON_DISTRIBUTION", 1)
    stats = _flag(cfg, "ENABLE_BUFFER_STATS", 1)
    util = C._one(cfg, "UTILIZATION_FACTOR", C._real, 0.6)
    sources = C._one(cfg, "NUMBER_OF_INCAST_SOURCES", int, 200)
    packets = C._one(cfg, "FLOW_SIZE_IN_INCAST", int, 20)
    workload_key = C._one(cfg, "WORKLOAD", str, None)

    sc: dict[str, Any] = {"name": out.stem, "seed": 1, "duration": _fmt((stop - start) * Decimal(10**9))}
    link = {"host_rate": f"{gbps}Gbps", "fabric_rate": f"{gbps}Gbps", "host_delay": _fmt(delay), "fabric_delay": _fmt(delay)}
    sc["topology"] = {"kind": "leaf_spine", "hosts_per_tor": HOSTS // TORS, "tors": TORS, "spines": SPINES, **link}
    if flows is not None:
        fpath = resolve(flows)
        drawn = read_drawn_flows(fpath, read_text(fpath, "--flows"))
        bad = [(s, d) for s, d, _, _ in drawn if s >= HOSTS or d >= HOSTS or s == d]
        if bad:
            raise ScenarioError(f"{fpath}: a flow from host {bad[0][0]} to {bad[0][1]}; allowed: two different hosts 0 to {HOSTS - 1}")
        early = [t for *_, t in drawn if Decimal(t) < start]
        if early:
            raise ScenarioError(f"{fpath}: a flow starts at {early[0]} s, before APP_START_TIME ({start} s)")
        # its ECMP hashes each flow's server port and priority group: the flow file carries both
        qcount = C._one(cfg, "QCOUNT", int, QCOUNT_DEFAULT)
        dports = [(d + SERVER_PORT) & 0xFFFF for _, d, _, _ in drawn]
        flow_file = hpcc_flows(drawn, dports, priority_groups(len(drawn), qcount), source_ports(drawn))
        written.append(write_text_atomic(flows_out, flow_file, "--out"))
        sc["routing"] = {"ecmp": "ns3_global"}
        sc["workload"] = {"kind": "hpcc_flows", "file": flows_out.name, "time_offset": _fmt(start * Decimal(10**9))}
        notes += [f"{k}: the flows it drew (--flows) replace its generator" for k in sorted(cfg)
                  if k in ("WORKLOAD", "UTILIZATION_FACTOR", "POISSON_DISTRIBUTION", "CREATE_INCAST",
                           "NUMBER_OF_INCAST_SOURCES", "FLOW_SIZE_IN_INCAST")]
    else:
        sc["workload"] = _drawn_workload(cfg, workload_key, util, incast, poisson, sources, packets, gbps, start, app_stop)
    for key, (value, _why) in MODEL.items():
        if key == "record.buffer_interval" and not stats:
            continue
        *path, leaf = key.split(".")
        table = sc
        for p in path:
            table = table.setdefault(p, {})
        table[leaf] = value
    sc["flow_control"]["scheme"] = "bfc"
    for key in sorted(cfg):
        if key in IGNORED:
            notes.append(f"{key}: ignored ({IGNORED[key]})")
    header = [
        f"# Imported by `hopsim import-bfc` from {config}",
        "# It runs the BFC paper's simulator's model (BFC_NS3_NSDI2022, scratch/nsdifinal.cc and",
        "# src/point-to-point/model/qbb-net-device.cc). Its hard-coded network: 128 hosts, 8 ToRs x 16, 8 spines.",
        "# Options set to follow it (delete a line to get hopsim's paper-following default):",
        *[f"#   {k} = {json.dumps(v)}: {why}" for k, (v, why) in MODEL.items()],
        "# Keys honoured: " + ", ".join(sorted(k for k in cfg if k in HONOURED)),
        *(["# With its flows: routing.ecmp = \"ns3_global\", its flow ECMP (GetTupleValue % routes,",
            "# ipv4-global-routing.cc:159-200, 297-300); the flow file's dport (dst + 40000) and seventh field, each",
            "# flow's priority group (mt19937 seeded 5489, nsdifinal.cc:537, 574, 641), are what it hashes; its eighth",
            "# field, each flow's source port (per sending host from 49153, in start order), is what its flow table reads."]
          if flows is not None else
          ["# Without --flows the flow table reads hopsim's source ports (per host pair from 10000), not its."]),
        "# Not expressible in hopsim (differences that remain): " + ("" if flows is not None else
        "its per-flow ECMP hash (ns-3 global routing; set with --flows); ")
        + "its empty-queue search's start, one process-wide rand() (hopsim: a stream per switch);",
        "# its pause bitmap is a 1,024-bit Bloom filter",
        "# of queue indices (NIC queues 1,024 apart share a bit); senders' applications feed the NIC a packet at",
        "# a time (udp-client.cc:190-250), where hopsim's NIC holds the whole flow; its NICs have 2,047 queues",
        "# (hopsim's 1,024) handed out in a shuffled order (hopsim's: in index order).",
    ]
    return H.with_header(header, notes, sc, out, cfg), notes


def _drawn_workload(cfg: C.Config, workload_key: str | None, util: float, incast: int, poisson: int, sources: int,
                    packets: int, gbps: int, start: Decimal, app_stop: Decimal) -> dict[str, Any]:
    """Without --flows: hopsim draws the same kind of traffic (nsdifinal.cc:529-669)."""
    if workload_key not in WORKLOADS:
        raise ScenarioError(f"{C._key(cfg, 'WORKLOAD')}: {workload_key or 'missing'} (its DCTCP table otherwise); allowed "
                            f"without --flows: {' or '.join(WORKLOADS)}; or give the flows it drew with --flows")
    duration = app_stop - start
    if duration <= 0:
        raise ScenarioError(f"{C._key(cfg, 'APP_STOP_TIME')}: {app_stop} s; allowed: after APP_START_TIME ({start} s)")
    load = util - (INCAST_SHARE if incast else 0.0)
    if not 0 < load <= 1:
        raise ScenarioError(f"{C._key(cfg, 'UTILIZATION_FACTOR')}: {util} leaves a background load of {load:g}; allowed: "
                            f"above {INCAST_SHARE if incast else 0} (the incasts take 0.05) up to 1")
    bg: dict[str, Any] = {"cdf": WORKLOADS[workload_key], "load": load, "load_on": "core_links",
                          "start": _fmt(Decimal(0)), "duration": _fmt(duration * Decimal(10**9))}
    bg["arrival"] = "poisson" if poisson else "lognormal"
    if not poisson:
        bg["sigma"] = 2.0
    if not incast:
        return {"kind": "background", **bg}
    if sources < 1 or packets < 1:
        raise ScenarioError(f"{C._key(cfg, 'NUMBER_OF_INCAST_SOURCES')}, {C._key(cfg, 'FLOW_SIZE_IN_INCAST')}: {sources}, "
                            f"{packets}; allowed: 1 or more each")
    # nsdifinal.cc:546-548: as many incasts as 5 % of the core links' capacity carries, evenly spread
    count = int(float(duration) * CORE_LINKS * gbps * 1e9 * INCAST_SHARE / (packets * PAYLOAD * sources * 8))
    if count < 1:
        raise ScenarioError(f"{C._key(cfg, 'CREATE_INCAST')}: 1, but APP_STOP_TIME - APP_START_TIME ({duration} s) holds "
                            "no incast at 5 % of the core links; allowed: 0, or a longer traffic period")
    period = duration * Decimal(10**9) / count
    inc = {"degree": sources, "flow_size": packets * PAYLOAD, "period": _fmt(period.quantize(Decimal(1)))}
    return {"kind": "incast_mix", **bg, "incast": inc}
