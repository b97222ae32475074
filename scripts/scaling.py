"""Scaling study: wall time, peak memory and events/s of `hopsim run` against network size and
load, each run in a fresh process. Writes benchmarks/scaling.csv, benchmarks/scaling.md and
benchmarks/scaling.png (commit them with the machine named in the .md).

    bash scripts/scaling.sh            # the whole grid (about 10-20 minutes on 2 cores)
    bash scripts/scaling.sh --quick    # the two smallest networks at 30% only
    bash scripts/scaling.sh --length   # memory against the workload's length (about 1 minute after the build)
    bash scripts/scaling.sh --threads 1,2   # each grid point on 1 and on 2 threads (default: 1)
    bash scripts/scaling.sh --k32 --stop-ms 10 --threads 1,16   # the 8,192-host fat-tree
    bash scripts/scaling.sh --memory --arrivals-ms 10 --threads 1,2,4,16   # memory against threads

`--k32` writes benchmarks/scaling_k32.{csv,md}: the k = 32 fat-tree (8,192 hosts, 100 Gb/s, 1 us
links), DCQCN over PFC, WebSearch at 60% of the host links for 10 ms, stopped at `--stop-ms`
(default 10) and at half that, on each of `--threads`. Where the full 10 ms is out of reach (one
thread on a small machine), the 10 ms wall time is projected from the two shorter runs: the
second half of a run is in the steady state the load reaches within a few hundred microseconds
(flows in flight, packets per ms level off), so each further millisecond costs what the second
half cost per millisecond: wall(10) = wall(s) + (10 - s) x (wall(s) - wall(s/2)) / (s/2).

The grid: k-ary fat-trees (128 hosts: k = 8; 320: k = 8 with 10 hosts per edge switch, the
HPCC fat-tree's size; 1024: k = 16; 4394: k = 26), 100 Gb/s links of 1 us, DCQCN over PFC with
hopsim's defaults, Poisson WebSearch (HPCC's CDF) arrivals at 30, 60 and 90% of the host links
for 1 ms, stopped at 1 ms of simulated time, with the default records (buffer samples every
10 us). Why these: the issue asks for hosts 128-4096 and loads 30-90% at 1 ms; a fat-tree with
k/2 hosts per edge keeps full bisection, so load does not change with size.

`--length` writes benchmarks/scaling_length.{csv,md}: the 1,024-host network at 60% with 1, 10,
50 and 200 ms of arrivals, each stopped at 1 ms. The simulated work is the same (flows arriving after
1 ms never start); only the workload is longer, 200 times at the most. Why: the issue asks for
memory bounded by packets in flight, and flows are made as they arrive (`net/arrivals.rs`), so
the peak should not follow the workload's length. The flows table still lists every flow (those
never started with no finish time), so the Parquet written grows with it.

`--memory` writes benchmarks/scaling_memory.{csv,md}: the FlowSail paper's scale, the 1,024-host
network with Web Server arrivals (Facebook's CDF, far more and smaller flows than WebSearch) at
60% for `--arrivals-ms` (default 10: 1.23 M flows), run until every flow finishes, on each of
`--threads`. Why: a split run frees each flow's two halves once no packet of it is left
(`engine::release`), so its peak follows the flows in flight and the partitions made, not the
flows of the run; what each partition adds is its copy of the network.
"""

from __future__ import annotations

import csv
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks"

SIZES = [  # (hosts, k, hosts_per_edge or None)
    (128, 8, None),
    (320, 8, 10),
    (1024, 16, None),
    (4394, 26, None),
]
LOADS = [0.3, 0.6, 0.9]


LENGTHS_MS = [1, 10, 50, 200]


def scenario(hosts: int, k: int, hpe: int | None, load: float, arrivals_ms: float = 1, stop_ms: float | None = 1,
             cdf: str = "WebSearch_HPCC.txt") -> str:
    """A fat-tree run's scenario; `stop_ms` None: until every flow finishes."""
    hpe_line = f"hosts_per_edge = {hpe}\n" if hpe else ""
    stop_line = f'duration = "{stop_ms * 1000:g}us"\n' if stop_ms is not None else ""
    return f"""name = "scaling-{hosts}h-{int(load * 100)}"
seed = 1
{stop_line}
[topology]
kind = "fat_tree"
k = {k}
{hpe_line}host_rate = "100Gbps"
fabric_rate = "100Gbps"
delay = "1us"

[workload]
kind = "background"
cdf = "{cdf}"
load = "{int(load * 100)}%"
duration = "{arrivals_ms:g}ms"

[flow_control]
scheme = "pfc"

[congestion_control]
algorithm = "dcqcn"
"""


def one(toml: str, out: str, threads: int) -> None:
    """Child mode: run one scenario as `hopsim run` does on `threads` threads, print its numbers
    as JSON."""
    from hopsim.run import run
    from hopsim.scenario.model import load_scenario
    from hopsim.results.store import write_run

    t0 = time.perf_counter()
    sc = load_scenario(toml, validate=True)
    res = run(sc, threads=threads)
    write_run(res, sc, out)
    wall = time.perf_counter() - t0
    s = res.summary
    print(json.dumps({
        "wall_s": round(wall, 2), "sim_wall_s": round(s["wall_time_s"], 2),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "events": s["events"], "flows": s["flows"], "flows_finished": s["flows_finished"],
        "peak_packets": s.get("diagnostics", {}).get("peak_packets_alive", 0),
    }))


def plot(rows: list[dict], loads: list[float]) -> None:
    """benchmarks/scaling.png from the study's rows."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, 3, figsize=(13, 3.8))
    for load in loads:
        rs = [r for r in rows if r["load"] == load]
        h = [r["hosts"] for r in rs]
        ax[0].plot(h, [r["wall_s"] for r in rs], "o-", label=f"{int(load * 100)}% load")
        ax[1].plot(h, [r["peak_rss_mb"] for r in rs], "o-", label=f"{int(load * 100)}% load")
        ax[2].plot(h, [r["events_per_s_m"] for r in rs], "o-", label=f"{int(load * 100)}% load")
    for a, t in zip(ax, ["wall time (s)", "peak RSS (MB)", "M events / s"]):
        a.set_xscale("log")
        a.set_xticks([r["hosts"] for r in rows if r["load"] == loads[0]])
        a.set_xticklabels([str(r["hosts"]) for r in rows if r["load"] == loads[0]])
        a.minorticks_off()
        a.set_xlabel("hosts (fat-tree)")
        a.set_title(t)
        a.grid(alpha=0.3)
    ax[0].set_yscale("log")
    ax[2].set_ylim(bottom=0)
    ax[0].legend()
    fig.suptitle("hopsim scaling: 1 ms of WebSearch traffic, DCQCN + PFC")
    fig.tight_layout()
    fig.savefig(OUT / "scaling.png", dpi=110)


def run_one(toml: Path, out: Path, threads: int = 1) -> dict:
    """One scenario in a fresh process (`one`): its numbers."""
    p = subprocess.run([sys.executable, __file__, "--one", str(toml), str(out), str(threads)], capture_output=True,
                       text=True, cwd=ROOT)
    if p.returncode != 0:
        sys.exit(f"run {toml.name} failed:\n{p.stderr[-2000:]}")
    r = json.loads(p.stdout.strip().splitlines()[-1])
    r["events_per_s_m"] = round(r["events"] / r["sim_wall_s"] / 1e6, 2) if r["sim_wall_s"] else None
    return r


def write_table(name: str, cols: list[str], rows: list[dict], title: str, desc: str) -> None:
    """benchmarks/NAME.csv and NAME.md (the machine and core build named)."""
    with open(OUT / f"{name}.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols)
        w.writeheader()
        for r in rows:
            w.writerow({c: r.get(c, "") for c in cols})
    machine = f"{os.cpu_count()} cores, {os.uname().machine}, Python {sys.version.split()[0]}"
    machine += f"; core: {os.environ.get('HOPSIM_BUILD', 'as installed in the environment')}"
    with open(OUT / f"{name}.md", "w") as f:
        f.write(f"# {title}\n\nMachine: {machine}. {desc}\n\n")
        f.write("| " + " | ".join(cols) + " |\n|" + "---|" * len(cols) + "\n")
        for r in rows:
            f.write("| " + " | ".join(str(r.get(c, "")) for c in cols) + " |\n")


def length_study() -> None:
    """Peak memory against the workload's length at the same simulated work (`--length`)."""
    hosts, k, load = 1024, 16, 0.6
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for ms in LENGTHS_MS:
            toml = Path(d) / f"l{ms}.toml"
            toml.write_text(scenario(hosts, k, None, load, ms))
            r = run_one(toml, Path(d) / f"r{ms}")
            r.update(hosts=hosts, load=load, arrivals_ms=ms)
            print(f"{ms:3d} ms of arrivals: {r['flows']:>9,} flows, {r['wall_s']:7.2f} s wall, {r['peak_rss_mb']:6.1f} MB, "
                  f"{r['events']:>12,} events", flush=True)
            rows.append(r)
    cols = ["hosts", "load", "arrivals_ms", "flows", "flows_finished", "events", "sim_wall_s", "wall_s", "peak_rss_mb", "peak_packets"]
    write_table("scaling_length", cols, rows, "Memory against the workload's length (`bash scripts/scaling.sh --length`)",
                "Each run: a 1,024-host k = 16 fat-tree, Poisson WebSearch arrivals at 60% for `arrivals_ms`, "
                "stopped at 1 ms of simulated time (the same simulated work), DCQCN over PFC, default records; "
                "wall and peak RSS of the whole `hopsim run` path in a fresh process.")
    print(f"wrote {OUT / 'scaling_length.csv'}, scaling_length.md")


def main(quick: bool, threads: list[int]) -> None:
    """The grid, each point on each of `threads` (alternating at each point, so a drift of the
    machine's speed falls on every thread count alike)."""
    sizes = SIZES[:2] if quick else SIZES
    loads = LOADS[:1] if quick else LOADS
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for hosts, k, hpe in sizes:
            for load in loads:
                toml = Path(d) / f"s{hosts}-{load}.toml"
                toml.write_text(scenario(hosts, k, hpe, load))
                for t in threads:
                    out = Path(d) / f"r{hosts}-{load}-{t}"
                    r = run_one(toml, out, t)
                    r.update(hosts=hosts, k=k, load=load, threads=t)
                    print(f"{hosts:5d} hosts {int(load * 100):3d}% {t:2d} threads: {r['wall_s']:7.2f} s wall, "
                          f"{r['peak_rss_mb']:6.1f} MB, {r['events']:>12,} events, {r['events_per_s_m']} M events/s",
                          flush=True)
                    rows.append(r)
    if quick:
        return
    cols = ["hosts", "k", "load", "threads", "flows", "flows_finished", "events", "sim_wall_s", "wall_s",
            "events_per_s_m", "peak_rss_mb", "peak_packets"]
    write_table("scaling", cols, rows, "Scaling study (`bash scripts/scaling.sh`)",
                "Each run: 1 ms of Poisson WebSearch arrivals, stopped at 1 ms, DCQCN over PFC, default records, "
                "on `threads` threads (the same tables on any count); wall = the whole `hopsim run` path (build, "
                "simulate, write Parquet) in a fresh process; peak RSS of that process.")
    plot([r for r in rows if r["threads"] == threads[0]], loads)
    print(f"wrote {OUT / 'scaling.csv'}, scaling.md, scaling.png")


def on_threads(toml: Path, out: Path, threads: list[int], what: str, fields: dict) -> list[dict]:
    """`toml` run on each of `threads` in turn, each row with `fields`, printed as it comes."""
    rows = []
    for t in threads:
        r = run_one(toml, Path(f"{out}-{t}"), t)
        r.update(fields, threads=t)
        print(f"{what} on {t:2d} threads: {r['flows']:>9,} flows, {r['wall_s']:7.2f} s wall, {r['peak_rss_mb']:7.1f} MB, "
              f"{r['events']:>13,} events, {r['events_per_s_m']} M events/s", flush=True)
        rows.append(r)
    return rows


def k32_study(stop_ms: float, threads: list[int]) -> None:
    """The 8,192-host fat-tree at 60% for 10 ms, stopped at `stop_ms` and at half that, on each
    of `threads` (`--k32`), with the 10 ms projection (module doc) where `stop_ms` < 10."""
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for stop in (stop_ms / 2, stop_ms):
            toml = Path(d) / f"k32-{stop}.toml"
            toml.write_text(scenario(8192, 32, None, 0.6, arrivals_ms=10, stop_ms=stop))
            rows += on_threads(toml, Path(d) / f"r{stop}", threads, f"k=32 to {stop:g} ms",
                               dict(hosts=8192, k=32, load=0.6, stop_ms=stop))
    for t in threads:
        half, full = (next(r for r in rows if r["threads"] == t and r["stop_ms"] == s) for s in (stop_ms / 2, stop_ms))
        per_ms = (full["sim_wall_s"] - half["sim_wall_s"]) / (stop_ms / 2)
        full["projected_10ms_sim_wall_s"] = round(full["sim_wall_s"] + (10 - stop_ms) * per_ms, 1)
    cols = ["hosts", "k", "load", "stop_ms", "threads", "flows", "flows_finished", "events", "sim_wall_s", "wall_s",
            "events_per_s_m", "peak_rss_mb", "projected_10ms_sim_wall_s"]
    write_table("scaling_k32", cols, rows, "The 8,192-host fat-tree (`bash scripts/scaling.sh --k32`)",
                "k = 32 fat-tree, 100 Gb/s links of 1 us, DCQCN over PFC, Poisson WebSearch at 60% of the host links "
                "for 10 ms, stopped at stop_ms; wall = the whole `hopsim run` path in a fresh process; peak RSS of "
                "that process; projected_10ms_sim_wall_s: the simulation's wall time to 10 ms, projected from the "
                "run and its half (the script's module doc says how).")


def memory_study(arrivals_ms: float, threads: list[int]) -> None:
    """Peak memory and wall time against threads on the FlowSail paper's scale (`--memory`), the
    thread counts alternating in turn as listed."""
    rows = []
    with tempfile.TemporaryDirectory() as d:
        toml = Path(d) / "webserver.toml"
        toml.write_text(scenario(1024, 16, None, 0.6, arrivals_ms, None, "FacebookWebServer_IntraCluster_HomaSim.txt"))
        rows += on_threads(toml, Path(d) / "r", threads, f"{arrivals_ms:g} ms of Web Server arrivals",
                           dict(hosts=1024, k=16, load=0.6, arrivals_ms=arrivals_ms))
    cols = ["hosts", "k", "load", "arrivals_ms", "threads", "flows", "flows_finished", "events", "sim_wall_s", "wall_s",
            "events_per_s_m", "peak_rss_mb", "peak_packets"]
    write_table("scaling_memory", cols, rows, "Memory against threads (`bash scripts/scaling.sh --memory`)",
                "k = 16 fat-tree (1,024 hosts), 100 Gb/s links of 1 us, DCQCN over PFC, Poisson Web Server arrivals "
                "(Facebook's CDF) at 60% of the host links for arrivals_ms, run until every flow finishes, default "
                "records; wall and peak RSS of the whole `hopsim run` path in a fresh process, on `threads` threads "
                "(more threads than cores measure memory, not speed).")
    print(f"wrote {OUT / 'scaling_memory.csv'}, scaling_memory.md")


def _threads_arg(argv: list[str]) -> list[int]:
    """`--threads 1,2,4` (default 1): the thread counts each grid point runs on."""
    if "--threads" not in argv:
        return [1]
    i = argv.index("--threads")
    try:
        ts = [int(t) for t in argv[i + 1].split(",")]
        if not ts or min(ts) < 1:
            raise ValueError
    except (IndexError, ValueError):
        sys.exit("--threads: a comma-separated list of thread counts of at least 1, e.g. --threads 1,2")
    return ts


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--one":
        one(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif "--plot" in sys.argv:  # redraw from benchmarks/scaling.csv
        with open(OUT / "scaling.csv") as f:
            rows = [{k: (float(v) if k in ("load", "wall_s", "sim_wall_s", "events_per_s_m", "peak_rss_mb") else int(v))
                     for k, v in r.items()} for r in csv.DictReader(f)]
        first = min(r.get("threads", 1) for r in rows)
        plot([r for r in rows if r.get("threads", 1) == first], sorted({r["load"] for r in rows}))
    elif "--length" in sys.argv:
        length_study()
    elif "--memory" in sys.argv:
        ms = float(sys.argv[sys.argv.index("--arrivals-ms") + 1]) if "--arrivals-ms" in sys.argv else 10.0
        if not 0 < ms <= 1000:
            sys.exit("--arrivals-ms: a time in ms above 0 and at most 1000, e.g. --arrivals-ms 2")
        memory_study(ms, _threads_arg(sys.argv))
    elif "--k32" in sys.argv:
        stop = float(sys.argv[sys.argv.index("--stop-ms") + 1]) if "--stop-ms" in sys.argv else 10.0
        if not 0 < stop <= 10:
            sys.exit("--stop-ms: a time in ms above 0 and at most 10, e.g. --stop-ms 1")
        k32_study(stop, _threads_arg(sys.argv))
    else:
        main("--quick" in sys.argv, _threads_arg(sys.argv))
