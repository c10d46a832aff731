"""Speed targets of the scalable CTSVM route (issue 16), one command per target.

Each fit runs in its own child process, so the peak memory (``ru_maxrss``: data, kernel,
factor and solver together) is that fit's own.  Times are wall and process CPU seconds of
``ConvexTSVM.fit`` alone; the certificate (Lanczos LMI eigenvalue, relative primal-dual
gap) is printed with each fit.

    python benchmarks/bench_ctsvm_speed.py --case sslbook   # 6 SSL-book sets, n = 1,500, < 10 s
    python benchmarks/bench_ctsvm_speed.py --case scs       # low-rank vs SCS, gap 1e-4
    python benchmarks/bench_ctsvm_speed.py --case mnist     # MNIST 4 vs 9, n = 8,000, < 3 min
    python benchmarks/bench_ctsvm_speed.py --case text      # 20NG, n = 1,000 and 10,000, < 60 s
    python benchmarks/bench_ctsvm_speed.py --case nystroem  # MNIST, RBF, n = 50,000, < 10 min
    python benchmarks/bench_ctsvm_speed.py --case nystroem-check  # the mnist case, Nystroem
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SSLBOOK = ("digit1", "usps", "g241c", "g241d", "coil2", "text")


def _labels(y, l, seed):
    rng = np.random.default_rng(seed)
    lab = np.r_[rng.choice(np.flatnonzero(y == 0), l // 2, replace=False),
                rng.choice(np.flatnonzero(y == 1), l - l // 2, replace=False)]
    ys = np.full(y.size, -1)
    ys[lab] = y[lab]
    return ys


def load(job):
    """(X, y01, y_semi, kernel) of one job description."""
    kind, name, n = job["kind"], job["name"], job["n"]
    if kind == "sslbook":
        from semisup.datasets import load_sslbook
        b = load_sslbook(name, 10)
        y = (b.y > 0).astype(int)
        ys = np.full(y.size, -1)
        ys[b.splits[0]] = y[b.splits[0]]           # official split 1 (10 labels)
        X = b.X
        kern = "linear" if name == "text" else "rbf"
        if n < X.shape[0]:                         # the SCS comparison: a subset
            idx = np.random.default_rng(0).choice(X.shape[0], n, replace=False)
            X, y = X[idx], y[idx]
            ys = _labels(y, 10, 0)
        return X, y, ys, kern
    if kind == "mnist":
        from semisup.datasets import load_mnist
        X, digit = load_mnist(digits=(4, 9), sparse=False)
        idx = np.random.default_rng(0).choice(digit.size, n, replace=False)
        X, y = X[idx].astype(np.float64) / 255.0, (digit[idx] == 9).astype(int)
        return X, y, _labels(y, job["l"], 0), "rbf"
    if kind == "mnist-all":
        # digits 0-4 against 5-9 (training images), n random rows
        from semisup.datasets import load_mnist
        X, digit = load_mnist(sparse=False)
        idx = np.random.default_rng(0).choice(digit.size, n, replace=False)
        X, y = X[idx].astype(np.float64), (digit[idx] >= 5).astype(int)
        return X, y, _labels(y, job["l"], 0), "rbf"
    if kind == "text":
        sys.path.insert(0, HERE)
        from bench_ctsvm import _newsgroups
        from sklearn.feature_extraction.text import TfidfVectorizer
        comp = {"comp.graphics", "comp.os.ms-windows.misc", "comp.sys.ibm.pc.hardware",
                "comp.sys.mac.hardware", "comp.windows.x"}
        other = {"rec.autos", "rec.motorcycles", "rec.sport.baseball", "rec.sport.hockey",
                 "sci.crypt", "sci.electronics", "sci.med", "sci.space"}
        docs, g = _newsgroups(comp | other)
        idx = np.random.default_rng(0).choice(len(docs), n, replace=False)
        X = TfidfVectorizer(sublinear_tf=True, min_df=2, stop_words="english").fit_transform(
            [docs[i] for i in idx]).tocsr()
        y = np.array([g[i] in comp for i in idx], dtype=int)
        return X, y, _labels(y, job["l"], 0), "linear"
    raise KeyError(kind)


def run_one(job):
    from semisup.transductive import ConvexTSVM
    X, y, ys, kern = load(job)
    out = dict(job, n=int(X.shape[0]), d=int(X.shape[1]), kernel=kern)
    for solver in job.get("solvers", ["lowrank"]):
        est = ConvexTSVM(C_l=job.get("C", 10.0), kernel=kern, solver=solver,
                         max_exact=10**6, tol=job.get("tol", 1e-5),
                         n_components=job.get("m", 1000))
        t, c = time.perf_counter(), time.process_time()
        est.fit(X, ys)
        wall, cpu = time.perf_counter() - t, time.process_time() - c
        unl = ys == -1
        rec = dict(wall=wall, cpu=cpu, objective=est.objective_,
                   acc=float(np.mean(est.transduction_[unl] == y[unl])))
        rec["solver"] = est.solver_
        if est.solver_ in ("lowrank", "nystroem"):
            fr = est.fit_results_
            rec.update(dual=est.dual_objective_, gap=fr["gap"], min_eig=est.lmi_min_eig_,
                       rank=fr["rank"], n_evals=fr["n_evals"], n_outer=fr["n_outer"],
                       converged=fr["status"] == "converged")
        out[solver] = rec
    out["peak_rss_gb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    return out


def jobs_for(case):
    if case == "sslbook":
        return [dict(kind="sslbook", name=s, n=10**9) for s in SSLBOOK]
    if case == "scs":
        return [dict(kind="sslbook", name=s, n=150, solvers=["lowrank", "scs"], tol=1e-7)
                for s in SSLBOOK]
    if case == "mnist":
        return [dict(kind="mnist", name="MNIST 4 vs 9", n=8000, l=20)]
    if case == "nystroem":
        # 'auto' takes the Nystroem route beyond 20,000 rows (m = 1,000 landmarks)
        return [dict(kind="mnist-all", name="MNIST 0-4 vs 5-9", n=50000, l=100,
                     solvers=["auto"])]
    if case == "nystroem-check":
        # the mnist case's data and labels on the Nystroem route: its accuracy and optimum
        # against the dense route's (ctsvm_speed_mnist.md)
        return [dict(kind="mnist", name="MNIST 4 vs 9", n=8000, l=20, solvers=["nystroem"])]
    if case == "text":
        return [dict(kind="text", name="20NG comp vs rec+sci", n=n, l=50)
                for n in (1000, 10000)]
    raise KeyError(case)


def fmt(v):
    if isinstance(v, float):
        return f"{v:.3g}" if abs(v) < 1e-2 or abs(v) >= 1e4 else f"{v:.4g}"
    return str(v)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--case", choices=("sslbook", "scs", "mnist", "text", "nystroem",
                                       "nystroem-check"),
                    required=True)
    ap.add_argument("--only", default=None, help="comma-separated set names (sslbook/scs)")
    ap.add_argument("--single", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.single:
        print("RESULT " + json.dumps(run_one(json.loads(args.single))), flush=True)
        return
    sys.path.insert(0, HERE)
    from _common import report, table
    load_start = os.getloadavg()
    rows = []
    jobs = jobs_for(args.case)
    if args.only:
        jobs = [j for j in jobs if j["name"] in args.only.split(",")]
    for job in jobs:
        proc = subprocess.run([sys.executable, __file__, "--case", args.case, "--single",
                               json.dumps(job)], capture_output=True, text=True)
        line = [s for s in proc.stdout.splitlines() if s.startswith("RESULT ")]
        if not line:
            print(proc.stderr[-3000:], file=sys.stderr)
            continue
        r = json.loads(line[0][7:])
        lr = r[jobs[0].get("solvers", ["lowrank"])[0]]
        row = [r["name"], r["n"], r["d"], r["kernel"] + (f" ({lr['solver']})"
               if lr["solver"] != "lowrank" else ""), fmt(lr["wall"]), fmt(lr["cpu"]),
               fmt(lr["objective"]), fmt(lr["gap"]), fmt(lr["min_eig"]), lr["rank"],
               lr["n_evals"], fmt(100 * lr["acc"]), fmt(r["peak_rss_gb"])]
        if args.case == "scs":
            s = r["scs"]
            row += [fmt(s["objective"]), fmt((lr["objective"] - s["objective"])
                                             / s["objective"]), fmt(s["wall"]),
                    fmt(100 * s["acc"])]
        rows.append(row)
        print(row, flush=True)
    head = ["set", "n", "d", "kernel", "wall s", "CPU s", "objective", "rel. gap",
            "LMI min eig", "rank", "L-BFGS evals", "acc. %", "peak RSS GB"]
    if args.case == "scs":
        head += ["SCS objective", "(lowrank - SCS)/SCS", "SCS wall s", "SCS acc. %"]
    report(f"ctsvm_speed_{args.case}", f"CTSVM low-rank route: {args.case}", [
        f"Machine load (uptime) at start: {load_start}, at end: {os.getloadavg()}",
        "C_l = C_u = 10, default RBF width (reciprocal mean squared distance) or linear "
        "kernel on the (sparse) features, default ridge/epsilon/offset, tol 1e-5 (1e-7 for "
        "the SCS comparison). Peak RSS of the child process that ran the fit."
        + (" Nystroem route: solver 'auto' (n > 20,000), 1,000 landmarks drawn at random, "
           "100 labels (50 per class), C = 10; time includes the Nystroem features."
           if args.case == "nystroem" else "")
        + (" Nystroem route forced (solver='nystroem', 1,000 landmarks) on the mnist case's "
           "data and labels." if args.case == "nystroem-check" else ""),
        table(head, rows)])


if __name__ == "__main__":
    main()
