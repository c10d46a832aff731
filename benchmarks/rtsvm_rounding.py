"""SDPRelaxedTSVM: the leading-eigenvector rounding of ``M`` against the anchor rounding.

Both roundings read the same fit (the estimator's defaults, low-rank route): the leading
left singular vector of the factor ``R`` signed by the labeled rows (``M``'s leading
eigenvector, the rounding before 0.3.0), and ``sign(M[:, L] y_L)`` (the anchor rounding, the
estimator's since 0.3.0).  Cells: the binary sets of the benchmark of defaults
(``bench_defaults.py``): SSL book split 1 at 10 and 100 labels (usps at 10 labels left out:
over a minute per fit), UCI / IDA splits 1-2 (ida-image left out, as slow).  Accuracy on the
unlabeled rows, against ``SVC()`` on the labeled rows.

Run::

    python benchmarks/rtsvm_rounding.py            # about 20 min on 2 shared cores
    python benchmarks/rtsvm_rounding.py --render   # report from the .jsonl
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import fit_default, report, resumable_cells, table  # noqa: E402
from bench_defaults import IDA, SSLBOOK, UCI, load_set  # noqa: E402

NAME = "rtsvm_rounding"
SKIP = {("usps", 10), ("coil", 10), ("coil", 100)}  # slow, or multi-class


def cells() -> list[tuple[str, int, int]]:
    out = [(s, n, 1) for s in SSLBOOK for n in (10, 100) if (s, n) not in SKIP]
    return out + [(s, n, k) for s in UCI + IDA if s != "ida-image" for n in (10, 100)
                  for k in (1, 2)]


def measure(name: str, n_labeled: int, split: int, data) -> dict:
    from sklearn.svm import SVC

    from semisup import SDPRelaxedTSVM

    est, lab, unl, y, seconds = fit_default(lambda: SDPRelaxedTSVM(random_state=0), data,
                                            n_labeled, split)
    R = est.label_factor_
    y_l = np.where(y[lab] == est.classes_[1], 1.0, -1.0)
    u = np.linalg.svd(R, full_matrices=False)[0][:, 0]
    u = u if u[lab] @ y_l >= 0 else -u

    def acc(scores):
        pred = est.classes_[(scores >= 0).astype(int)]
        return float(np.mean(pred[unl] == data.y[unl]))

    svc = SVC().fit(data.X[lab], data.y[lab])
    return dict(set=name, labels=n_labeled, split=split, eig=acc(u),
                anchor=float(np.mean(est.transduction_[unl] == data.y[unl])),
                anchor_check=acc(R @ (y_l @ R[lab])),
                svc=float(np.mean(svc.predict(data.X[unl]) == data.y[unl])),
                eigen_ratio=est.eigen_ratio_, seconds=seconds)


def render(records: list[dict]) -> str:
    by_cell = defaultdict(list)
    for r in records:
        by_cell[(r["set"], r["labels"])].append(r)
    rows, summary = [], defaultdict(lambda: defaultdict(list))
    for (name, n), recs in by_cell.items():
        m = {k: float(np.mean([r[k] for r in recs])) for k in ("eig", "anchor", "svc")}
        group = "SSL book" if name in SSLBOOK else "UCI / IDA"
        for k in ("eig", "anchor"):
            summary[group][k].append(m[k] - m["svc"])
        rows.append([name, n, len(recs), f"{100 * m['svc']:.1f}", f"{100 * m['eig']:.1f}",
                     f"{100 * m['anchor']:.1f}",
                     f"{np.mean([r['eigen_ratio'] for r in recs]):.2f}"])
    head = ["group", "cells", "eigenvector: cells >= SVC - 1", "eigenvector: mean gain",
            "anchor: cells >= SVC - 1", "anchor: mean gain"]
    srows = []
    for group, g in summary.items():
        e, a = np.array(g["eig"]), np.array(g["anchor"])
        srows.append([group, e.size, int(np.sum(e >= -0.01 - 1e-12)), f"{100 * e.mean():+.1f}",
                      int(np.sum(a >= -0.01 - 1e-12)), f"{100 * a.mean():+.1f}"])
    return report(NAME, "SDPRelaxedTSVM: eigenvector vs anchor rounding of the same fits", [
        __doc__.split("\n\n")[1],
        "## Summary (accuracy averaged over a cell's splits; gain in points over SVC)\n\n"
        + table(head, srows),
        "## Cells (accuracy %)\n\n" + table(["set", "labels", "splits", "SVC", "eigenvector",
                                             "anchor", "eigen ratio"], rows)])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--render", action="store_true")
    args = ap.parse_args()
    render(resumable_cells(NAME, [] if args.render else cells(), measure, load_set))


if __name__ == "__main__":
    main()
