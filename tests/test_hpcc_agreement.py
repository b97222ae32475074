"""The agreement pipeline end to end on a cut-down reference run: import-hpcc -> run ->
export-hpcc -> compare-fct, in process and through scripts/hpcc-agreement.sh. Only that it works
and finds matching flows is checked here; how well hopsim agrees depends on the mechanisms."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
REF_ROOTS = [REPO / "shared/reference/ns3-hpcc", REPO.parent / "shared/reference/ns3-hpcc",
             Path("/work/shared/reference/ns3-hpcc")]
REF = next((r for r in REF_ROOTS if (r / "fat_fb_dcqcn" / "fct.txt").is_file()), None)
N = 300

pytestmark = pytest.mark.skipif(REF is None, reason="the HPCC reference runs (shared/reference/ns3-hpcc) are not here")


@pytest.fixture
def ref_root(tmp_path) -> Path:
    """A reference folder laid out as the real one: the first N flows of its FbHdp flow file (count
    line rewritten) and its topology beside the run folders; fat_fb_dcqcn's config pointed at the
    cut flow file, with the full reference fct.txt (its other flows go unmatched); and a run whose
    config names a topology file that is not there."""
    root = tmp_path / "ref"
    root.mkdir()
    flows = (REF / "fb_320h_l30_1ms.txt").read_text().splitlines()[1:N + 1]
    (root / "fb_first300.txt").write_text(f"{N}\n" + "\n".join(flows) + "\n")
    shutil.copy(REF / "hpcc-fat-tree-320.topo.txt", root)
    run = root / "fat_fb_dcqcn"
    run.mkdir()
    cfg = (REF / "fat_fb_dcqcn" / "config.txt").read_text()
    assert "FLOW_FILE fb_320h_l30_1ms.txt" in cfg
    (run / "config.txt").write_text(cfg.replace("FLOW_FILE fb_320h_l30_1ms.txt", "FLOW_FILE fb_first300.txt"))
    for f in ("fct.txt", "pfc.txt", "time.txt"):
        shutil.copy(REF / "fat_fb_dcqcn" / f, run)
    broken = root / "broken"
    shutil.copytree(run, broken)
    (broken / "config.txt").write_text(cfg.replace("hpcc-fat-tree-320.topo.txt", "no-such-topology.txt"))
    return root


def test_pipeline_in_process(ref_root, tmp_path, cli):
    sc, run = tmp_path / "sc.toml", tmp_path / "run"
    code, msg = cli("import-hpcc", ref_root / "fat_fb_dcqcn" / "config.txt", "--out", sc)
    assert code == 0, msg
    code, msg = cli("run", sc, "--out", run)
    assert code == 0, msg
    assert f"{N}/{N} flows finished" in msg
    code, msg = cli("export-hpcc", run)
    assert code == 0, msg
    assert len((run / "fct.txt").read_text().splitlines()) == N
    out = tmp_path / "c.json"
    code, msg = cli("compare-fct", ref_root / "fat_fb_dcqcn", run, "--json", out, "--plot", tmp_path / "c.png")
    assert code in (0, 1), msg
    c = json.loads(out.read_text())
    # every hopsim flow is found in the reference (key: src, dst, size, start within 1 ns)
    assert c["matched"] == N and c["unmatched_cand"] == 0 and c["unmatched_ref"] == 9547 - N
    assert (tmp_path / "c.png").is_file()


def test_agreement_script(ref_root, tmp_path):
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    keep = tmp_path / "keep"
    p = subprocess.run(["bash", str(REPO / "scripts" / "hpcc-agreement.sh"), str(ref_root), "--keep", str(keep)],
                       capture_output=True, text=True, env=env, timeout=600)
    assert p.returncode == 1, p.stdout + p.stderr  # the broken run never passes
    rows = {l.split("│")[1].strip(): l for l in p.stdout.splitlines() if l.startswith("│")}
    assert set(rows) == {"broken", "fat_fb_dcqcn"}, p.stdout
    assert "import failed" in rows["broken"] and f"{N}/9547" in rows["fat_fb_dcqcn"], p.stdout
    assert "no-such-topology.txt" in p.stdout
    c = json.loads((keep / "fat_fb_dcqcn" / "compare.json").read_text())
    assert c["matched"] == N and c["unmatched_cand"] == 0
