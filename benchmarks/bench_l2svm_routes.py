"""Does ``L2SVM()``'s automatic solver reach the optimum?  Routes compared by objective.

For each problem and ``lam``, on SVMlin's objective (``penalize_intercept=True``, the bias
regularised): ``solver="auto"``, the finite Newton method (``solver="mfn"``, tol 1e-6 and
1e-10) and dual coordinate descent alone (``solver="dcd"``, 10,000 epochs; only with at most
10,000 labeled rows, where ``auto`` may pick it).  ``f*`` is the lowest objective of all runs
of the problem, and for the problems with at most 1,000 labeled rows also scipy's L-BFGS-B on
the dense problem (an independent reference); ``gap = (f - f*) / f*``.  Then the default
``L2SVM(lam)``, whose bias is free (its own objective: the Newton route, since dual CD needs
the regularised bias), against its own ``f*`` (the free-bias MFN at tol 1e-10 and L-BFGS-B).
Times: median of ``--repeat`` fits after one warm-up fit.

Problems: SecStr one-hot (83,679 x 315) with the SSL-book 1,000-label split 0 -- the fit on
its labeled rows, and on all rows with every label revealed --, SSL-book ``text`` (1,500 x
11,960, all labels) and the pcmac example (labeled + test rows).

Usage: ``python benchmarks/bench_l2svm_routes.py [--repeat 3] [--small-lam]``
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import scipy.optimize as so
import scipy.sparse as sp
from _common import Contention, report, table

from semisup import L2SVM
from semisup.datasets import load_sslbook, load_svmlin_example, one_hot_secstr, partial_labels


def problems(small_lam: bool):
    s = load_sslbook("secstr", 1000)
    X = one_hot_secstr(s.X)
    yield "SecStr 1000 labeled rows", X, partial_labels(s.y, s.splits[0]), [1.0, 1e-3]
    yield "SecStr all 83,679 rows", X, partial_labels(s.y, np.arange(s.y.size)), [1.0, 1e-3]
    t = load_sslbook("text", 10)
    yield "SSL-book text", t.X, (t.y > 0).astype(np.int64), [1.0, 1e-2, 1e-3] + (
        [1e-4] if small_lam else [])
    b = load_svmlin_example()
    lab = np.flatnonzero(b.y_train_svmlin != 0)
    Xp = sp.vstack([b.X_train[lab], b.X_test], format="csr")
    yp = (np.concatenate([b.y_train_svmlin[lab], b.y_test_svmlin]) > 0).astype(np.int64)
    yield "pcmac labeled+test", Xp, yp, [1.0, 1e-2] + ([1e-4] if small_lam else [])


def scipy_reference(X, y, lam, free_bias: bool = False) -> float:
    """min f by L-BFGS-B on the dense labeled rows with the constant column (eq. 2), the
    bias regularised (SVMlin) or free."""
    lab = y >= 0
    A = np.hstack([X[lab].toarray(), np.ones((int(lab.sum()), 1))])
    ypm = np.where(y[lab] > 0, 1.0, -1.0)
    ridge = np.full(A.shape[1], float(lam))
    if free_bias:
        ridge[-1] = 0.0

    def f(w):
        m = np.maximum(0.0, 1.0 - ypm * (A @ w))
        return 0.5 * w @ (ridge * w) + 0.5 * m @ m, ridge * w - A.T @ (ypm * m)

    r = so.minimize(f, np.zeros(A.shape[1]), jac=True, method="L-BFGS-B",
                    options=dict(maxiter=200_000, maxfun=400_000, gtol=1e-13, ftol=1e-16))
    return float(r.fun)


SVMLIN = {"penalize_intercept": True}
ROUTES = [("auto (SVMlin objective)", SVMLIN), ("mfn tol=1e-6", {"solver": "mfn", **SVMLIN}),
          ("mfn tol=1e-10", {"solver": "mfn", "tol": 1e-10, **SVMLIN}),
          ("dcd alone (10,000 epochs)", {"solver": "dcd", **SVMLIN})]
#: the default (free bias) and its tight reference run
FREE_ROUTES = [("L2SVM(lam) [default, free bias]", {}),
               ("free bias, mfn tol=1e-10", {"solver": "mfn", "tol": 1e-10})]


def timed(lam, kw, X, y, repeat):
    L2SVM(lam=lam, **kw).fit(X, y)  # warm-up (JIT, caches)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        m = L2SVM(lam=lam, **kw).fit(X, y)
        times.append(time.perf_counter() - t0)
    return m, statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--small-lam", action="store_true",
                    help="also lam=1e-4 on text and pcmac (MFN at tol 1e-10 needs minutes)")
    args = ap.parse_args()
    rows, summary = [], []
    with Contention() as load:
        for name, X, y, lams in problems(args.small_lam):
            for lam in lams:
                small = int((y >= 0).sum()) <= 1000
                gaps = []
                for routes, free in ((ROUTES, False), (FREE_ROUTES, True)):
                    runs = []
                    for label, kw in routes:
                        if kw.get("solver") == "dcd" and int((y >= 0).sum()) > 10_000:
                            continue  # auto does not pick dcd here: 10,000 epochs cost minutes
                        m, t = timed(lam, kw, X, y, args.repeat)
                        runs.append([label, m.solver_, float(m.objective_), t])
                    ref = scipy_reference(X, y, lam, free) if small else np.inf
                    f_star = min(ref, *(r[2] for r in runs))
                    for label, solver, f, t in runs:
                        rows.append([name, lam, label, solver, t, f"{f:.10g}",
                                     f"{(f - f_star) / f_star:.2e}"])
                        print(rows[-1], flush=True)
                    gaps.append((runs, f_star, ref))
                (svmlin, f_svmlin, ref), (free, f_free, _) = gaps
                summary.append([name, lam, svmlin[0][1],
                                f"{(svmlin[0][2] - f_svmlin) / f_svmlin:.2e}", svmlin[0][3],
                                svmlin[1][3], "n/a" if not np.isfinite(ref) else f"{ref:.10g}",
                                free[0][1], f"{(free[0][2] - f_free) / f_free:.2e}",
                                free[0][3]])
                write(rows, summary, load)  # partial results survive an interruption
    write(rows, summary, load)


def write(rows, summary, load) -> None:
    report("bench_l2svm_routes", "L2SVM routes: does the default solver reach the optimum?", [
        __doc__.split("\n\n")[1].replace("\n", " "),
        load.line() if hasattr(load, "wall") else "Partial results: the run did not finish.",
        "## `L2SVM(lam, penalize_intercept=True)` (SVMlin) and the default `L2SVM(lam)`\n\n"
        + table(["problem", "lam", "SVMlin: solver_", "gap to f*", "auto s",
                 "mfn tol=1e-6 s", "scipy L-BFGS-B f", "default: solver_",
                 "gap to its f*", "default s"], summary),
        "## All routes\n\n" + table(["problem", "lam", "route", "solver_", "median s",
                                     "objective f", "gap to f*"], rows),
    ])


if __name__ == "__main__":
    main()
