"""`hopsim import-hpcc CONFIG.txt --out SCENARIO.toml`: a config of the HPCC ns-3 simulator
(alibaba-edu/High-Precision-Congestion-Control, ``simulation/mix/config.txt`` as read by
``scratch/third.cc``) as a hopsim scenario that keeps that simulator's conventions.

The config is ``KEY value...`` lines (``{...}`` comments, as in its ``config_doc.txt``, are
ignored). What each key becomes is in `HONOURED`; keys in `IGNORED` are accepted without effect
(outputs, tracing, knobs of CC modes other than the one chosen); values hopsim cannot honour
(`REJECTED` and CC modes the core does not have) are an error (exit code 2) rather than a
silently different simulation.

The scenario it writes runs that simulator's model (what differs from hopsim's paper-following
defaults, each a named option a scenario can also set by hand; the full list with the source
function each follows is in the header comment of the written file and in `import_hpcc`): the
MMU of its `switch-mmu.cc` (headroom 3 x rate x delay, alpha scaled by port rate), pauses held
until resumed, its ECMP hash, its packet sizes (36 B data headers plus the CC's INT field, 48 B
ACKs, 31 B PFC frames), ECN echoed as a flag on every ACK, ACKs in the data queue unless
ACK_HIGH_PRIO 1, no retransmission timeout, its Mellanox DCQCN, HPCC, TIMELY and rate-based DCTCP,
and flows starting at the flow file's times less 2 s.
"""

from __future__ import annotations

import math
import os
import tomllib
from collections import deque
from fractions import Fraction
from pathlib import Path
from typing import Any

import tomli_w

from ...errors import ScenarioError
from ...scenario.paths import read_text, resolve, write_text_atomic
from ...scenario.units import U64_MAX, UnitError, fmt_rate, parse_rate, parse_time
from ..ns3_config import Config, _file, _key, _map, _one, _real, parse_config

__all__ = ["import_hpcc", "parse_config", "HONOURED", "IGNORED", "REJECTED", "CC_MODES"]

HONOURED = {
    "TOPOLOGY_FILE": "topology = { kind = 'hpcc', file = ... } (path relative to the config, its parent, or the working directory)",
    "FLOW_FILE": "workload = { kind = 'hpcc_flows', file = ..., time_offset = '2s' } (0 if a flow starts before 2 s)",
    "SIMULATOR_STOP_TIME": "duration = stop time - time_offset (a stop time at or before the offset is refused: that "
                           "simulator would stop before any flow starts)",
    "CC_MODE": "1 -> dcqcn (model 'mlx'), 3 -> hpcc, 7 -> timely, 8 -> dctcp_rate (the simulator's rate-based RDMA DCTCP)",
    "ENABLE_QCN": "ecn.enabled",
    "USE_DYNAMIC_PFC_THRESHOLD": "flow_control.pfc.threshold = 'dynamic' (its MMU uses the dynamic threshold either way)",
    "PACKET_PAYLOAD_SIZE": "transport.mtu (payload bytes per packet)",
    "BUFFER_SIZE": "buffer.size = BUFFER_SIZE MiB (third.cc: buffer_size * 1024 * 1024)",
    "KMIN_MAP": "ecn.kmin at ecn.ref_rate (KB = 1000 B); the map must be linear in rate",
    "KMAX_MAP": "ecn.kmax at ecn.ref_rate; linear in rate",
    "PMAX_MAP": "ecn.pmax; one value for every rate",
    "RATE_AI": "the CC's additive step as given (dcqcn.rai, hpcc.rai, timely.rai): that simulator does not scale it",
    "RATE_HAI": "dcqcn.rhai, timely.rhai (hyper step as given)",
    "EWMA_GAIN": "dcqcn.g, dctcp_rate.g",
    "RP_TIMER": "dcqcn.rate_increase_timer (us)",
    "ALPHA_RESUME_INTERVAL": "dcqcn.alpha_timer (us)",
    "RATE_DECREASE_INTERVAL": "dcqcn.rate_decrease_interval (us)",
    "FAST_RECOVERY_TIMES": "dcqcn.fast_recovery_stages",
    "MIN_RATE": "the CC's min_rate",
    "CLAMP_TARGET_RATE": "dcqcn.clamp_target_rate",
    "DCTCP_RATE_AI": "dctcp_rate.rai (CC_MODE 8)",
    "U_TARGET": "hpcc.eta",
    "MI_THRESH": "hpcc.max_stage",
    "FAST_REACT": "hpcc.fast_react",
    "MULTI_RATE": "hpcc.multi_rate",
    "SAMPLE_FEEDBACK": "hpcc.sample_feedback",
    "INT_MULTI": "hpcc.int_multi (INT qlen in units of 80 x INT_MULTI bytes, txBytes of 128 x INT_MULTI)",
    "HAS_WIN": "0 -> transport.window = 'off'; 1 -> a BDP window (see GLOBAL_T)",
    "GLOBAL_T": "1 -> window = the largest BDP over all host pairs (third.cc maxBdp) and HPCC's T = the largest RTT; 0 -> each flow's own path",
    "VAR_WIN": "transport.window_by_rate (window x rate / line rate)",
    "RATE_BOUND": "transport.pace_at_rate",
    "ACK_HIGH_PRIO": "transport.ack_pause_at_nic: 0 -> the NIC holds ACKs while priority 3 is paused, 1 -> never; "
                     "at switches ACKs ride the data queue either way (ack_priority 'data': third.cc never sets the "
                     "switches' AckHighPrio)",
    "QLEN_MON_START": "record.qlen_monitor.start (ns, absolute: the 2 s offset is kept in time_offset)",
    "QLEN_MON_END": "record.qlen_monitor.end",
    "ERROR_RATE_PER_LINK": "faults.loss_rate: each packet crossing any link is lost with this probability, in each "
                           "direction (its RateErrorModel per packet on every device; a link's own non-zero error rate "
                           "in the topology file takes its place there, as hopsim's reader of that file does too)",
    "LINK_DOWN": "`t a b` with t > 0: faults.link_events = the link a-b goes down at 2 s + t us (less the time "
                 "offset), for good; routes are computed again without it (its TakeDownLink); '0 0 0': none",
    "L2_ACK_INTERVAL": "must be 1: an ACK per packet (0 turns ACKs off there, which only works without loss)",
    "L2_BACK_TO_ZERO": "must be 0: go-back-N from the first unacknowledged byte",
    "L2_CHUNK_SIZE": "no effect with L2_ACK_INTERVAL 1 (an ACK per packet either way), as in that simulator",
}
IGNORED = {
    "TRACE_FILE": "packet traces: set record.trace (flows or [node, port] pairs) for hopsim's trace.parquet",
    "TRACE_OUTPUT_FILE": "output file name",
    "FCT_OUTPUT_FILE": "output file name: `hopsim export-hpcc RUN_DIR` writes fct.txt",
    "PFC_OUTPUT_FILE": "output file name: `hopsim export-hpcc RUN_DIR` writes pfc.txt",
    "QLEN_MON_FILE": "output file name: `hopsim export-hpcc RUN_DIR` writes qlen.txt",
    "ENABLE_TRACE": "tracing switch (see TRACE_FILE)",
    "PAUSE_TIME": "its pauses hold until resumed whatever this says (flow_control.pfc.until_resume)",
    "DATA_RATE": "unused by third.cc as well (rates come from the topology file)",
    "LINK_DELAY": "unused by third.cc as well",
    "PINT_LOG_BASE": "HPCC-PINT parameter (CC_MODE 10)",
    "PINT_PROB": "HPCC-PINT parameter (CC_MODE 10)",
    "ENABLE_PFC": "PFC is always on in that simulator's switches",
}
REJECTED = {"L2_ACK_INTERVAL", "L2_BACK_TO_ZERO"}
CC_MODES = {1: "DCQCN", 3: "HPCC", 7: "TIMELY", 8: "DCTCP", 10: "HPCC-PINT"}
SUPPORTED_CC_MODES = {1: "dcqcn", 3: "hpcc", 7: "timely", 8: "dctcp_rate"}
"""CC_MODE -> hopsim's algorithm. 10 (HPCC-PINT) is refused: it needs PINT's probabilistic,
log-encoded utilisation field at switches (`SwitchNode`'s log2apprx / `Pint::encode_u`), which
hopsim's INT does not carry."""
_MAP_KEYS = {"KMIN_MAP", "KMAX_MAP", "PMAX_MAP"}
CC_KEYS = {
    1: {"RATE_AI", "RATE_HAI", "EWMA_GAIN", "RP_TIMER", "ALPHA_RESUME_INTERVAL", "RATE_DECREASE_INTERVAL",
        "FAST_RECOVERY_TIMES", "MIN_RATE", "CLAMP_TARGET_RATE"},
    3: {"U_TARGET", "MI_THRESH", "FAST_REACT", "MULTI_RATE", "SAMPLE_FEEDBACK", "INT_MULTI", "RATE_AI", "MIN_RATE"},
    7: {"RATE_AI", "RATE_HAI", "MIN_RATE"},
    8: {"EWMA_GAIN", "DCTCP_RATE_AI", "MIN_RATE"},
}
"""The keys each CC_MODE reads (`RdmaHw`'s attributes its code paths use); the others in a config
have no effect under that mode, there as here."""

# Wire sizes of that simulator's packets (PPP 2 + IPv4 20 + ...), bytes.
DATA_HEADER = 36
"""PPP 2 + IPv4 20 + UDP 8 + SeqTs 6; plus its INT field: HPCC's 42 (added by hopsim's HPCC
itself, `int_header`), TIMELY's 8-byte timestamp, nothing for DCQCN and DCTCP."""
ACK_HEADER = 34
"""PPP 2 + IPv4 20 + qbbHeader 12 (plus the echoed INT field), padded to `ACK_MIN`."""
ACK_MIN = 48
"""`RdmaHw::ReceiveUdp` pads the ACK's payload to 60 - 14 - 20 bytes of headers and payload: 48 B."""
PFC_FRAME = 31
"""PPP 2 + IPv4 20 + PauseHeader 9 (`QbbNetDevice::SendPfc`)."""
TIMELY_TS = 8
"""TIMELY's IntHeader (mode TS): one 64-bit timestamp on data packets and ACKs."""


Adjacency = dict[int, list[tuple[int, int, int]]]


def _topology_facts(text: str) -> tuple[int, set[int], Adjacency, set[int]]:
    """NIC rate (bits/s), the rates of switch ports, the adjacency (peer, rate, delay in ns) and
    the switch ids of an HPCC topology file."""
    lines = [l.split() for l in text.splitlines() if l.strip()]
    n, s, nl = (int(x) for x in lines[0][:3])
    switches = {int(x) for x in lines[1]} if s else set()
    adj: Adjacency = {i: [] for i in range(n)}
    nic = 0
    rates: set[int] = set()
    for f in lines[2 : 2 + nl]:
        a, b, rate, delay = int(f[0]), int(f[1]), parse_rate(f[2]), _delay_ns(f[3])
        adj[a].append((b, rate, delay))
        adj[b].append((a, rate, delay))
        if a in switches or b in switches:
            rates.add(rate)
        if not nic and (a not in switches or b not in switches):
            nic = rate
    return nic, rates, adj, switches


def _topology_has_loss(text: str) -> bool:
    """Whether a link line of an HPCC topology file (read by the core already) has a non-zero
    error rate."""
    lines = [l.split() for l in text.splitlines() if l.strip()]
    try:
        n_links = int(lines[0][2])
        return any(len(f) == 5 and float(f[4]) > 0 for f in lines[2:2 + n_links])
    except (ValueError, IndexError):
        return False


def _delay_ns(s: str) -> int:
    return parse_time(s) // 1000


def _max_bdp(adj: Adjacency, switches: set[int], payload: int) -> tuple[int, int]:
    """The largest BDP (bytes) and the largest RTT (ns) over host pairs, as third.cc's maxBdp and
    maxRtt: BFS through switches, rtt = 2 x delay + payload serialisation at each hop (whole ns
    per hop), bdp = rtt x the path's narrowest rate."""
    hosts = [i for i in adj if i not in switches]
    best, best_rtt = 0, 0
    for h in hosts:
        dist = {h: 0}
        delay = {h: 0}
        tx = {h: 0}
        bw = {h: math.inf}
        q = deque([h])
        while q:
            u = q.popleft()
            for v, rate, d in sorted(adj[u]):
                if v not in dist:
                    dist[v] = dist[u] + 1
                    delay[v] = delay[u] + d
                    tx[v] = tx[u] + payload * 1_000_000_000 * 8 // rate
                    bw[v] = min(bw[u], rate)
                    if v in switches:
                        q.append(v)
        for o in hosts:
            if o != h and o in dist:
                rtt = delay[o] * 2 + tx[o]
                best = max(best, int(rtt * bw[o] // 1_000_000_000 // 8))
                best_rtt = max(best_rtt, rtt)
    return best, best_rtt


def import_hpcc(config: Path | str, out: Path | str) -> tuple[Path, list[str]]:
    """Write the scenario; returns its path and warnings (keys ignored or unknown).

    The scenario runs that simulator's model, every part of it a named option written out in the
    file (see the `[transport]`, `[buffer]`, `flow_control.pfc`, `[routing]` and the congestion
    control's tables and the header comment): hopsim's own defaults, which follow the papers, stay
    untouched for scenarios that do not ask for this."""
    config = resolve(config)
    out = resolve(out)
    cfg = parse_config(read_text(config))
    try:
        text, warnings = _import(config, cfg, out)
    except ScenarioError as e:
        if e.source is not None:
            raise
        # every problem is about the config or a file it names: say which config
        raise ScenarioError(e.problems, source=str(config)) from None
    return write_text_atomic(out, text, "--out"), warnings


def _refusals(cfg: Config) -> list[str]:
    """What the config asks that hopsim cannot honour, or cannot do without, all at once."""
    problems: list[str] = []
    for key in ("TOPOLOGY_FILE", "FLOW_FILE"):
        if key not in cfg:
            problems.append(f"{key}: missing; it is required")
    cc_mode = _one(cfg, "CC_MODE", int, 1)
    if cc_mode == 10:
        problems.append(
            f"{_key(cfg, 'CC_MODE')}: 10 (HPCC-PINT) needs PINT's log-encoded utilisation field stamped by switches "
            "(SwitchNode's log2apprx, Pint::encode_u), which hopsim's INT does not carry; allowed: "
            + ", ".join(f"{k} ({CC_MODES[k]})" for k in SUPPORTED_CC_MODES)
        )
    elif cc_mode not in SUPPORTED_CC_MODES:
        problems.append(f"{_key(cfg, 'CC_MODE')}: {cc_mode} is not a mode of that simulator; allowed: "
                        + ", ".join(f"{k} ({CC_MODES[k]})" for k in SUPPORTED_CC_MODES))
    if not 0.0 <= _one(cfg, "ERROR_RATE_PER_LINK", _real, 0.0) <= 1.0:
        problems.append(f"{_key(cfg, 'ERROR_RATE_PER_LINK')}: {cfg['ERROR_RATE_PER_LINK'][0]} is not a probability; "
                        "allowed: 0 to 1")
    if "LINK_DOWN" in cfg:
        vals = cfg["LINK_DOWN"]
        if len(vals) != 3 or not all(v.isdigit() for v in vals):
            problems.append(f"{_key(cfg, 'LINK_DOWN')}: expected `time_us node_a node_b` (whole numbers; "
                            f"'0 0 0' for none), got {' '.join(vals) or 'none'}")
    if _one(cfg, "L2_ACK_INTERVAL", int, 1) != 1:
        problems.append(f"{_key(cfg, 'L2_ACK_INTERVAL')}: hopsim ACKs every packet; allowed: 1")
    if _one(cfg, "L2_BACK_TO_ZERO", int, 0) != 0:
        problems.append(f"{_key(cfg, 'L2_BACK_TO_ZERO')}: hopsim goes back to the first unacknowledged byte; allowed: 0")
    return problems


def _check_files(topo: Path, flows: Path) -> list[str]:
    """The topology and flow files through the core's own readers (`hopsim validate`'s), before
    anything here reads them: a malformed line, a link to a node that does not exist, hosts
    without links, a flow between unknown nodes are reported as there (file, line and field), and
    the facts read below can rely on the file's shape. Only the files' problems count here (the
    settings are placeholders; the scenario written is validated whole at the end). Returns the
    readers' notes (text after the declared counts)."""
    from ...scenario.model import scenario_from_dict

    keys = {"topology.file ": "TOPOLOGY_FILE ", "workload.file ": "FLOW_FILE "}
    probe = scenario_from_dict({
        "topology": {"kind": "hpcc", "file": str(topo)},
        # offset 0: a flow file with flows before 2 s is imported with offset 0 (see below)
        "workload": {"kind": "hpcc_flows", "file": str(flows), "time_offset": "0s"},
        "flow_control": {"scheme": "none"},
        "record": {"buffer_interval": "off"},
    })
    try:
        probe.validate()
    except ScenarioError as e:
        mine = [keys[k] + p[len(k):] for p in e.problems for k in keys if p.startswith(k)]
        if mine:
            raise ScenarioError(mine) from None
    return [keys[k] + w[len(k):] for w in probe.warnings for k in keys if w.startswith(k)]


def _duration(cfg: Config, offset_s: float) -> str | None:
    """SIMULATOR_STOP_TIME less the flows' offset, as a run duration. That simulator stops at
    the stop time whatever has started, so a stop time at or before the offset is a run that ends
    before its first flow can start (an empty fct.txt there): refused here rather than dropped,
    which would run every flow to completion instead."""
    stop = _one(cfg, "SIMULATOR_STOP_TIME", Fraction)
    if stop is None:
        return None
    ps = (stop - Fraction(offset_s)) * 10**12
    if round(ps) <= 0:  # within half a picosecond of the offset is at it
        raise ScenarioError(
            f"{_key(cfg, 'SIMULATOR_STOP_TIME')}: {' '.join(cfg['SIMULATOR_STOP_TIME'])} s is not after the flows' "
            f"time offset of {offset_s:g} s (the flow file's times less {offset_s:g} s are hopsim's run times), so "
            f"that simulator stops before any flow starts; give a stop time after {offset_s:g} s, or leave the key "
            "out to run until every flow finishes")
    if ps > U64_MAX:
        raise ScenarioError(f"{_key(cfg, 'SIMULATOR_STOP_TIME')}: {' '.join(cfg['SIMULATOR_STOP_TIME'])} s is "
                            "too large: hopsim's clock ends after about 213 days")
    return f"{round(ps)}ps"


def _first_start(flow_path: Path, text: str) -> float:
    """The earliest start time of the flows the file declares (its reader reads by count;
    trailing text is a note there); 2.0 when it declares none. The file has passed the core's
    reader (`_check_files`)."""
    lines = [l.split() for l in text.splitlines() if l.strip()]
    try:
        count = int(lines[0][0]) if lines else 0
        flow_lines = lines[1 : 1 + count]
        return min(float(f[5]) for f in flow_lines) if flow_lines else 2.0
    except (ValueError, IndexError):
        raise ScenarioError(f"FLOW_FILE {flow_path}: not an HPCC flow file (`hopsim validate` on a scenario "
                            "using it names the bad line)") from None


def _import(config: Path, cfg: Config, out: Path) -> tuple[str, list[str]]:
    """The scenario's text, validated, and the notes for the user."""
    warnings: list[str] = []
    problems = _refusals(cfg)
    if problems:
        raise ScenarioError(problems)
    cc_mode = _one(cfg, "CC_MODE", int, 1)

    topo_path = _file(cfg, "TOPOLOGY_FILE", config.parent)
    flow_path = _file(cfg, "FLOW_FILE", config.parent)
    notes = _check_files(topo_path, flow_path)
    topo_text = read_text(topo_path, "TOPOLOGY_FILE")
    try:
        nic, switch_rates, adj, switches = _topology_facts(topo_text)
    except (ValueError, IndexError, KeyError, UnitError) as e:
        raise ScenarioError(f"TOPOLOGY_FILE {topo_path}: not an HPCC topology file ({e})") from None
    payload = _one(cfg, "PACKET_PAYLOAD_SIZE", int, 1000)
    if not 64 <= payload <= 65536:
        raise ScenarioError(f"{_key(cfg, 'PACKET_PAYLOAD_SIZE')}: {payload} bytes; allowed: 64 to 65536")

    offset_s = 2.0 if _first_start(flow_path, read_text(flow_path, "FLOW_FILE")) >= 2.0 else 0.0
    offset_ps = int(offset_s * 10**12)

    def rel(p: Path) -> str:
        return os.path.relpath(p, out.parent)

    sc: dict[str, Any] = {
        "name": out.stem,
        "description": f"imported from the HPCC simulator config {config.name} by hopsim import-hpcc",
        "topology": {"kind": "hpcc", "file": rel(topo_path)},
        "workload": {"kind": "hpcc_flows", "file": rel(flow_path), "time_offset": f"{offset_s:g}s"},
    }
    duration = _duration(cfg, offset_s)
    if duration is not None:
        sc["duration"] = duration

    # its MMU (switch-mmu.cc + third.cc): buffer in MiB, 4 KiB reserve, 3 KiB resume offset,
    # headroom 3 x rate x delay, alpha 1/8 at the NIC rate and doubled per doubling of port rate
    sc["buffer"] = {"size": f"{_one(cfg, 'BUFFER_SIZE', int, 16)}MiB", "reserve": "4KiB", "resume_offset": "3KiB",
                    "alpha": 0.125, "alpha_by_rate": True, "headroom": "hpcc", "headroom_first": True, "lossless": True}
    if _one(cfg, "USE_DYNAMIC_PFC_THRESHOLD", int, 1) != 1:
        warnings.append("USE_DYNAMIC_PFC_THRESHOLD: 0 has no effect in that simulator either (its MMU always "
                        "uses the dynamic threshold); imported as 'dynamic'")

    ecn: dict[str, Any] = {"enabled": bool(_one(cfg, "ENABLE_QCN", int, 1))}
    if _MAP_KEYS & set(cfg):
        missing = _MAP_KEYS - set(cfg)
        if missing:
            raise ScenarioError(f"{', '.join(sorted(missing))}: missing; give KMIN_MAP, KMAX_MAP and PMAX_MAP together")
        kmin, kmax, pmax = (_map(cfg, k) for k in ("KMIN_MAP", "KMAX_MAP", "PMAX_MAP"))
        rates = sorted(switch_rates) or sorted(kmin)
        for key, m in (("KMIN_MAP", kmin), ("KMAX_MAP", kmax), ("PMAX_MAP", pmax)):
            absent = [r for r in rates if r not in m]
            if absent:
                raise ScenarioError(f"{key}: no entry for the topology's rate(s) {', '.join(fmt_rate(r) for r in absent)}")
        ref = max(rates)
        for key, m in (("KMIN_MAP", kmin), ("KMAX_MAP", kmax)):
            for r in rates:
                if abs(m[r] * ref - m[ref] * r) > 1e-9 * m[ref] * r:
                    raise ScenarioError(
                        f"{key}: {m[r]:g} KB at {fmt_rate(r)} is not linear in rate with {m[ref]:g} KB at "
                        f"{fmt_rate(ref)}; hopsim scales one (kmin, kmax) pair with port rate"
                    )
        if len({pmax[r] for r in rates}) != 1:
            raise ScenarioError("PMAX_MAP: hopsim has one pmax for every rate; the map differs between rates")
        ecn.update({"kmin": f"{round(kmin[ref] * 1000)}B", "kmax": f"{round(kmax[ref] * 1000)}B",
                    "pmax": pmax[ref], "ref_rate": fmt_rate(ref)})
    sc["ecn"] = ecn
    sc["flow_control"] = {"scheme": "pfc", "pfc": {"threshold": "dynamic", "until_resume": True}}
    sc["control"] = {"pfc": PFC_FRAME}
    sc["routing"] = {"ecmp": "hpcc"}
    # ns-3 at its default 1 ns resolution: Seconds(m_bps.CalculateTxTime(size)) on every link
    # (qbb-net-device.cc) and in the NIC's pacing (rdma-hw.cc), cut down to whole nanoseconds
    sc["tx_time"] = "whole_ns"

    def us(key: str) -> str:
        return f"{round(_one(cfg, key, Fraction) * 10**6)}ps"

    def rate(key: str, default: str) -> str:
        return fmt_rate(_one(cfg, key, parse_rate, parse_rate(default)))

    algo = SUPPORTED_CC_MODES[cc_mode]
    max_bdp, max_rtt_ns = _max_bdp(adj, switches, payload)
    global_t = _one(cfg, "GLOBAL_T", int, 1) == 1
    has_win = _one(cfg, "HAS_WIN", int, 1) == 1
    # defaults below are third.cc's and RdmaHw's, for keys a config leaves out
    cc: dict[str, Any]
    if algo == "dcqcn":
        cc = {"model": "mlx", "rai": rate("RATE_AI", "5Mb/s"), "rhai": rate("RATE_HAI", "50Mb/s"),
              "g": _one(cfg, "EWMA_GAIN", _real, 1 / 16), "byte_counter": 0,
              "rate_increase_timer": us("RP_TIMER") if "RP_TIMER" in cfg else "1500us",
              "alpha_timer": us("ALPHA_RESUME_INTERVAL") if "ALPHA_RESUME_INTERVAL" in cfg else "55us",
              "rate_decrease_interval": us("RATE_DECREASE_INTERVAL") if "RATE_DECREASE_INTERVAL" in cfg else "4us",
              "fast_recovery_stages": _one(cfg, "FAST_RECOVERY_TIMES", int, 5),
              "min_rate": rate("MIN_RATE", "100Mb/s"),
              "clamp_target_rate": bool(_one(cfg, "CLAMP_TARGET_RATE", int, 0))}
    elif algo == "hpcc":
        cc = {"eta": _one(cfg, "U_TARGET", _real, 0.95), "max_stage": _one(cfg, "MI_THRESH", int, 5),
              "rai": rate("RATE_AI", "5Mb/s"), "fast_react": bool(_one(cfg, "FAST_REACT", int, 1)),
              "min_rate": rate("MIN_RATE", "100Mb/s"), "multi_rate": bool(_one(cfg, "MULTI_RATE", int, 1)),
              "sample_feedback": bool(_one(cfg, "SAMPLE_FEEDBACK", int, 0)), "int_multi": _one(cfg, "INT_MULTI", int, 1)}
        if global_t:
            # third.cc hands every QP maxRtt as its base RTT and maxBdp as m_win
            cc["base_rtt"] = f"{max_rtt_ns}ns"
            if has_win:
                cc["window"] = f"{max_bdp}B"
    elif algo == "timely":
        cc = {"rai": rate("RATE_AI", "5Mb/s"), "rhai": rate("RATE_HAI", "50Mb/s"), "min_rate": rate("MIN_RATE", "100Mb/s")}
    else:  # dctcp_rate
        cc = {"g": _one(cfg, "EWMA_GAIN", _real, 1 / 16), "rai": rate("DCTCP_RATE_AI", "1000Mb/s"),
              "min_rate": rate("MIN_RATE", "100Mb/s")}
    sc["congestion_control"] = {"algorithm": algo, algo: cc}

    ack_high = _one(cfg, "ACK_HIGH_PRIO", int, 0) == 1
    int_bytes = TIMELY_TS if algo == "timely" else 0  # HPCC's INT bytes come with hpcc.int_header
    transport: dict[str, Any] = {
        "mtu": payload, "header": DATA_HEADER + int_bytes, "ack": ACK_HEADER + int_bytes, "ack_min": ACK_MIN,
        "rto": "off", "nack_interval": "500us", "cnp": "ack_flag",
        # its switches put ACKs in the data queue whatever ACK_HIGH_PRIO says (third.cc never sets
        # SwitchNode's AckHighPrio); the key decides only whether the NIC holds them during pauses
        "ack_priority": "data", "ack_pause_at_nic": not ack_high,
        "window_by_rate": bool(_one(cfg, "VAR_WIN", int, 0)),
        "repace_on_rate_change": algo == "hpcc",
        "pace_at_rate": bool(_one(cfg, "RATE_BOUND", int, 1)),
    }
    if not has_win:
        transport["window"] = "off"
    elif global_t:
        transport["window"] = f"{max_bdp}B"
    else:
        transport["window"] = "bdp"
        warnings.append("GLOBAL_T: 0 gives each flow hopsim's per-path BDP (one packet out, one ACK back), "
                        "close to but not exactly the simulator's pairBdp")
    sc["transport"] = transport

    faults: dict[str, Any] = {}
    loss = _one(cfg, "ERROR_RATE_PER_LINK", _real, 0.0)
    if loss > 0:
        faults["loss_rate"] = loss
    if "LINK_DOWN" in cfg:
        t_us, a, b = (int(v) for v in cfg["LINK_DOWN"])
        if t_us > 0:
            # third.cc: Seconds(2) + MicroSeconds(link_down_time), absolute; the link stays down
            at_ps = 2 * 10**12 + t_us * 10**6 - offset_ps
            faults["link_events"] = [{"at": f"{at_ps}ps", "link": [a, b], "state": "down"}]
    if faults:
        sc["faults"] = faults
    if loss > 0 or _topology_has_loss(topo_text):
        notes.append("ERROR_RATE_PER_LINK: with losses and no retransmission timeout (transport.rto = 'off', as in "
                         "that simulator) a lost last packet of a flow is never repaired there nor here; the watchdog "
                         "ends such a run (set transport.rto to repair it)")

    record: dict[str, Any] = {}
    if "QLEN_MON_START" in cfg or "QLEN_MON_END" in cfg:
        start = _one(cfg, "QLEN_MON_START", int, 2_000_000_000)
        end = _one(cfg, "QLEN_MON_END", int, 2_100_000_000)
        if end < start:
            raise ScenarioError(f"QLEN_MON_END: {end} ns is before QLEN_MON_START {start} ns")
        rs, re_ = max(start * 1000 - offset_ps, 0), max(end * 1000 - offset_ps, 0)
        record["qlen_monitor"] = {"start": f"{rs}ps", "end": f"{re_}ps", "interval": "100ns",
                                  "dump_interval": "100ms", "time_offset": f"{offset_ps}ps"}
    if record:
        sc["record"] = record

    unused = sorted(set(cfg) & set().union(*CC_KEYS.values()) - CC_KEYS[cc_mode])
    for key in cfg:
        if key in unused:
            continue
        if key in HONOURED:
            continue
        if key in IGNORED:
            warnings.append(f"{key}: ignored ({IGNORED[key]})")
        else:
            shown = key if key.isprintable() else ascii(key)
            warnings.append(f"{shown}: unknown key, ignored (third.cc ignores unknown keys too)")

    header = [
        f"# Imported by `hopsim import-hpcc` from {config}",
        "# It runs the HPCC simulator's model: every behaviour of that simulator that differs from hopsim's",
        "# defaults is set below by name (transport: ACK and header sizes, CNP as an ACK flag, ACK priority,",
        "# no RTO, window scaling, re-pacing; buffer: headroom 'hpcc', alpha_by_rate; flow_control.pfc.until_resume;",
        "# routing.ecmp 'hpcc'; ns-3's whole-nanosecond transmission times, tx_time 'whole_ns'; the congestion",
        "# control's own options). Delete a line to get hopsim's default.",
        "# Keys honoured: " + ", ".join(k for k in HONOURED if k in cfg and k not in unused),
    ]
    if unused:
        header.append(f"# Keys of other CC modes, no effect under CC_MODE {cc_mode} (as in that simulator): " + ", ".join(unused))
    if warnings:
        header += ["# Not honoured:"] + [f"#   {w}" for w in warnings]
    text = "\n".join(_comment(h) for h in header) + "\n\n" + tomli_w.dumps(sc)

    _validate(text, out, cfg)
    return text, warnings + notes


def imported(config: Path, out: Path, make) -> tuple[Path, list[str]]:
    """The shared end of the simulators' importers: `make(written)` returns the scenario's text
    and the notes, appending every side file it writes to `written`; a problem without a source
    is said to be about `config`; on any failure the side files go and nothing is left behind."""
    written: list[Path] = []
    try:
        try:
            text, notes = make(written)
        except ScenarioError as e:
            if e.source is not None:
                raise
            raise ScenarioError(e.problems, source=str(config)) from None
        return write_text_atomic(out, text, "--out"), notes
    except BaseException:
        for p in written:
            p.unlink(missing_ok=True)
        raise


def with_header(header: list[str], notes: list[str], sc: dict[str, Any], out: Path, cfg: Config) -> str:
    """The scenario's text: the header comment, its notes, the tables; validated first (`_validate`)."""
    if notes:
        header = header + ["# Notes:"] + [f"#   {n}" for n in notes]
    text = "\n".join(_comment(h) for h in header) + "\n\n" + tomli_w.dumps(sc)
    _validate(text, out, cfg)
    return text


def _comment(line: str) -> str:
    """A header line as a TOML comment can hold it: control characters (from a key or a path)
    escaped, which a comment may not contain."""
    return "".join(c if c.isprintable() or c == "\t" else ascii(c)[1:-1] for c in line)


FIELD_KEYS = {
    "duration": "SIMULATOR_STOP_TIME", "buffer.size": "BUFFER_SIZE", "transport.mtu": "PACKET_PAYLOAD_SIZE",
    "ecn.kmin": "KMIN_MAP", "ecn.kmax": "KMAX_MAP", "ecn.pmax": "PMAX_MAP", "ecn": "KMIN_MAP, KMAX_MAP",
    "record.qlen_monitor": "QLEN_MON_START, QLEN_MON_END",
    **{f"congestion_control.{algo}.{field}": key for algo in ("dcqcn", "hpcc", "timely", "dctcp_rate")
       for field, key in (("rai", "DCTCP_RATE_AI" if algo == "dctcp_rate" else "RATE_AI"), ("rhai", "RATE_HAI"),
                          ("min_rate", "MIN_RATE"), ("g", "EWMA_GAIN"))},
    "congestion_control.dcqcn.rate_increase_timer": "RP_TIMER",
    "congestion_control.dcqcn.alpha_timer": "ALPHA_RESUME_INTERVAL",
    "congestion_control.dcqcn.rate_decrease_interval": "RATE_DECREASE_INTERVAL",
    "congestion_control.dcqcn.fast_recovery_stages": "FAST_RECOVERY_TIMES",
    "congestion_control.hpcc.eta": "U_TARGET", "congestion_control.hpcc.max_stage": "MI_THRESH",
    "congestion_control.hpcc.int_multi": "INT_MULTI",
}
"""The config key each field of the written scenario comes from, to name it when the scenario
refuses the value."""


def _validate(text: str, out: Path, cfg: Config) -> None:
    """Validate the scenario before writing it. A value the scenario refuses is named by the
    config key it came from as well as by the scenario's field (`FIELD_KEYS`): the user wrote the
    key, and the scenario file does not exist."""
    from ...scenario.model import scenario_from_dict

    try:
        scenario_from_dict(tomllib.loads(text), out.parent).validate()
    except ScenarioError as e:
        raise ScenarioError([_from_key(p, cfg) for p in e.problems]) from None


def _from_key(problem: str, cfg: Config) -> str:
    for field in sorted(FIELD_KEYS, key=len, reverse=True):
        if problem.startswith(field) and problem[len(field):len(field) + 1] in (":", " ", "."):
            keys = FIELD_KEYS[field]
            where = ", ".join(_key(cfg, k) for k in keys.split(", ") if k in cfg) or keys
            return f"{where} (the scenario's {field}): {problem[len(field):].lstrip(' :.')}"
    return f"the imported scenario: {problem}"
