"""PVM on MNIST digits 3, 5, 6, 8, 9: Figures 2 and 3 of Zhang, Kwok & Parvin (TNNLS 2015).

Gaussian kernel, 50 labeled images per class, m = 200 prototypes, square loss (Section V-A):

* training time (k-means included) against the number of images n = 1,000 .. 29,270
  (Fig. 2a; must grow linearly) and the error on the unlabeled images against n (Fig. 2b;
  should stay flat);
* error against the number of labeled images l = 100 .. 1,000 at n = 29,270 (Fig. 3a);
* error against the number of prototypes m at n = 29,270 (Fig. 3b; should plateau).

The kernel width and ``C1`` are chosen by 5-fold cross-validation on the labeled images (errors
pooled over three random subsets, paper grids) for every n of Fig. 2, and at n = 29,270 for
Fig. 3; a second table shows the error-vs-n curve at fixed widths.
Writes ``benchmarks/results/bench_pvm_mnist.md`` and ``bench_pvm_mnist.png``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.utils import check_random_state
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import RESULTS_DIR, fmt, report, table  # noqa: E402
from bench_pvm_table import folds, labels_of, mean_distance, targets  # noqa: E402

from semisup.datasets import load_mnist  # noqa: E402
from semisup.prototypes import (  # noqa: E402
    PrototypeGraph,
    PrototypeVectorMachine,
    select_prototypes,
)

DIGITS = [3, 5, 6, 8, 9]
BETA_GRID = 2.0 ** np.arange(-5, 6)
C1_GRID = 10.0 ** np.arange(-3, 4)


def draw(y: np.ndarray, n: int, per_class: int, seed: int):
    """Rows of a random subset of size ``n`` holding ``per_class`` labeled rows per class."""
    rng = np.random.default_rng(seed)
    lab = np.concatenate([rng.choice(np.flatnonzero(y == c), per_class, replace=False)
                          for c in np.unique(y)])
    rest = np.setdiff1d(np.arange(y.size), lab)
    extra = rng.choice(rest, n - lab.size, replace=False)
    rows = np.sort(np.concatenate([lab, extra]))
    target = np.full(rows.size, -1)
    is_lab = np.isin(rows, lab)
    target[is_lab] = y[rows[is_lab]]
    return rows, target


def select(X, y, m: int, n: int, n_labelings: int, log) -> tuple[float, float, list]:
    """(beta, C1) by 5-fold CV on the labeled rows, validation errors pooled over
    ``n_labelings`` random subsets of ``n`` images with 50 labels per class (one labeling
    alone is a noisy guide).  Returns also the table of pooled CV errors."""
    k = np.unique(y).size
    problems, shared = [], None
    for r in range(n_labelings):
        rows, target = draw(y, n, 50, seed=12345 + r)
        if shared is None or n < y.size:
            # a subset of its own; at n = all images one k-means and graph serve every labeling
            Xs = X[rows]
            shared = (Xs, select_prototypes(Xs, m, random_state=check_random_state(r)),
                      1.0 / mean_distance(Xs))
        lab = np.flatnonzero(target != -1)
        problems.append((*shared, lab, target[lab], folds(target[lab], 5, seed=r)))
    beta0 = float(np.mean([p[2] for p in problems]))
    errs = {}
    for f in BETA_GRID:
        per_fold, graphs = [], {}
        for Xs, V, _, lab, y_lab, fl in problems:
            key = id(Xs)
            if key not in graphs:
                graphs[key] = PrototypeGraph(Xs, V, f * beta0)
            graph = graphs[key]
            for tr, va in fl:
                Fs = graph.square_path(lab[tr], targets(y_lab[tr], k), C1_GRID)
                per_fold.append([np.mean(labels_of(np.asarray(graph.H[lab[va]] @ F))
                                         != y_lab[va]) for F in Fs])
        for j, C1 in enumerate(C1_GRID):
            errs[(f, C1)] = float(np.mean([e[j] for e in per_fold]))
    (f, C1) = min(errs, key=errs.get)
    log(f"n={n}: selected beta = {f * beta0:.4g} ({f:g} / mean distance), C1 = {C1:g}, "
        f"CV error {errs[(f, C1)]:.3f}")
    cv_rows = [[f"{ff:g}", f"{ff * beta0:.4g}"] + [f"{100 * errs[(ff, C)]:.1f}"
                                                   for C in C1_GRID] for ff in BETA_GRID]
    return f * beta0, C1, cv_rows


def fit_once(X, y, rows, target, m: int, beta: float, C1: float, seed: int):
    est = PrototypeVectorMachine(n_prototypes=m, gamma=beta, C1=C1, random_state=seed)
    Xs = X[rows]
    t0 = time.perf_counter()
    est.fit(Xs, target)
    seconds = time.perf_counter() - t0
    unl = target == -1
    err = 100.0 * np.mean(est.transduction_[unl] != y[rows][unl])
    return err, seconds, est.timings_


def mean_std(values) -> str:
    return f"{np.mean(values):.2f} ± {np.std(values):.2f}"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=10, help="repetitions per n (Fig. 2)")
    ap.add_argument("--reps-small", type=int, default=5, help="repetitions per l and per m")
    ap.add_argument("--sizes", default="1000,2000,5000,10000,15000,20000,25000,29270")
    ap.add_argument("--labels", default="100,200,300,400,500,600,700,800,900,1000")
    ap.add_argument("--prototypes", default="25,50,100,150,200,300,400,600")
    ap.add_argument("--cv-labelings", type=int, default=3,
                    help="labelings whose CV errors are pooled to pick beta and C1")
    ap.add_argument("--reps-width", type=int, default=3,
                    help="runs per n for the kernel-width sensitivity of Fig. 2b")
    ap.add_argument("--threads", type=int, default=1,
                    help="BLAS threads (1 avoids oversubscription on a shared 2-core box)")
    args = ap.parse_args(argv)
    threadpool_limits(args.threads)
    log = lambda s: print(s, flush=True)  # noqa: E731
    t_start = time.perf_counter()
    X, digit = load_mnist(digits=DIGITS)
    y = np.unique(digit, return_inverse=True)[1]
    log(f"MNIST {DIGITS}: {X.shape[0]} x {X.shape[1]} (CSR, nnz {X.nnz:,})")
    sizes = [int(s) for s in args.sizes.split(",")]
    chosen = {n: select(X, y, 200, n, args.cv_labelings, log) for n in sizes}
    beta, C1, cv_rows = chosen[sizes[-1]]

    # Fig. 2: time and error against n, hyper-parameters chosen by CV at each n
    by_n = {n: {"err": [], "time": [], "kmeans": [], "graph": [], "solve": []} for n in sizes}
    for rep in range(args.reps):
        for n in sizes:
            rows, target = draw(y, n, 50, seed=rep)
            err, sec, tm = fit_once(X, y, rows, target, 200, chosen[n][0], chosen[n][1], rep)
            for key, val in (("err", err), ("time", sec), ("kmeans", tm["prototypes"]),
                             ("graph", tm["graph"]), ("solve", tm["solve"])):
                by_n[n][key].append(val)
        log(f"rep {rep}: " + ", ".join(f"n={n}: {by_n[n]['err'][-1]:.2f}% "
                                       f"{by_n[n]['time'][-1]:.2f}s" for n in sizes))
    ns = np.array(sizes, dtype=float)
    t_med = np.array([np.median(by_n[n]["time"]) for n in sizes])
    slope, intercept = np.polyfit(ns, t_med, 1)
    resid = t_med - (slope * ns + intercept)
    r2 = 1.0 - resid @ resid / np.sum((t_med - t_med.mean()) ** 2)
    loglog = np.polyfit(np.log(ns), np.log(t_med), 1)[0]
    rows_n = [[n, f"{chosen[n][0]:.3g}", f"{chosen[n][1]:g}", mean_std(by_n[n]["err"]),
               f"{np.median(by_n[n]['time']):.3f}",
               f"{np.median(by_n[n]['kmeans']):.3f}", f"{np.median(by_n[n]['graph']):.3f}",
               f"{np.median(by_n[n]['solve']):.4f}",
               f"{1e6 * np.median(by_n[n]['time']) / n:.1f}"] for n in sizes]

    # sensitivity of Fig. 2b to the kernel width
    widths = {f: {n: [fit_once(X, y, *draw(y, n, 50, seed=rep), 200, beta * f, C1, rep)[0]
                      for rep in range(args.reps_width)] for n in sizes}
              for f in (1.0, 0.5, 0.25)}
    for f in widths:
        log(f"beta x {f}: " + ", ".join(f"{np.mean(widths[f][n]):.2f}" for n in sizes))

    # Fig. 3a: error against the number of labels (n = all images)
    labels = [int(s) for s in args.labels.split(",")]
    by_l = {}
    for l in labels:
        by_l[l] = [fit_once(X, y, *draw(y, y.size, l // len(DIGITS), seed=100 + rep), 200,
                            beta, C1, rep)[0] for rep in range(args.reps_small)]
        log(f"l={l}: {mean_std(by_l[l])}")

    # Fig. 3b: error against the number of prototypes
    protos = [int(s) for s in args.prototypes.split(",")]
    by_m = {}
    for m in protos:
        res = [fit_once(X, y, *draw(y, y.size, 50, seed=200 + rep), m, beta, C1, rep)
               for rep in range(args.reps_small)]
        by_m[m] = ([r[0] for r in res], [r[1] for r in res])
        log(f"m={m}: {mean_std(by_m[m][0])} {np.median(by_m[m][1]):.2f}s")
    total = time.perf_counter() - t_start

    _plot(sizes, by_n, widths, beta, slope, intercept, labels, by_l, protos, by_m)
    n_max = sizes[-1]
    sections = [
        f"Data: MNIST training images of digits {DIGITS} ({y.size:,} images, 784 pixels "
        f"scaled to [0, 1], sparse). Kernel width and C1 from 5-fold CV on the labeled "
        f"images, errors pooled over {args.cv_labelings} random subsets (beta in "
        f"2^-5..2^5 / mean distance, C1 in 10^-3..10^3), separately for every n of Fig. 2; "
        f"Fig. 3 uses the values selected at n = {y.size:,} (beta = {beta:.4g}, C1 = {C1:g}). "
        f"PVM(sqr), normalised Laplacian, "
        f"C2 = 0, k-means with 5 Lloyd iterations. Errors: mean ± std over runs (random "
        f"subsets / labelings); times: median. BLAS threads: {args.threads}. Total wall "
        f"time {total / 60:.1f} min.",
        f"## Fig. 2: training time and error against n (m = 200, 50 labels per class, "
        f"{args.reps} runs; beta and C1 by CV at each n)\n\n"
        + table(["n", "beta (CV)", "C1 (CV)", "error on unlabeled %", "fit s", "k-means s",
                 "H, H^T S H s", "solve s", "µs per image"], rows_n)
        + f"\n\nLinear fit of the median fit time: {slope * 1e6:.1f} µs per image + "
        f"{intercept:.3f} s, R^2 = {r2:.4f}; log-log slope {loglog:.2f} (1 = linear, "
        f"2 = quadratic). Time ratio n={n_max:,} / n={sizes[0]:,}: "
        f"{t_med[-1] / t_med[0]:.1f}x for {n_max / sizes[0]:.1f}x the images. Error range "
        f"over n: {min(np.mean(by_n[n]['err']) for n in sizes):.2f} - "
        f"{max(np.mean(by_n[n]['err']) for n in sizes):.2f} %.",
        f"Kernel-width sensitivity of Fig. 2b: beta and C1 fixed to the values selected at "
        f"n = {sizes[-1]:,} (and beta halved, quartered) for every n ({args.reps_width} runs "
        "per cell, error %):\n\n"
        + table(["beta (fixed)", *[f"n={n:,}" for n in sizes]],
                [[f"{beta * f:.4g} (x {f:g})", *[f"{np.mean(widths[f][n]):.2f}"
                                                 for n in sizes]] for f in widths]),
        f"## Fig. 3a: error against the number of labeled images (n = {y.size:,}, m = 200, "
        f"{args.reps_small} runs)\n\n"
        + table(["labeled images", "error on unlabeled %"], [[l, mean_std(by_l[l])]
                                                              for l in labels]),
        f"## Fig. 3b: error against the number of prototypes (n = {y.size:,}, 50 labels per "
        f"class, {args.reps_small} runs)\n\n"
        + table(["m", "error on unlabeled %", "fit s"],
                [[m, mean_std(by_m[m][0]), fmt(float(np.median(by_m[m][1])))]
                 for m in protos]),
        "![Figures 2 and 3](bench_pvm_mnist.png)",
        f"## Model selection at n = {y.size:,}: 5-fold CV error (%) pooled over "
        f"{args.cv_labelings} labelings (m = 200)\n\n"
        + table(["beta x mean distance", "beta", *[f"C1={C:g}" for C in C1_GRID]], cv_rows),
    ]
    report("bench_pvm_mnist", "PVM on MNIST 3/5/6/8/9: scaling with n, labels and prototypes",
           sections)


def _plot(sizes, by_n, widths, beta, slope, intercept, labels, by_l, protos, by_m) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, 4, figsize=(17, 3.8))
    t = [np.median(by_n[n]["time"]) for n in sizes]
    ax[0].plot(sizes, t, "o-", label="median fit time")
    ns = np.linspace(0, max(sizes), 50)
    ax[0].plot(ns, slope * ns + intercept, "--", color="gray", label="linear fit")
    ax[0].set(xlabel="n (labeled + unlabeled)", ylabel="training time (s)",
              title="(2a) time vs n, m = 200")
    ax[0].legend()
    e = [np.mean(by_n[n]["err"]) for n in sizes]
    s = [np.std(by_n[n]["err"]) for n in sizes]
    ax[1].errorbar(sizes, e, yerr=s, fmt="o-", capsize=3, label="beta, C1 by CV per n")
    top = max(e)
    for f, res in widths.items():
        ew = [np.mean(res[n]) for n in sizes]
        top = max(top, max(ew))
        ax[1].plot(sizes, ew, "s--", alpha=0.7, label=f"fixed beta = {beta * f:.3g}")
    ax[1].set(xlabel="n", ylabel="error on unlabeled (%)", title="(2b) error vs n",
              ylim=(0, top * 1.3))
    ax[1].legend()
    ax[2].errorbar(labels, [np.mean(by_l[l]) for l in labels],
                   yerr=[np.std(by_l[l]) for l in labels], fmt="o-", capsize=3)
    ax[2].set(xlabel="labeled images", ylabel="error on unlabeled (%)",
              title="(3a) error vs labels, n = 29,270")
    ax[3].errorbar(protos, [np.mean(by_m[m][0]) for m in protos],
                   yerr=[np.std(by_m[m][0]) for m in protos], fmt="o-", capsize=3)
    ax[3].set(xlabel="prototypes m", ylabel="error on unlabeled (%)",
              title="(3b) error vs m, n = 29,270")
    fig.tight_layout()
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    fig.savefig(RESULTS_DIR / "bench_pvm_mnist.png", dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
