"""Self-taught learning's lasso coding: the library's compiled route vs scikit-learn's.

``semisup.weak.selftaught.encode`` codes every row ``x`` over a dictionary ``D`` by
``min_a ||x - a D||^2 + beta ||a||_1`` (step I(a) of SSTL, Stage II of STL, and every
prediction of both).  On a well-conditioned dictionary it runs
:func:`semisup.solvers.lasso.lasso_codes` (compiled coordinate descent on ``D D^T`` for all
rows, finished exactly by feature-sign search); the peer is scikit-learn's
``sparse_encode(algorithm="lasso_cd")``, one ``Lasso`` fit per row, which ``encode`` used
before and still uses for overcomplete dictionaries.

For each SSL-book set (official split 1 at 10 labels): the dictionary that
``SelfTaughtClassifier()`` learns on the unlabeled rows (its defaults: 50 atoms,
``beta = 1``, ``random_state=0``), then both routes code every row of ``X`` with it, one
after the other in this process, each after one warm-up call on 10 rows (numba's
compilation and scikit-learn's imports are not timed).  Reported: wall and CPU seconds,
peak memory traced by ``tracemalloc`` during the call, the objective summed over the rows,
the largest per-row objective excess of each route over the other, and the largest code
difference.

Run::

    nice -n 5 python benchmarks/bench_lasso_encode.py --out benchmarks/results/lasso_encode.md
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine_info  # noqa: E402
from bench_defaults import load_set  # noqa: E402

SETS = ["g241c", "digit1", "usps", "coil2", "bci"]


def objective(X, A, D, beta):
    return ((X - A @ D) ** 2).sum(axis=1) + beta * np.abs(A).sum(axis=1)


def ours(X, D, beta):
    """The library's route (``encode`` on a well-conditioned dictionary)."""
    from semisup.solvers.lasso import lasso_codes

    return lasso_codes(X, D, beta)[0]


def peer(X, D, beta):
    """scikit-learn's route, at the library's iteration limit."""
    from sklearn.decomposition import sparse_encode

    from semisup.solvers.lasso import MAX_SWEEPS

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return sparse_encode(X, D, algorithm="lasso_cd", alpha=beta / 2.0,
                             max_iter=MAX_SWEEPS)


def timed(fn):
    tracemalloc.start()
    t0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return out, wall, cpu, peak / 2**20


def main() -> None:
    from semisup import SelfTaughtClassifier
    from semisup.solvers.lasso import well_conditioned

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--sets", nargs="+", default=SETS)
    args = ap.parse_args()
    lines = ["# Self-taught lasso coding: compiled coordinate descent vs scikit-learn", "",
             f"Command: `python benchmarks/bench_lasso_encode.py"
             f"{' --out ' + str(args.out) if args.out else ''}"
             f"{' --sets ' + ' '.join(args.sets) if args.sets != SETS else ''}`", "",
             machine_info(), "",
             f"Load average at the start: {os.getloadavg()[0]:.2f} (2 cores).", "",
             "| set | rows x features | route | wall (s) | CPU (s) | peak traced MiB | "
             "objective (sum) | max row excess over the other route | max code difference |",
             "|---|---|---|---|---|---|---|---|---|"]
    ratios = []
    for name in args.sets:
        d = load_set(name)
        _, _, codes = d.official_split(10, 1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            stl = SelfTaughtClassifier(random_state=0, fallback="none").fit(d.X, codes)
        D = stl.components_
        X = d.X.toarray() if hasattr(d.X, "toarray") else np.asarray(d.X, dtype=np.float64)
        beta = stl.beta
        if not well_conditioned(D):
            lines.append(f"| {name} | {X.shape[0]} x {X.shape[1]} | (dictionary not "
                         "well-conditioned: both routes are scikit-learn's) | | | | | | |")
            continue

        ours(X[:10], D, beta)
        peer(X[:10], D, beta)
        A, w1, c1, m1 = timed(lambda: ours(X, D, beta))  # noqa: B023 - called at once
        B, w2, c2, m2 = timed(lambda: peer(X, D, beta))  # noqa: B023 - called at once
        fa, fb = objective(X, A, D, beta), objective(X, B, D, beta)
        diff = float(np.abs(A - B).max())
        for route, w, c, m, f, ex in (("compiled CD (semisup)", w1, c1, m1, fa, fa - fb),
                                      ("sparse_encode lasso_cd (scikit-learn)", w2, c2, m2,
                                       fb, fb - fa)):
            lines.append(f"| {name} | {X.shape[0]} x {X.shape[1]} | {route} | {w:.3f} | "
                         f"{c:.3f} | {m:.1f} | {f.sum():.6f} | {ex.max():.2e} | {diff:.2e} |")
        ratios.append((name, w2 / w1, c2 / c1))
        print(lines[-2], lines[-1], sep="\n", flush=True)
    lines += ["", "Time ratios, scikit-learn / semisup (wall, CPU): " + "; ".join(
        f"{n} {rw:.1f}x, {rc:.1f}x" for n, rw, rc in ratios) + "."]
    text = "\n".join(lines) + "\n"
    if args.out:
        args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
