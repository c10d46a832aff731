"""Multiple kernel learning on 10,000 rows x 100 kernels within 8 GB (issue 29).

The packed kernel bank stores ``m n (n + 1) / 2`` numbers: 100 kernels on 10,000 rows
need 20 GB in float32 (40 GB in float64), so ``bank='packed'`` refuses.  With
``bank='auto'`` (the default) :class:`semisup.mkl.MultipleKernelSVC` switches to
:class:`semisup.mkl.bank.StreamingKernelBank`, which recomputes the kernels in row blocks
at every SVM solve and holds ``O(n^2)`` whatever ``m`` (the combined kernel, and the inner
products of the 10 feature subsets, kept between iterations when they fit).

Data: MNIST even vs odd digits, ``--n`` random training images (pixels / 255) and 2,000
random test images.  Kernels (100): on all 784 pixels and on each cell of a 3 x 3 grid of
the 28 x 28 image (10 feature subsets), the data-scaled bank of ``kernels='auto'``
(:func:`semisup.mkl.bank.auto_kernels`) with 8 Gaussian widths ``2^-3..2^4`` times the
reciprocal mean squared distance of the subset and polynomials of degree 1 and 2.  The
level method runs until the relative duality gap is below ``--tol`` (0.01, the library's
one stopping rule) or ``--max-iter`` iterations; ``--cv-n`` chooses ``C`` first by
labeled-only CV on a subsample; the peak resident set size of the process (``VmHWM``, and
``getrusage``'s ``ru_maxrss``) is measured over the fit.

    python benchmarks/bench_mkl_streaming.py --n 10000 --max-iter 4
    python benchmarks/bench_mkl_streaming.py --n 10000 --max-iter 500 --cv-n 1000 \
        --name mkl_streaming_converged --log benchmarks/results/mkl_streaming_converged.log
"""

from __future__ import annotations

import argparse
import logging
import resource
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.exceptions import ConvergenceWarning

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import Contention, PeakRSS, mnist_even_odd, report, table  # noqa: E402

from semisup.mkl import MultipleKernelSVC  # noqa: E402
from semisup.mkl.bank import auto_kernels  # noqa: E402
from semisup.mkl.estimator import C_GRID  # noqa: E402


def grid_bank(X: np.ndarray) -> list[dict]:
    """10 feature subsets (all pixels, 3 x 3 image cells) x 10 data-scaled kernels."""
    side = int(round(np.sqrt(X.shape[1])))
    pix = np.arange(X.shape[1]).reshape(side, side)
    cuts = np.array_split(np.arange(side), 3)
    subsets = [None] + [pix[np.ix_(r, c)].ravel() for r in cuts for c in cuts]
    specs = []
    for cols in subsets:
        Xs = X if cols is None else X[:, cols]
        for spec in auto_kernels(Xs, factors=2.0 ** np.arange(-3, 5), degrees=(1, 2)):
            spec["features"] = None if cols is None else [int(c) for c in cols]
            specs.append(spec)
    return specs


def _timed(f, *a, **k):
    c0, t0 = time.process_time(), time.perf_counter()
    out = f(*a, **k)
    return out, time.process_time() - c0, time.perf_counter() - t0


def profile(args, X: np.ndarray, y: np.ndarray, specs: list) -> None:
    """CPU and wall seconds of the parts of a level iteration on the streaming bank.

    Iteration 1 at uniform weights (cold SVM), then iteration 2 at weights moved by the
    level step's size (warm SVM): the combined kernel, the SVM and the quadratic forms on
    the support vectors; for the numpy blocks (``compiled=False``, the code before the fused
    kernels), the fused kernels, and the fused kernels keeping the inner products.
    """
    from semisup.mkl.bank import StreamingKernelBank, check_kernel_specs
    from semisup.solvers.qp import svm_dual_precomputed

    specs = check_kernel_specs(specs, X.shape[1])
    yb = np.where(y == 1, 1.0, -1.0)
    m = len(specs)
    p1 = np.full(m, 1.0 / m)
    p2 = p1 * np.where(np.arange(m) % 2, 1.5, 0.5)
    p2 /= p2.sum()
    C = args.C
    variants = [("numpy blocks", dict(compiled=False)), ("fused", dict(compiled=True)),
                ("fused + kept products", dict(compiled=True, cache_bytes=8 * 2**30))]
    rows, ref = [], None
    # load the compiled SMO and block kernels outside the measurement
    small = StreamingKernelBank(specs, X[:60], dtype=np.dtype(args.dtype), compiled=True)
    r0 = svm_dual_precomputed(small.combine(p1), yb[:60], C, tol=1e-6)
    svm_dual_precomputed(small.combine(p2), yb[:60], C, tol=1e-6, alpha0=r0.beta)
    small.quadratic_forms(r0.beta * yb[:60])
    for name, kw in variants:
        with Contention() as load:
            bank, c_b, w_b = _timed(StreamingKernelBank, specs, X,
                                    dtype=np.dtype(args.dtype), block_bytes=2**27, **kw)
            K1, c1, w1 = _timed(bank.combine, p1)
            r1, cs1, ws1 = _timed(svm_dual_precomputed, K1, yb, C, tol=1e-6)
            del K1
            u = r1.beta * yb
            q1, cq, wq = _timed(bank.quadratic_forms, u)
            K2, c2, w2 = _timed(bank.combine, p2)
            r2, cs2, ws2 = _timed(svm_dual_precomputed, K2, yb, C, tol=1e-6, alpha0=r1.beta)
            del K2
        if ref is None:
            ref = (q1, r2.objective)
        it2 = c2 + cs2 + cq
        rows.append([name, f"{c1:.1f} / {w1:.1f}", f"{cs1:.1f} / {ws1:.1f}",
                     f"{cq:.1f} / {wq:.1f}", f"{c2:.1f} / {w2:.1f}", f"{cs2:.1f} / {ws2:.1f}",
                     f"{it2:.1f}", f"{np.abs(q1 - ref[0]).max() / np.abs(ref[0]).max():.1e}",
                     f"{abs(r2.objective - ref[1]) / abs(ref[1]):.1e}",
                     f"{bank.nbytes / 2**30:.2f}", load.line().split(";")[0]])
        print(rows[-1], flush=True)
    report(args.name, f"Where an MKL iteration goes: {args.n:,} rows x {m} kernels, "
           "streaming bank",
           [" ".join(profile.__doc__.split("\n\n")[1].split()),
            f"C = {C:g}, dtype = {args.dtype}, blocks of 128 MiB, |S| = "
            f"{int(np.count_nonzero(u))} support vectors after the first SVM.",
            table(["blocks", "combine it. 1 (CPU / wall s)", "SVM cold", "quadratic forms",
                   "combine it. 2", "SVM warm", "iteration 2 CPU s (combine + SVM + q)",
                   "q rel. diff. to numpy", "J(p2) rel. diff.", "bank GiB held",
                   "load"], rows)])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--n-test", type=int, default=2000)
    ap.add_argument("--max-iter", type=int, default=4)
    ap.add_argument("--C", type=float, default=100.0)
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--bank", default="auto", choices=("auto", "packed", "streaming"))
    ap.add_argument("--name", default="mkl_streaming")
    ap.add_argument("--tol", type=float, default=0.01)
    ap.add_argument("--cv-n", type=int, default=0,
                    help="choose C by labeled-only CV (C='auto') on this many training rows, "
                         "then fit with that C times n / cv-n (see the report); --C is then "
                         "ignored")
    ap.add_argument("--log", default=None,
                    help="append the level method's per-iteration gap to this file as it runs")
    ap.add_argument("--profile", action="store_true",
                    help="time the parts of one level iteration (combined kernel, SVM, "
                         "quadratic forms) with the numpy blocks, the fused kernels, and the "
                         "fused kernels with the kept products, instead of fitting")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    Xall, yall = mnist_even_odd("train")
    idx = rng.choice(Xall.shape[0], args.n, replace=False)
    X, y = Xall[idx].toarray() / 255.0, yall[idx]
    Xt_all, yt_all = mnist_even_odd("test")
    tidx = rng.choice(Xt_all.shape[0], args.n_test, replace=False)
    Xt, yt = Xt_all[tidx].toarray() / 255.0, yt_all[tidx]
    del Xall, Xt_all
    specs = grid_bank(X)
    m = len(specs)
    if args.profile:
        return profile(args, X, y, specs)
    packed_gib = m * args.n * (args.n + 1) / 2 * np.dtype(args.dtype).itemsize / 2**30
    cv_line = ""
    C = args.C
    if args.cv_n:
        # labeled-only CV on a subsample (the estimator's C='auto': 5 folds x C_GRID, each
        # fold fitted on its kept rows); the kernels are the full run's specs
        sub = np.random.default_rng(1).choice(args.n, args.cv_n, replace=False)
        t_cv, c_cv = time.perf_counter(), time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            cv = MultipleKernelSVC(kernels=specs, C="auto", solver="level", tol=args.tol,
                                   max_iter=500, dtype=args.dtype,
                                   max_memory=8 * 2**30).fit(X[sub], y[sub])
        t_cv, c_cv = time.perf_counter() - t_cv, time.process_time() - c_cv
        # unit-trace kernels: trace(K) grows like n, so C on the subsample is C * cv_n / n on
        # the unscaled kernels; the same regularisation on n rows is C * n / cv_n
        C = cv.C_ * args.n / args.cv_n
        scores = ", ".join(f"C={c:g}: {100 * s:.1f} %" for c, s in
                           zip(C_GRID, cv.cv_results_["mean_test_score"], strict=True))
        cv_line = (f"C chosen by labeled-only 5-fold CV (MultipleKernelSVC(C='auto'), grid "
                   f"{list(C_GRID)}) on {args.cv_n:,} random training rows: held-out accuracy "
                   f"{scores}; chosen C = {cv.C_:g} on {args.cv_n:,} rows, used as C = "
                   f"{cv.C_:g} x {args.n:,} / {args.cv_n:,} = {C:g} on {args.n:,} rows (the "
                   "kernels have unit trace, and the trace of an unscaled kernel grows like "
                   f"n, so this keeps C / trace fixed).  CV took {t_cv:.0f} s wall, "
                   f"{c_cv:.0f} s CPU.")
        print(cv_line, flush=True)
    clf = MultipleKernelSVC(kernels=specs, C=C, solver="level", tol=args.tol,
                            max_iter=args.max_iter, dtype=args.dtype, max_memory=8 * 2**30,
                            bank=args.bank)
    # warm up the compiled SMO outside the measurement
    MultipleKernelSVC(kernels=specs[:2], C=1.0, max_iter=1).fit(X[:50], y[:50])
    if args.log:
        handler = logging.FileHandler(args.log)
        handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
        mkl_log = logging.getLogger("semisup.mkl")
        mkl_log.addHandler(handler)
        mkl_log.setLevel(logging.DEBUG)
    t0, c0 = time.perf_counter(), time.process_time()
    with PeakRSS() as mem, Contention() as load:
        clf.fit(X, y)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    t1 = time.perf_counter()
    acc = float(np.mean(clf.predict(Xt) == yt))
    pred_s = time.perf_counter() - t1
    trace = clf.traces_[0]
    gaps = trace["gap"]
    converged = gaps[-1] <= args.tol
    every = max(1, len(gaps) // 20)
    trajectory = ", ".join(f"{i + 1}: {gaps[i]:.3g}" for i in range(0, len(gaps), every))
    if (len(gaps) - 1) % every:
        trajectory += f", {len(gaps)}: {gaps[-1]:.3g}"
    stop = (f"Converged: the relative duality gap reached {gaps[-1]:.4f} <= tol = {args.tol} "
            f"after {len(gaps)} iterations." if converged else
            f"NOT converged: stopped by --max-iter {args.max_iter} at a relative duality gap "
            f"of {gaps[-1]:.4f} > tol = {args.tol}; the figures are of that unconverged "
            "point.")
    rows = [[args.n, m, clf.bank_, f"{packed_gib:.1f}", f"{clf.memory_nbytes_ / 2**30:.2f}",
             f"{mem.peak / 2**30:.2f}", f"{maxrss / 2**30:.2f}", f"{wall:.0f}", f"{cpu:.0f}",
             int(clf.n_iter_[0]), int(clf.n_svm_[0]), f"{wall / clf.n_svm_[0]:.1f}",
             f"{cpu / clf.n_svm_[0]:.1f}",
             f"{trace['gap'][0]:.3f} -> {trace['gap'][-1]:.3f}", int(clf.n_kernels_[0]),
             f"{100 * acc:.2f}", f"{pred_s:.0f}"]]
    report(args.name, f"MKL on {args.n:,} rows x {m} kernels: streaming kernel bank",
           [__doc__.split("\n\n")[1].replace("\n", " "),
            *([cv_line] if cv_line else []),
            f"C = {C:g}, dtype = {args.dtype} (block computations; the combined kernel "
            f"and the SVM are float64), max_memory = 8 GiB.  {load.line()}",
            table(["n", "m", "bank", "packed bank would need (GiB)",
                   "footprint checked (GiB)", "peak RSS VmHWM (GiB)",
                   "ru_maxrss (GiB)", "fit s (wall)", "fit s (CPU)", "iterations",
                   "SVM solves", "s per iteration (wall)", "s per iteration (CPU)",
                   "rel. duality gap first -> last",
                   "#kernels", f"test acc % ({args.n_test} MNIST test rows)",
                   "predict s"], rows),
            f"{stop}  Relative duality gap (iteration: gap): {trajectory}.",
            "Peak RSS is of the whole process (Python, numpy, the data: "
            f"{X.nbytes / 2**20:.0f} MiB of training pixels; the footprint checked includes "
            f"{clf.bank_nbytes_ / 2**30:.2f} GiB of bank: the feature copies and the inner "
            "products kept between iterations).  The time per iteration is one combined "
            "kernel (m n^2 / 2 kernel values from the blocks), one warm-started SVM and the "
            "quadratic forms on the support vectors."])


if __name__ == "__main__":
    main()
