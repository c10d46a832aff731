"""Cost of one CGLS iteration against the two bare sparse mat-vecs it needs.

One CGLS iteration does ``q = A_j p`` and ``A_j^T z`` plus O(n_j + d) vector work; the
target is an iteration costing at most 1.5x the two bare products.  ``A_j`` is a
:class:`semisup.solvers.design.Design` restricted to an active set ``j`` (half of the rows,
drawn at random); scipy's ``X[j] @ p`` and ``X[j].T @ q`` on a pre-sliced copy are the
outside reference.  Kernels: serial, and parallel at 1 and 2 numba threads.

The machine may be shared, so (i) configurations are interleaved and each reported time is
the minimum over repeats, and (ii) the overhead is also measured *inside* each CGLS run: a
thin proxy times every mat-vec call CGLS makes, and ``CGLS time / time in mat-vecs`` is the
overhead factor under identical conditions.

Usage: ``python benchmarks/bench_cgls_overhead.py [--repeat 15]``
"""

from __future__ import annotations

import argparse
import time

import numba
import numpy as np
import scipy.sparse as sp
from _common import Contention, mnist_even_odd, report, table
from numba import njit

from semisup import L2SVM, TransductiveSVM
from semisup.datasets import load_svmlin_example, partial_labels
from semisup.regularizers import Ridge
from semisup.solvers import _kernels
from semisup.solvers._kernels import sparse_solver_threads
from semisup.solvers.cgls import cgls
from semisup.solvers.design import Design


def datasets():
    X, _ = mnist_even_odd()
    yield "MNIST train (60000 x 784)", X
    b = load_svmlin_example()
    yield "pcmac example train+test (1946 x 7510)", sp.vstack([b.X_train, b.X_test],
                                                              format="csr")


class TimedOperator:
    """Forwards ``matvec``/``rmatvec`` to a Design and accumulates the time spent in them."""

    def __init__(self, A):
        self.A, self.shape, self.t_products = A, A.shape, 0.0

    def __getattr__(self, name):  # set-up methods (preconditioner) go to the Design untimed
        return getattr(self.A, name)

    def matvec(self, x):
        t0 = time.perf_counter()
        out = self.A.matvec(x)
        self.t_products += time.perf_counter() - t0
        return out

    def rmatvec(self, q):
        t0 = time.perf_counter()
        out = self.A.rmatvec(q)
        self.t_products += time.perf_counter() - t0
        return out


def mean_time(fn, number: int, clock=time.perf_counter) -> float:
    t0 = clock()
    for _ in range(number):
        fn()
    return (clock() - t0) / number


def wall_and_cpu(fn, number: int) -> tuple[float, float]:
    """Mean wall-clock and process CPU seconds of ``number`` calls."""
    c0, t0 = time.process_time(), time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - t0) / number, (time.process_time() - c0) / number


def one_repeat(A, problem, n_iter: int, number: int) -> dict:
    """Bare mat-vec times and one timed CGLS run on operator ``A``."""
    cost, target, x0, p, q = problem
    out = np.empty(A.n_rows)
    mv, mv_cpu = wall_and_cpu(lambda: A.matvec(p, out=out), number)
    rmv, rmv_cpu = wall_and_cpu(lambda: A.rmatvec(q), number)
    runs = []
    for k in (n_iter, 2 * n_iter):
        op = TimedOperator(A)
        with sparse_solver_threads(A.sparse):  # as the estimators run it
            c0, t0 = time.process_time(), time.perf_counter()
            res = cgls(op, cost, target, Ridge(1e-3), x0=x0, tol=0.0, max_iter=k)
            runs.append((time.perf_counter() - t0, time.process_time() - c0, op.t_products))
        if res.n_iter != k:
            raise RuntimeError(f"CGLS stopped after {res.n_iter} < {k} iterations")
    (t1, c1, p1), (t2, c2, p2) = runs
    return {"mv": mv, "rmv": rmv, "mv_cpu": mv_cpu, "rmv_cpu": rmv_cpu,
            "t1": t1, "t2": t2, "c1": c1, "c2": c2, "p1": p1, "p2": p2}


def per_iteration(best: dict, n_iter: int) -> dict:
    """From the minimum times over repeats: the difference of the two runs is ``n_iter``
    iterations without the set-up (seeding, building the preconditioner).  Minima are taken
    before the difference: a minimum of differences would favour repeats whose short run
    was slowed down."""
    return {**best, "cg_iter": (best["t2"] - best["t1"]) / n_iter,
            "inside": (best["t2"] - best["t1"]) / (best["p2"] - best["p1"]),
            "cg_cpu": (best["c2"] - best["c1"]) / n_iter}


@njit(cache=True)
def _mv_probe_naive(indptr, indices, data, rows, w, out):
    for k in range(rows.shape[0]):
        i = rows[k]
        s = 0.0
        for jj in range(indptr[i], indptr[i + 1]):
            s += data[jj] * w[indices[jj]]
        out[k] = s


# the same loop with fastmath; not cached: numba's on-disk cache keys a function by its
# code, not by its flags, so the two would share one entry
_mv_probe_fm = njit(fastmath=True)(_mv_probe_naive.py_func)


def kernel_probe(name, X, rows, rng, repeat: int, number: int) -> list:
    """Serial row-subset loops like the library's, with index dtype / fastmath varied."""
    p = rng.normal(size=X.shape[1])
    q = rng.normal(size=rows.size)
    o, g = np.empty(rows.size), np.empty(X.shape[1])
    ip = X.indptr.astype(np.int64)
    variants = {
        "int64": X.indices.astype(np.int64),
        "int32 (scipy)": X.indices,
        "uint32 (as Design)": X.indices.view(np.uint32),
    }
    fns = {}
    for label, ix in variants.items():
        # the library's serial kernels, specialised by numba for each index dtype
        fns[(label, "mv")] = lambda ix=ix: _kernels._csr_rows_matvec_ser(ip, ix, X.data, rows,
                                                                         p, o)
        fns[(label, "mv_naive")] = lambda ix=ix: _mv_probe_naive(ip, ix, X.data, rows, p, o)
        fns[(label, "mv_fm")] = lambda ix=ix: _mv_probe_fm(ip, ix, X.data, rows, p, o)
        fns[(label, "rmv")] = lambda ix=ix: _kernels._csr_rows_rmatvec_ser(ip, ix, X.data,
                                                                           rows, q, g)
    best = {k: np.inf for k in fns}
    for f in fns.values():
        f()
    for _ in range(repeat):
        for k, f in fns.items():
            best[k] = min(best[k], mean_time(f, number, clock=time.process_time))
    return [[name, label, best[(label, "mv")] * 1e3, best[(label, "mv_naive")] * 1e3,
             best[(label, "mv_fm")] * 1e3, best[(label, "rmv")] * 1e3] for label in variants]


def end_to_end(repeat: int) -> list:
    """Whole fits with the parallel kernels (library default) and with serial kernels."""
    b = load_svmlin_example()
    y_pc = partial_labels(b.y_train_svmlin, np.flatnonzero(b.y_train_svmlin != 0))
    Xm, ym = mnist_even_odd()
    sub = np.sort(np.random.default_rng(1).choice(Xm.shape[0], 15000, replace=False))
    Xm, ym = Xm[sub], ym[sub]
    fits = {
        "TSVM S=max, pcmac example (1460 rows, 50 labeled)":
            lambda: TransductiveSVM(lam=1e-3, lam_u=1.0, positive_fraction=0.5).fit(
                b.X_train, y_pc),
        "L2SVM-MFN lam=100, MNIST even/odd (random 15000 rows, all labeled)":
            lambda: L2SVM(lam=100.0, solver="mfn").fit(Xm, ym),
    }
    # the estimators run sparse fits with BLAS limited to one thread themselves
    settings = {"numba 2 threads (library default)": 2,
                "numba 1 thread (serial kernels)": 1}
    default = numba.get_num_threads()
    best = {(f, s): np.inf for f in fits for s in settings}
    for _ in range(repeat):
        for f, fit in fits.items():
            for s, nt in settings.items():
                numba.set_num_threads(nt)
                t0 = time.perf_counter()
                fit()
                best[(f, s)] = min(best[(f, s)], time.perf_counter() - t0)
    numba.set_num_threads(default)
    rows = []
    for f in fits:
        ref = best[(f, next(iter(settings)))]
        for s in settings:
            rows.append([f, s, best[(f, s)], ref / best[(f, s)]])
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--fit-repeat", type=int, default=2)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    default_threads = numba.get_num_threads()
    rows_main, rows_cpu, rows_probe, notes = [], [], [], []
    configs = {  # label: (numba threads, parallel kernels); BLAS: one thread, as in fits
        "serial": (default_threads, False),
        "parallel, 1 thread": (1, True),
        "parallel, 2 threads": (2, True),
    }
    with Contention() as load:
        for name, X in datasets():
            n = X.shape[0]
            rows = np.sort(rng.choice(n, n // 2, replace=False))
            Xj = X[rows]
            nnz_j = Xj.nnz
            n_iter = max(10, min(200, int(3e7 // max(nnz_j, 1))))
            number = max(1, min(50, int(2e6 // nnz_j)))
            d = X.shape[1] + 1
            problem = (rng.uniform(0.5, 1.5, rows.size), np.sign(rng.normal(size=rows.size)),
                       rng.normal(size=d) * 1e-3, rng.normal(size=d), rng.normal(size=rows.size))
            ops = {}
            for label, (threads, par) in configs.items():
                numba.set_num_threads(threads)
                ops[label] = Design(X, parallel=par).restrict(rows)  # chunking uses n_threads
            best = {label: {} for label in configs}
            sp_mv = sp_rmv = sp_mv_cpu = sp_rmv_cpu = np.inf
            pv, qv = problem[3][:-1], problem[4]
            for r in range(args.repeat + 1):  # repeat 0 warms up (numba compilation)
                for label, (threads, _) in configs.items():
                    numba.set_num_threads(threads)
                    res = one_repeat(ops[label], problem, n_iter, number)
                    if r:
                        for k, v in res.items():
                            best[label][k] = min(best[label].get(k, np.inf), v)
                w_, c_ = wall_and_cpu(lambda Xj=Xj, pv=pv: Xj @ pv, number)
                sp_mv, sp_mv_cpu = min(sp_mv, w_), min(sp_mv_cpu, c_)
                w_, c_ = wall_and_cpu(lambda Xj=Xj, qv=qv: Xj.T @ qv, number)
                sp_rmv, sp_rmv_cpu = min(sp_rmv, w_), min(sp_rmv_cpu, c_)
            numba.set_num_threads(default_threads)
            best = {label: per_iteration(c, n_iter) for label, c in best.items()}
            ser = best["serial"]
            for label, c in best.items():
                rows_main.append([name, label, c["mv"] * 1e3, c["rmv"] * 1e3,
                                  c["cg_iter"] * 1e3, c["cg_iter"] / (c["mv"] + c["rmv"]),
                                  c["inside"], c["cg_iter"] / (sp_mv + sp_rmv),
                                  ser["cg_iter"] / c["cg_iter"], ser["mv"] / c["mv"],
                                  ser["rmv"] / c["rmv"]])
                rows_cpu.append([name, label, c["mv_cpu"] * 1e3, c["rmv_cpu"] * 1e3,
                                 c["cg_cpu"] * 1e3, c["cg_cpu"] / (c["mv_cpu"] + c["rmv_cpu"]),
                                 c["cg_cpu"] / (sp_mv_cpu + sp_rmv_cpu)])
            rows_main.append([name, "scipy on X[j] copy", sp_mv * 1e3, sp_rmv * 1e3, "-", "-",
                              "-", "-", "-", ser["mv"] / sp_mv, ser["rmv"] / sp_rmv])
            rows_cpu.append([name, "scipy on X[j] copy", sp_mv_cpu * 1e3, sp_rmv_cpu * 1e3,
                             "-", "-", "-"])
            rows_probe += kernel_probe(name, X, rows, rng, args.repeat, number)
            auto = "parallel" if Design(X).restrict(rows)._par else "serial"
            notes.append(f"{name}: active set {rows.size:,} rows / {nnz_j:,} non-zeros; "
                         f"CGLS runs of {n_iter} iterations, mat-vecs timed as the mean of "
                         f"{number} calls; Design picks {auto} kernels by default "
                         f"(numba threads {default_threads}).")
        rows_e2e = end_to_end(args.fit_repeat)
    main_tab = table(
        ["data", "kernels", "matvec ms", "rmatvec ms", "CGLS iter ms",
         "iter / (matvec+rmatvec)", "CGLS time / time in its mat-vecs",
         "iter / scipy pair", "CGLS speed-up vs serial", "matvec speed-up",
         "rmatvec speed-up"], rows_main)
    cpu_tab = table(["data", "kernels", "matvec CPU ms", "rmatvec CPU ms", "CGLS iter CPU ms",
                     "iter / (matvec+rmatvec), CPU", "iter / scipy pair, CPU"], rows_cpu)
    probe_tab = table(["data", "index dtype", "matvec ms", "naive matvec ms",
                       "naive matvec fastmath ms", "rmatvec ms"],
                      rows_probe)
    report("bench_cgls_overhead", "CGLS iteration vs bare mat-vecs", [
        load.line(),
        f"Each time is the minimum over {args.repeat} interleaved repeats.  CGLS: seeded, "
        "Ridge(1e-3), default preconditioner (sampled Cholesky for MNIST, Jacobi for pcmac), "
        "tol=0 so that exactly the requested iterations run; per-iteration time = (time of a "
        "run of 2k iterations - time of a run of k) / k, which leaves out the set-up (seeding, "
        "building the preconditioner); BLAS on one thread, as in the estimators' sparse fits.",
        "## CGLS iteration vs its two mat-vecs\n\nTarget: `iter / (matvec+rmatvec)` <= 1.5.  "
        "`CGLS time / time in its mat-vecs` is measured within the same run (robust to load "
        "changes).  Speed-ups are relative to the serial kernels (>1 = faster).\n\n" + main_tab,
        "\n".join(f"- {x}" for x in notes),
        "## Whole fits under thread settings\n\nBest of "
        f"{args.fit_repeat} interleaved fits; speed-up relative to the library default "
        "(first row of each fit).\n\n"
        + table(["fit", "threads", "seconds", "speed-up vs default"], rows_e2e),
        "## The same in process CPU time\n\nCPU time does not grow while the process waits "
        "for a core, so on a loaded machine it is the cleaner measure for the serial rows "
        "(for the parallel rows it adds up both threads, including their spin-waiting).\n\n"
        + cpu_tab,
        "## Probe: serial kernel variants\n\nThe library's serial kernels called with the "
        "column-index dtype varied, and (benchmark code) a naive mat-vec loop -- signed loop "
        "counters, one running sum -- with and without `fastmath=True`.  numba checks each "
        "signed index for negative (wrap-around) indexing; the library's loops count with "
        "unsigned integers, which drops that check, and keep four partial sums, which breaks "
        "the chain of dependent additions.  Process CPU time, minimum over repeats."
        "\n\n" + probe_tab,
    ])


if __name__ == "__main__":
    main()
