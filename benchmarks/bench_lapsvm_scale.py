"""LapSVM at scale: primal PCG (Melacci & Belkin) vs the dual route, MNIST even vs odd.

For each size ``n`` (a random subset of the MNIST training set, 100 labeled points,
stratified; pixels / 255): the dense RBF kernel (``gamma = 1 / mean squared distance``)
and the 6-NN heat graph are built once and passed to every LapSVM fit
(``kernel='precomputed'``, ``graph=W``).  Fixed hyper-parameters for all sizes:
``gamma_A = 1e-4``, ``gamma_I s = 1e-2`` with ``s = 1/(l+u)^2`` (i.e. ``gamma_I = 1e-2 n^2``),
iterated normalised Laplacian ``L^2``.  They were picked on a pilot subset of 2,000 points
(seed 5, by its unlabeled error, a handful of settings tried), not on the benchmark
subsets; the unnormalised Laplacian with the same weights makes the hinge-loss solution
collapse to one class (the graph term then dominates), which is why the normalised one is
used.  This benchmark is about cost; its errors are a sanity check, not a tuned result.

Rows:

* ``primal PCG, early stop`` -- ``LapSVM(loss='squared_hinge', solver='primal',
  early_stopping=0.001)``: stop when at most 0.1% of the unlabeled points changed label
  between two checks (every ``ceil(sqrt(n))`` iterations);
* ``primal PCG, tol 1e-6`` -- the same objective solved to a relative preconditioned
  gradient norm of 1e-6 (sizes up to ``--dual-max``);
* ``dual, squared hinge`` -- the same objective by the dual route (``O(n^3)`` LU + libsvm):
  its objective is the reference for the PCG rows (sizes up to ``--dual-max``);
* ``dual, hinge`` -- the paper's LapSVM (eqs. 9-11; a different loss, so a different
  objective);
* ``LabelSpreading`` -- scikit-learn's ``LabelSpreading(kernel='knn', n_neighbors=6)``
  on the same points (its time includes its own kNN graph; transductive, predicts new points
  through the kNN graph).

Error on the unlabeled training points (U) and on 2,000 MNIST test digits (T, out of
sample).  Memory: the dense kernel needs ``8 n^2`` bytes; the peak RSS of each fit is
measured (it includes the kernel already held).  The kernel is computed in row blocks
(``semisup.manifold._rkhs.gram_matrix``): ``X @ X.T`` in one call segfaults in the bundled
OpenBLAS's ``syrk`` at n = 20,000.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np
from sklearn.semi_supervised import LabelSpreading

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import Contention, PeakRSS, Timer, pick_labeled, report, table  # noqa: E402

from semisup.datasets import load_mnist  # noqa: E402
from semisup.graph import GraphWarning, adjacency_graph  # noqa: E402
from semisup.kernels import default_gamma, kernel_matrix  # noqa: E402
from semisup.manifold import LapSVM  # noqa: E402
from semisup.manifold._rkhs import gram_matrix  # noqa: E402

warnings.simplefilter("ignore", GraphWarning)

GAMMA_A, GAMMA_I_S, N_LABELED, N_TEST = 1e-4, 1e-2, 100, 2000


def gib(x: float) -> str:
    return f"{x / 2 ** 30:.2f}"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", nargs="+", type=int, default=[2000, 5000, 10000, 20000])
    ap.add_argument("--dual-max", type=int, default=10000,
                    help="largest n for the O(n^3) dual and the PCG run to tolerance")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    X_all, digit = load_mnist(sparse=False)
    y_all = (digit % 2 == 0).astype(int)
    Xt_all, digit_t = load_mnist(split="test", sparse=False)
    rng = np.random.default_rng(args.seed)
    test = rng.choice(Xt_all.shape[0], N_TEST, replace=False)
    Xt, yt = Xt_all[test], (digit_t[test] % 2 == 0).astype(int)
    rows, objective_rows = [], []
    with Contention() as load_meter:
        for n in args.sizes:
            idx = rng.choice(X_all.shape[0], n, replace=False)
            X, y_true = X_all[idx], y_all[idx]
            lab = pick_labeled(y_true, N_LABELED, seed=args.seed)
            y = np.full(n, -1)
            y[lab] = y_true[lab]
            unl = y == -1
            g = default_gamma(X)
            with Timer() as t_k, PeakRSS() as m_k:
                K = gram_matrix(X, kernel="rbf", gamma=g)   # row blocks: see its docstring
            with Timer() as t_g:
                W = adjacency_graph(X, 6, warn=False)
            Kt = kernel_matrix(Xt, X, kernel="rbf", gamma=g)
            print(f"n={n}: kernel {t_k.seconds:.1f} s, graph {t_g.seconds:.1f} s",
                  file=sys.stderr, flush=True)
            common = dict(gamma_A=GAMMA_A, gamma_I=GAMMA_I_S * n ** 2, kernel="precomputed",
                          graph=W, laplacian="normalized", laplacian_power=2)
            configs = [("primal PCG, early stop",
                        dict(loss="squared_hinge", solver="primal", early_stopping=0.001))]
            if n <= args.dual_max:
                configs += [("primal PCG, tol 1e-6",
                             dict(loss="squared_hinge", solver="primal", tol=1e-6,
                                  max_iter=20 * n)),
                            ("dual, squared hinge", dict(loss="squared_hinge", solver="dual")),
                            ("dual, hinge", dict(loss="hinge", solver="dual"))]
            objectives = {}
            for name, kw in configs:
                est = LapSVM(**common, **kw)
                with Timer() as t, PeakRSS() as mem:
                    est.fit(K, y)
                objectives[name] = est.objective_
                err_u = np.mean(est.transduction_[unl] != y_true[unl])
                err_t = np.mean(est.predict(Kt) != yt)
                iters = int(est.n_iter_[0])
                rows.append([n, name, f"{t.seconds:.2f}", iters, f"{est.objective_:.6g}",
                             f"{100 * err_u:.2f}", f"{100 * err_t:.2f}", gib(mem.peak)])
                print(f"  {name}: {t.seconds:.1f} s, {iters} it, obj {est.objective_:.6g}, "
                      f"U {100 * err_u:.2f}%", file=sys.stderr, flush=True)
            with Timer() as t, PeakRSS() as mem:
                ls = LabelSpreading(kernel="knn", n_neighbors=6).fit(X, y)
            err_u = np.mean(ls.transduction_[unl] != y_true[unl])
            err_t = np.mean(ls.predict(Xt) != yt)
            rows.append([n, "LabelSpreading (knn)", f"{t.seconds:.2f}", int(ls.n_iter_), "-",
                         f"{100 * err_u:.2f}", f"{100 * err_t:.2f}", gib(mem.peak)])
            rows.append([n, "(kernel K / graph W build)", f"{t_k.seconds:.2f} / "
                         f"{t_g.seconds:.2f}", "-", "-", "-", "-",
                         f"K = {gib(8.0 * n * n)} (peak {gib(m_k.peak)})"])
            ref = objectives.get("dual, squared hinge")
            if ref is not None:
                for name in ("primal PCG, early stop", "primal PCG, tol 1e-6"):
                    objective_rows.append([n, name, f"{objectives[name]:.8g}", f"{ref:.8g}",
                                           f"{(objectives[name] - ref) / ref:.2e}"])
            del K, Kt, W
    # ratios measured in the same run
    by = {(r[0], r[1]): r for r in rows}
    ratio_lines = []
    for n in args.sizes:
        p = by.get((n, "primal PCG, early stop"))
        d = by.get((n, "dual, hinge"))
        s = by.get((n, "LabelSpreading (knn)"))
        line = f"- n = {n:,}: primal PCG (early stop) {p[2]} s"
        if d:
            line += f"; dual (hinge) {d[2]} s = {float(d[2]) / float(p[2]):.1f}x the primal"
        line += f"; LabelSpreading {s[2]} s; unlabeled error primal {p[5]}% vs LabelSpreading " \
                f"{s[5]}%"
        ratio_lines.append(line)
    sections = [
        __doc__.split("\n\n", 1)[1].strip(),
        table(["n", "method", "fit s", "iterations", "objective", "error % U", "error % T",
               "peak RSS GiB"], rows),
        "Same objective (squared hinge), primal PCG vs the dual route's optimum:\n\n"
        + table(["n", "primal run", "objective", "dual objective", "relative gap"],
                objective_rows),
        "Ratios (same run):\n\n" + "\n".join(ratio_lines),
        load_meter.line(),
    ]
    report("bench_lapsvm_scale", "LapSVM at scale: primal PCG vs dual vs LabelSpreading",
           sections)


if __name__ == "__main__":
    main()
