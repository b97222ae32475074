"""`hopsim import-floodgate CONFIG.ini --out SCENARIO.toml [--flows FILE]`: a config of
Floodgate-NS3 (NASA-NJU/Floodgate-NS3, ``mix/config-*.ini`` as read by ``scratch/third.cc``) with
the topology, flow and Floodgate files it names, as a hopsim scenario that runs that simulator's
model.

Floodgate-NS3 derives from the HPCC simulator: the keys the two share (congestion control, ECN,
buffer, payload, stop time) are read as `hpcc.importer` reads them, and what Floodgate-NS3 does
differently is set after, each as a named option (`HONOURED` says which key becomes which; the
written file's header lists them): its 38 B PPP header, its MMU (alpha 1/4, headroom 8 x rate x
delay), the Floodgate scheme's window, credits, VOQs and dstPause. Keys that draw traffic
(FLOW_CDF, LOAD, INCAST_*, ...) are that simulator's generator: with ``FLOW_FROM_FILE 0`` the
flows it drew are given by ``--flows`` (its standard output, or `scripts/ns3_flow_list.py`'s
output), which replaces them. Its topology and flow files are converted to the HPCC formats beside
the scenario (``NAME.topology.txt``, ``NAME.flows.txt``); nothing is written when anything fails.
"""

from __future__ import annotations

import math
import re
import tomllib
from pathlib import Path
from typing import Any, Callable

from .. import ns3_config as C
from ..hpcc import importer as H
from ...errors import ScenarioError
from .files import (_rows, hpcc_flows, hpcc_topology, read_drawn_flows, read_fg_config, read_flow_file, read_topology,
                    source_ports)
from ...scenario.paths import read_text, resolve, write_text_atomic

__all__ = ["import_floodgate", "HONOURED", "IGNORED", "NS3_HEADER", "credit_frame"]

HONOURED = {
    "USE_FLOODGATE": "0 -> flow_control.scheme = 'pfc'; 1 -> 'floodgate'",
    "SWTICH_ACK_MODE": "1 (per-destination credit) with SWTICH_BYTE_COUNTER 1 and SWTICH_CREDIT_INTERVAL 0 -> "
                       "floodgate.ideal (a credit per packet); 1 or 2 otherwise -> the practical design (2: its frames "
                       "carry every destination of an ingress at once, hopsim's one per (ingress, destination); "
                       "control.credit is sized per destination entry, see credit_frame); 0 is refused",
    "SWITCH_WIN_M": "floodgate.m (ideal: m x BDP_nextHop) or floodgate.win_m (practical: win_m x BDP_nextHop + C x T; "
                    "third.cc line 2872)",
    "SWITCH_ACK_TH_M": "floodgate.thre_credit_bdp = SWITCH_ACK_TH_M x 2 x the fastest rate x the longest delay (its m_th_ack, "
                       "third.cc line 3025) in BDPs of the fastest switch link, in the ideal design too (ideal_delay_credit, "
                       "switch-node.cc lines 446-478); 0 -> delay_credit = false",
    "SWTICH_BYTE_COUNTER": "floodgate.byte_counter when above 1 (a credit at dequeue once that many bytes are owed; "
                           "switch-node.cc line 467)",
    "SWTICH_CREDIT_INTERVAL": "floodgate.T (us)",
    "SWITCH_SYN_TIMEOUT_US": "floodgate.syn_timeout (0: no switchSYN there; hopsim's then waits 1 s)",
    "SRCTOR_DST_PFC": "1 -> floodgate.dst_pause with dst_pause_on = 'source_host' (one source host per destination, on "
                      "its own bytes at its ToR) and no PFC between switches (third.cc's link loop sets PFC_OFF there: "
                      "floodgate.pfc = false); 0 -> floodgate.pfc = true (PFC underneath)",
    "PFC_TH_STATIC": "with SRCTOR_DST_PFC 1 and USE_DYNAMIC_PFC_THRESHOLD 0: floodgate.thre_off_bdp and thre_on_bdp from its "
                     "static per-destination threshold PFC_TH_STATIC x 2 x rate x delay plus its 4 KiB reserve "
                     "(resume 3 KiB lower), in BDPs of the host link",
    "FLOODGATE_CONFIG_FILE": "floodgate.max_voq = its VOQs per group, voq_pool = 'shared' (one FIFO VOQ per destination "
                             "for the whole switch, as its VOQ groups); every switch must be listed and no rule switch",
    "RESET_ONLY_TOR_SWITCH_WIN": "must be 0 (windows on every Floodgate switch)",
    "SWITCH_ABSOLUTE_PSN": "accepted: hopsim's windows are PSN differences either way (§4.3)",
    "ACK_HIGH_PRIO": "0 -> transport.ack_priority = 'data' (ACKs FIFO with data in the non-incast queue, no window, no "
                     "credit), 1 -> 'control'",
    "ROUTING_MODE": "must be 0 (per-flow ECMP: routing.ecmp = 'hpcc', its MurmurHash3 seeded by switch id, next hops "
                    "in descending node id: routing.neighbour_order = 'descending')",
    "SYMMETRIC_ROUTING_MODE": "1 -> routing.ack_path = 'reverse' (ACKs retrace their data's ports: switch-node.cc lines "
                              "179-190 and 715-730, rdma-hw.cc lines 472-488); 0 -> 'hash' (their own ECMP hash)",
    "TOPOLOGY_FILE": "converted to NAME.topology.txt (HPCC format) beside the scenario",
    "FLOW_FROM_FILE": "1 -> FLOW_FILE converted to NAME.flows.txt; 0 -> --flows (the flows it drew) is required",
    "FLOW_FILE": "read with FLOW_FROM_FILE 1",
    "SIMULATOR_STOP_TIME": "duration = stop time - time_offset, read as `hopsim import-hpcc` reads it (a stop time "
                           "at or before the offset, nan or none is refused)",
    "USE_DYNAMIC_PFC_THRESHOLD": "flow_control.pfc.threshold 'dynamic' between switches (its static threshold applies to "
                                 "per-destination PFC only)",
}
IGNORED = {k: "draws the flows there: with FLOW_FROM_FILE 0 give the drawn flows (--flows)" for k in (
    "FLOW_CDF", "FLOW_NUM", "LOAD", "SEED", "INCAST_MIX", "INCAST_LOAD", "INCAST_CDF", "INCAST_INTERVAL",
    "INCAST_TIME", "INCAST_SCALE", "INCAST_FLOW_SIZE", "AVG_MESSAGE_PER_QP")} | {
    k: "output or tracing setting" for k in (
        "BW_OUTPUT_FILE", "QUEUEING_OUTPUT_FILE", "REALTIME_BUFFER_BW_FILE", "BW_INTERVAL", "BUFFER_INTERVAL",
        "DRILL_LOAD_MODE", "QUEUE_STATISTIC_INTERVAL_US")}
FG_KEYS = set(HONOURED) | set(IGNORED) | {"PFC_DST_ALHPA"}
"""Keys `hpcc.importer` does not know (or reads differently): taken out before it reads the rest."""

AS_HPCC = {"SIMULATOR_STOP_TIME"}
"""Keys of `HONOURED` that Floodgate-NS3 reads as the HPCC simulator does: `hpcc.importer` reads
them (its checks included) from the config passed on to it."""

NS3_HEADER = 38
"""Its PppHeader (ppp-header.cc): Ethernet 14 + preamble, FCS and gap 24 bytes, against HPCC's 2."""
DATA_HEADER, ACK_HEADER, ACK_MIN, PFC_FRAME = 72, 70, 84, 70
"""Wire sizes: data IPv4 20 + UDP 8 + SeqTs 6 + 38; ACK qbbHeader 12 + IPv4 20 + 38, padded to 84
(RdmaHw::ReceiveUdp); PFC PauseHeader 12 + IPv4 20 + 38 (QbbNetDevice::SendPfc)."""
RESERVE, RESUME_OFFSET = 4096, 3072
"""Its MMU's per-(port, queue) reserve and resume offset (switch-mmu.cc, SwitchMmu::SwitchMmu)."""


def credit_frame(ack_mode: int, byte_counter: int, interval_us: float, max_gbps: int, hosts: int) -> int:
    """Bytes on the wire of one credit frame for one destination: IPv4 20 + its 38 B PPP header
    plus the payload `QbbNetDevice::GetSwitchACKPacket` gives it (qbb-net-device.cc line 426,
    `min(payload, acktag.GetPacketSize())`): none per destination under SWTICH_ACK_MODE 1; under
    2, `switch_ack_credit_bit + switch_ack_id_bit` per destination (broadcom-egress-queue.h line
    230, counted as bytes), the bit widths of min(one interval's bytes at the fastest rate,
    SWTICH_BYTE_COUNTER) and of the host count (third.cc lines 2830-2852)."""
    base = 20 + NS3_HEADER
    if ack_mode != 2:
        return base
    mtu_rounded = math.ceil(max_gbps / 8 * interval_us * 1e3 / 1460) * 1460
    return base + min(mtu_rounded, byte_counter).bit_length() + hosts.bit_length()


def import_floodgate(config: Path | str, out: Path | str, flows: Path | str | None = None) -> tuple[Path, list[str]]:
    """Write the scenario and its converted topology and flow files; returns the scenario's path
    and the notes for the user. Nothing is left behind when anything fails."""
    config, out = resolve(config), resolve(out)
    cfg = C.parse_config(read_text(config))
    topo_out = out.with_name(out.stem + ".topology.txt")
    flows_out = out.with_name(out.stem + ".flows.txt")
    return H.imported(config, out, lambda written: _import(config, cfg, out, flows, topo_out, flows_out, written))


def _refusals(cfg: C.Config) -> list[str]:
    problems = []
    for key, allowed in (("SWTICH_ACK_MODE", (1, 2)), ("RESET_ONLY_TOR_SWITCH_WIN", (0,)), ("ROUTING_MODE", (0,)),
                         ("SYMMETRIC_ROUTING_MODE", (0, 1)), ("USE_FLOODGATE", (0, 1)), ("SRCTOR_DST_PFC", (0, 1)),
                         ("FLOW_FROM_FILE", (0, 1))):
        v = C._one(cfg, key, int)
        if v is not None and v not in allowed:
            why = {"SWTICH_ACK_MODE": " (0: hosts' per-packet ACKs as credits need symmetric routing, which hopsim does not do)",
                   "RESET_ONLY_TOR_SWITCH_WIN": " (windows only at ToRs, per destination rack: not in hopsim)",
                   "ROUTING_MODE": " (1: DRILL, per-packet load balancing: not in hopsim)"}.get(key, "")
            problems.append(f"{C._key(cfg, key)}: {v}{why}; allowed: {' or '.join(map(str, allowed))}")
    if "TOPOLOGY_FILE" not in cfg:
        problems.append("TOPOLOGY_FILE: missing; it is required")
    return problems


def _import(config: Path, cfg: C.Config, out: Path, flows: Path | str | None, topo_out: Path, flows_out: Path,
            written: list[Path]) -> tuple[str, list[str]]:
    problems = _refusals(cfg)
    from_file = C._one(cfg, "FLOW_FROM_FILE", int, 0) == 1
    if not from_file and flows is None:
        problems.append(f"{C._key(cfg, 'FLOW_FROM_FILE')}: 0 (the simulator draws its flows): give the flows it drew with "
                        "--flows (its standard output, or scripts/ns3_flow_list.py's output)")
    if from_file and "FLOW_FILE" not in cfg:
        problems.append("FLOW_FILE: missing; FLOW_FROM_FILE 1 requires it")
    if problems:
        raise ScenarioError(problems)

    topo_path = C._file(cfg, "TOPOLOGY_FILE", config.parent)
    topo_text = read_text(topo_path, "TOPOLOGY_FILE")
    topo = read_topology(topo_path, topo_text)
    if from_file:
        fpath = C._file(cfg, "FLOW_FILE", config.parent)
        listed = read_flow_file(fpath, read_text(fpath, "FLOW_FILE"))
        flow_text: str | None = hpcc_flows(listed, sports=source_ports(listed))
    else:
        fpath = resolve(flows)
        drawn = read_drawn_flows(fpath, read_text(fpath, "--flows"))
        flow_text = None if drawn is None else hpcc_flows(drawn, sports=source_ports(drawn))
    fg_cfg = None
    if "FLOODGATE_CONFIG_FILE" in cfg:
        gpath = C._file(cfg, "FLOODGATE_CONFIG_FILE", config.parent)
        fg_cfg = read_fg_config(gpath, read_text(gpath, "FLOODGATE_CONFIG_FILE"))
        missing = sorted(set(topo.switches) - set(fg_cfg.switches))
        if missing or fg_cfg.rules:
            raise ScenarioError(f"{gpath}: hopsim runs Floodgate on every switch with one VOQ pool each; this file "
                                + (f"leaves out switches {missing[:8]}" if missing else f"has {fg_cfg.rules} switches with VOQ group rules")
                                + "; allowed: every switch listed, 0 rule switches")

    written.append(write_text_atomic(topo_out, hpcc_topology(topo), "--out"))
    if flow_text is not None:
        written.append(write_text_atomic(flows_out, flow_text, "--out"))
        flow_file = flows_out
    else:
        flow_file = fpath
    shared = C.Config()
    for k, v in cfg.items():
        if k not in FG_KEYS or k in AS_HPCC:
            shared[k] = v
            shared.lines[k] = cfg.lines[k]
    shared["TOPOLOGY_FILE"], shared["FLOW_FILE"] = [str(topo_out)], [str(flow_file)]
    try:
        return _model(config, cfg, out, topo, fg_cfg, shared)
    except ScenarioError as e:
        # what the HPCC importer and the scenario check say of the converted files, said of the user's
        conv = {topo_out: (topo_path, _topology_lines(topo_text, len(topo.switches)))}
        if flow_file == flows_out:
            conv[flows_out] = (fpath, None)
        raise ScenarioError([_in_user_files(p, conv) for p in e.problems], source=e.source) from None


def _topology_lines(text: str, switches: int) -> Callable[[int], int]:
    """The line of the user's topology file that line `n` of its HPCC conversion comes from
    (`hpcc_topology`: the header, the switch ids on one line, then the links in order)."""
    rows = [no for no, _ in _rows(text)]

    def line(n: int) -> int:
        i = 0 if n <= 1 else 1 if n == 2 else 1 + switches + (n - 3)
        return rows[min(i, len(rows) - 1)]

    return line


def _in_user_files(problem: str, conv: dict[Path, tuple[Path, Callable[[int], int] | None]]) -> str:
    """`problem` with each converted file's name (and line, where known) put as the user's."""
    for made, (theirs, line) in conv.items():
        if line is not None:
            problem = re.sub(re.escape(str(made)) + r"(:? line) (\d+)", lambda m: f"{theirs}{m.group(1)} {line(int(m.group(2)))}", problem)
        else:  # the flows: one line each there, after a count line here
            problem = re.sub(re.escape(str(made)) + r"(:? line) (\d+)", lambda m: f"{theirs}: flow {int(m.group(2)) - 1}", problem)
        problem = problem.replace(str(made), str(theirs))
    return problem


def _model(config: Path, cfg: C.Config, out: Path, topo: Any, fg_cfg: Any, shared: C.Config) -> tuple[str, list[str]]:
    """The scenario's text and notes: the HPCC importer's reading of `shared`, then Floodgate's model."""
    base, notes = H._import(config, shared, out)
    sc = tomllib.loads(base)
    notes = [n for n in notes if not n.startswith(("TOPOLOGY_FILE", "FLOW_FILE"))]
    used = _floodgate_model(sc, cfg, topo, fg_cfg, notes)
    for key in cfg:
        if key in IGNORED:
            notes.append(f"{key}: ignored ({IGNORED[key]})")
    floodgate = sc["flow_control"]["scheme"] == "floodgate"
    header = [
        f"# Imported by `hopsim import-floodgate` from {config}",
        "# It runs Floodgate-NS3's model: its 38 B PPP header (transport.header 72, ack 70, ack_min 84,",
        "# control.pfc 70" + (", control.credit" if floodgate else "") + "), its MMU (buffer.alpha 0.25 by rate, "
        "headroom 'floodgate'), the HPCC",
        "# simulator's conventions it shares (see `hopsim import-hpcc`)"
        + (", and the Floodgate options below" if floodgate else "") + ".",
    ]
    if floodgate:
        header += [
            "# Floodgate options (flow_control.floodgate): ideal, m / win_m, T, byte_counter, thre_credit_bdp,",
            "# voq_pool, max_voq, window_unit, window_fit, voq_service, dst_pause_on, pfc, ecn_counts_voq.",
            "# Its VOQ packets join the egress FIFO once their window allows (voq_service); a packet goes while its",
            "# own size fits the window (window_fit); its ideal design's delayCredit is floodgate.ideal_delay_credit.",
        ]
    header += [
        "# Delete a line to get hopsim's paper-following default.",
        "# Keys honoured: " + ", ".join(sorted(used)),
        "# Its source ports count per source host in its flow list's order (the flow file's eighth field;",
        "# workload.source_ports for flows without one); its route computation meets",
        "# neighbours in descending node id (routing.neighbour_order)"
        + ("; ACKs return along their data's path (routing.ack_path)." if sc.get("routing", {}).get("ack_path") == "reverse" else "."),
    ]
    return H.with_header(header, notes, sc, out, cfg), notes


def _at_least_0(cfg: C.Config, key: str, conv: Any, default: Any) -> Any:
    """A count, multiple or timeout of its switches: negative is no setting there (its unsigned
    fields would wrap to huge values, its multiples would turn a threshold upside down)."""
    v = C._one(cfg, key, conv, default)
    if v < 0:
        raise ScenarioError(f"{C._key(cfg, key)}: {v}; allowed: 0 or more")
    return v


def _floodgate_model(sc: dict[str, Any], cfg: C.Config, topo: Any, fg_cfg: Any, notes: list[str]) -> set[str]:
    """Set what Floodgate-NS3 does differently from the HPCC simulator; returns the keys used."""
    cc_mode = C._one(cfg, "CC_MODE", int, 1)
    other_cc = set().union(*H.CC_KEYS.values()) - H.CC_KEYS.get(cc_mode, set())
    used = {k for k in cfg if k in HONOURED or (k in H.HONOURED and k not in FG_KEYS and k not in other_cc)}
    tr = sc["transport"]
    tr.update({"header": DATA_HEADER, "ack": ACK_HEADER, "ack_min": ACK_MIN})
    ack_high = C._one(cfg, "ACK_HIGH_PRIO", int, 0) == 1
    tr["ack_priority"] = "control" if ack_high else "data"
    if ack_high:
        tr.pop("ack_pause_at_nic", None)
    # third.cc: `uint32_t shift = 2;` (alpha 1/4 at the NIC rate, one step less per doubling) and
    # ConfigHdrm(j, bdp*4) with bdp = 2 x rate x delay
    sc["buffer"].update({"alpha": 0.25, "alpha_by_rate": True, "headroom": "floodgate"})
    control = sc.setdefault("control", {})
    control["pfc"] = PFC_FRAME
    # third.cc lines 3220-3224, 3261, 3358: `port = portNumder[src]++`, one counter per source host,
    # in its list's order: written into the flow file (files.source_ports); this numbers the ports
    # of a flow file given as an HPCC one (in start order, which is its list's when that is sorted)
    sc["workload"]["source_ports"] = "per_source_host"
    # its CalculateRoute (third.cc line 968) meets a node's neighbours in descending node id: its
    # buffer logs show the ToR uplinks an incast fills at its start to be those this order picks
    # (all 12 busy ones on its DCQCN Web Server run, 2 with the ascending order)
    sc.setdefault("routing", {})["neighbour_order"] = "descending"
    if C._one(cfg, "SYMMETRIC_ROUTING_MODE", int, 0) == 1:
        sc.setdefault("routing", {})["ack_path"] = "reverse"
    if C._one(cfg, "USE_FLOODGATE", int, 0) != 1:
        return used - {k for k in HONOURED if k.startswith(("SWT", "SWI", "FLOODGATE", "SRCTOR", "PFC_TH", "RESET"))}
    ack_mode = C._one(cfg, "SWTICH_ACK_MODE", int, 1)
    bc = _at_least_0(cfg, "SWTICH_BYTE_COUNTER", int, 1)
    interval = C._one(cfg, "SWTICH_CREDIT_INTERVAL", C._real, 0.0)
    win_m = C._one(cfg, "SWITCH_WIN_M", C._real, 1.5)
    th_m = _at_least_0(cfg, "SWITCH_ACK_TH_M", C._real, 0.0)
    ideal = ack_mode == 1 and bc <= 1 and interval == 0
    rates = [r for a, b, r, _ in topo.links if a in topo.switches and b in topo.switches] or [r for *_, r, _ in topo.links]
    delays = [d for *_, d in topo.links]
    max_gbps, max_delay = max(rates), max(delays)
    mtu = sc["transport"]["mtu"] + DATA_HEADER
    hop_bdp = max_gbps / 8 * (2 * max_delay + mtu * 8 / max_gbps)  # bytes: rate x (2 delay + one packet)
    fg: dict[str, Any] = {}
    if ideal:
        fg.update({"ideal": True, "m": win_m})
    else:
        if interval <= 0:
            raise ScenarioError(f"{C._key(cfg, 'SWTICH_CREDIT_INTERVAL')}: 0 with a practical credit mode; allowed: a "
                                "positive interval in us (0 goes with SWTICH_ACK_MODE 1 and SWTICH_BYTE_COUNTER 1, the ideal design)")
        fg.update({"T": f"{interval:g}us", "win_m": win_m})
        if bc > 1:
            fg["byte_counter"] = bc
    # its VOQs, in the ideal design too: one FIFO per destination from a switch-wide group
    # (third.cc lines 3028-3036, the default config's one group; a hash once they run out)
    voqs = fg_cfg.voqs if fg_cfg else 100
    # windows in bytes (switch-mmu.cc lines 252-263: `m_wins[dst] < pktSize`)
    fg.update({"voq_pool": "shared", "max_voq": voqs, "window_unit": "bytes"})
    # a packet goes while its own size fits (switch-mmu.cc lines 252-263, asked with the arriving
    # packet's size in switch-node.cc line 553 and the VOQ head's in voq.cc line 110), and a credit
    # moves a VOQ's packets into the egress FIFO while they fit (switch-node.cc lines 586-619,
    # switch-mmu.cc lines 361-385, voq.cc lines 100-129)
    fg.update({"window_fit": "own_size", "voq_service": "egress_fifo"})
    # its ECN reads egress_bytes per port and priority, which counts a packet from admission,
    # before it waits in a VOQ (switch-node.cc:277-301, 386; switch-mmu.cc:138-156)
    fg["ecn_counts_voq"] = True
    sc["queues"] = {**sc.get("queues", {}), "count": min(voqs + 1, 1024)}
    if th_m > 0:
        fg["thre_credit_bdp"] = round(max_gbps / 8 * max_delay * 2 * th_m / hop_bdp, 6)
        if ideal:  # its ideal design delays credits too (switch-node.cc lines 446-478)
            fg["ideal_delay_credit"] = True
    else:
        fg["delay_credit"] = False
    syn = _at_least_0(cfg, "SWITCH_SYN_TIMEOUT_US", int, 0)
    fg["syn_timeout"] = f"{syn}us" if syn > 0 else "1s"
    if C._one(cfg, "SRCTOR_DST_PFC", int, 1) == 1:
        # per-destination PFC at the source ToR's host ports, no PFC between switches
        host_rate = min(r for a, b, r, _ in topo.links if (a in topo.switches) != (b in topo.switches))
        host_delay = max(d for a, b, _, d in topo.links if (a in topo.switches) != (b in topo.switches))
        host_bdp = host_rate / 8 * (2 * host_delay + mtu * 8 / host_rate)
        th = C._one(cfg, "PFC_TH_STATIC", C._real, 1.5) * 2 * host_rate / 8 * host_delay
        fg.update({"pfc": False, "dst_pause": True, "dst_pause_on": "source_host",
                   "thre_off_bdp": round((th + RESERVE) / host_bdp, 6),
                   "thre_on_bdp": round((th + RESERVE - RESUME_OFFSET) / host_bdp, 6)})
        if C._one(cfg, "USE_DYNAMIC_PFC_THRESHOLD", int, 1) == 1:
            notes.append("SRCTOR_DST_PFC: with USE_DYNAMIC_PFC_THRESHOLD 1 its per-destination threshold is dynamic "
                         "(PFC_DST_ALHPA); the static PFC_TH_STATIC threshold is used here")
    else:
        fg["pfc"] = True
    control["credit"] = credit_frame(ack_mode, bc, interval, max_gbps, topo.nodes - len(topo.switches))
    sc["flow_control"] = {**sc["flow_control"], "scheme": "floodgate", "floodgate": fg}
    return used
