"""SDPRelaxedTSVM beyond two classes: the full kernel factor against its leading eigenpairs.

Every one-vs-rest relaxation runs on one factor of the kernel.  The full factor (eigenvalues
down to ``EIGEN_FLOOR``, usually a Cholesky factor: an ``n x n`` product per evaluation) made
coil's six relaxations at 10 labels take over a minute; above ``SPECTRAL_RANK`` rows the
estimator now factors the kernel's ``SPECTRAL_RANK`` leading eigenpairs (its best rank-300
approximation, as ConvexTSVM's spectral route).  This script fits ``SDPRelaxedTSVM(
fallback="none", random_state=0)`` both ways on multi-class cells of the benchmark of
defaults (split 1) and reports CPU seconds, accuracy on the unlabeled rows and the share of
unlabeled rows labeled alike.

Run::

    python benchmarks/rtsvm_multiclass.py              # about 15 min on 2 idle cores
    python benchmarks/rtsvm_multiclass.py --render     # report from the .jsonl
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import cells_main, fit_default, report, table  # noqa: E402
from bench_defaults import load_set  # noqa: E402

NAME = "rtsvm_multiclass"
CELLS = [("coil", 10, 1), ("coil", 100, 1), ("dna", 10, 1), ("satimage", 10, 1),
         ("segment", 10, 1)]


def measure(name: str, n_labeled: int, split: int, data) -> dict:
    import semisup.transductive.rtsvm as rt

    out = dict(set=name, labels=n_labeled, split=split, runs={})
    labels = {}
    for variant in ("full", "leading"):
        saved = rt.SPECTRAL_RANK
        if variant == "full":
            rt.SPECTRAL_RANK = None           # kernel_factor(K, None): the full factor
        try:
            est, _, unl, _, seconds = fit_default(
                lambda: rt.SDPRelaxedTSVM(fallback="none", random_state=0), data,
                n_labeled, split)
        finally:
            rt.SPECTRAL_RANK = saved
        labels[variant] = est.transduction_[unl]
        out["runs"][variant] = dict(cpu=seconds, acc=float(np.mean(labels[variant]
                                                                   == data.y[unl])))
    out["agree"] = float(np.mean(labels["full"] == labels["leading"]))
    out["rank"] = rt.SPECTRAL_RANK
    return out


def render(records: list[dict]) -> str:
    rows = []
    for r in records:
        f, t = r["runs"]["full"], r["runs"]["leading"]
        rows.append([r["set"], r["labels"], f"{f['cpu']:.1f}", f"{100 * f['acc']:.1f}",
                     f"{t['cpu']:.1f}", f"{100 * t['acc']:.1f}", f"{100 * r['agree']:.1f}",
                     f"{f['cpu'] / t['cpu']:.1f}x"])
    head = ["set", "labels", "full factor: CPU s", "full: acc %",
            f"{records[0]['rank'] if records else 300} leading eigenpairs: CPU s",
            "leading: acc %", "unlabeled rows labeled alike %", "CPU full / leading"]
    return report(NAME, "SDPRelaxedTSVM beyond two classes: full kernel factor or its "
                  "leading eigenpairs", [__doc__.split("\n\n")[1], table(head, rows)])


if __name__ == "__main__":
    cells_main(__doc__, NAME, CELLS, measure, render, load_set)
