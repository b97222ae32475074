"""A paper folder's claims against the labels its sweeps' runs will carry (the labels `reproduce`
computes from run params), so a reported number never goes unchecked for a typo in a label."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hopsim.results.query import _varying_within_names, label_of, param_columns
from hopsim.papers.reproduce import paper_dir, paper_sweeps
from hopsim.sweep import plan_sweep


def planned_labels(path: Path, quick: bool = False) -> dict[str, dict[str, Any]]:
    """Each label the runs of sweep file `path` will carry, with its params by column name."""
    _, points = plan_sweep(path, quick=quick, max_memory="off")
    params = [dict(sorted(p.params.items())) for p in points]  # as a run folder keeps them
    keys = list(dict.fromkeys(k for p in params for k in p))
    cols, varying = param_columns(keys), _varying_within_names(params)
    return {label_of(p, cols, varying=varying): {cols[k]: v for k, v in p.items()} for p in params}


def unmatched_claims(folder: Path, quick: bool = False) -> tuple[list[str], list[str]]:
    """(figure ids, 'sweep fig: label' for every reported label no run of its sweep carries)."""
    ids, missing = [], []
    for path, model in paper_sweeps(paper_dir(str(folder))):
        labels = planned_labels(path, quick)
        for fig in model.paper.figures:
            ids.append(fig.id)
            missing += [f"{path.name} {fig.id}: {lab}" for r in fig.reported for lab in (r.ratio or [r.label])
                        if not _carried(lab, labels, series=r.stat is not None)]
    return ids, missing


def _carried(label: str, labels: dict[str, Any], series: bool) -> bool:
    """Whether a run carries the label; a series' sql may name its lines by a run's label and a
    suffix (``flowsail f2``: FlowSail's flow f2), which a claim on the series names."""
    return label in labels or (series and any(label.startswith(f"{lab} ") for lab in labels))
