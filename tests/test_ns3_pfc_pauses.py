"""scripts/ns3_pfc_pauses.py: pause time of an ns-3 run by the paused device's class, counted
pause to resume as hopsim's Table 2 claims count it, on hand-made traces."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "ns3_pfc_pauses.py"
_spec = importlib.util.spec_from_file_location("ns3_pfc_pauses", SCRIPT)
pauses = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(pauses)

# 4 hosts (0-3), ToRs 4 and 5, core 6: Floodgate-NS3's header (nodes switches hosts_per_tor tors
# cores links) and the HPCC simulator's (nodes switches links) for the same network
LINKS = "0 4 100Gbps 600ns 0\n1 4 100Gbps 600ns 0\n2 5 100Gbps 600ns 0\n3 5 100Gbps 600ns 0\n4 6 400Gbps 600ns 0\n5 6 400Gbps 600ns 0\n"
FLOODGATE_TOPO = "7 3 2 2 1 6\n4 5 6\n" + LINKS
HPCC_TOPO = "7 3 6\n4 5 6\n" + LINKS


def test_classes_from_either_header():
    want = {0: "hosts", 1: "hosts", 2: "hosts", 3: "hosts", 4: "tors", 5: "tors", 6: "cores"}
    assert pauses.classes(FLOODGATE_TOPO) == want
    assert pauses.classes(HPCC_TOPO) == want


def test_pause_runs_to_resume_and_repeats_extend_nothing():
    # host 0 paused at 100, paused again at 150 (already paused), resumed at 400: 300 ns;
    # core 6 port 1 paused 1000-1500; ToR 4 port 3 paused at 2000 and never resumed
    trace = "\n".join(["100 0 0 1 1", "150 0 0 1 1", "400 0 0 1 0", "1000 6 1 1 1", "1500 6 1 1 0", "2000 4 1 3 1", "2500 2 0 1 0"])
    total, still_open = pauses.paused_ns(trace)
    assert total == {(0, 1): 300, (6, 1): 500, (4, 3): 500}
    assert still_open == {(4, 3): 500}
    # a resume without a pause (host 2) counts nothing; an explicit end stretches the open one
    total, still_open = pauses.paused_ns(trace, end_ns=3000)
    assert total[(4, 3)] == 1000 and still_open == {(4, 3): 1000}
    assert pauses.by_class(total, pauses.classes(FLOODGATE_TOPO)) == {"hosts": 300, "tors": 1000, "cores": 500}


def test_command_line(tmp_path):
    (tmp_path / "pfc.txt").write_text("100 0 0 1 1\n400 0 0 1 0\n")
    (tmp_path / "topo.txt").write_text(HPCC_TOPO)
    out = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path / "pfc.txt"), str(tmp_path / "topo.txt")], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    rows = {line.split()[0]: float(line.split()[1]) for line in out.stdout.splitlines()[1:]}
    assert rows == {"hosts": 0.3, "tors": 0.0, "cores": 0.0, "total": 0.3}
    bad = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True)
    assert bad.returncode == 2 and "PFC_FILE" in bad.stderr
