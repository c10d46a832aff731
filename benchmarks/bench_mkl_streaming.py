"""Multiple kernel learning on 10,000 rows x 100 kernels within 8 GB (issue 29).

The packed kernel bank stores ``m n (n + 1) / 2`` numbers: 100 kernels on 10,000 rows
need 20 GB in float32 (40 GB in float64), so ``bank='packed'`` refuses.  With
``bank='auto'`` (the default) :class:`semisup.mkl.MultipleKernelSVC` switches to
:class:`semisup.mkl.bank.StreamingKernelBank`, which recomputes the kernels in row blocks
at every SVM solve and holds only ``O(n^2)`` (the combined kernel).

Data: MNIST even vs odd digits, ``--n`` random training images (pixels / 255) and 2,000
random test images.  Kernels (100): on all 784 pixels and on each cell of a 3 x 3 grid of
the 28 x 28 image (10 feature subsets), the data-scaled bank of ``kernels='auto'``
(:func:`semisup.mkl.bank.auto_kernels`) with 8 Gaussian widths ``2^-3..2^4`` times the
reciprocal mean squared distance of the subset and polynomials of degree 1 and 2.  The
level method runs ``--max-iter`` iterations (a short run: the point is the memory and the
time per iteration); the peak resident set size of the process (``VmHWM``, and
``getrusage``'s ``ru_maxrss``) is measured over the fit.

    python benchmarks/bench_mkl_streaming.py --n 10000 --max-iter 4
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import Contention, PeakRSS, mnist_even_odd, report, table  # noqa: E402

from semisup.mkl import MultipleKernelSVC  # noqa: E402
from semisup.mkl.bank import auto_kernels  # noqa: E402


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


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--n-test", type=int, default=2000)
    ap.add_argument("--max-iter", type=int, default=4)
    ap.add_argument("--C", type=float, default=100.0)
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--bank", default="auto", choices=("auto", "packed", "streaming"))
    ap.add_argument("--name", default="mkl_streaming")
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
    packed_gib = m * args.n * (args.n + 1) / 2 * np.dtype(args.dtype).itemsize / 2**30
    clf = MultipleKernelSVC(kernels=specs, C=args.C, solver="level", tol=0.01,
                            max_iter=args.max_iter, dtype=args.dtype, max_memory=8 * 2**30,
                            bank=args.bank)
    # warm up the compiled SMO outside the measurement
    MultipleKernelSVC(kernels=specs[:2], C=1.0, max_iter=1).fit(X[:50], y[:50])
    t0, c0 = time.perf_counter(), time.process_time()
    with PeakRSS() as mem, Contention() as load:
        clf.fit(X, y)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    t1 = time.perf_counter()
    acc = float(np.mean(clf.predict(Xt) == yt))
    pred_s = time.perf_counter() - t1
    trace = clf.traces_[0]
    rows = [[args.n, m, clf.bank_, f"{packed_gib:.1f}", f"{clf.memory_nbytes_ / 2**30:.2f}",
             f"{mem.peak / 2**30:.2f}", f"{maxrss / 2**30:.2f}", f"{wall:.0f}", f"{cpu:.0f}",
             int(clf.n_iter_[0]), int(clf.n_svm_[0]), f"{wall / clf.n_svm_[0]:.1f}",
             f"{cpu / clf.n_svm_[0]:.1f}",
             f"{trace['gap'][0]:.3f} -> {trace['gap'][-1]:.3f}", int(clf.n_kernels_[0]),
             f"{100 * acc:.2f}", f"{pred_s:.0f}"]]
    report(args.name, f"MKL on {args.n:,} rows x {m} kernels: streaming kernel bank",
           [__doc__.split("\n\n")[1].replace("\n", " "),
            f"C = {args.C}, dtype = {args.dtype} (block computations; the combined kernel "
            f"and the SVM are float64), max_memory = 8 GiB.  {load.line()}",
            table(["n", "m", "bank", "packed bank would need (GiB)",
                   "footprint checked (GiB)", "peak RSS VmHWM (GiB)",
                   "ru_maxrss (GiB)", "fit s (wall)", "fit s (CPU)", "iterations",
                   "SVM solves", "s per iteration (wall)", "s per iteration (CPU)",
                   "rel. duality gap first -> last",
                   "#kernels", f"test acc % ({args.n_test} MNIST test rows)",
                   "predict s"], rows),
            "The run stops after --max-iter iterations (the duality gap is not yet at "
            "tol = 0.01): it measures memory and time per iteration, not the converged "
            "solution.  Peak RSS is of the whole process (Python, numpy, the data: "
            f"{X.nbytes / 2**20:.0f} MiB of training pixels).  The time per iteration is "
            "one combined kernel (m n^2 / 2 kernel values from the blocks), one warm-started "
            "SVM and the quadratic forms on the support vectors."])


if __name__ == "__main__":
    main()
