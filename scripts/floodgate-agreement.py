"""How far hopsim agrees with Floodgate-NS3 on its reference runs.

    python scripts/floodgate-agreement.py REF_ROOT --tree TREE [--tol 0.10] [--keep DIR] [--only NAME ...]

(`bash scripts/floodgate-agreement.sh` runs this with the repository's .venv.) REF_ROOT holds one
folder per run of Floodgate-NS3 (built outside this repository), each with the config it ran
(`config.ini`), its standard output (`stdout.txt`: the flows it drew), its fct file
(`*-fct.txt`) and its PFC file (`*-pfc.txt`; time.txt too, optionally: its wall time). TREE is
the Floodgate-NS3 source tree the configs' relative paths (`mix/`, `distribution/`) start from.

For each run, with the `hopsim` CLI (as a user would): import-floodgate its config with the
flows it drew, run it, and compare-fct against its fct file at --tol (each side's slowdown over
its own ideal FCT). Frames: the lines of its PFC file (in its ideal design dstPause travels as
PFC frames to the hosts) beside hopsim's PFC and destination-pause frames (`summary.json`'s
`control_frames`). The table is that of `scripts/hpcc-agreement.py`.

Exit code: 0 when every run passes, 1 when one does not, 2 when REF_ROOT holds no run.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from pathlib import Path

_spec = importlib.util.spec_from_file_location("hpcc_agreement", Path(__file__).with_name("hpcc-agreement.py"))
base = sys.modules["hpcc_agreement"] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(base)  # (its Row, runner and table: one agreement table for every simulator)

RUN_FILES = ("config.ini", "stdout.txt", "*-fct.txt", "*-pfc.txt")


def one_run(ref: Path, tree: Path, work: Path, tol: float, timeout: float) -> base.Row:
    row = base.Row(ref.name, ns3_wall=base.ns3_wall(ref))
    fct, pfc = next(ref.glob("*-fct.txt")), next(ref.glob("*-pfc.txt"))
    row.pfc_ref = base.line_count(pfc)
    sc, run, cmp_json = work / "scenario.toml", work / "run", work / "compare.json"
    p = base.hopsim("import-floodgate", (ref / "config.ini").resolve(), "--out", sc.resolve(), "--flows",
                    (ref / "stdout.txt").resolve(), timeout=timeout, cwd=tree)
    if p.returncode != 0:
        row.result, row.problem = "import failed", base.last_error(p)
        return row
    t0 = time.perf_counter()
    p = base.hopsim("run", sc, "--out", run, timeout=timeout)
    row.wall_s = time.perf_counter() - t0
    if p.returncode != 0:
        row.result, row.problem = "run failed", base.last_error(p)
        return row
    frames = json.loads((run / "summary.json").read_text()).get("control_frames", {})
    row.pfc = frames.get("pfc", 0) + frames.get("dst_pause", 0)
    p = base.hopsim("compare-fct", fct, run, "--tol", tol, "--json", cmp_json, timeout=timeout)
    if p.returncode not in (0, 1):
        row.result, row.problem = "compare failed", base.last_error(p)
        return row
    base.fill_from_compare(row, cmp_json, p.returncode)
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("ref_root", type=Path, help="folder of Floodgate-NS3 run folders")
    ap.add_argument("--tree", type=Path, required=True, help="the Floodgate-NS3 source tree the configs name files in")
    base.add_common(ap)
    a = ap.parse_args(argv)
    title = "hopsim vs Floodgate-NS3 (slowdown = fct / its own ideal fct)"
    return base.run_all(a, a.ref_root, RUN_FILES, lambda d, work: one_run(d, a.tree, work, a.tol, a.timeout),
                        "import, run, compare", lambda rows: base.table(rows, title, ("pfc ref", "pfc+dstPause hopsim")))


if __name__ == "__main__":
    sys.exit(main())
