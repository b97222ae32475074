"""The `hopsim` command.

Bad input (a scenario, sweep or HPCC config that cannot be used) prints one line per problem,
each naming the field and what is allowed, and exits with code 2 leaving no output behind.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

import typer
from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from .errors import ScenarioError

app = typer.Typer(
    name="hopsim",
    help="hopsim: a fast packet-level datacenter network simulator for incast and per-hop flow control.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
out_console = Console()
err_console = Console(stderr=True)

BAD_INPUT = 2
INTERRUPTED = 130  # 128 + SIGINT, as shells report a Ctrl-C


def _error(msg: object) -> None:
    err_console.print("[bold red]error:[/]", end=" ")
    err_console.print(str(msg), markup=False, highlight=False, soft_wrap=True)


@contextmanager
def _bad_input(**paths: Optional[Path]) -> Iterator[None]:
    """Bad input ends as one line and exit code 2: a ScenarioError, and an OSError from the file
    system refusing a path (a loop of links, a name too long, a full disk), named by the option
    that gave it (`paths`: option name -> the path given, e.g. ``out=Path("a/run")``)."""
    try:
        yield
    except ScenarioError as e:
        _error(e)
        raise typer.Exit(BAD_INPUT) from None
    except OSError as e:
        _error(_path_error(e, paths))
        raise typer.Exit(BAD_INPUT) from None


_ARGUMENTS = {"scenario": "SCENARIO", "sweep": "SWEEP", "config": "CONFIG", "root": "DIR", "run_dir": "RUN_DIR",
              "ref": "REF", "cand": "CAND"}
"""The commands' path arguments, as their help names them (the rest are options: ``--out``)."""


def _path_error(e: OSError, paths: dict[str, Optional[Path]]) -> str:
    """One line for a file-system refusal: the option whose path it concerns (the path given, or
    a path inside it or leading to it), the file, and the system's reason."""
    from .scenario.paths import why_unwritable

    name = str(e.filename) if e.filename else ""
    why = e.strerror or str(e)
    if name and e.errno in (28, 27, 30, 13, 17):  # full, too large, read-only, denied, exists
        why = why_unwritable(Path(name), e)
    for opt, given in paths.items():
        if given is None or not name:
            continue
        g = str(given)
        if name == g or name.startswith(g.rstrip("/") + "/") or g.startswith(name.rstrip("/") + "/"):
            label = _ARGUMENTS.get(opt, "--" + opt.replace("_", "-"))
            where = "" if name == g else f" ({name})"
            return f"{label} {g}{where}: {why}"
    return f"{name}: {why}" if name else f"{type(e).__name__}: {why}"


ForceFileOpt = typer.Option(False, "--force", help="Replace an output file that exists (never one of the command's "
                           "inputs, nor a file in a run or sweep folder).")


@contextmanager
def _writing(inputs: dict[str, Optional[Path]], outputs: dict[str, tuple[Optional[Path], bool]], force: bool = False,
             in_run: tuple[str, ...] = (), replaces: tuple[str, ...] = (), resumes: tuple[str, ...] = (),
             own: tuple[Path, ...] = (), within: tuple[Path, ...] = ()) -> Iterator[None]:
    """The command's rule for what it writes (`hopsim.scenario.outputs`): each output option
    (`outputs`: option -> (path, is a folder)) checked against it before anything runs, then
    the rule kept by every file the command writes. `own`: folders that are the command's own
    output, inside which it writes freely (a sweep's folder); `within`: folders of hopsim's that
    its outputs may stand in (`reproduce all`'s, for each paper's). Use inside `_bad_input`."""
    from dataclasses import replace

    from .scenario.outputs import Rule, applying, check_output

    rule = Rule(inputs={k: v for k, v in inputs.items() if v is not None}, in_run=frozenset(in_run), force=force,
                replaces=frozenset(replaces), resumes=frozenset(resumes))
    for opt, (path, folder) in outputs.items():
        if path is not None:
            check_output(path, opt, folder=folder, rule=replace(rule, own=within))
    with applying(replace(rule, own=own + within)):
        yield


@contextmanager
def _spinner(text: str) -> Iterator[Callable[[str], None]]:
    """A spinner with elapsed time on stderr while a long step runs; yields a function that
    changes its text. Nothing when stderr is not a terminal (rich would leave an empty line
    there, before an error message too)."""
    if not err_console.is_terminal:
        yield lambda s: None
        return
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                  console=err_console, transient=True) as p:
        task = p.add_task(text, total=None)
        yield lambda s: p.update(task, description=s)


def _parse_set(items: list[str]) -> dict[str, Any]:
    """`--set key=value`: the value is read as TOML (so 16, "pfc", true, [1, 2] work), else a string."""
    import tomllib

    out: dict[str, Any] = {}
    for it in items:
        if "=" not in it:
            raise ScenarioError(f"--set {it!r}: expected KEY=VALUE, e.g. flow_control.scheme=ppfc")
        k, v = it.split("=", 1)
        try:
            out[k.strip()] = tomllib.loads(f"v = {v}")["v"]
        except tomllib.TOMLDecodeError:
            out[k.strip()] = v
        except RecursionError:
            raise ScenarioError(f"--set {k.strip()}: the value nests arrays or tables too deeply to read") from None
    return out


SetOpt = typer.Option([], "--set", help="Override a key, e.g. --set flow_control.scheme=ppfc (repeatable).")
MaxMemoryOpt = typer.Option(
    "auto", "--max-memory", metavar="SIZE",
    help="Refuse a run whose estimated memory exceeds this (e.g. 4GiB; 'off': no limit). Default: the "
    "HOPSIM_MAX_MEMORY environment variable, else the memory available on this machine.")
MAX_THREADS = 2**20
"""The most threads (and worker processes) a command takes: far above any machine's cores, and
a clear range to name instead of an overflow where the core takes the number."""
ThreadsOpt = typer.Option(None, "--threads", min=1, max=MAX_THREADS, help="Threads for the run: the network is split into that many "
                          "partitions run side by side, with tables identical to one thread's (default: the "
                          "machine's cores).")


def _threads(threads: Optional[int]) -> int:
    from .scenario.resources import default_threads

    return default_threads() if threads is None else threads


@app.command()
def run(
    scenario: Path = typer.Argument(..., help="Scenario TOML file."),
    out: Path = typer.Option(..., "--out", "-o", help="Run folder to create."),
    force: bool = typer.Option(False, "--force", help="Replace the run folder if it exists (only a run folder: "
                               "never another folder, nor one holding the scenario)."),
    keep_partial: bool = typer.Option(False, "--keep-partial", help="On Ctrl-C, still write what was measured "
                                      "(summary.json says partial)."),
    set_: list[str] = SetOpt,
    max_memory: str = MaxMemoryOpt,
    threads: Optional[int] = ThreadsOpt,
) -> None:
    """Run one scenario and write a run folder (Parquet tables + summary.json)."""
    from .errors import RunInterrupted
    from .progress import RunProgress
    from .run import run as run_scenario
    from .scenario.resources import check_disk
    from .scenario.model import load_scenario
    from . import interrupts
    from .results.store import check_writable, is_complete, write_run

    with _bad_input(scenario=scenario, out=out), \
            _writing({"SCENARIO": scenario}, {"--out": (out, True)}, force=force, replaces=("run",)):
        sc = load_scenario(scenario, _parse_set(set_), validate=True, max_memory=max_memory)
        _notes(sc.warnings)
        check_writable(out, "--out")
        check_disk(sc.core_json, [(Path(tempfile.gettempdir()), "the spool"), (out.parent, "--out")], str(scenario))
        try:
            with RunProgress(err_console, sc.name) as prog:
                res = run_scenario(sc, on_progress=prog.update, max_memory=max_memory, threads=threads)
        except RunInterrupted as e:
            # (what was measured is made into tables only when asked for: `RunInterrupted.partial`)
            partial = e.partial if keep_partial else None
            if partial is not None:
                partial.summary["partial"] = True
                path = _write(write_run, partial, sc, out, force)
                _interrupted(f"interrupted ({e.message}); partial run folder: {path}")
            else:
                _interrupted(f"interrupted ({e.message}); nothing written")
            raise typer.Exit(INTERRUPTED) from None
        try:
            path = _write(write_run, res, sc, out, force)
            interrupts.ignore()  # the run folder is written: the rest is reporting
        except KeyboardInterrupt:
            # a signal just as the folder was put in place: say which it was
            if not is_complete(out):
                raise
            _interrupted(f"interrupted; the run folder was written: {out}")
            raise typer.Exit(INTERRUPTED) from None
    s = res.summary
    eps = s.get("events_per_s")
    if s.get("stopped") in ("deadlock", "no_progress"):
        err_console.print("[bold yellow]stopped:[/]", end=" ")
        err_console.print(s.get("stop_message", s["stopped"]), markup=False, highlight=False, soft_wrap=True)
    out_console.print(
        f"{s['flows_finished']}/{s['flows']} flows finished, {_frames(s)}, {s['drops']} drops"
        + (f" (and {s['fault_drops']:,} packets lost to [faults])" if s.get("fault_drops") else "") + ", "
        f"{s['events']:,} events in {s['wall_time_s']:.2f} s" + (f" ({eps / 1e6:.1f} M events/s)" if eps else "")
        + f" on {s.get('threads', 1)} thread{'s' if s.get('threads', 1) != 1 else ''}",
        markup=False,
    )
    if s.get("threads_note"):
        _notes([s["threads_note"]])
    out_console.print(f"run folder: {path}")


FRAME_LABELS = {"pfc": "PFC", "queue_pause": "queue pause", "credit": "credit", "dst_pause": "destination pause",
                "flow_pause": "flow pause", "other": "other"}
"""How the summary line names each kind of control frame (`summary.json`'s `control_frames`)."""


def _frames(s: dict[str, Any]) -> str:
    """The control frames a run sent, by kind: "224 queue pause + 12 PFC control frames"."""
    kinds = [f"{n:,} {FRAME_LABELS.get(k, k)}" for k, n in (s.get("control_frames") or {}).items() if n]
    return (" + ".join(kinds) if kinds else "0") + " control frames"


def _write(write_run: Callable[..., Path], res: Any, sc: Any, out: Path, force: bool) -> Path:
    """Write a run folder; a file-system error (full disk, permissions) is bad output, not a
    traceback, and leaves nothing behind (`write_run` removes its temporary folder)."""
    from .scenario.paths import why_unwritable

    try:
        return write_run(res, sc, out, overwrite=force)
    except OSError as e:
        raise ScenarioError(f"--out {out}: cannot write the run folder ({why_unwritable(out, e)})") from None


@app.command()
def validate(
    scenario: Path = typer.Argument(..., help="Scenario TOML file."),
    set_: list[str] = SetOpt,
    core_json: Optional[Path] = typer.Option(None, "--core-json", help="Also write the core's JSON of the scenario "
                                              "here (what hopsim-bench and a run folder's scenario.json hold)."),
    max_memory: str = MaxMemoryOpt,
    memory: bool = typer.Option(False, "--memory", help="Also print the estimated memory of a run, part by part."),
    threads: Optional[int] = ThreadsOpt,
    force: bool = ForceFileOpt,
) -> None:
    """Check a scenario (schema, files, topology, flows, memory) without running it."""
    from .scenario.resources import check_disk, estimate_memory, with_process
    from .scenario.model import load_scenario

    from .scenario.paths import write_text_atomic

    with _bad_input(scenario=scenario, core_json=core_json), \
            _writing({"SCENARIO": scenario}, {"--core-json": (core_json, False)}, force=force):
        sc = load_scenario(scenario, _parse_set(set_), validate=True, max_memory=max_memory)
        check_disk(sc.core_json, [(Path(tempfile.gettempdir()), "the spool")], str(scenario))
        if core_json is not None:
            write_text_atomic(core_json, sc.core_json, "--core-json")
    _notes(sc.warnings)
    if memory:
        _print_estimate(with_process(estimate_memory(sc.core_json, spooled=True, threads=_threads(threads))))
    out_console.print(f"{scenario}: ok (sha256 {sc.hash[:16]})")


def _print_estimate(est: dict[str, Any]) -> None:
    from .scenario.resources import fmt_bytes

    disk = f"; samples spooled to disk: about {fmt_bytes(est['disk'])}" if est.get("disk") else ""
    t = Table(title=f"estimated memory: about {fmt_bytes(est['total'])}{disk}", show_lines=False)
    for c in ("part", "MB", "what"):
        t.add_column(c)
    for p in est["parts"]:
        if p["bytes"] > 0:
            t.add_row(p["name"], f"{p['bytes'] / 1e6:,.1f}", p["detail"])
    (out_console if out_console.is_terminal else Console(width=200)).print(t)


@app.command()
def sweep(
    sweep_file: Path = typer.Argument(..., metavar="SWEEP", help="Sweep TOML file."),
    out: Path = typer.Option(..., "--out", "-o", help="Folder of run folders (created; reused to resume)."),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", min=1, max=MAX_THREADS, help="Worker processes (default: one per core)."),
    cluster: Optional[str] = typer.Option(None, "--cluster", help="Dask scheduler address, e.g. tcp://10.0.0.1:8786."),
    max_memory: str = typer.Option(
        "auto", "--max-memory", metavar="SIZE",
        help="Refuse runs whose estimated memory exceeds this (e.g. 4GiB; 'off': no limit). Default: "
        "HOPSIM_MAX_MEMORY, else the memory available where each run is checked (here while planning, "
        "and on the worker that runs it)."),
    prune: bool = typer.Option(False, "--prune", help="Remove the runs in --out that the sweep no longer plans "
                               "(its base scenario, grid or seeds changed); without it they stop the sweep."),
) -> None:
    """Run a grid of scenario variants x seeds, locally or on a Dask cluster; resumes."""
    from .results.store import check_writable
    from .sweep import run_sweep

    from .progress import SweepProgress

    with _bad_input(sweep=sweep_file, out=out), \
            _writing({"SWEEP": sweep_file}, {"--out": (out, True)}, resumes=("sweep",), own=(out,)):
        check_writable(out, "--out")
        with SweepProgress(err_console) as progress:
            t0 = time.perf_counter()
            try:
                rep = run_sweep(sweep_file, out, jobs=jobs, cluster=cluster, on_plan=progress.on_plan,
                                on_done=progress.on_done, max_memory=max_memory, prune=prune)
            except KeyboardInterrupt:
                progress.stop()
                _interrupted("interrupted: the runs completed so far are kept; run the same command again to resume")
                raise typer.Exit(INTERRUPTED) from None
    where = f"on {cluster}" if cluster else "locally"
    out_console.print(
        f"{len(rep.planned)} runs: {len(rep.ran)} ran {where}, {len(rep.skipped)} already complete "
        f"({time.perf_counter() - t0:.1f} s)"
    )
    out_console.print(f"results: {rep.out}")


@app.command()
def query(
    root: Path = typer.Argument(..., metavar="DIR", help="A run folder or a folder of them."),
    sql: str = typer.Argument(..., help="SQL over the views flows, pauses, buffer, queues, ports and runs."),
    fmt: str = typer.Option("table", "--format", "-f", help="table, csv or json."),
) -> None:
    """Answer SQL over every run in a folder (DuckDB)."""
    from .interrupts import native_ctrl_c
    from .results.query import query as run_query

    if fmt not in ("table", "csv", "json"):
        _error(f"--format: {fmt!r} is not allowed; allowed: table, csv, json")
        raise typer.Exit(BAD_INPUT)
    try:
        with native_ctrl_c():
            df = run_query(root, sql)
    except (FileNotFoundError, ScenarioError) as e:
        _error(e)
        raise typer.Exit(BAD_INPUT) from None
    except Exception as e:  # duckdb errors: bad SQL
        _error(f"{type(e).__name__}: {e}")
        raise typer.Exit(BAD_INPUT) from None
    if fmt == "csv":
        sys.stdout.write(df.to_csv(index=False))
    elif fmt == "json":
        sys.stdout.write(df.to_json(orient="records") + "\n")
    else:
        t = Table(show_lines=False)
        for c in df.columns:
            t.add_column(str(c))
        for row in df.itertuples(index=False):
            t.add_row(*[_cell(v) for v in row])
        # piped output: no terminal width to respect, so never truncate cells
        (out_console if out_console.is_terminal else Console(width=400)).print(t)


def _cell(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


@app.command()
def report(
    root: Path = typer.Argument(..., metavar="DIR", help="A run folder or a folder of them."),
    out: Path = typer.Option(Path("report.html"), "--out", "-o", help="HTML file to write."),
    force: bool = ForceFileOpt,
) -> None:
    """Build one HTML page with the figures and summary tables (for a `hopsim reproduce` folder:
    the paper's page, each figure beside the paper's numbers; for `reproduce all`'s: the pages and
    their index, whatever --out says)."""
    from .papers.index import build_index
    from .papers.report import build_report
    from .results.store import find_runs
    from .papers.reproduce import build_paper_page, is_reproduction

    try:
        with _bad_input(root=root, out=out):
            pages = is_reproduction(root) or (root.is_dir() and any(is_reproduction(d) for d in root.iterdir() if d.is_dir()))
            # a reproduction's page is written into its folder: its own output there
            with _writing({"DIR": root}, {} if pages else {"--out": (out, False)}, force=force, own=(root,) if pages else ()), \
                    _spinner("building report") as say:
                if is_reproduction(root):
                    path = build_paper_page(root, out)
                elif pages:
                    for d in root.iterdir():  # `hopsim reproduce all`'s folder: each paper's page, then the index
                        if is_reproduction(d):
                            build_paper_page(d)
                    path = build_index(root)
                else:
                    path = build_report(root, out, on_step=lambda s: say(f"report: {s}"))
                    _notes(_partial(*find_runs(root)))
    except FileNotFoundError as e:
        _error(e)
        raise typer.Exit(BAD_INPUT) from None
    out_console.print(f"report: {path}")


@app.command()
def reproduce(
    paper: str = typer.Argument(..., metavar="PAPER", help="floodgate, bfc, flowsail, ppfc, pulser (scenarios/papers/PAPER), a folder, or all."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Folder for the runs and the page (default runs/reproduce-PAPER[-quick])."),
    quick: bool = typer.Option(False, "--quick", help="The reduced version: shorter runs, first seed only (minutes on 2 cores)."),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", min=1, max=MAX_THREADS, help="Worker processes (default: one per core)."),
) -> None:
    """Run a paper's scenarios as sweeps and write one HTML page: each figure redrawn from hopsim's
    runs beside the numbers the paper reports; resumes when run again. `all`: every paper, each in
    a folder of --out, and an index page of them."""
    from .papers.index import build_index
    from .papers.reproduce import all_papers
    from .results.store import check_writable
    from .scenario.outputs import mark

    if paper != "all":
        _reproduce_one(paper, out, quick, jobs)
        return
    out = out or Path("runs") / f"reproduce-all{'-quick' if quick else ''}"
    with _bad_input(out=out), _writing({}, {"--out": (out, True)}, resumes=("reproductions",)):
        check_writable(out, "--out")
        out.mkdir(parents=True, exist_ok=True)
        mark(out, "reproductions")
    t0 = time.perf_counter()
    for name in all_papers():
        _reproduce_one(name, out / name, quick, jobs, within=(out,))
    out_console.print(f"index: {build_index(out, wall_s=time.perf_counter() - t0)}")


def _reproduce_one(paper: str, out: Optional[Path], quick: bool, jobs: Optional[int], within: tuple[Path, ...] = ()) -> None:
    from .progress import SweepProgress
    from .papers.reproduce import paper_dir, paper_sweeps, wall_text
    from .papers.reproduce import reproduce as run_paper
    from .results.store import check_writable

    from contextlib import ExitStack

    with _bad_input(out=out), ExitStack() as stack:
        d = paper_dir(paper)
        sweeps = paper_sweeps(d)
        out = out or Path("runs") / f"reproduce-{d.name}{'-quick' if quick else ''}"
        stack.enter_context(_writing({}, {"--out": (out, True)}, resumes=("reproduction",), own=(out,), within=within))
        check_writable(out, "--out")
        est_text = wall_text(sweeps, quick)
        err_console.print(f"{d.name}: {len(sweeps)} sweeps ({'quick' if quick else 'full'}); expected wall time: {est_text}",
                          markup=False, highlight=False)

        def on_sweep(i: int, n: int, stem: str) -> None:
            err_console.print(f"[{i}/{n}] {stem}", markup=False, highlight=False)

        try:
            with SweepProgress(err_console) as progress:
                rep = run_paper(paper, out, quick=quick, jobs=jobs, on_sweep=on_sweep,
                                on_plan=progress.on_plan, on_done=progress.on_done)
        except KeyboardInterrupt:
            _interrupted("interrupted: the runs completed so far are kept; run the same command again to resume")
            raise typer.Exit(INTERRUPTED) from None
    out_console.print(f"{len(rep.sweeps)} sweeps: {rep.ran} runs ran, {rep.skipped} already complete")
    out_console.print(f"page: {rep.page}")


@app.command()
def examples() -> None:
    """List the example scenarios the package carries; `hopsim init NAME` copies one out to edit
    and `hopsim run NAME.toml --out DIR` runs it."""
    from .scenario.packaged import examples as known, summary

    for name, path in known().items():
        out_console.print(f"{name:<22} {summary(path)}", markup=False, highlight=False, soft_wrap=True)


@app.command()
def init(
    name: str = typer.Argument(..., metavar="NAME", help="An example's name (`hopsim examples` lists them)."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="File to write (default ./NAME.toml); an existing file is never replaced."),
) -> None:
    """Copy example NAME into a scenario file of your own to edit and run."""
    from .scenario.packaged import example
    from .scenario.paths import write_text_atomic

    with _bad_input(out=out):
        src = example(name)
        dest = out or Path(f"{src.stem}.toml")
        if dest.exists() or dest.is_symlink():
            raise ScenarioError(f"--out {dest}: already exists; hopsim init never replaces a file (give another --out)")
        with _writing({}, {"--out": (dest, False)}):
            write_text_atomic(dest, src.read_text(), "--out")
    out_console.print(f"wrote {dest}; run it with: hopsim run {dest} --out runs/{src.stem}", markup=False, highlight=False, soft_wrap=True)


plugin_app = typer.Typer(help="Flow-control schemes from crates of your own (docs/writing-a-scheme.md).", no_args_is_help=True)
app.add_typer(plugin_app, name="plugin")


@plugin_app.command("new")
def plugin_new(
    path: Path = typer.Argument(..., metavar="PATH", help="Folder to create for the crate."),
) -> None:
    """Write a scheme crate to start from (the example buffer-pause scheme), ready for
    `hopsim plugin build PATH`."""
    from .plugins import new_crate

    with _bad_input(path=path):
        new_crate(path)
    out_console.print(f"wrote {path}; rename the scheme (NAME in src/lib.rs), then: hopsim plugin build {path}",
                      markup=False, highlight=False, soft_wrap=True)


@plugin_app.command("build")
def plugin_build(
    paths: list[Path] = typer.Argument(..., metavar="PATH...", help="Folders of scheme crates (hopsim-core = \"0.1\", pub fn register())."),
    work: Optional[Path] = typer.Option(None, "--work", help="Build folder, kept between builds (default ~/.cache/hopsim/plugin-build)."),
    target: Optional[Path] = typer.Option(None, "--target", help="Install into this folder (put it on PYTHONPATH) instead of this environment."),
) -> None:
    """Build scheme crates with the installed core into an extension and install it: their
    schemes are then selectable by name (flow_control.scheme). A new build replaces the last."""
    from .plugins import build

    with _bad_input(work=work, target=target):
        wheel = build(paths, work, target, say=lambda line: err_console.print(line, markup=False, highlight=False, soft_wrap=True))
    out_console.print(f"installed {wheel.name}", markup=False, highlight=False, soft_wrap=True)


@app.command("import-hpcc")
def import_hpcc_cmd(
    config: Path = typer.Argument(..., help="The HPCC simulator's config.txt."),
    out: Path = typer.Option(..., "--out", "-o", help="Scenario TOML to write."),
    force: bool = ForceFileOpt,
) -> None:
    """Turn an HPCC ns-3 simulator config into a hopsim scenario."""
    from .interop.hpcc.importer import import_hpcc

    with _bad_input(config=config, out=out), \
            _writing({"CONFIG": config}, {"--out": (out, False)}, force=force):
        path, warnings = import_hpcc(config, out)
    _notes(warnings)
    out_console.print(f"scenario: {path}")


@app.command("import-floodgate")
def import_floodgate_cmd(
    config: Path = typer.Argument(..., help="Floodgate-NS3's config (mix/config-*.ini)."),
    out: Path = typer.Option(..., "--out", "-o", help="Scenario TOML to write (its converted topology and flow files go beside it)."),
    flows: Optional[Path] = typer.Option(None, "--flows", help="The flows it drew (FLOW_FROM_FILE 0): its standard output, or scripts/ns3_flow_list.py's output."),
    force: bool = ForceFileOpt,
) -> None:
    """Turn a Floodgate-NS3 config into a hopsim scenario."""
    from .interop.floodgate.importer import import_floodgate

    with _bad_input(config=config, out=out, flows=flows), \
            _writing({"CONFIG": config, "--flows": flows}, {"--out": (out, False)}, force=force):
        path, warnings = import_floodgate(config, out, flows)
    _notes(warnings)
    out_console.print(f"scenario: {path}")


@app.command("import-bfc")
def import_bfc_cmd(
    config: Path = typer.Argument(..., help="The BFC simulator's run configuration (mix/nsdiconfig.txt style)."),
    out: Path = typer.Option(..., "--out", "-o", help="Scenario TOML to write (with --flows, its flow file goes beside it)."),
    flows: Optional[Path] = typer.Option(None, "--flows", help="Its standard output: the flows it drew (`New Flow Created` "
                                         "lines), run flow for flow; without, hopsim draws the same kind of traffic."),
    force: bool = ForceFileOpt,
) -> None:
    """Turn a BFC simulator (BFC_NS3_NSDI2022) config into a hopsim scenario."""
    from .interop.bfc.importer import import_bfc

    with _bad_input(config=config, out=out, flows=flows), \
            _writing({"CONFIG": config, "--flows": flows}, {"--out": (out, False)}, force=force):
        path, warnings = import_bfc(config, out, flows)
    _notes(warnings)
    out_console.print(f"scenario: {path}")


def _partial(*run_dirs: Path) -> list[str]:
    """What a command that reads run folders says of each partial one (`store.partial_note`)."""
    from .results.store import partial_note

    return [n for n in map(partial_note, run_dirs) if n]


def _notes(lines: list[str]) -> None:
    for w in lines:
        err_console.print("[yellow]note:[/]", end=" ")
        err_console.print(w, markup=False, highlight=False, soft_wrap=True)


@app.command("export-floodgate")
def export_floodgate_cmd(
    run_dir: Path = typer.Argument(..., help="A run folder."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="File to write (default RUN_DIR/fct-floodgate.txt)."),
    force: bool = ForceFileOpt,
) -> None:
    """Write per-flow results in Floodgate-NS3's fct format (its qp_finish lines, its oracle FCT)."""
    from .interop.floodgate.exporter import export_floodgate

    with _bad_input(run_dir=run_dir, out=out), \
            _writing({"RUN_DIR": run_dir}, {"--out": (out, False)}, force=force, in_run=("fct-floodgate.txt",)):
        path, n, notes = export_floodgate(run_dir, out)
        _notes(_partial(run_dir))
    _notes(notes)
    out_console.print(f"{n} flows -> {path}")


@app.command("export-bfc")
def export_bfc_cmd(
    run_dir: Path = typer.Argument(..., help="A run folder."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="File to write (default RUN_DIR/stdout-bfc.txt)."),
    incast_packets: Optional[int] = typer.Option(None, "--incast-packets", min=1, help="Packets per incast flow for its "
                                                 "`Incast info` line (default: from the run's incast-tagged flows)."),
    incast_sources: int = typer.Option(100, "--incast-sources", min=1, help="Senders per incast, with --incast-packets."),
    force: bool = ForceFileOpt,
) -> None:
    """Write per-flow and buffer results as the BFC simulator prints them (for its calculate_fct_slowdown.py)."""
    from .interop.bfc.exporter import export_bfc

    with _bad_input(run_dir=run_dir, out=out), \
            _writing({"RUN_DIR": run_dir}, {"--out": (out, False)}, force=force, in_run=("stdout-bfc.txt",)):
        path, n, notes = export_bfc(run_dir, out, None if incast_packets is None else (incast_packets, incast_sources))
        _notes(_partial(run_dir))
    _notes(notes)
    out_console.print(f"{n} flows -> {path}")


@app.command("export-fct")
def export_fct_cmd(
    run_dir: Path = typer.Argument(..., help="A run folder."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="File to write (default RUN_DIR/fct.txt)."),
    force: bool = ForceFileOpt,
) -> None:
    """Write per-flow results in the HPCC simulator's fct.txt format (fct.txt only; see export-hpcc)."""
    from .interop.hpcc.exporter import export_fct

    with _bad_input(run_dir=run_dir, out=out), \
            _writing({"RUN_DIR": run_dir}, {"--out": (out, False)}, force=force, in_run=("fct.txt",)):
        path, n = export_fct(run_dir, out)
        _notes(_partial(run_dir))
    out_console.print(f"{n} flows -> {path}")


@app.command("export-hpcc")
def export_hpcc_cmd(
    run_dir: Path = typer.Argument(..., help="A run folder."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Folder to write into (default RUN_DIR; created)."),
    force: bool = ForceFileOpt,
) -> None:
    """Write the HPCC simulator's output files (fct.txt, pfc.txt, qlen.txt) for a run; a file whose
    table the run lacks is skipped with a note saying what writes it."""
    from .interop.hpcc.exporter import HPCC_FILES, export_hpcc

    with _bad_input(run_dir=run_dir, out=out), \
            _writing({"RUN_DIR": run_dir}, {}, force=force, in_run=HPCC_FILES):  # (each file checked as written)
        files = export_hpcc(run_dir, out)
        _notes(_partial(run_dir))
    _notes([f"{f.name} skipped: {f.skipped}" for f in files if f.skipped])
    for f in files:
        if not f.skipped:
            out_console.print(f"{f.name}: {f.lines} lines -> {f.path}")


@app.command("compare-fct")
def compare_fct_cmd(
    ref: Path = typer.Argument(..., help="Reference: an fct.txt, a folder holding one, or a hopsim run folder; or the BFC "
                               "simulator's standard output (or a folder holding it as stdout.txt): then its slowdown basis "
                               "(--basis ref), its packet-count buckets and its incast flows."),
    cand: Path = typer.Argument(..., help="Candidate: the same kinds."),
    tol: float = typer.Option(0.10, "--tol", min=0.0, help="Largest relative gap |cand-ref|/ref allowed in a "
                              "size bucket's median or p99 slowdown."),
    plot_: Optional[Path] = typer.Option(None, "--plot", help="Also draw median and p99 per bucket (png, pdf or svg)."),
    json_: Optional[Path] = typer.Option(None, "--json", help="Also write the numbers as JSON."),
    basis: str = typer.Option("own", "--basis", help="own: each side's slowdown over its own standalone FCT; ref: both "
                              "over the reference's (e.g. Floodgate-NS3's Get_Oracle_Fct; the BFC simulator's 4 or 8 us "
                              "plus serialization, same ToR or not)."),
    flows: str = typer.Option("all", "--flows", help="all, incast or background (by --incast-dsts, else by the incast tag "
                              "of the side that is a hopsim run folder)."),
    incast_dsts: str = typer.Option("", "--incast-dsts", help="Comma-separated hosts whose incoming flows are the incast "
                                    "(Floodgate-NS3: the first host of each rack that received one)."),
    ref_seed: list[Path] = typer.Option([], "--ref-seed", help="Another run of the reference, same flows, another seed "
                                        "(repeatable): its p99s are a range over its runs, not a bootstrap interval."),
    cand_seed: list[Path] = typer.Option([], "--cand-seed", help="Another run of the candidate, same flows, another seed "
                                         "(repeatable): its p99s are a range over its runs."),
    force: bool = ForceFileOpt,
) -> None:
    """Compare FCT slowdowns of two runs flow by flow, in 10 flow-size buckets (see hopsim.interop.compare).
    p99s are judged as ranges: over each side's runs, or a bootstrap interval for a reference of one run.
    Exit 0 when the worst gap is within --tol, 1 when it is not, 2 on bad input or no matching flow."""
    from .interop.compare import BFC_TAG, PLOT_FORMATS, compare, plot, read_fct, render, summary_lines, write_json
    from .scenario.paths import why_unwritable

    with _bad_input(ref=ref, cand=cand, plot=plot_, json=json_), \
            _writing({"REF": ref, "CAND": cand}, {"--json": (json_, False), "--plot": (plot_, False)}, force=force):
        if tol != tol:  # (older click lets nan through a range: no comparison with it is false)
            raise ScenarioError(f"--tol {tol}: not a number; give a gap of 0 or more, e.g. 0.1")
        if plot_ is not None and plot_.suffix.lstrip(".").lower() not in PLOT_FORMATS:
            raise ScenarioError(f"--plot {plot_}: unknown image type {plot_.suffix!r}; allowed: "
                                + ", ".join("." + f for f in PLOT_FORMATS))
        ref_rows, ref_name = read_fct(ref, "REF")
        cand_rows, cand_name = read_fct(cand, "CAND")
        _notes(_partial(ref, cand))
        try:
            dsts = [int(x) for x in incast_dsts.split(",") if x.strip()]
        except ValueError:
            raise ScenarioError(f"--incast-dsts {incast_dsts!r}: expected host ids separated by commas, e.g. 0,16,32") from None
        edges = None
        if ref_name.endswith(BFC_TAG):
            from .interop.bfc.compare import size_edges

            edges = size_edges()
        ref_more = [read_fct(p, "--ref-seed")[0] for p in ref_seed]
        cand_more = [read_fct(p, "--cand-seed")[0] for p in cand_seed]
        cmp = compare(ref_rows, cand_rows, tol, ref_name, cand_name, basis=basis, flows=flows, incast_dsts=dsts, edges=edges,
                      ref_more=ref_more, cand_more=cand_more)
        for opt, path, write in (("--json", json_, write_json), ("--plot", plot_, plot)):
            if path is not None:
                try:
                    write(cmp, path)
                except OSError as e:
                    raise ScenarioError(f"{opt} {path}: cannot write it ({why_unwritable(path, e)})") from None
    (out_console if out_console.is_terminal else Console(width=200)).print(render(cmp))
    for line in summary_lines(cmp):
        out_console.print(line, markup=False, highlight=False)
    for opt, path in (("json", json_), ("plot", plot_)):
        if path is not None:
            out_console.print(f"{opt}: {path}", markup=False, highlight=False)
    raise typer.Exit(0 if cmp.passed else 1)


@app.command()
def version() -> None:
    """Print the versions of the package and the core."""
    from importlib.metadata import version as v

    from . import _native

    out_console.print(json.dumps({"hopsim": v("hopsim"), "core": _native.version()}))


def main() -> None:
    """The `hopsim` command: every way it ends goes through here once. Ctrl-C and SIGTERM
    raise KeyboardInterrupt from the first line to the last (`hopsim.interrupts`); a command
    that has something to say about them (a run, a sweep) catches them itself, the rest end here
    as one line and exit code 130. Once the command is done, signals are ignored."""
    from . import interrupts

    _preload(sys.argv[1:])  # still under `interrupts.at_start`: a signal here ends at once, cleanly
    code: Any = INTERRUPTED
    try:
        try:
            interrupts.install()
            code = _main()
        finally:
            interrupts.ignore()
    except KeyboardInterrupt:  # (also one that lands between the lines above)
        _interrupted("interrupted; nothing written")
        code = INTERRUPTED
    interrupts.ignore()  # (again: a signal may have landed inside the first call)
    _forget_escaped_interrupts()
    sys.exit(code if isinstance(code, int) else 0)


def _forget_escaped_interrupts() -> None:
    """Keep the exit status the command chose. CPython notes a KeyboardInterrupt that leaves code
    run from source text (exec or eval of a string: a dataclass's generated methods, pydantic
    evaluating an annotation while a module loads) and, run as `python -m hopsim`, ends the
    process by SIGINT once the interpreter has shut down instead of with its status, even when
    the interrupt was caught further up and reported (Python/pythonrun.c `run_eval_code_obj`,
    Modules/main.c `Py_RunMain`). Each run of source text clears that note first. Called with
    signals ignored, so none can set it again."""
    exec("pass")


_MODULES = {
    "run": ("scenario.model", "run", "results.store", "progress", "scenario.resources", "results.spool"),
    "validate": ("scenario.model", "scenario.resources", "results.store", "results.spool", "run", "progress"),
    "sweep": ("scenario.model", "run", "results.store", "progress", "sweep"),
    "reproduce": ("scenario.model", "run", "results.store", "progress", "sweep", "papers.reproduce"),
    "query": ("results.query", "duckdb", "pandas"),
    "report": ("papers.report", "papers.reproduce", "papers.plots"),
    "import-hpcc": ("interop.hpcc.importer",),
    "import-floodgate": ("interop.floodgate.importer",),
    "export-fct": ("interop.hpcc.exporter",),
    "export-floodgate": ("interop.floodgate.exporter",),
    "import-bfc": ("interop.bfc.importer",),
    "export-bfc": ("interop.bfc.exporter",),
    "export-hpcc": ("interop.hpcc.exporter",),
    "compare-fct": ("interop.compare",),
}
"""The modules each command loads (besides this one), by command name."""


def _preload(args: list[str]) -> None:
    """Load the command's modules before Ctrl-C starts raising KeyboardInterrupt: an interrupt
    inside an import would leave a module half made, and what fails next is anyone's guess."""
    import importlib

    for name in _MODULES.get(next((a for a in args if not a.startswith("-")), ""), ()):
        try:
            importlib.import_module(f".{name}", __package__) if name not in ("duckdb", "pandas") else importlib.import_module(name)
        except ImportError:
            pass  # the command says what is missing when it runs


def _main() -> Any:
    import typer.main

    from .interrupts import native_ctrl_c

    command = typer.main.get_command(app)
    _once_each(command)
    try:
        with native_ctrl_c():  # the last line of defence for DuckDB's name for a Ctrl-C
            code = command.main(args=sys.argv[1:], prog_name="hopsim", standalone_mode=False)
    except _click_classes("Abort") as e:
        if isinstance(e.__context__, KeyboardInterrupt):  # click's name for a Ctrl-C it caught
            raise KeyboardInterrupt from None
        return 1
    except _click_classes("NoArgsIsHelpError") as e:  # `hopsim` alone, `hopsim run` alone: the help
        e.show()
        return BAD_INPUT
    except _click_classes("ClickException") as e:
        _usage_error(e)
        return BAD_INPUT
    except RepeatedOption as e:
        _error(e)
        return BAD_INPUT
    except OSError as e:
        # the last line of defence: the file system refusing a path given on the command line
        # (too long, a loop of links, ...) where no command expected it is bad input too
        _error(_path_error(e, {}))
        return BAD_INPUT
    except MemoryError:
        _error("memory: this machine ran out of memory; keep --max-memory at auto, which refuses a run that does "
               "not fit before it starts, or give a smaller scenario")
        return BAD_INPUT
    if code == INTERRUPTED and not _said:
        # Typer turns a KeyboardInterrupt that leaves a command into a silent exit code 130 (older
        # versions raised click's Abort, above); the command had no line for it, so `main` says one
        raise KeyboardInterrupt
    return code


def _click_classes(name: str) -> tuple[type[BaseException], ...]:
    """Click's exception class `name` as each command-line library in use defines it: recent Typer
    carries its own copy of click (`typer._click`, with Abort and Exit in `typer.exceptions`)
    whose exceptions are not click's; older Typer raises click's own. Catching both is what keeps
    every usage error one line."""
    import importlib

    out = []
    for module in ("typer._click.exceptions", "typer.exceptions", "click.exceptions"):
        try:
            cls = getattr(importlib.import_module(module), name, None)
        except ImportError:
            continue
        if isinstance(cls, type) and cls not in out:
            out.append(cls)
    return tuple(out)


class RepeatedOption(Exception):
    """An option that takes one value given more than once (`_once_each`)."""


def _once_each(command: Any) -> None:
    """Refuse an option that takes one value given twice (``--out a --out b``): click keeps the
    last silently, and a user who typed both meant one of them. Done in each command's parser,
    whose list of what it read (in order, repeats included) is the one place that knows."""
    for sub in [command, *getattr(command, "commands", {}).values()]:
        make_parser = sub.make_parser

        def checked(ctx: Any, make_parser: Any = make_parser) -> Any:
            parser = make_parser(ctx)
            parse = parser.parse_args

            def parse_args(args: list[str]) -> Any:
                opts, rest, order = parse(args=args)
                seen: set[int] = set()
                for p in order:
                    once = getattr(p, "param_type_name", "") == "option" and not getattr(p, "multiple", False) \
                        and not getattr(p, "count", False)
                    if once and id(p) in seen:
                        raise RepeatedOption(f"{ctx.command_path}: {'/'.join(p.opts)} given more than once; give it once")
                    seen.add(id(p))
                return opts, rest, order

            parser.parse_args = parse_args
            return parser

        sub.make_parser = checked


def _usage_error(e: BaseException) -> None:
    """A usage error as one line: what click says (the option and why), and where to read more."""
    msg = " ".join(str(e.format_message()).split()) if hasattr(e, "format_message") else str(e)
    ctx = getattr(e, "ctx", None)
    where = getattr(ctx, "command_path", "") or "hopsim"
    _error(f"{where}: {msg} (see `{where} --help`)")


_said = False
"""Whether the command has written its interrupted line (`_interrupted`)."""


def _interrupted(line: str) -> None:
    """The one line an interrupted command ends with, written straight to file descriptor 2:
    rich's console buffers what it prints (and its live display stands in for sys.stderr while
    it runs), and a signal landing inside one of its prints can leave that buffer unflushed,
    losing the line."""
    import os

    global _said
    _said = True
    try:
        os.write(2, (line + "\n").encode())
    except OSError:
        pass


if __name__ == "__main__":  # pragma: no cover
    main()
