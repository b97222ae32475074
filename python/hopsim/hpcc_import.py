"""`hopsim import-hpcc CONFIG.txt --out SCENARIO.toml`: a config of the HPCC ns-3 simulator
(alibaba-edu/High-Precision-Congestion-Control, ``simulation/mix/config.txt`` as read by
``scratch/third.cc``) as a hopsim scenario that keeps that simulator's conventions.

The config is ``KEY value...`` lines (``{...}`` comments, as in its ``config_doc.txt``, are
ignored). What each key becomes is in `HONOURED`; keys in `IGNORED` are accepted without effect
(outputs, tracing, knobs of CC modes other than the one chosen); values hopsim cannot honour
(`REJECTED` and CC modes the core does not have) are an error (exit code 2) rather than a
silently different simulation.

Conventions kept (they are the core's defaults, which follow that simulator): the dynamic PFC
threshold (alpha = 1/8 of the free buffer) with a 3 x BDP headroom per port, ECN marking at
dequeue with thresholds linear in the port rate, the 48-byte header on every data packet and
60-byte ACKs, flows starting at the flow file's times less 2 s.
"""

from __future__ import annotations

import math
import os
import re
import tomllib
from collections import deque
from fractions import Fraction
from pathlib import Path
from typing import Any

import tomli_w

from .errors import ScenarioError
from .units import UnitError, fmt_rate, parse_rate, parse_time

__all__ = ["import_hpcc", "parse_config", "HONOURED", "IGNORED", "REJECTED", "CC_MODES"]

HONOURED = {
    "TOPOLOGY_FILE": "topology = { kind = 'hpcc', file = ... } (path relative to the config, its parent, or the working directory)",
    "FLOW_FILE": "workload = { kind = 'hpcc_flows', file = ..., time_offset = '2s' } (0 if a flow starts before 2 s)",
    "SIMULATOR_STOP_TIME": "duration = stop time - time_offset",
    "CC_MODE": "1 (DCQCN) -> congestion_control.algorithm = 'dcqcn'; others are not in hopsim yet (error)",
    "ENABLE_QCN": "ecn.enabled",
    "USE_DYNAMIC_PFC_THRESHOLD": "1 -> flow_control.pfc.threshold = 'dynamic' (0 is an error)",
    "PACKET_PAYLOAD_SIZE": "transport.mtu (payload bytes per packet)",
    "BUFFER_SIZE": "buffer.size = BUFFER_SIZE MiB (third.cc: buffer_size * 1024 * 1024)",
    "KMIN_MAP": "ecn.kmin at ecn.ref_rate (KB = 1000 B); the map must be linear in rate",
    "KMAX_MAP": "ecn.kmax at ecn.ref_rate; linear in rate",
    "PMAX_MAP": "ecn.pmax; one value for every rate",
    "RATE_AI": "congestion_control.dcqcn.rai_at_40g = RATE_AI x 40 Gb/s / NIC rate (hopsim scales with line rate)",
    "RATE_HAI": "congestion_control.dcqcn.rhai_at_40g, scaled the same way",
    "EWMA_GAIN": "congestion_control.dcqcn.g",
    "RP_TIMER": "congestion_control.dcqcn.rate_increase_timer (us)",
    "ALPHA_RESUME_INTERVAL": "congestion_control.dcqcn.alpha_timer (us)",
    "RATE_DECREASE_INTERVAL": "congestion_control.dcqcn.rate_decrease_interval (us)",
    "FAST_RECOVERY_TIMES": "congestion_control.dcqcn.fast_recovery_stages",
    "MIN_RATE": "congestion_control.dcqcn.min_rate",
    "CLAMP_TARGET_RATE": "congestion_control.dcqcn.clamp_target_rate",
    "HAS_WIN": "0 -> transport.window = 'off'; 1 -> a BDP window (see GLOBAL_T)",
    "GLOBAL_T": "1 -> window = the largest BDP over all host pairs (third.cc maxBdp); 0 -> each flow's own path BDP",
    "ERROR_RATE_PER_LINK": "must be 0 (hopsim links do not corrupt packets)",
    "LINK_DOWN": "must be '0 0 0' (no link failures)",
    "L2_ACK_INTERVAL": "must be 0 or 1: hopsim ACKs every packet",
}
IGNORED = {
    "TRACE_FILE": "packet traces: use record.queue_ports and the run folder's tables",
    "TRACE_OUTPUT_FILE": "output file name",
    "FCT_OUTPUT_FILE": "output file name: use `hopsim export-fct RUN_DIR`",
    "PFC_OUTPUT_FILE": "output file name: pauses.parquet holds every PFC frame",
    "QLEN_MON_FILE": "output file name: buffer.parquet holds the samples",
    "QLEN_MON_START": "sampling window: record.buffer_interval samples the whole run",
    "QLEN_MON_END": "sampling window",
    "ENABLE_TRACE": "tracing switch",
    "PAUSE_TIME": "pause quanta: hopsim's PFC pauses for 0xFFFF quanta and resumes explicitly",
    "DATA_RATE": "unused by third.cc as well (rates come from the topology file)",
    "LINK_DELAY": "unused by third.cc as well",
    "L2_CHUNK_SIZE": "hopsim sends per packet, not in chunks",
    "L2_BACK_TO_ZERO": "hopsim's go-back-N restarts from the last acknowledged byte",
    "ACK_HIGH_PRIO": "hopsim always sends ACK, NACK and CNP at the control priority",
    "DCTCP_RATE_AI": "DCTCP (CC_MODE 8) parameter",
    "MI_THRESH": "HPCC parameter",
    "VAR_WIN": "HPCC parameter",
    "FAST_REACT": "HPCC parameter",
    "U_TARGET": "HPCC parameter",
    "INT_MULTI": "HPCC parameter",
    "MULTI_RATE": "HPCC parameter",
    "SAMPLE_FEEDBACK": "HPCC parameter",
    "RATE_BOUND": "HPCC parameter",
    "PINT_LOG_BASE": "HPCC-PINT parameter",
    "PINT_PROB": "HPCC-PINT parameter",
    "ENABLE_PFC": "PFC is always on in HPCC's configs (1); 0 is an error",
}
REJECTED = {"ERROR_RATE_PER_LINK", "LINK_DOWN", "USE_DYNAMIC_PFC_THRESHOLD", "ENABLE_PFC", "L2_ACK_INTERVAL"}
CC_MODES = {1: "DCQCN", 3: "HPCC", 7: "TIMELY", 8: "DCTCP", 10: "HPCC-PINT"}
SUPPORTED_CC_MODES = {1: "dcqcn"}
_MAP_KEYS = {"KMIN_MAP", "KMAX_MAP", "PMAX_MAP"}


def parse_config(text: str) -> dict[str, list[str]]:
    """KEY -> its value tokens. Later lines override earlier ones, as in third.cc."""
    out: dict[str, list[str]] = {}
    for raw in text.splitlines():
        line = re.sub(r"\{[^}]*\}", " ", raw).split("#", 1)[0].strip()
        if not line:
            continue
        key, *vals = line.split()
        out[key] = vals
    return out


def _one(cfg: dict[str, list[str]], key: str, conv=str, default: Any = None) -> Any:
    if key not in cfg:
        return default
    vals = cfg[key]
    if len(vals) != 1:
        raise ScenarioError(f"{key}: expected one value, got {' '.join(vals) or 'none'}")
    try:
        return conv(vals[0])
    except (ValueError, UnitError) as e:
        raise ScenarioError(f"{key}: cannot read {vals[0]!r} ({e})") from None


def _map(cfg: dict[str, list[str]], key: str) -> dict[int, float]:
    vals = cfg[key]
    try:
        n = int(vals[0])
        pairs = vals[1:]
        if len(pairs) != 2 * n:
            raise ValueError(f"says {n} entries but has {len(pairs) / 2:g}")
        return {int(pairs[2 * i]): float(pairs[2 * i + 1]) for i in range(n)}
    except (ValueError, IndexError) as e:
        raise ScenarioError(f"{key}: expected `n rate1 value1 ... rateN valueN`, got {' '.join(vals)!r} ({e})") from None


def _find(name: str, config_dir: Path) -> Path:
    p = Path(name)
    if p.is_absolute():
        cands = [p]
    else:
        cands = [config_dir / p, config_dir.parent / p, Path.cwd() / p]
        cands += [d / p.name for d in (config_dir, config_dir.parent)]
    for c in cands:
        if c.is_file():
            return c.resolve()
    raise ScenarioError(f"{name!r} not found (looked at {', '.join(str(c) for c in cands)})")


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


def _delay_ns(s: str) -> int:
    return parse_time(s) // 1000


def _max_bdp(adj: Adjacency, switches: set[int], payload: int) -> int:
    """The largest BDP over host pairs (bytes), as third.cc's maxBdp: BFS through switches,
    rtt = 2 x delay + payload serialisation at each hop, times the path's narrowest rate."""
    hosts = [i for i in adj if i not in switches]
    best = 0
    for h in hosts:
        dist = {h: 0}
        delay = {h: 0}
        tx = {h: 0}
        bw = {h: math.inf}
        q = deque([h])
        while q:
            u = q.popleft()
            for v, rate, d in adj[u]:
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
    return best


def import_hpcc(config: Path | str, out: Path | str) -> tuple[Path, list[str]]:
    """Write the scenario; returns its path and warnings (keys ignored or unknown)."""
    config = Path(config).resolve()
    try:
        cfg = parse_config(config.read_text())
    except OSError as e:
        raise ScenarioError(f"{config}: cannot read it ({e.strerror})") from None
    out = Path(out).resolve()
    warnings: list[str] = []
    problems: list[str] = []

    for key in ("TOPOLOGY_FILE", "FLOW_FILE"):
        if key not in cfg:
            problems.append(f"{key}: missing; it is required")
    cc_mode = _one(cfg, "CC_MODE", int, 1)
    if cc_mode not in SUPPORTED_CC_MODES:
        name = CC_MODES.get(cc_mode, "unknown")
        problems.append(
            f"CC_MODE: {cc_mode} ({name}) is not available in hopsim yet; allowed: "
            + ", ".join(f"{k} ({CC_MODES[k]})" for k in SUPPORTED_CC_MODES)
        )
    if _one(cfg, "USE_DYNAMIC_PFC_THRESHOLD", int, 1) != 1:
        problems.append("USE_DYNAMIC_PFC_THRESHOLD: only 1 (dynamic threshold) is supported")
    if _one(cfg, "ENABLE_PFC", int, 1) != 1:
        problems.append("ENABLE_PFC: only 1 is supported (a lossy fabric: set flow_control.scheme = 'none' by hand)")
    if _one(cfg, "ERROR_RATE_PER_LINK", float, 0.0) != 0.0:
        problems.append("ERROR_RATE_PER_LINK: must be 0; hopsim links do not corrupt packets")
    if "LINK_DOWN" in cfg and cfg["LINK_DOWN"][:1] not in ([], ["0"]):
        problems.append("LINK_DOWN: link failures are not simulated; allowed: 0 0 0")
    if _one(cfg, "L2_ACK_INTERVAL", int, 1) not in (0, 1):
        problems.append("L2_ACK_INTERVAL: hopsim ACKs every packet; allowed: 0 or 1")
    if problems:
        raise ScenarioError(problems, source=str(config))

    topo_path = _find(cfg["TOPOLOGY_FILE"][0], config.parent)
    flow_path = _find(cfg["FLOW_FILE"][0], config.parent)
    topo_text = topo_path.read_text()
    try:
        nic, switch_rates, adj, switches = _topology_facts(topo_text)
    except (ValueError, IndexError, UnitError) as e:
        raise ScenarioError(f"TOPOLOGY_FILE: {topo_path} is not an HPCC topology file ({e})") from None
    payload = _one(cfg, "PACKET_PAYLOAD_SIZE", int, 1000)

    flow_lines = [l.split() for l in flow_path.read_text().splitlines()[1:] if l.strip()]
    try:
        first_start = min(float(f[5]) for f in flow_lines) if flow_lines else 2.0
    except (ValueError, IndexError):
        raise ScenarioError(f"FLOW_FILE: {flow_path} is not an HPCC flow file") from None
    offset_s = 2.0 if first_start >= 2.0 else 0.0

    def rel(p: Path) -> str:
        return os.path.relpath(p, out.parent)

    sc: dict[str, Any] = {
        "name": out.stem,
        "description": f"imported from the HPCC simulator config {config.name} by hopsim import-hpcc",
        "topology": {"kind": "hpcc", "file": rel(topo_path)},
        "workload": {"kind": "hpcc_flows", "file": rel(flow_path), "time_offset": f"{offset_s:g}s"},
    }
    stop = _one(cfg, "SIMULATOR_STOP_TIME", Fraction)
    if stop is not None and stop > Fraction(offset_s):
        ps = (stop - Fraction(offset_s)) * 10**12
        sc["duration"] = f"{int(ps)}ps" if ps.denominator == 1 else f"{round(float(ps))}ps"

    if "BUFFER_SIZE" in cfg:
        sc["buffer"] = {"size": f"{_one(cfg, 'BUFFER_SIZE', int)}MiB"}

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
    sc["flow_control"] = {"scheme": "pfc", "pfc": {"threshold": "dynamic"}}

    dcqcn: dict[str, Any] = {"byte_counter": 0}  # the HPCC simulator's DCQCN has no byte counter

    def scaled(key: str) -> str | None:
        v = _one(cfg, key, parse_rate)
        if v is None:
            return None
        return f"{round(v * 40_000_000_000 / nic)}bps"

    for key, field, conv in (
        ("RATE_AI", "rai_at_40g", None),
        ("RATE_HAI", "rhai_at_40g", None),
        ("EWMA_GAIN", "g", float),
        ("RP_TIMER", "rate_increase_timer", "us"),
        ("ALPHA_RESUME_INTERVAL", "alpha_timer", "us"),
        ("RATE_DECREASE_INTERVAL", "rate_decrease_interval", "us"),
        ("FAST_RECOVERY_TIMES", "fast_recovery_stages", int),
        ("MIN_RATE", "min_rate", "rate"),
        ("CLAMP_TARGET_RATE", "clamp_target_rate", "bool"),
    ):
        if key not in cfg:
            continue
        if conv is None:
            dcqcn[field] = scaled(key)
        elif conv == "us":
            v = _one(cfg, key, Fraction)
            dcqcn[field] = f"{round(v * 10**6)}ps"
        elif conv == "rate":
            dcqcn[field] = fmt_rate(_one(cfg, key, parse_rate))
        elif conv == "bool":
            dcqcn[field] = bool(_one(cfg, key, int))
        else:
            dcqcn[field] = _one(cfg, key, conv)
    sc["congestion_control"] = {"algorithm": SUPPORTED_CC_MODES[cc_mode], "dcqcn": dcqcn}

    transport: dict[str, Any] = {"mtu": payload}
    if _one(cfg, "HAS_WIN", int, 1) == 0:
        transport["window"] = "off"
    elif _one(cfg, "GLOBAL_T", int, 1) == 1:
        transport["window"] = f"{_max_bdp(adj, switches, payload)}B"
    else:
        transport["window"] = "bdp"
    sc["transport"] = transport

    for key in cfg:
        if key in HONOURED:
            continue
        if key in IGNORED:
            warnings.append(f"{key}: ignored ({IGNORED[key]})")
        else:
            warnings.append(f"{key}: unknown key, ignored (third.cc ignores unknown keys too)")

    header = [
        f"# Imported by `hopsim import-hpcc` from {config}",
        "# Keys honoured: " + ", ".join(k for k in HONOURED if k in cfg),
    ]
    if warnings:
        header += ["# Not honoured:"] + [f"#   {w}" for w in warnings]
    text = "\n".join(header) + "\n\n" + tomli_w.dumps(sc)

    # validate what we wrote before keeping it
    from .scenario import scenario_from_dict

    s = scenario_from_dict(tomllib.loads(text), out.parent, out)
    s.validate()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(text)
    os.replace(tmp, out)
    return out, warnings
