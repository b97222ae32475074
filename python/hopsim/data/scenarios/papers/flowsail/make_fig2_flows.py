"""Writes Fig. 2b's flows (FlowSail §II-A) as an HPCC-simulator flow file: one long-lived flow
from host 0 to host 16 beside Web Server cross traffic into host 16 at 60% of its 100 Gb/s link,
Poisson arrivals from hosts 1-15 (uniform), sizes from the Web Server CDF. hopsim's generated
workloads draw destinations at random, so the cross traffic that shares one link is written
here, deterministically (seed 1), once.

    python make_fig2_flows.py > fig2-flows.txt

Arguments (optional): long-flow size in bytes (default 25 MB), arrival window in seconds
(default 0.005), load (default 0.6).
"""

import bisect
import math
import random
import sys
from pathlib import Path

CDF = Path(__file__).resolve().parents[3] / "workloads" / "FacebookWebServer_IntraCluster_HomaSim.txt"


def read_cdf(path: Path) -> tuple[list[float], list[float]]:
    sizes, probs = [], []
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        s, p = line.split()[:2]
        sizes.append(float(s))
        probs.append(float(p))
    return sizes, probs


def sample(sizes: list[float], probs: list[float], u: float) -> int:
    """Inverse CDF with linear interpolation between points (as hopsim's `workload::cdf`)."""
    i = bisect.bisect_left(probs, u)
    if i == 0:
        return max(1, round(sizes[0]))
    if i >= len(probs):
        return max(1, round(sizes[-1]))
    p0, p1, s0, s1 = probs[i - 1], probs[i], sizes[i - 1], sizes[i]
    x = s0 if p1 == p0 else s0 + (s1 - s0) * (u - p0) / (p1 - p0)
    return max(1, round(x))


def main(long_size: int = 25_000_000, window: float = 0.005, load: float = 0.6) -> str:
    sizes, probs = read_cdf(CDF)
    rng = random.Random(1)
    mean = sum(sample(sizes, probs, (i + 0.5) / 100_000) for i in range(100_000)) / 100_000
    rate = load * 100e9 / (8 * mean)  # flows per second into host 16
    lines, t = [], 0.0
    while True:
        t += -math.log(1.0 - rng.random()) / rate
        if t >= window:
            break
        lines.append(f"{rng.randint(1, 15)} 16 3 100 {sample(sizes, probs, rng.random())} {2.0 + t:.9f}")
    flows = [f"0 16 3 100 {long_size} 2.000000000"] + lines
    return f"{len(flows)}\n" + "\n".join(flows) + "\n"


if __name__ == "__main__":
    args = sys.argv[1:]
    sys.stdout.write(main(int(args[0]) if args else 25_000_000, float(args[1]) if len(args) > 1 else 0.005,
                          float(args[2]) if len(args) > 2 else 0.6))
