"""The worked examples (the `tqp` flow-control scheme, the `aimd` congestion control) and the
out-of-tree example plugin (`buffer_pause`, examples/buffer-pause-plugin) run from `hopsim run`
by name, their control frames and counters reach the summary line, summary.json and the `runs`
view, and a field a scheme does not have is bad input naming it and the fields allowed."""

from __future__ import annotations

import json

from hopsim.results.query import connect

from conftest import TINY


def _scenario(write, tables: str):
    return write("s.toml", TINY + tables)


def test_tqp_pauses_upstream_queues_and_says_so(write, tmp_path, cli):
    # the 4:1 incast fills the host port's queue 3 past K: TQP pauses the NIC queues feeding it
    s = _scenario(write, '\n[flow_control]\nscheme = "tqp"\n[flow_control.tqp]\nk = "20KB"\n')
    code, out = cli("run", s, "--out", tmp_path / "run")
    assert code == 0, out
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    frames = summary["control_frames"]
    assert frames["queue_pause"] > 0 and frames["pfc"] == 0, frames
    assert f"{frames['queue_pause']:,} queue pause control frames" in out
    assert summary["modules"]["tqp_pauses"] > 0
    assert summary["flows_finished"] == summary["flows"] == 4
    # the run folder records the K the core ran with
    assert 'k = "20KB"' in (tmp_path / "run" / "scenario.toml").read_text()
    con = connect(tmp_path / "run")
    row = con.execute("SELECT frames_queue_pause, frames_pfc, tqp_pauses FROM runs").fetchone()
    assert row == (frames["queue_pause"], 0, summary["modules"]["tqp_pauses"])


def test_aimd_cuts_on_marks(write, tmp_path, cli):
    s = _scenario(write, '\n[congestion_control]\nalgorithm = "aimd"\n[ecn]\nkmin = "5KB"\nkmax = "20KB"\nref_rate = "none"\n')
    code, out = cli("run", s, "--out", tmp_path / "run")
    assert code == 0, out
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["modules"]["aimd_cuts"] > 0, summary["modules"]


def test_the_plugin_scheme_runs_by_name(write, tmp_path, cli):
    """examples/buffer-pause-plugin is a separate crate on hopsim-core; the extension includes it
    (its `example-plugin` feature), so `hopsim run` selects it by name like a built-in scheme."""
    s = _scenario(write, '\n[flow_control]\nscheme = "buffer_pause"\n[flow_control.buffer_pause]\nlimit = "50KB"\n')
    code, out = cli("run", s, "--out", tmp_path / "run")
    assert code == 0, out
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["control_frames"]["pfc"] > 0
    assert summary["modules"]["buffer_pause_pauses"] > 0
    assert 'limit = "50KB"' in (tmp_path / "run" / "scenario.toml").read_text()


def test_a_field_the_scheme_lacks_is_bad_input(write, tmp_path, cli):
    s = _scenario(write, '\n[flow_control]\nscheme = "tqp"\n[flow_control.tqp]\nkk = "20KB"\n')
    code, out = cli("run", s, "--out", tmp_path / "run")
    assert code == 2
    assert "flow_control.tqp" in out and "'kk'" in out and "allowed here: k" in out, out
    s = _scenario(write, '\n[flow_control]\nscheme = "buffer_pause"\n[flow_control.buffer_pause]\nlimits = 1\n')
    code, out = cli("run", s, "--out", tmp_path / "run2")
    assert code == 2 and "'limits'" in out and "allowed here: limit" in out, out


def test_an_unknown_scheme_names_every_one_allowed(write, tmp_path, cli):
    s = _scenario(write, '\n[flow_control]\nscheme = "tqq"\n')
    code, out = cli("run", s, "--out", tmp_path / "run")
    assert code == 2
    for name in ("pfc", "bfc", "tqp", "buffer_pause"):
        assert name in out, out
