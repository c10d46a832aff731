"""Linear manifold regularization on text, model selection with warm starts, cost scaling.

Sections (each can be run alone with --only):
  text     supervised L2-SVM vs linear LapRLS vs linear LapSVM vs TSVM vs DA (and TSVM with a
           graph term) on the SVMlin pcmac example, the SSL-book Text set (12 official
           splits, 10 and 100 labels) and 20NG pc-vs-mac (PCMAC.mat, random splits).
  path     a grid of gamma_I solved with warm starts vs independent solves.
  scaling  cost of one CG iteration of linear LapRLS vs nnz(X) + nnz(L) up to the 1.27M-row
           SecStr problem (one-hot, graph by approximate kNN).

Protocol (never looks at test or unlabeled labels): TSVM/DA use the SVMlin paper's text
defaults (lam = 1e-3, lam_u = 1, r = positive fraction of the labeled rows); the Laplacian
methods choose (gamma_A, gamma_I) on each split by 3-fold transductive cross-validation on
the labeled rows (``semisup.model_selection.TransductiveGridSearchCV``: held-out labeled rows
become unlabeled, the graph over all rows is built once per data set, each fold's gamma_I
path warm-started); the supervised L2-SVM uses lam = 1e-3 * l
(the same balance as TSVM's labeled part). Graph: 10-NN, cosine distance, binary weights,
normalised Laplacian.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import TfidfTransformer
from sklearn.model_selection import StratifiedKFold

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import Contention, PeakRSS, Timer, csr_bytes, report, table  # noqa: E402

from semisup import (  # noqa: E402
    L2SVM,
    DeterministicAnnealingSVM,
    LinearLapRLS,
    LinearLapSVM,
    TransductiveSVM,
)
from semisup.graph import GraphWarning, adjacency_graph  # noqa: E402
from semisup.model_selection import TransductiveGridSearchCV  # noqa: E402

warnings.simplefilter("ignore", GraphWarning)

GRID_A = (1e-4, 1e-3, 1e-2)
GRID_I = (0.0, 1e2, 1e3, 1e4, 1e5)
GRAPH = dict(laplacian_kind="normalized", graph_weight="binary")


def text_graph(X):
    return adjacency_graph(X, 10, metric="cosine", weight="binary", warn=False)


def cv_select(cls, X, y, W, seed=0):
    """(gamma_A, gamma_I) by 3-fold transductive CV on the labeled rows (folds hidden as -1).

    ``TransductiveGridSearchCV`` with ``path="gamma_I"``: along the gamma_I grid each fold's
    solve is seeded with the previous one (warm start).  Ties go to the first grid point:
    the smallest gamma_A, then the smallest gamma_I.
    """
    lab = np.flatnonzero(y != -1)
    n_folds = min(3, int(np.bincount(y[lab]).min()))
    if n_folds < 2:
        return GRID_A[1], GRID_I[2]
    search = TransductiveGridSearchCV(
        cls(graph=W, warm_start=True, **GRAPH),
        {"gamma_A": list(GRID_A), "gamma_I": list(GRID_I)},
        cv=StratifiedKFold(n_folds, shuffle=True, random_state=seed),
        scoring="accuracy", path="gamma_I", refit=False).fit(X, y)
    return search.best_params_["gamma_A"], search.best_params_["gamma_I"]


def run_methods(X, y, W, X_test=None, y_test=None):
    """Errors (%) on unlabeled rows (where labels are known) and on the test rows."""
    l = int((y != -1).sum())
    methods = {
        "L2-SVM (supervised)": lambda: L2SVM(lam=1e-3 * l),
        "TSVM": lambda: TransductiveSVM(lam=1e-3, lam_u=1.0),
        "DA": lambda: DeterministicAnnealingSVM(lam=1e-3, lam_u=1.0),
        "TSVM + graph (gamma_I=1e3)": lambda: TransductiveSVM(lam=1e-3, lam_u=1.0,
                                                              gamma_I=1e3, graph=W),
    }
    for name, cls in (("linear LapRLS", LinearLapRLS), ("linear LapSVM", LinearLapSVM)):
        ga, gi = cv_select(cls, X, y, W)
        methods[f"{name} (CV)"] = (lambda c=cls, a=ga, i=gi: c(gamma_A=a, gamma_I=i, graph=W,
                                                             **GRAPH))
    out = {}
    for name, make in methods.items():
        t0 = time.perf_counter()
        m = make().fit(X, y)
        dt = time.perf_counter() - t0
        test_err = None
        if X_test is not None:
            test_err = 100 * np.mean(m.predict(X_test) != y_test)
        out[name] = (m.transduction_, test_err, dt)
    return out


def section_text(quick: bool) -> str:
    from semisup.datasets import load_sslbook, load_svmlin_example, shared_data_dir

    rows = []
    # 1. SVMlin's pcmac example: 50 given labels, 486 test rows
    b = load_svmlin_example()
    y = np.where(b.y_train_svmlin == 0, -1, (b.y_train_svmlin > 0).astype(int))
    yt = (b.y_test_svmlin > 0).astype(int)
    W = text_graph(b.X_train)
    res = run_methods(b.X_train, y, W, b.X_test, yt)
    for name, (_, test_err, dt) in res.items():
        rows.append(["SVMlin pcmac example", 50, name, "-", test_err, dt])
    # 2. SSL-book Text, official splits
    for n_lab in (10, 100):
        s = load_sslbook("text", n_lab)
        X, ytrue = s.X, (s.y > 0).astype(int)
        W = text_graph(X)
        errs = {}
        splits = s.splits[:3] if quick else s.splits
        for split in splits:
            y = np.full(ytrue.size, -1)
            y[split] = ytrue[split]
            unl = y == -1
            for name, (tr, _, dt) in run_methods(X, y, W).items():
                errs.setdefault(name, []).append((100 * np.mean(tr[unl] != ytrue[unl]), dt))
        for name, v in errs.items():
            e = np.array(v)
            rows.append([f"SSL-book Text ({len(splits)} splits)", n_lab, name,
                         f"{e[:, 0].mean():.1f} ± {e[:, 0].std():.1f}", None, e[:, 1].mean()])
    # 3. 20NG pc vs mac (PCMAC.mat): tf-idf, random stratified splits, 25 % test
    from scipy.io import loadmat

    mat = loadmat(shared_data_dir() / "pcmac" / "PCMAC.mat")
    Xall = TfidfTransformer().fit_transform(sp.csr_matrix(mat["fea"], dtype=float))
    yall = (np.asarray(mat["gnd"]).ravel() == 1).astype(int)
    rng = np.random.default_rng(0)
    for n_lab in (20, 50, 100) if not quick else (50,):
        errs = {}
        for _rep in range(3 if quick else 5):
            perm = rng.permutation(yall.size)
            test, train = perm[: yall.size // 4], np.sort(perm[yall.size // 4:])
            Xtr, ytr = Xall[train], yall[train]
            lab = np.concatenate([rng.choice(np.flatnonzero(ytr == c), n_lab // 2,
                                             replace=False) for c in (0, 1)])
            y = np.full(ytr.size, -1)
            y[lab] = ytr[lab]
            unl = y == -1
            W = text_graph(Xtr)
            for name, (tr, te, dt) in run_methods(Xtr, y, W, Xall[test], yall[test]).items():
                errs.setdefault(name, []).append((100 * np.mean(tr[unl] != ytr[unl]), te, dt))
        for name, v in errs.items():
            e = np.array(v, dtype=float)
            rows.append([f"20NG pc-vs-mac ({len(v)} splits)", n_lab, name,
                         f"{e[:, 0].mean():.1f} ± {e[:, 0].std():.1f}", e[:, 1].mean(),
                         e[:, 2].mean()])
    return "## Text: error (%)\n\n" + table(
        ["data", "labels", "method", "error on unlabeled", "error on test", "fit s"], rows)


def section_path() -> str:
    from semisup.datasets import load_sslbook

    s = load_sslbook("text", 100)
    X, ytrue = s.X, (s.y > 0).astype(int)
    y = np.full(ytrue.size, -1)
    y[s.splits[0]] = ytrue[s.splits[0]]
    W = text_graph(X)
    grid = np.logspace(1, 5, 9)
    rows = []
    for cls, solver in ((LinearLapRLS, "cg"), (LinearLapSVM, "mfn")):
        stats = {}
        for mode in ("independent", "warm-started"):
            est = cls(gamma_A=1e-3, graph=W, solver=solver, warm_start=mode != "independent",
                      **GRAPH)
            cg, coefs = 0, []
            with Timer() as t:
                for gi in grid:
                    if mode == "independent":
                        est = cls(gamma_A=1e-3, gamma_I=gi, graph=W, solver=solver, **GRAPH)
                    else:
                        est.set_params(gamma_I=gi)
                    est.fit(X, y)
                    cg += sum(r.n_cg_iter for r in est.fit_results_)
                    coefs.append(est.coef_.copy())
            stats[mode] = (cg, t.seconds, coefs)
        gap = max(np.linalg.norm(a - b) / np.linalg.norm(b) for a, b in
                  zip(stats["warm-started"][2], stats["independent"][2], strict=True))
        for mode, (cg, secs, _) in stats.items():
            rows.append([cls.__name__, solver, mode, cg, secs,
                         stats["independent"][0] / cg, f"{gap:.1e}"])
    return ("## Model selection: 9 values of gamma_I (1e1..1e5), SSL-book Text, 100 labels\n\n"
            + table(["method", "solver", "path", "CG iterations", "seconds",
                     "CG-iteration ratio (independent / this)", "max rel. coef difference"],
                    rows))


def section_scaling(max_rows: int | None) -> str:
    from semisup.datasets import load_secstr_extra, load_sslbook, one_hot_secstr
    from semisup.graph import laplacian
    from semisup.regularizers import GraphRidge
    from semisup.solvers._kernels import sparse_solver_threads
    from semisup.solvers.cgls import cgls
    from semisup.solvers.design import Design

    s = load_sslbook("secstr", 10000)
    X_codes = np.vstack([s.X, load_secstr_extra()])
    rows = []
    sizes = [50_000, 200_000, 600_000, X_codes.shape[0]]
    if max_rows:
        sizes = [n for n in sizes if n <= max_rows]
    for n in sizes:
        X = one_hot_secstr(X_codes[:n])
        with Timer() as tg:
            W = adjacency_graph(X, 10, method="approximate", weight="binary", random_state=0,
                                warn=False)
        L = laplacian(W, kind="normalized")
        design = Design(X)
        reg = GraphRidge(1e-3, 1.0, design, L)
        lab = np.arange(0, n, max(1, n // 1000))
        A = design.restrict(lab)
        target = np.where(np.arange(lab.size) % 2 == 0, 1.0, -1.0)
        k = 20
        with sparse_solver_threads(True):  # as the estimators run it
            with PeakRSS() as mem, Timer() as t0:
                cgls(A, np.ones(lab.size), target, reg, tol=0.0, max_iter=1)
            with Timer() as tk:
                cgls(A, np.ones(lab.size), target, reg, tol=0.0, max_iter=k + 1)
        per_iter = (tk.seconds - t0.seconds) / k
        work = X.nnz + L.nnz
        rows.append([n, X.nnz, L.nnz, tg.seconds, per_iter * 1e3, per_iter / work * 1e9,
                     mem.peak / 2**20, csr_bytes(X) / 2**20])
    return ("## Cost of one CG iteration of linear LapRLS vs nnz (SecStr one-hot, 315 features)\n\n"
            "One iteration applies X (labeled rows), X^T, and R = lam I + mu X^T L X (X, L, X^T "
            "over all rows).  Linear cost means a constant ns per (nnz(X) + nnz(L)).\n\n"
            + table(["rows n", "nnz(X)", "nnz(L)", "graph build s", "ms / CG iteration",
                     "ns per (nnz(X)+nnz(L))", "peak RSS MiB", "CSR data MiB"], rows))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", choices=["text", "path", "scaling"], action="append")
    p.add_argument("--quick", action="store_true", help="fewer splits")
    p.add_argument("--max-rows", type=int, default=None, help="cap the scaling section")
    args = p.parse_args()
    parts = args.only or ["text", "path", "scaling"]
    sections = [__doc__.split("\n\n", 2)[2]]
    with Contention() as c:
        if "text" in parts:
            sections.append(section_text(args.quick))
        if "path" in parts:
            sections.append(section_path())
        if "scaling" in parts:
            sections.append(section_scaling(args.max_rows))
    sections.append(c.line())
    name = "bench_linear_laplacian" + ("" if args.only is None else "_" + "_".join(parts))
    report(name, "Linear manifold regularization (linear LapRLS / LapSVM)", sections)


if __name__ == "__main__":
    main()
