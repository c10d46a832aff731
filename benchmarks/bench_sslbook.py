"""SSL-book benchmark (Chapelle, Schoelkopf & Zien, ch. 21): SVM, TSVM, LapRLS, LapSVM.

All seven classic sets (g241c, g241d, digit1, usps, coil (6 classes), bci, text), 10 and
100 labels, the 12 official splits; mean test error (%) on the unlabeled points of each
split (the book's transductive protocol), next to the book's numbers in
``../shared/papers/reference-facts.md`` (100 labels).

Protocol -- hyper-parameters never look at the labels of the unlabeled points:

* Graph (all methods that use one): 6-NN, heat weights with the default width (text: cosine
  distance and cosine-similarity weights), built once per data set.  Kernel: RBF with
  ``gamma = f / mean squared distance`` (text: linear kernel on the unit-norm tf-idf rows).
* Selection by transductive cross-validation on the labeled points of each split
  (``semisup.model_selection.TransductiveGridSearchCV``): 5-fold (stratified) with 100
  labels, leave-one-out with 10 labels.  Held-out labeled points become unlabeled, so the
  graph and the unlabeled data are used exactly as in the final fit.
  Grids: ``f`` in {1, 2, 4, 8} (RBF sets), Laplacian in {unnormalised L, normalised L^2},
  ``r = gamma_I s / gamma_A`` in {0.1, 1, 10, 100, 1e3, 1e4} (``s = 1/(l+u)^2``),
  ``gamma_A`` in {1e-5, ..., 1e-1}; the SVM uses the same ``f`` and ``gamma_A`` grids
  (``C = 1 / (2 gamma_A l)``).  Ties go to the first grid point in that order.  Every grid
  point is evaluated through the deformed kernel ``K~ = K (I + r L K)^-1``
  (:func:`semisup.manifold.deformed_kernel`), computed once per (data set, f, Laplacian, r)
  and shared by both label sizes, all splits, folds and ``gamma_A`` (LapRLS = kernel ridge
  on ``K~``, LapSVM = SVM on ``K~``: identities tested in ``tests/test_manifold.py``); the
  reported errors come from ``LapRLS`` / ``LapSVM`` estimators refitted on the whole split
  with the selected values (precomputed ``K`` and ``W``).
* 10 labels, second protocol ("paper values"): no selection, the values of the paper's
  USPS experiment: ``f = 1``, unnormalised L, ``gamma_A l = 0.005``,
  ``gamma_I l / (l+u)^2 = 0.045`` for LapRLS/LapSVM; ``gamma l = 0.05`` (``C = 10``) for
  the SVM.
* TSVM: ``semisup.TransductiveSVM`` (linear, SVMlin's multi-switch TSVM, one-vs-rest on
  coil) with SVMlin's defaults ``lam = 1e-3``, ``lam_u = 1``, positive fraction from the
  labeled points, for both label sizes (cross-validating it would cost ~20 fits per split).
  The book's TSVM is a kernel TSVM, ours is linear.
* Multi-class (coil): one-vs-rest everywhere (LapRLS in one solve with a +-1 target
  matrix); a class without labeled points in a split (possible with 10 labels) is never
  predicted.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from collections import Counter
from pathlib import Path

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.svm import SVC

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import Contention, report, table  # noqa: E402

from semisup import TransductiveSVM  # noqa: E402
from semisup.datasets import load_sslbook, partial_labels  # noqa: E402
from semisup.graph import GraphWarning, adjacency_graph, laplacian  # noqa: E402
from semisup.kernels import default_gamma, kernel_matrix  # noqa: E402
from semisup.manifold import LapRLS, LapSVM, deformed_kernel  # noqa: E402
from semisup.model_selection import TransductiveGridSearchCV  # noqa: E402

warnings.simplefilter("ignore", GraphWarning)
warnings.filterwarnings("ignore", message="y has no unlabeled rows")

SETS = ("g241c", "g241d", "digit1", "usps", "coil", "bci", "text")
REFERENCE_100 = {  # reference-facts.md (SSL book, ch. 21, 100 labels), test error %
    "SVM": {"g241c": 23.1, "g241d": 24.6, "digit1": 5.5, "usps": 9.8, "coil": 22.9,
            "bci": 34.3, "text": 26.5},
    "TSVM": {"g241c": 18.5, "g241d": 22.4, "digit1": 6.2, "usps": 9.8, "coil": 25.8,
             "bci": 33.3, "text": 24.5},
    "LapRLS": {"g241c": 24.4, "g241d": 26.5, "digit1": 2.9, "usps": 4.7, "coil": 11.9,
               "bci": 31.4, "text": 23.6},
}
FACTORS = (1.0, 2.0, 4.0, 8.0)
LAPLACIANS = (("unnormalized", 1), ("normalized", 2))
RATIOS = (0.1, 1.0, 10.0, 100.0, 1e3, 1e4)
GAMMA_A = (1e-5, 1e-4, 1e-3, 1e-2, 1e-1)
METHODS = ("SVM", "TSVM (linear)", "LapRLS", "LapSVM")
PAPER = ("SVM (paper values)", "LapRLS (paper values)", "LapSVM (paper values)")


# --------------------------------------------------------------------------------------------
# data
# --------------------------------------------------------------------------------------------


def load(name: str):
    """Data, classes, class index of every row, graph, and the 10- and 100-label splits."""
    b = {nl: load_sslbook(name, nl) for nl in (10, 100)}
    X, y = b[100].X, b[100].y
    classes = np.unique(y)
    truth = np.searchsorted(classes, y)
    if name == "text":
        W = adjacency_graph(X, 6, metric="cosine", weight="cosine", warn=False)
    else:
        W = adjacency_graph(X, 6, warn=False)
    return X, y, classes, truth, W, {nl: b[nl].splits for nl in (10, 100)}


def gram(X, name: str, factor: float) -> np.ndarray:
    if name == "text":
        return kernel_matrix(X, kernel="linear")
    return kernel_matrix(X, kernel="rbf", gamma=factor * default_gamma(X))


# --------------------------------------------------------------------------------------------
# fast cross-validation on a (deformed) kernel
# --------------------------------------------------------------------------------------------


def targets(idx: np.ndarray, n_classes: int) -> np.ndarray:
    """+-1 one-vs-rest targets (one column for two classes, as the estimators)."""
    Y = np.where(idx[:, None] == np.arange(n_classes)[None], 1.0, -1.0)
    return Y[:, 1:] if n_classes == 2 else Y


def predict(scores: np.ndarray) -> np.ndarray:
    return (scores[:, 0] > 0).astype(int) if scores.shape[1] == 1 else scores.argmax(1)


def krr_scores(Ktr, Ytr, Kva, ridge):
    return Kva @ np.linalg.solve(Ktr + ridge * np.eye(Ktr.shape[0]), Ytr)


def svm_fit(Ktr, Ytr, C):
    """One SVC per target column (a constant where the labeled rows have one sign only)."""
    models = []
    for j in range(Ytr.shape[1]):
        if np.unique(Ytr[:, j]).size == 1:   # no labeled point of this class (or only it)
            models.append(Ytr[0, j])
            continue
        models.append(SVC(kernel="precomputed", C=C, tol=1e-4).fit(Ktr, Ytr[:, j]))
    return models


def svm_decide(models, Kva):
    return np.column_stack([np.full(Kva.shape[0], m) if np.isscalar(m) else
                            m.decision_function(Kva) for m in models])


def svm_scores(Ktr, Ytr, Kva, C):
    return svm_decide(svm_fit(Ktr, Ytr, C), Kva)


class KernelMachine(ClassifierMixin, BaseEstimator):
    """Kernel ridge ("krr") or SVM ("svm") on a precomputed (deformed) kernel over all rows.

    ``fit(K, y)`` uses the labeled rows (``y != -1``, class indices ``0..n_classes-1``); on
    ``K~ = K (I + r L K)^-1`` this is LapRLS / LapSVM (the unlabeled rows act through the
    graph inside ``K~``), so transductive CV may hide the held-out rows as ``-1``.
    ``gamma_A`` is the RKHS weight: ridge ``gamma_A l``, ``C = 1 / (2 gamma_A l)``.
    """

    def __init__(self, method="krr", gamma_A=1e-3, n_classes=2):
        self.method = method
        self.gamma_A = gamma_A
        self.n_classes = n_classes

    def fit(self, K, y):
        self.lab_ = np.flatnonzero(y != -1)
        l = self.lab_.size
        Ktr, Ytr = K[np.ix_(self.lab_, self.lab_)], targets(y[self.lab_], self.n_classes)
        self.classes_ = np.arange(self.n_classes)
        if self.method == "krr":
            self.coef_ = np.linalg.solve(Ktr + self.gamma_A * l * np.eye(l), Ytr)
        else:
            self.models_ = svm_fit(Ktr, Ytr, 1.0 / (2 * self.gamma_A * l))
        return self

    def decision_function(self, K_rows):
        K_rows = K_rows[:, self.lab_]
        return K_rows @ self.coef_ if self.method == "krr" else svm_decide(self.models_, K_rows)

    def predict(self, K_rows):
        return predict(self.decision_function(K_rows))


def neg_errors(estimator, K_rows, y) -> float:
    """Scorer: minus the number of misclassified held-out rows (summed over folds below)."""
    return -float(np.sum(estimator.predict(K_rows) != y))


def make_folds(splits, truth, loo: bool):
    """Leave-one-out, or 5-fold stratified CV (plain 5-fold if a class has one point).

    ``(train, test)`` row indices of the labeled rows of every split."""
    folds = []
    for s, lab in enumerate(splits):
        smallest = int(np.bincount(truth[lab]).min())
        if loo:
            cv = KFold(lab.size)
        elif smallest >= 2:
            cv = StratifiedKFold(min(5, smallest), shuffle=True, random_state=s)
        else:
            cv = KFold(5, shuffle=True, random_state=s)
        folds.append([(lab[tr], lab[va]) for tr, va in
                      cv.split(np.zeros(lab.size), truth[lab])])
    return folds


def cv_errors(Kt, splits, ys, n_classes, methods, folds_by_split):
    """Validation errors ``[method][split, gamma_A index]`` of KRR / SVM on kernel ``Kt``.

    Transductive CV (``semisup.model_selection.TransductiveGridSearchCV``): every fold
    fits on all rows with its held-out labeled rows relabeled -1."""
    out = {m: np.zeros((len(splits), len(GAMMA_A))) for m in methods}
    for s in range(len(splits)):
        search = TransductiveGridSearchCV(
            KernelMachine(n_classes=n_classes),
            {"method": list(methods), "gamma_A": list(GAMMA_A)},
            cv=folds_by_split[s], scoring=neg_errors, refit=False).fit(Kt, ys[s])
        res = search.cv_results_
        errors = -sum(res[f"split{k}_test_score"] for k in range(search.n_splits_))
        for i, params in enumerate(res["params"]):
            out[params["method"]][s, GAMMA_A.index(params["gamma_A"])] = errors[i]
    return out


# --------------------------------------------------------------------------------------------
# final fits (the estimators)
# --------------------------------------------------------------------------------------------


def fit_lap(cls, K, W, y, gamma_A, ratio, lap, n):
    kind, power = lap
    est = cls(gamma_A=gamma_A, gamma_I=ratio * gamma_A * n ** 2, kernel="precomputed", graph=W,
              laplacian=kind, laplacian_power=power)
    t0 = time.perf_counter()
    est.fit(K, y)
    return est.transduction_, time.perf_counter() - t0


def fit_svm(K, lab, truth, n_classes, gamma_A):
    t0 = time.perf_counter()
    scores = svm_scores(K[np.ix_(lab, lab)], targets(truth[lab], n_classes), K[:, lab],
                        1.0 / (2 * gamma_A * lab.size))
    return predict(scores), time.perf_counter() - t0


def fit_tsvm(X, y):
    t0 = time.perf_counter()
    est = TransductiveSVM(lam=1e-3, lam_u=1.0).fit(X, y)
    return est.transduction_, time.perf_counter() - t0


# --------------------------------------------------------------------------------------------
# one data set
# --------------------------------------------------------------------------------------------


def run_set(name: str, label_sizes, n_splits: int, log) -> dict:
    """Results ``[n_labeled] -> {errors, times, chosen, agree}`` and the wall time."""
    t_start = time.perf_counter()
    X, y_raw, classes, truth, W, all_splits = load(name)
    n, C = truth.size, classes.size
    res = {}
    splits = {nl: all_splits[nl][:n_splits] for nl in label_sizes}
    unl = {nl: [np.setdiff1d(np.arange(n), lab) for lab in splits[nl]] for nl in label_sizes}
    ys = {nl: [partial_labels(y_raw, lab, classes) for lab in splits[nl]] for nl in label_sizes}
    folds = {nl: make_folds(splits[nl], truth, loo=nl == 10) for nl in label_sizes}
    for nl in label_sizes:
        res[nl] = {"errors": {}, "times": {}, "agree": [],
                   "chosen": {m: Counter() for m in ("SVM", "LapRLS", "LapSVM")}}

    def record(nl, method, s, pred, seconds):
        u = unl[nl][s]
        res[nl]["errors"].setdefault(method, []).append(np.mean(pred[u] != truth[u]))
        res[nl]["times"].setdefault(method, []).append(seconds)

    # cross-validation: SVM[(f, gA)], Lap*[(f, lap, r, gA)] -> validation errors per split
    val = {nl: {"SVM": {}, "LapRLS": {}, "LapSVM": {}} for nl in label_sizes}
    kernels = {}
    for f in ((1.0,) if name == "text" else FACTORS):
        K = kernels[f] = gram(X, name, f)
        for nl in label_sizes:
            cv = cv_errors(K, splits[nl], ys[nl], C, ("svm",), folds[nl])
            for g, gA in enumerate(GAMMA_A):
                val[nl]["SVM"][(f, gA)] = cv["svm"][:, g]
        for lap in LAPLACIANS:
            L = laplacian(W, *lap)
            for r in RATIOS:
                Kt = deformed_kernel(K, L, r)
                for nl in label_sizes:
                    cv = cv_errors(Kt, splits[nl], ys[nl], C, ("krr", "svm"), folds[nl])
                    for g, gA in enumerate(GAMMA_A):
                        val[nl]["LapRLS"][(f, lap, r, gA)] = cv["krr"][:, g]
                        val[nl]["LapSVM"][(f, lap, r, gA)] = cv["svm"][:, g]
        log(f"  {name}: f={f:g} cross-validated ({time.perf_counter() - t_start:.0f} s)")

    for nl in label_sizes:
        for s, lab in enumerate(splits[nl]):
            best = {m: min(val[nl][m], key=lambda k, m=m: val[nl][m][k][s]) for m in val[nl]}
            f, gA = best["SVM"]
            record(nl, "SVM", s, *fit_svm(kernels[f], lab, truth, C, gA))
            res[nl]["chosen"]["SVM"][f"f={f:g} gA={gA:g}"] += 1
            for m, cls in (("LapRLS", LapRLS), ("LapSVM", LapSVM)):
                f, lap, r, gA = best[m]
                pred, t = fit_lap(cls, kernels[f], W, ys[nl][s], gA, r, lap, n)
                record(nl, m, s, pred, t)
                res[nl]["chosen"][m][f"f={f:g} {lap[0][:4]}^{lap[1]} r={r:g} gA={gA:g}"] += 1
                if s == 0:  # the estimator against the fast path it was selected on
                    Kt = deformed_kernel(kernels[f], laplacian(W, *lap), r)
                    Ytr = targets(truth[lab], C)
                    fast = krr_scores(Kt[np.ix_(lab, lab)], Ytr, Kt[:, lab], gA * lab.size) \
                        if m == "LapRLS" else svm_scores(Kt[np.ix_(lab, lab)], Ytr, Kt[:, lab],
                                                         1.0 / (2 * gA * lab.size))
                    u = unl[nl][s]
                    res[nl]["agree"].append((m, np.mean(predict(fast)[u] == pred[u])))
            if nl == 10:   # the paper's values, no selection
                l = lab.size
                record(nl, PAPER[0], s, *fit_svm(kernels[1.0], lab, truth, C, 0.05 / l))
                for m, cls in ((PAPER[1], LapRLS), (PAPER[2], LapSVM)):
                    record(nl, m, s, *fit_lap(cls, kernels[1.0], W, ys[nl][s], 0.005 / l, 9.0,
                                              ("unnormalized", 1), n))
            record(nl, "TSVM (linear)", s, *fit_tsvm(X, ys[nl][s]))
        errs = res[nl]["errors"]
        log(f"  {name} ({nl} labels): " + ", ".join(
            f"{m} {100 * np.mean(v):.1f}" for m, v in errs.items()))
    for nl in label_sizes:
        res[nl]["errors"] = {m: 100 * np.asarray(v) for m, v in res[nl]["errors"].items()}
        res[nl]["times"] = {m: float(np.median(v)) for m, v in res[nl]["times"].items()}
    res["wall"] = time.perf_counter() - t_start
    log(f"  {name}: done in {res['wall']:.0f} s")
    return res


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", nargs="+", default=list(SETS), choices=SETS)
    ap.add_argument("--labels", nargs="+", type=int, default=[10, 100], choices=[10, 100])
    ap.add_argument("--splits", type=int, default=12, help="number of official splits used")
    args = ap.parse_args(argv)

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    with Contention() as load_meter:
        results = {name: run_set(name, args.labels, args.splits, log) for name in args.sets}
    sections = [__doc__.split("\n\n", 1)[1].strip()]
    for nl in args.labels:
        methods = [*METHODS, *PAPER] if nl == 10 else list(METHODS)
        rows = []
        for m in methods:
            rows.append([m, *[f"{results[s][nl]['errors'][m].mean():.1f} "
                              f"({results[s][nl]['errors'][m].std():.1f})" for s in args.sets]])
            ref = REFERENCE_100.get(m.split(" ")[0]) if nl == 100 else None
            if ref:
                rows.append([f"{m.split(' ')[0]} (book)", *[f"{ref[s]:.1f}" for s in args.sets]])
        sections.append(f"## {nl} labeled points: mean (std) test error % over "
                        f"{args.splits} splits\n\n" + table(["method", *args.sets], rows))
        trows = [[m, *[f"{1e3 * results[s][nl]['times'][m]:.0f}" for s in args.sets]]
                 for m in methods]
        sections.append(f"Median fit time per split (ms), {nl} labels (the SVM, LapRLS and "
                        "LapSVM fits take the precomputed K (and W), so they exclude the kernel "
                        "and graph):\n\n" + table(["method", *args.sets], trows))
        lines = []
        for s in args.sets:
            r = results[s][nl]
            for m, cnt in r["chosen"].items():
                top = ", ".join(f"{k} (x{v})" for k, v in cnt.most_common(2))
                lines.append(f"- {s} {m}: {top}")
            for m, a in r["agree"]:
                lines.append(f"- {s}: {m} estimator vs the deformed-kernel path it was "
                             f"selected on (split 1): {100 * a:.2f}% identical labels on the "
                             "unlabeled points")
        sections.append(f"Most frequent selected hyper-parameters ({nl} labels; f = RBF width "
                        "factor, r = gamma_I s / gamma_A):\n\n" + "\n".join(lines))
    sections.append("Wall time per data set (s, both label sizes, cross-validation and all "
                    "fits included): " + ", ".join(f"{s} {results[s]['wall']:.0f}"
                                                   for s in args.sets) + ".")
    sections.append(load_meter.line())
    report("bench_sslbook", "SSL-book benchmark: SVM, TSVM, LapRLS, LapSVM", sections)


if __name__ == "__main__":
    main()
