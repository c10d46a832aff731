"""SupervisedSelfTaught's labeled-codes step I(b): the exact coordinate-descent route vs cvxpy.

Step I(b) of the thesis's Algorithm 3 codes the labeled rows with the classifier's hinge
terms.  It was one cvxpy problem per iteration (Clarabel); with two classes and no more
atoms than features it is now solved through the hinge's dual variable
(:func:`semisup.solvers.lasso.hinge_lasso_codes`).  Both routes solve the same convex
problem, so the fits should reach the same objective; this measures that, and the time.

For each set and label count (official split 1 of the SSL-book sets; the stratified draw
of seed 3 of sonar, the UCI set with more features than the 50 atoms), the estimator with its
defaults and ``fallback="none"`` (the published method), once with ``solver=None`` (the
new route) and once with ``solver="CLARABEL"`` (the conic program), in this process, one
after the other: wall and CPU seconds of the fit, its final objective
(``objective_``, after the refit), the objective after the last iteration, and the
accuracy on the unlabeled rows.

Run::

    nice -n 5 python benchmarks/bench_sstl_codes.py --out benchmarks/results/sstl_codes.md
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine_info  # noqa: E402
from bench_defaults import load_set  # noqa: E402

SETS = [("g241c", 10), ("g241c", 100), ("digit1", 10), ("digit1", 100), ("usps", 100),
        ("bci", 100), ("sonar", 10), ("sonar", 100)]
ROUTES = [("exact CD", None), ("cvxpy (Clarabel)", "CLARABEL")]


def fit_once(X, y, solver):
    from semisup import SupervisedSelfTaught

    est = SupervisedSelfTaught(random_state=0, fallback="none", solver=solver)
    t0, c0 = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    return est, time.perf_counter() - t0, time.process_time() - c0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    lines = ["# SupervisedSelfTaught: step I(b) by exact coordinate descent vs cvxpy", "",
             f"Command: `python benchmarks/bench_sstl_codes.py"
             f"{' --out ' + str(args.out) if args.out else ''}`", "", machine_info(), "",
             "| set | labels | route | wall (s) | CPU (s) | iterations | objective after the "
             "last iteration | objective after the refit | accuracy % |",
             "|---|---|---|---|---|---|---|---|---|"]
    ratios = []
    for name, n_labeled in SETS:
        d = load_set(name)
        _, unl, y = d.official_split(n_labeled, 1 if d.official else 3)
        walls = []
        for route, solver in ROUTES:
            est, wall, cpu = fit_once(d.X, y, solver)
            walls.append(wall)
            acc = 100 * np.mean(est.transduction_[unl] == d.y[unl])
            last = est.fit_results_["objective"][-1]
            row = (f"| {name} | {n_labeled} | {route} | {wall:.2f} | {cpu:.2f} | "
                   f"{est.n_iter_} | {last:.6f} | {est.objective_:.6f} | {acc:.1f} |")
            print(row, flush=True)
            lines.append(row)
        ratios.append(walls[0] / walls[1])
    lines += ["", f"Wall-time ratio exact CD / cvxpy: median {np.median(ratios):.2f}, "
              f"range {min(ratios):.2f}-{max(ratios):.2f} over {len(ratios)} fits."]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
