"""Table 3.2 of the thesis (CTSVM) and Fig. 3.1 (time vs n), side by side with the peers.

Transductive accuracy on the unlabeled rows, ``l`` labeled rows drawn per trial with both
classes present.  Hyper-parameters (C and, for RBF, the width among 0.5/1/2 x the default)
are chosen by 3-fold cross-validation of the supervised SVM on the labeled rows only
(:class:`semisup.model_selection.LabeledStratifiedKFold`); CTSVM uses the same kernel and
``C_l = C_u = C`` (the thesis's C_u = C_l).  Linear sets also run ``TransductiveSVM`` and
``DeterministicAnnealingSVM`` with their default parameters (the thesis ran its peers
with their defaults).

    python benchmarks/bench_ctsvm.py --part table --trials 10
    python benchmarks/bench_ctsvm.py --part scale
"""

from __future__ import annotations

import argparse
import bz2
import io
import os
import tarfile
import time

import numpy as np
from _common import fmt, report, table
from bench_defaults import stratified_draw

from semisup.datasets import shared_data_dir
from semisup.kernels import default_gamma, kernel_matrix
from semisup.linear import DeterministicAnnealingSVM, TransductiveSVM
from semisup.model_selection import LabeledStratifiedKFold
from semisup.solvers.svm import fit_precomputed_svm
from semisup.transductive import ConvexTSVM, SDPRelaxedTSVM

THESIS = {"Iono": (78.55, 80.09), "Sonar": (51.76, 67.39), "Banana": (58.45, 79.51),
          "Breast": (96.46, 97.79), "IBM-s": (52.75, 75.25), "Course-s": (63.52, 79.75),
          "WinMac-m": (57.64, 84.82), "IBM-m": (53.00, 73.17), "Course-m": (80.18, 92.92),
          "WinMac-l": (60.86, 91.25), "IBM-l": (61.82, 73.42), "Course-l": (83.56, 94.62)}
# the CTSVM column's standard deviations (thesis Table 3.2, digest §2.8)
THESIS_SD = {"Iono": 2.63, "Sonar": 6.26, "Banana": 3.02, "Breast": 0.23, "IBM-s": 7.49,
             "Course-s": 8.45, "WinMac-m": 2.12, "IBM-m": 0.89, "Course-m": 2.28,
             "WinMac-l": 2.67, "IBM-l": 3.23, "Course-l": 0.97}
SIZE_TAG = {60: "s", 300: "m", 1000: "l"}


def load_uci(name):
    from sklearn.datasets import load_svmlight_file
    d = shared_data_dir() / "uci_small"
    if name == "Iono":
        X, y = load_svmlight_file(str(d / "ionosphere_scale.bz2"), n_features=34)
        return X.toarray(), (y > 0).astype(int), "rbf"
    if name == "Sonar":
        raw = bz2.open(d / "sonar.csv.bz2", "rt").read().strip().splitlines()
        X = np.array([[float(v) for v in r.split(",")[:-1]] for r in raw])
        y = np.array([r.split(",")[-1] == "M" for r in raw]).astype(int)
        return X, y, "rbf"
    if name == "Breast":
        X, y = load_svmlight_file(str(d / "breast-cancer_scale.bz2"), n_features=10)
        X, y = X.toarray()[:, 1:], (y > 0).astype(int)
        idx = np.random.default_rng(0).choice(len(y), 300, replace=False)   # thesis: n = 300
        return X[idx], y[idx], "linear"
    if name == "Banana":
        tf = tarfile.open(shared_data_dir() / "ida_benchmarks" / "ida_benchmarks_10splits.tar.xz")
        def arr(member):
            return np.loadtxt(io.TextIOWrapper(tf.extractfile(member)))
        X = arr("ida_benchmarks/banana/banana_train_data_1.asc")
        y = arr("ida_benchmarks/banana/banana_train_labels_1.asc")
        idx = np.random.default_rng(0).choice(len(y), 400, replace=False)    # thesis: n = 400
        return X[idx], (y[idx] > 0).astype(int), "rbf"
    raise KeyError(name)


def _newsgroups(groups):
    """Raw posts of the given 20NG groups (train + test of the bydate split)."""
    tf = tarfile.open(shared_data_dir() / "20newsgroups_bydate" / "20news-bydate.tar.xz")
    docs, labels = [], []
    for m in tf.getmembers():
        parts = m.name.split("/")
        if m.isfile() and len(parts) == 3 and parts[1] in groups:
            docs.append(tf.extractfile(m).read().decode("latin-1"))
            labels.append(parts[1])
    return docs, np.array(labels)


def load_text(name, n, seed=0, balanced=False, max_features=None):
    """WinMac (ms-windows.misc vs mac.hardware), IBM (ibm.pc.hardware vs the other comp.*
    groups), Course (WebKB course vs non-course page text), Coursei (the same pages' inlinks
    view, the anchor text of the links to them); TF-IDF, ``n`` random rows.

    ``balanced``: ``n // 2`` random rows of the positive class and ``n - n // 2`` of the
    negative one (IBM is 20 % ibm.pc.hardware; the thesis's SVM at 53-62 % on IBM implies a
    balanced sample).  ``max_features``: one TF-IDF vocabulary for the whole corpus, its
    ``max_features`` most frequent terms (Table 3.1's d), fitted before sampling."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    if name == "WinMac":
        docs, g = _newsgroups({"comp.os.ms-windows.misc", "comp.sys.mac.hardware"})
        y = (g == "comp.sys.mac.hardware").astype(int)
    elif name == "IBM":
        docs, g = _newsgroups({"comp.graphics", "comp.os.ms-windows.misc",
                               "comp.sys.ibm.pc.hardware", "comp.sys.mac.hardware",
                               "comp.windows.x"})
        y = (g == "comp.sys.ibm.pc.hardware").astype(int)
    elif name in ("Course", "Coursei"):
        view = "fulltext" if name == "Course" else "inlinks"
        tf = tarfile.open(shared_data_dir() / "webkb_course_cotrain" /
                          "course-cotrain-data.tar.xz")
        docs, y = [], []
        for m in tf.getmembers():
            parts = m.name.split("/")
            if m.isfile() and len(parts) == 4 and parts[1] == view:
                docs.append(tf.extractfile(m).read().decode("latin-1"))
                y.append(parts[2] == "course")
        y = np.array(y, dtype=int)
    else:
        raise KeyError(name)
    if name == "Coursei":
        # inlinks (anchor-text) view, one vocabulary for the whole corpus (Table 3.1's d is
        # the same for every Course size: 1,800; this view has 1,991 terms, the page text
        # 26,406), then the n-row subsample
        X = TfidfVectorizer(sublinear_tf=True, stop_words="english").fit_transform(docs)
        idx = np.random.default_rng(seed).choice(len(y), min(n, len(y)), replace=False)
        return X.tocsr()[idx], y[idx]
    rng = np.random.default_rng(seed)
    X_all = None
    if max_features is not None:
        X_all = TfidfVectorizer(sublinear_tf=True, stop_words="english",
                                max_features=max_features).fit_transform(docs).tocsr()
    if balanced:
        pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
        idx = rng.permutation(np.r_[rng.choice(pos, n // 2, replace=False),
                                    rng.choice(neg, n - n // 2, replace=False)])
    else:
        idx = rng.choice(len(y), min(n, len(y)), replace=False)
    if X_all is not None:
        return X_all[idx], y[idx]
    X = TfidfVectorizer(sublinear_tf=True, min_df=2, stop_words="english").fit_transform(
        [docs[i] for i in idx])
    return X.tocsr(), y[idx]


def run_text(specs, trials, offset="none", cv=False):
    rows = []
    for name, n, l in specs:
        X, y = load_text(name, n)
        res = {k: [] for k in ("SVM", "TSVM", "DA", "CTSVM", "CTSVM+TSVM", "C", "t")}
        for trial in range(trials):
            lab = draw(y, l, trial)
            ys = np.full(y.size, -1)
            ys[lab] = y[lab]
            unl = ys == -1
            # C by 3-fold CV of the supervised SVM on the labeled rows (LabeledStratifiedKFold)
            C = select_svm(X, ys, "linear")[0] if cv else 10.0
            res["C"].append(C)
            Kl = (X[lab] @ X.T).toarray()
            svm = fit_precomputed_svm(Kl[:, lab], np.where(y[lab] == 1, 1.0, -1.0), C)
            res["SVM"].append(np.mean((svm.decision_function(Kl.T) > 0)[unl] == y[unl]))
            t = time.perf_counter()
            # one fit: sign(relaxed scores) is the plain rounding, transduction_ its TSVM
            # refinement (refine='tsvm', started from the rounded labels)
            est = ConvexTSVM(C_l=C, kernel="linear", solver="lowrank", offset=offset,
                             refine="tsvm", fallback="none").fit(X, ys)
            res["t"].append(time.perf_counter() - t)
            res["CTSVM"].append(np.mean((est.relaxed_scores_[unl] >= 0) == (y[unl] == 1)))
            res["CTSVM+TSVM"].append(np.mean(est.transduction_[unl] == y[unl]))
            for key, cls in (("TSVM", TransductiveSVM), ("DA", DeterministicAnnealingSVM)):
                # their defaults as published, as the thesis ran its peers
                m = cls(fallback="none").fit(X, ys)
                res[key].append(np.mean(m.transduction_[unl] == y[unl]))

        def ms(key, res=res):
            v = 100 * np.array(res[key])
            return f"{v.mean():.2f} ± {v.std():.2f}" if v.size else "-"
        th = THESIS.get(f"{name}-{SIZE_TAG.get(n, '?')}", (None, None))
        rows.append([f"{name} n={n} l={l}", X.shape[1], ",".join(fmt(c) for c in res["C"]),
                     ms("SVM"), ms("TSVM"), ms("DA"), ms("CTSVM"), ms("CTSVM+TSVM"),
                     f"{th[0]} / {th[1]}", fmt(float(np.median(res["t"])))])
        print(rows[-1], flush=True)
    c_rule = ("C (SVM and CTSVM, C_u = C_l) by 3-fold CV of the supervised SVM on the "
              "labeled rows (LabeledStratifiedKFold, C in 0.1/1/10/100)" if cv else
              "C = 10 for SVM and CTSVM")
    return [f"Text sets (TF-IDF, linear kernel; {c_rule}; TSVM/DA with their defaults; "
            f"CTSVM offset={offset}; IBM = comp.sys.ibm.pc.hardware vs the four other comp.* "
            "groups). CTSVM by the low-rank route on the sparse features (no n x n matrix); "
            "'+TSVM' is the multi-switch TSVM started from CTSVM's sign-rounded labels "
            "(refine='tsvm'); the time includes it.",
            table(["set", "d", "C per trial", "SVM", "TSVM", "DA", "CTSVM (low-rank, sign)",
                   "CTSVM + TSVM refine", "thesis SVM / CTSVM", "CTSVM median s"], rows)]


def draw(y, l, seed):
    rng = np.random.default_rng(seed)
    while True:
        lab = rng.choice(y.size, l, replace=False)
        if np.unique(y[lab]).size == 2 and min(np.bincount(y[lab])) >= 2:
            return lab


def select_svm(X, y_semi, kern):
    """3-fold CV of the supervised SVM on the labeled rows: (C, gamma)."""
    g0 = default_gamma(X) if kern == "rbf" else None
    gammas = [g0 * f for f in (0.5, 1.0, 2.0)] if kern == "rbf" else [None]
    best, best_acc = None, -1.0
    cv = LabeledStratifiedKFold(3, shuffle=True, random_state=0)
    for g in gammas:
        K = kernel_matrix(X, kernel=kern, gamma=g)
        for C in (0.1, 1.0, 10.0, 100.0):
            accs = []
            for tr, te in cv.split(X, y_semi):
                tr = tr[y_semi[tr] != -1]
                ys = np.where(y_semi[tr] == 1, 1.0, -1.0)
                m = fit_precomputed_svm(K[np.ix_(tr, tr)], ys, C)
                accs.append(np.mean((m.decision_function(K[np.ix_(te, tr)]) > 0)
                                    == (y_semi[te] == 1)))
            if np.mean(accs) > best_acc + 1e-12:
                best, best_acc = (C, g), float(np.mean(accs))
    return best


# ------------------------------------------------------------- CTSVM's own model selection
C_GRID = (100.0, 10.0, 1.0, 0.1)     # descending: GridSearchCV breaks ties by grid order
ROW_SPEC = {"s": (60, 10), "m": (300, 20), "l": (1000, 50)}


def select_ctsvm(X, y_semi, kern, gamma, offset, tol=1e-3, folds=3, gammas=None,
                 rounding="sign", counts=None):
    """C_l (= C_u) of CTSVM by 3-fold CV of CTSVM itself on the labeled rows.

    :class:`~semisup.model_selection.LabeledStratifiedKFold` keeps every unlabeled row in
    every training fold; a held-out labeled row is scored by the fitted model's
    out-of-sample rule (``decision_function``, the kernel expansion).  The folds are solved
    at ``tol=1e-3`` (only the ranking of the C values is needed).  Ties (frequent with 3-7
    held-out rows per fold) go to the larger C, because a small C lets the regulariser
    dominate the relaxation, which then ignores the few labels and returns one class.
    ``gammas`` (RBF): the width is searched jointly with C (ties, after C, to the first
    width listed).  ``rounding``: that of the CV's fits (``'balanced'`` shifts their
    decision function by ``threshold_``).  Returns ``(C, gamma, cv_scores)``; ``counts``
    (a dict), when given, receives ``'cv_fits'`` and ``'cv_capped'`` (fits that stopped at
    the low-rank route's round limit, counted from their ConvergenceWarning).
    """
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.model_selection import GridSearchCV

    from semisup.model_selection import labeled_scorer
    grid = {"C_l": list(C_GRID)}      # ParameterGrid: C_l outer, gamma inner
    if gammas is not None:
        grid["gamma"] = list(gammas)
    search = GridSearchCV(
        ConvexTSVM(kernel=kern, gamma=gamma, solver="lowrank", offset=offset, tol=tol,
                   rounding=rounding, fallback="none"),
        grid, cv=LabeledStratifiedKFold(folds, shuffle=True, random_state=0),
        scoring=labeled_scorer("accuracy"), refit=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        warnings.filterwarnings("ignore", "The least populated", UserWarning)
        search.fit(X, y_semi)
    if counts is not None:
        counts["cv_fits"] = len(search.cv_results_["params"]) * folds
        counts["cv_capped"] = sum(issubclass(w.category, ConvergenceWarning)
                                  and "low-rank route stopped" in str(w.message) for w in caught)
    scores = search.cv_results_["mean_test_score"]
    return (float(search.best_params_["C_l"]), search.best_params_.get("gamma", gamma),
            [float(v) for v in scores])


PROTOCOLS_V2 = ("v2", "v3", "v4", "v5", "v6")  # v3 = v2 + balanced rounding; v4 = v3 +
# Table 3.1's d; v5 = v4 + the learned bias (offset 'none', rounding 'prior'), no refine,
# peers of v4; v6 = v5 with stratified labeled draws, peers on the same draws
LEARNED_BIAS = ("v5", "v6")
TABLE31_D = {"WinMac": 7511, "IBM": 11960, "Course": 1800}
V2_FOLDS = 5          # the thesis: "RBF width chosen by 5-fold CV on the labeled data"
V2_WIDTHS = (1.0, 0.5, 2.0)   # x default_gamma; ties go to the default width (listed first)


def _row_data(row, select):
    """``(X, y, kernel, l, offset)`` of a Table 3.2 row.  Protocols v2 and v3: IBM-* is the
    balanced sample, IBMu-* the unbalanced one (the only IBM of the older protocols)."""
    if "-" in row:
        name, tag = row.split("-")
        n, l = ROW_SPEC[tag]
        balanced = select in PROTOCOLS_V2 and name == "IBM"
        X, y = load_text("IBM" if name == "IBMu" else name, n, balanced=balanced,
                         max_features=TABLE31_D.get(name)
                         if select in ("v4", *LEARNED_BIAS) else None)
        return X, y, "linear", l, "prior"
    X, y, kern = load_uci(row)
    return X, y, kern, 20, "none"


def run_rows(rows, trials, select, jsonl):
    """Table 3.2 rows with C chosen for CTSVM itself; one JSON line per (row, trial).

    Resumable: trials already in ``jsonl`` are skipped.  UCI rows (offset 'none') and text
    rows ('IBM-s' etc., offset 'prior', TF-IDF, linear).  ``select``: 'svm' (C of CTSVM =
    the supervised SVM's), 'ctsvm' (C by 3-fold CV of CTSVM, RBF width from the SVM's CV)
    or 'v2' (C and, on the RBF rows, the width by 5-fold CV of CTSVM itself; balanced IBM)
    or 'v3' (v2 with ``rounding='balanced'`` in the CV and the final fit).
    """
    import json
    done = set()
    if os.path.exists(jsonl):
        with open(jsonl) as fh:
            for line in fh:
                r = json.loads(line)
                if r.get("select") == select:
                    done.add((r["row"], r["trial"]))
    for row in rows:
        X, y, kern, l, offset = _row_data(row, select)
        for trial in range(trials):
            if (row, trial) in done:
                continue
            lab = stratified_draw(y, l, trial) if select == "v6" else draw(y, l, trial)
            ys = np.full(y.size, -1)
            ys[lab] = y[lab]
            unl = ys == -1
            rec = dict(row=row, trial=trial, select=select, load=os.getloadavg()[0],
                       n=int(y.size), pos=float(np.mean(y)))
            t, c = time.perf_counter(), time.process_time()
            C_svm, g = select_svm(X, ys, kern)
            K = kernel_matrix(X, X[lab], kernel=kern, gamma=g)
            K = K.toarray() if hasattr(K, "toarray") else np.asarray(K)
            svm = fit_precomputed_svm(K[lab], np.where(y[lab] == 1, 1.0, -1.0), C_svm)
            rec["SVM"] = float(np.mean((svm.decision_function(K) > 0)[unl] == y[unl]))
            rounding = {"v3": "balanced", "v4": "balanced", "v5": "prior",
                        "v6": "prior"}.get(select, "sign")
            if select in LEARNED_BIAS:
                offset = "none"       # the learned bias replaces the fixed offset
            if select in PROTOCOLS_V2:
                gammas = ([default_gamma(X) * f for f in V2_WIDTHS] if kern == "rbf"
                          else None)
                counts = {}
                C, g_ct, rec["cv_scores"] = select_ctsvm(X, ys, kern, g, offset,
                                                         folds=V2_FOLDS, gammas=gammas,
                                                         rounding=rounding, counts=counts)
                rec.update(counts)
            elif select == "ctsvm":
                C, g_ct, rec["cv_scores"] = select_ctsvm(X, ys, kern, g, offset)
            else:
                C, g_ct = C_svm, g
            rec.update(C_svm=C_svm, C=C, gamma_svm=g, gamma=g_ct,
                       width=g_ct / default_gamma(X) if kern == "rbf" else None,
                       t_select=time.perf_counter() - t, cpu_select=time.process_time() - c)
            t, c = time.perf_counter(), time.process_time()
            est = ConvexTSVM(C_l=C, kernel=kern, gamma=g_ct, solver="lowrank", offset=offset,
                             refine="none" if select in LEARNED_BIAS else "tsvm",
                             rounding=rounding, fallback="none").fit(X, ys)
            rec["n_outer"] = est.n_iter_
            rec["t_ctsvm"] = time.perf_counter() - t
            rec["cpu_ctsvm"] = time.process_time() - c
            z_u = est.relaxed_scores_[unl]
            # the protocol's rounding (sign: threshold_ = 0); 'CTSVM-sign' is eq. 3.7's
            rec["CTSVM-sign"] = float(np.mean((z_u >= 0) == (y[unl] == 1)))
            rec["threshold"] = est.threshold_
            rec["CTSVM"] = (rec["CTSVM-sign"] if est.threshold_ == 0.0 else
                            float(np.mean((z_u > est.threshold_) == (y[unl] == 1))))
            if select not in LEARNED_BIAS:
                rec["CTSVM+TSVM"] = float(np.mean(est.transduction_[unl] == y[unl]))
            lead = est._leading_vector(lab, np.where(y[lab] == 1, 1.0, -1.0))
            rec["CTSVM-eig"] = float(np.mean((lead[unl] >= 0) == (y[unl] == 1)))
            rec["converged"] = est.fit_results_["status"] == "converged"
            if kern == "linear" and select == "v5":
                rec.update(v4_peers(row, trial, jsonl))
            elif kern == "linear":
                for key, cls in (("TSVM", TransductiveSVM), ("DA", DeterministicAnnealingSVM)):
                    # their defaults as published (the guard came after these protocols)
                    m = cls(fallback="none").fit(X, ys)
                    rec[key] = float(np.mean(m.transduction_[unl] == y[unl]))
            with open(jsonl, "a") as fh:
                fh.write(json.dumps(rec) + "\n")
            print(rec, flush=True)
    return rows_report(rows, select, jsonl)


def v4_peers(row, trial, jsonl):
    """TSVM and DA of protocol v4 on the same row and draw (v5 changes CTSVM only)."""
    import json
    path = os.path.join(os.path.dirname(jsonl), "ctsvm_rows_v4.jsonl")
    if os.path.exists(path):
        for line in open(path):
            r = json.loads(line)
            if r.get("select") == "v4" and r["row"] == row and r["trial"] == trial:
                return {k: r[k] for k in ("TSVM", "DA") if k in r}
    return {}


def _thesis_row(row):
    """The Table 3.2 row that a row of ours stands for (IBMu: unbalanced IBM; Coursei: the
    inlinks view of Course)."""
    return row.replace("IBMu", "IBM").replace("Coursei", "Course")


# protocol v2: second row sets, reported but not counted (the counted Course rows are the
# inlinks view 'Coursei-*', the counted IBM rows the balanced sample 'IBM-*')
V2_SECONDARY = ("IBMu-s", "IBMu-m", "IBMu-l", "Course-s", "Course-m", "Course-l")


V2_NOTES = """## How the table was filled

`OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 NUMBA_NUM_THREADS=1 nice -n 5
python benchmarks/bench_ctsvm.py --part rows --select v2 --trials 10 --rows <chunk>` in
chunks of 2-11 minutes (resumable: `ctsvm_rows_v2.jsonl`, one line per row and trial, with
the load average and wall/CPU seconds of the selection and of the fit); machine load 3-7
(2 cores shared with other work).  The 12 counted rows were run twice: before and after
merging main's 972c86b (low-rank route: Barvinok-Pataki rank cap instead of 20, growing
escape blocks); all 120 trials gave identical C, width and accuracies
(`ctsvm_rows_v2_pre972c86b.jsonl` keeps the first run).  The second row sets were run once,
before that merge, except IBMu-l (after it); the page-text Course-l was not run under v2 (its
previous-protocol result, 6 trials: -3.76, is in `ctsvm_rows_ctsvm.md`).

## The decisions of v2 and the misses

Decided before the v2 results (1-5 at 14:19 UTC before any v2 fit; 6 at 14:33 UTC, after the
Iono..Course-s rows of v2 but before any Course-m/-l or inlinks result), applied to every row:
1. IBM = balanced sample: the thesis's SVM at 53-62 % cannot come from a 20 %-positive sample
   (our SVM there: 78.7-82.6 %).  Confirmed by the SVM alone: 54.0 / 55.5 / 66.2 % on the
   balanced IBM-s/m/l against the thesis's 52.75 / 53.00 / 61.82.
2. 5-fold CV of CTSVM itself (the thesis's stated fold count) for C, and jointly for the RBF
   width (grid of the supervised SVM's CV: 1, 0.5, 2 x default_gamma).
3. Breast: unchanged.  Wisconsin original, 683 x 9 (ID column dropped), random 300, linear:
   the only set with d = 9 and a 96 % SVM (IDA breast-cancer, d = 9, n = 277, is the
   Ljubljana set with SVMs near 70 %).  Scaling: the LIBSVM [-1, 1] features equal the raw
   1..10 values up to one global affine map; z-scoring gave the SVM 90.75 ± 6.81 against
   92.93 ± 3.30, further from the thesis's 96.46, so [-1, 1] is kept.
4. Rounding: sign(w_u), the thesis's eq. 3.7, for every row.  The eigenvector rounding and
   the TSVM refinement of the same fit are shown for information only.
5. Course-s: not chased.
6. Course = the inlinks view: Table 3.1 gives d = 1,800 for every Course size, so one
   vocabulary for the whole corpus; the page text has 26,406 terms (11,407 with min_df 2,
   4,838 with min_df 5), the inlinks view 1,991.  The page-text rows are kept as a second,
   uncounted row set.

Misses (CTSVM minus thesis):
- Iono +4.38: our SVM is +5.50 over the thesis's on the same rows (84.05 vs 78.55); CTSVM
  adds +0.4 to it (thesis +1.5).  The previous protocol's +1.81 came from the SVM's width;
  CTSVM's own CV picked another width in 3 of 10 trials and gained 2.6 points.
- Sonar -4.52: CTSVM gains +8.0 over our SVM (thesis +15.6).  The CV spreads C over 1/10/100
  (61.7 / 64.0 / 62.9 % by chosen C) and takes the narrow width in 6 trials; the previous
  protocol's 64.57 was -2.82.
- Banana -6.17 (previous -9.83): the joint width CV gained 3.7 points.  Our SVM is +11.6 over
  the thesis's (70.00 vs 58.45) while our CTSVM is 6.2 under: the thesis's banana (d = 4 in
  Table 3.1; the IDA banana is 2-D) is not the one we have.  5 of 10 fits stopped at the
  low-rank route's 200-round limit without the certificate.
- Breast -5.40: the SVM is also 3.5 under the thesis.  In 4 of 10 trials the CV ties on every
  C (held-out scores 0.9/0.9/0.9/0.9 or 1.0 x 4) and the tie rule takes C = 100: 90.5 % at
  C = 100 (6 trials) against 95.0 % at C = 1 (3 trials).  Trial 1 fails for SVM and CTSVM alike
  (84.6 / 79.3 %).
- IBM-s -13.85: the balanced data is confirmed by the SVM (54.0 vs 52.75); our peers also stay
  at 60-64 % (TSVM 63.6, DA 60.4) where the thesis's are at 65.6-67.6; CTSVM 61.4 is level with
  them, while the thesis's CTSVM is 8-10 points over its own peers.  With 10 labels the 5-fold
  CV holds out 2 rows per fold and chooses C by noise (72.0 % at C = 1, 58.3 % at C = 100).
- IBM-m -10.99: the CV chose C = 0.1 in 5 of 10 trials (held-out scores 0.5-0.7, chance
  level).  At C = 0.1 the unlabeled slack is cheap, w_u shrinks towards 0 and the 'prior'
  offset puts every unlabeled row in the labeled majority class (49 % in 4 of those trials).
  The 5 trials with C >= 1 average 71.8 % (thesis 73.17).
- IBM-l +2.11: just outside; our SVM is +4.4 over the thesis's.
- Coursei-m -10.71, Coursei-l -9.03: the inlinks view is poorer than the thesis's Course
  features: our peers on it reach 82.2 / 84.0 (-m) and 88.0 / 87.6 (-l) (TSVM / DA) where the
  thesis's peers reach 88.8-93.9 and 91.3-93.6.  On the page text the peers match the thesis's
  (DA 90.5 on -m) but CTSVM misses as well (Course-m -6.13 below), so the thesis's
  Course-m/-l were probably page text with some 1,800-term selection we cannot reconstruct.
  Counting the page-text rows instead would not add a hit (Course-s +10.85, Course-m -6.13,
  Course-l -3.76 under the previous protocol).
- Course-s (page text, uncounted) +10.85: our page-text features are easier (our SVM 83.2
  vs the thesis's 63.5).  The inlinks view of decision 6 brings it to -0.95 (hit).
"""


V4_SECONDARY = ("IBMu-s", "IBMu-m", "IBMu-l", "Coursei-s", "Coursei-m", "Coursei-l")

V4_NOTES = """## Protocol v4

Decided at 17:12 UTC on 2026-11-23, before any v4 fit, after v3's results: v3 with one change
to the text rows' features.  Table 3.1 gives one dimension per corpus, the same at every
size (WinMac 7,511, IBM 11,960, Course 1,800), so the thesis's text sets had one vocabulary
per corpus; v2/v3 fitted TF-IDF on each n-row sample (min_df 2), which gives another d at
every size.  v4 fits TF-IDF (sublinear tf, English stop words) once on the whole corpus
(WinMac: its two groups; IBM: the five comp.* groups; Course: the 1,051 pages' text) keeping
the d most frequent terms, then draws the rows as before (IBM balanced).  Course is the page
text again (v2 took the anchor-text view only because its size was near 1,800); the anchor-text
rows (Coursei-*) are not rerun.  UCI rows: as v3.

Run: `OMP_NUM_THREADS=1 ... nice -n 5 python benchmarks/bench_ctsvm.py --part rows --select
v4 --trials 10 --rows IBM-s,IBM-m,Course-s,Course-m,WinMac-m,IBM-l,Course-l,WinMac-l,Breast,
Sonar,Iono,Banana` in one go (17:24-17:53 UTC, load 2; `ctsvm_rows_v4.jsonl`), then
`--report-only` for this file.  The UCI rows came out identical to v3 (same code path).

Result: 2 of 12 rows within 2 points (v3: 4): WinMac-m -0.53, WinMac-l -0.60; IBM-l misses by
0.03 (+2.03).  The corpus vocabularies do not bring CTSVM closer on IBM (-s -14.65, -m -7.49).
On Course page text with 1,800 terms our peers now match the thesis's (-l: TSVM 92.79, DA
93.07 against its 91.3-93.6) while CTSVM stays 6.3 points under (88.37 against 94.62; the
eigenvector rounding of the same fits 91.23): on those rows the gap is CTSVM's, not the
features'.  Course-s (+10.65) is easier than the thesis's, as before.  v3 stays the protocol
of record.
"""


V3_NOTES = """## Protocol v3

Decided at 16:32 UTC on 2026-11-23, before any v3 fit, after reading only v2's results: v2
with one change, ``ConvexTSVM(rounding='balanced')`` in the CV and in the final fit.  Why:
under v2 the CV chose C = 0.1 in 5 of 10 IBM-m trials, where the relaxed scores all sit near
the 'prior' offset and the sign rounding puts every unlabeled row in one class (49 %), a
labeling that violates the model's own balance constraint (eq. 3.5).  The balanced rounding
keeps the signs whenever they satisfy it.  Rows, trials, draws, grids and data as v2.

Run: `OMP_NUM_THREADS=1 ... nice -n 5 python benchmarks/bench_ctsvm.py --part rows --select
v3 --trials 10 --rows IBM-m,IBM-s,IBM-l,Iono,Sonar,Breast,Coursei-s,Coursei-m,Coursei-l,
WinMac-m,WinMac-l,Banana` in one go (16:33-16:59 UTC, load 2; `ctsvm_rows_v3.jsonl`), then
`--report-only` for this file.

Result: 4 of 12 rows within 2 points (v2: 3).
- The threshold moved in 10 of 120 final fits (column 'shifted').  Against the sign rounding
  of the same fit: IBM-l +5.0 (4 shifted), IBM-m +1.7 (3), Breast -0.1 (2), Coursei-s -0.8
  (1).  It is no free gain: where the labeled draw's balance misstates the unlabeled one
  (Breast, Coursei-s), moving rows into the minority class costs accuracy.  So `rounding`
  stays 'sign' by default (eq. 3.7) and 'balanced' is an option.
- The CV picks changed in 6 of 120 trials: IBM-m trial 0 (C 0.1 -> 100; 49.3 -> 74.6 %),
  IBM-l trials 6, 7, 9 (100 -> 0.1; 77.2, 76.6, 68.8 -> 74.4, 71.6, 64.9 %), Coursei-s
  trials 1, 6 (100 -> 10; 78 -> 78, 76 -> 70 %).
- IBM-l counts as a hit now (+1.04, was +2.11), but because CTSVM got worse (75.53 -> 74.46):
  the balanced rounding made C = 0.1 look better in the CV of three trials, which then lost
  accuracy.  IBM-m -6.74 (was -10.99): its four C = 0.1 trials reach 54-66 % instead of
  49-66 %, still below its C >= 1 trials (56-77 %).
- Unchanged misses (same C, same labels as v2): Iono +4.38, Sonar -4.52, Banana -6.17,
  IBM-s -13.85, Coursei-m -10.71, Coursei-l -9.03; Breast -5.50 (was -5.40).  Their causes
  are in `ctsvm_rows_v2.md`: baselines that differ from the thesis's on the same rows (our SVM
  Iono +5.5, Banana +11.6, Breast -3.5 points), a 2-D banana where Table 3.1 says d = 4,
  Course features we cannot rebuild (1,800 terms), and 10-label CV that picks C by noise.
"""


def rows_report(rows, select, jsonl):
    """Markdown table of the JSON lines of ``run_rows`` (mean ± std over trials)."""
    import json
    if select in LEARNED_BIAS:
        return rows_report_v5(rows, jsonl, select)
    recs = [json.loads(line) for line in open(jsonl)]
    recs = [r for r in recs if r.get("select") == select]
    v2 = select in PROTOCOLS_V2
    secondary = (V4_SECONDARY if select == "v4" else V2_SECONDARY) if v2 else ()
    prev = {}
    # the previous protocol: v3's is v2 (same data), v2's is 'ctsvm' (IBMu/Course data)
    prev_sel = {"v2": "ctsvm", "v3": "v2", "v4": "v3"}.get(select)
    prev_path = os.path.join(os.path.dirname(jsonl), f"ctsvm_rows_{prev_sel}.jsonl")
    if prev_sel and os.path.exists(prev_path):
        for line in open(prev_path):
            r = json.loads(line)
            if r.get("select") == prev_sel:
                prev.setdefault(r["row"], []).append(r["CTSVM"])
    out, out2, hits, n_thesis = [], [], 0, 0
    for row in rows:
        rs = sorted((r for r in recs if r["row"] == row), key=lambda r: r["trial"])
        if not rs:
            continue

        def ms(key, rs=rs):
            v = 100 * np.array([r[key] for r in rs if key in r])
            return f"{v.mean():.2f} ± {v.std():.2f}" if v.size else "-"
        th = THESIS[_thesis_row(row)]
        mean_ct = 100 * np.mean([r["CTSVM"] for r in rs])
        diff = mean_ct - th[1]
        hit = abs(diff) <= 2
        if row not in secondary:
            hits += hit
            n_thesis += 1
        cells = [row, len(rs), ",".join(fmt(r["C"]) for r in rs)]
        if v2:
            cells.append(",".join(f"{r['width']:g}" if r.get("width") else "-" for r in rs)
                         if "-" not in row else "-")
        # the previous protocol's row on the same data (balanced IBM, Coursei: new data)
        old = (prev.get(row) if select in ("v3", "v4") else
               prev.get(row.replace("IBMu", "IBM") if row[:4] != "IBM-" else None))
        prev_cell = [f"{100 * np.mean(old):.2f} ({len(old)})" if old else "-"] if v2 else []
        sign_cell = ([ms("CTSVM-sign"), sum(r.get("threshold", 0.0) != 0.0 for r in rs)]
                     if select in ("v3", "v4") else [])
        (out2 if row in secondary else out).append(
            [*cells, ms("SVM"), ms("TSVM"), ms("DA"), ms("CTSVM"), *sign_cell, ms("CTSVM-eig"),
             ms("CTSVM+TSVM"), *prev_cell, f"{th[0]} / {th[1]}", f"{diff:+.2f}",
             "hit" if hit else "miss", fmt(float(np.median([r["t_ctsvm"] for r in rs]))),
             sum(not r["converged"] for r in rs)])
    if v2:
        rule = (f"Protocol {select}: C_l = C_u of CTSVM by 5-fold CV of CTSVM itself "
                "(LabeledStratifiedKFold, unlabeled rows in every training fold, C in "
                "100/10/1/0.1, ties to the larger C, folds at tol 1e-3); on the RBF rows (Iono, "
                "Sonar, Banana) the width is searched jointly in that CV (gamma = 1, 0.5, 2 x "
                "default_gamma, ties to the default; column 'width' = CTSVM's gamma / "
                "default_gamma); IBM-* = balanced sample (n/2 comp.sys.ibm.pc.hardware, n/2 "
                "from the four other comp.* groups); Coursei-* = WebKB's inlinks view (anchor "
                "text, TF-IDF fitted once on all 1,051 pages: d = 1,991, Table 3.1: 1,800)"
                + ("; text rows: one TF-IDF vocabulary per corpus of Table 3.1's d most "
                   "frequent terms (WinMac 7,511, IBM 11,960, Course 1,800: page text), fitted "
                   "before sampling; " if select == "v4" else "; ")
                + ("sign rounding (the thesis's eq. 3.7)" if select == "v2" else
                   "balanced rounding (ConvexTSVM(rounding='balanced'): sign(w_u - t), t = 0 "
                   "unless the signs break eq. 3.5's balance |mean(y_l) - mean(y_u)| <= "
                   "epsilon, then the smallest t that restores it; in the CV and the final fit; "
                   "'CTSVM (sign)' is eq. 3.7's rounding of the same final fit, 'shifted' the "
                   "trials with t != 0)")
                + "; 'eigenvector' and 'TSVM refine' are the other roundings of the same fit, "
                "for information")
    elif select == "ctsvm":
        rule = ("C_l = C_u of CTSVM by 3-fold CV of CTSVM itself (LabeledStratifiedKFold, "
                "unlabeled rows in every training fold, C in 100/10/1/0.1, ties to the larger "
                "C, folds at tol 1e-3); RBF width (Iono, Sonar, Banana) by the supervised-SVM "
                "CV")
    else:
        rule = ("C by 3-fold CV of the supervised SVM on the labeled rows; RBF width by the "
                "same CV")
    head = ["row", "trials", "C per trial"] + (["width per trial"] if v2 else [])
    head += ["SVM", "TSVM", "DA",
             *(["CTSVM (balanced)", "CTSVM (sign)", "shifted"] if select in ("v3", "v4")
               else ["CTSVM (sign)"]), "CTSVM (eigenvector)", "CTSVM + TSVM refine",
             *(["CTSVM, previous protocol (trials)"] if v2 else []),
             "thesis SVM / CTSVM", "CTSVM - thesis", "verdict", "CTSVM median s",
             "not converged"]
    sections = [f"{rule}; supervised SVM with its own 3-fold CV-chosen C (and RBF width); "
                "offset 'none' (UCI) / 'prior' (text); text rows: TF-IDF, linear kernel, n = "
                "60/300/1000 with l = 10/20/50 (-s/-m/-l); TSVM/DA (semisup.linear) with their "
                "defaults on the linear sets.  **Within 2 points of the thesis: "
                f"{hits} of {n_thesis} rows.**", table(head, out)]
    if out2:
        sections += ["Second row sets, same protocol, not counted: IBMu-* = the unbalanced IBM "
                     "sample (20 % ibm.pc.hardware, the earlier protocols' IBM); Course-* = "
                     "WebKB page text (TF-IDF fitted on each n-row sample, the earlier "
                     "protocols' Course).", table(head, out2)]
    if select == "v2":
        sections += ["'CTSVM, previous protocol': `ctsvm_rows_ctsvm.md` (C by 3-fold CV of "
                     "CTSVM, RBF width by the SVM's CV), same rows and labeled draws; '-' where "
                     "v2 changed the data (balanced IBM, Coursei).", V2_NOTES]
    if select == "v3":
        sections += ["'CTSVM, previous protocol': v2 (`ctsvm_rows_v2.md`), same data and labeled "
                     "draws.", V3_NOTES]
    if select == "v4":
        sections += ["'CTSVM, previous protocol': v3 (`ctsvm_rows_v3.md`), same labeled draws "
                     "(text rows: other features; '-': Course page text, not a v3 row).",
                     V4_NOTES]
    return sections


V5_NOTES = """## Protocol v5 (written before any v5 fit)

Decided at 09:38 UTC on 2026-11-27, before any v5 fit (issue 29), after development on other
draws only (seeds 100-103, `benchmarks/results/ctsvm_bias_dev.md`).  v4 with three changes,
applied to every row:
1. Learned bias: `ConvexTSVM(offset='none', rounding='prior')` in the CV and in the final fit
   (v4: offset 'none' on the UCI rows, 'prior' on the text rows, rounding 'balanced').  The
   relaxation is the thesis's model without intercept; the bias is the threshold `t` (bias
   `-t`) that puts the unlabeled rows' rounded labels within one standard error of the labeled
   balance (eq. 3.5 on the labels, `prior_standard_error`), `t = 0` when the signs already do;
   `decision_function` subtracts the same `t`, so the 5-fold CV scores the same rule.
2. Low-rank kernel route with the adaptive augmented-Lagrangian penalty (sigma 10 doubling
   up to 1e3 on a stalled primal residual): 3 of v4's 5 Banana fits that stopped at the
   200-round cap (draws 0, 6, 9, tried before this run) converge in 13-20 rounds with it.
   Every fit (CV folds included) is counted when it stops at the cap ('capped' columns).
3. To fit the CPU budget (2 cores shared by 7 jobs): no TSVM refinement of CTSVM, and TSVM /
   DA are v4's values on the same rows, draws and features (v5 changes CTSVM only).
Unchanged: C_l = C_u by 5-fold CV of CTSVM (C in 100/10/1/0.1, ties to the larger C, folds at
tol 1e-3), joint RBF width on Iono/Sonar/Banana, SVM by its own 3-fold CV, draws = seeds 0-9,
data and features of v4.  Budget: the machine's load was 13 at the start (v4 ran at load
1-2 and took 25 CPU minutes), so the run goes in two passes, each row in the order Course-s,
Breast, Course-m, Sonar, Iono, Course-l, WinMac-m, IBM-s, Banana, IBM-m, WinMac-l, IBM-l
(v4's cost order): draws 0-4 of every row, then draws 5-9 as far as the time (end by 11:00
UTC) allows; the 'draws' column gives each row's count, and the same draws of v4 are shown.
'Test': Welch's t-test of our per-draw accuracies against the thesis's mean ± sd, assuming
10 draws for the thesis (it does not state its number); 'hit' = within 2 points.
"""


V5_RESULT = """## Result (written after the run)

Run: `OMP_NUM_THREADS=1 ... nice -n 5 python benchmarks/bench_ctsvm.py --part rows --select v5
--trials 5 --rows <order above>`, then `--trials 10` (resumes; 09:39-10:52 UTC, load 5-29;
`ctsvm_rows_v5.jsonl`), then `--report-only` for this file.  All 120 draws ran.

- **0 of 12 rows within 2 points** (v4: 2).  Closest: IBM-m -2.17, Course-s -2.35.
- **No fit stopped at a cap**: 0 of 120 final fits and 0 of 3,600 CV fits (most rounds of a
  final fit: 63, Breast, linear route; Banana 19, where v4 had 5 of 10 at the cap).
- Course rows (the issue's): Course-l 89.60 (v4 88.37, thesis 94.62, -5.02), Course-m 83.36
  (v4 86.14, -9.56), Course-s 77.40 (v4 90.40, -2.35).  Measured reason
  (`ctsvm_bias_diagnose.md`, draws 0-4 refitted): the learned bias follows the labeled
  balance, and the random draws give 30-40 % labeled positives in 9 of 15 Course draws
  (truth 20-22 %); those transduce 36-48 % positives and score 71-84 %, where the best
  threshold of the same scores gives 92-100 %.  Course-m/-l draws with 15-22 % labeled
  positives score 90.3-94.3 %.  The relaxed scores rank the pages well; the bias is the
  miss, and one standard error of a 10-50-label estimate is too loose to fix it.
- Breast 89.79 (-8.00): the learned bias moved 5 draws and cost 2.4 points against the
  sign of the same fits (92.21); draws 3-4 have 55 % labeled positives against 34 %.
- The text rows on the balanced corpora gain from the thesis's model without offset (v4
  used offset 'prior'): WinMac-m 90.36 (v4 84.29), WinMac-l 94.41 (90.65), IBM-l 76.63
  (75.45), IBM-m 71.00 (65.68), IBM-s 67.00 (60.60); the sign of the same fits gives nearly
  the same (the bias moved 3-4 draws), so the gain is the offset's, and WinMac-m/-l and
  IBM-l now miss by being 3.2-5.5 points over the thesis.
- UCI RBF rows close to v4: Iono 83.32 (v4 84.47, +3.23 over the thesis), Sonar 64.31
  (62.87, -3.08), Banana 73.05 (73.34, -6.46); v4's reasons stand (our SVM is 5.5 over the
  thesis's on Iono; our 2-D banana is not the thesis's d = 4 set).
"""


V6_NOTES = """## Protocol v6 (written before any v6 fit)

Decided at 19:35 UTC on 2026-11-29, before any v6 fit (issue 29).  v5 with one change:
the labeled rows of each draw are **stratified** (`bench_defaults.stratified_draw`, seed =
draw: each class gets its share of the `l` labels, the remainder to the largest
fractional parts, every class at least once; at these sizes every class gets at least 2),
where v5 drew them at random with at least 2 per class.  The thesis says only that "the
training set contains each class of data".  Why: v5's misses on the Course rows and
Breast come from the learned bias following the labeled balance, and 9 of v5's 15 Course
draws held 30-40 % labeled positives against 20-22 % in the data
(`ctsvm_bias_diagnose.md`); a stratified draw states the balance as the data has it, as
the benchmark of defaults already draws its UCI labels.  Everything else is v5's: C_l = C_u
by 5-fold CV of CTSVM (C in 100/10/1/0.1, ties to the larger), joint RBF width on
Iono/Sonar/Banana, offset 'none' with rounding 'prior' in the CV and the final fit, the
adaptive augmented-Lagrangian low-rank route, no TSVM refinement, the SVM by its own
3-fold CV, Table 3.1's vocabularies, balanced IBM.  TSVM and DA with their defaults are fitted
on the same draws (v5 reused v4's, on v5's draws).  Every fit is the method as published,
`fallback="none"`: the library's CV guard came after v5 (a first start of this run crashed
on a guarded fit's missing `n_iter_`; the file's other ConvexTSVM, TSVM and DA fits now
pass it too).  All 12 rows, draws 0-9, run in two
processes (rows split by v5's cost), `OMP_NUM_THREADS=1`.  Counting rule unchanged: a row
hits when the mean is within 2 points of the thesis; Welch's test against the thesis's
mean ± sd with 10 draws assumed.
"""


V6_RESULT = """## Result (written after the run)

Run: `OMP_NUM_THREADS=1 ... nice -n 5 python benchmarks/bench_ctsvm.py --part rows --select v6
--trials 10 --rows Course-s,Course-m,Course-l,Breast,Iono,Sonar --jsonl .../ctsvm_rows_v6a.jsonl`
and, at the same time, `--rows IBM-s,WinMac-m,IBM-m,Banana,WinMac-l,IBM-l --jsonl
.../ctsvm_rows_v6b.jsonl` (19:36-19:49 UTC, load about 2); the two files concatenated into
`ctsvm_rows_v6.jsonl`, then `--select v6 --report-only` for this file.  All 120 draws ran.

- **0 of 12 rows within 2 points** (v5: 0, v4: 2).  No fit stopped at a cap: 0 of 120 final
  fits, 0 of 3,600 CV fits (most rounds of a final fit: 46).
- What the stratified draws changed (v5 -> v6): Breast 89.79 -> 94.32 (no draw biased now;
  our SVM 92.93 -> 94.46, the thesis's 96.46), Course-s 77.40 -> 83.20, Course-m 83.36 ->
  87.64, IBM-m 71.00 -> 76.50; Course-l 89.60 -> 88.69 did not move.  The two readings of
  the thesis's "the training set contains each class" move rows by up to 5.8 points, more
  than the 2-point window.
- The Course rows: with the labeled balance right (20-22 % positive labels on every draw),
  CTSVM's learned bias moves all 30 draws, from 66-76 % (sign, row means) to 83-89 % --
  while TSVM and DA with their published defaults reach 90.8 / 86.0 (Course-s), 92.9 /
  95.0 (Course-m) and 95.8 / 96.9 (Course-l) on the same draws.  The draws were not v5's
  Course miss; the relaxation's scores with a bias fitted to the balance stay 5-6 points
  under the thesis on Course-m/-l, where our TSVM and DA are at or above the thesis's
  CTSVM.
- Six rows now sit more than 2 points **above** the thesis (Iono +5.38, Course-s +3.45,
  WinMac-m +6.25, IBM-m +3.33, WinMac-l +2.46, IBM-l +3.14); four below (Sonar -4.30,
  Banana -3.22, Breast -3.47, IBM-s -6.85, p = 0.16, 0.16, < 0.001, 0.07), and Course-m
  -5.28 / Course-l -5.93.
"""


def rows_report_v5(rows, jsonl, select="v5"):
    """Protocol v5 / v6 table: per row the thesis's number, ours, the difference, the test;
    v5 shows v4's CTSVM on the same draws, v6 v5's (on v5's random draws)."""
    import json

    from scipy.stats import ttest_ind_from_stats
    recs = [json.loads(line) for line in open(jsonl)]
    recs = [r for r in recs if r.get("select") == select]
    prev_sel = {"v5": "v4", "v6": "v5"}[select]
    v4 = {}
    v4_path = os.path.join(os.path.dirname(jsonl), f"ctsvm_rows_{prev_sel}.jsonl")
    if os.path.exists(v4_path):
        for line in open(v4_path):
            r = json.loads(line)
            if r.get("select") == prev_sel:
                v4.setdefault(r["row"], {})[r["trial"]] = r["CTSVM"]
    out, hits, n_rows = [], 0, 0
    for row in rows:
        rs = sorted((r for r in recs if r["row"] == row), key=lambda r: r["trial"])
        if not rs:
            continue

        def ms(key, rs=rs):
            v = 100 * np.array([r[key] for r in rs if key in r])
            return f"{v.mean():.2f} ± {v.std():.2f}" if v.size else "-"
        acc = 100 * np.array([r["CTSVM"] for r in rs])
        th, sd = THESIS[row][1], THESIS_SD[row]
        diff = acc.mean() - th
        p = ttest_ind_from_stats(acc.mean(), acc.std(ddof=1), acc.size, th, sd, 10,
                                 equal_var=False).pvalue if acc.size > 1 else float("nan")
        hit = abs(diff) <= 2
        hits += hit
        n_rows += 1
        old = [v4.get(row, {}).get(r["trial"]) for r in rs]
        old = [v for v in old if v is not None]
        out.append([row, len(rs), ",".join(fmt(r["C"]) for r in rs),
                    ",".join(f"{r['width']:g}" if r.get("width") else "-" for r in rs),
                    ms("SVM"), ms("TSVM"), ms("DA"), f"{acc.mean():.2f} ± {acc.std():.2f}",
                    ms("CTSVM-sign"), sum(r.get("threshold", 0.0) != 0.0 for r in rs),
                    ms("CTSVM-eig"), f"{100 * np.mean(old):.2f}" if old else "-",
                    f"{th} ± {sd}", f"{diff:+.2f}", f"p = {p:.3f}",
                    "hit" if hit else "miss",
                    fmt(float(np.median([r["t_ctsvm"] for r in rs]))),
                    max(r.get("n_outer", 0) for r in rs),
                    sum(not r["converged"] for r in rs),
                    f"{sum(r.get('cv_capped', 0) for r in rs)} / "
                    f"{sum(r.get('cv_fits', 0) for r in rs)}"])
    peers = "(v4)" if select == "v5" else "(same draws)"
    head = ["row", "draws", "C per draw", "width per draw", "SVM", f"TSVM {peers}",
            f"DA {peers}", "CTSVM (learned bias)", "CTSVM (sign, no bias)", "biased draws",
            "CTSVM (eigenvector)", "CTSVM v4 (same draws)" if select == "v5" else
            "CTSVM v5 (random draws)", "thesis CTSVM", "ours - thesis",
            "test (Welch)", "verdict", "CTSVM median s", "most rounds", "final fits capped",
            "CV fits capped"]
    summary = (f"**Within 2 points of the thesis: {hits} of {n_rows} rows.**  Columns: "
               "'CTSVM (learned bias)' is the protocol's number (rounding 'prior'); 'CTSVM "
               "(sign, no bias)' the sign of the same fit's relaxed scores (eq. 3.7, offset "
               "'none'); 'biased draws' the draws with t != 0; 'eigenvector' the leading-"
               "eigenvector rounding of the same fit; 'most rounds' the largest number of "
               "augmented Lagrangian rounds of a final fit (cap 200).")
    notes = [V5_NOTES, V5_RESULT] if select == "v5" else [V6_NOTES, V6_RESULT]
    return [summary, table(head, out), *notes]


def run_table(names, trials, l, offset="none"):
    rows, rounding_rows = [], []
    for name in names:
        X, y, kern = load_uci(name)
        res = {k: [] for k in ("SVM", "TSVM", "DA", "CTSVM", "CTSVM-eig", "CTSVM-tsvm",
                               "CTSVM-svm", "t")}
        for trial in range(trials):
            lab = draw(y, l, trial)
            ys = np.full(y.size, -1)
            ys[lab] = y[lab]
            unl = ys == -1
            C, g = select_svm(X, ys, kern)
            K = kernel_matrix(X, kernel=kern, gamma=g)
            svm = fit_precomputed_svm(K[np.ix_(lab, lab)], np.where(y[lab] == 1, 1.0, -1.0), C)
            pred = svm.decision_function(K[:, lab]) > 0
            res["SVM"].append(np.mean(pred[unl] == y[unl]))
            t = time.perf_counter()
            # one fit serves every rounding: sign(relaxed scores); the leading vector of
            # [w, Q] (what rounding='eigenvector' uses); the TSVM refinement of the sign
            # rounding (refine='tsvm', transduction_); an SVM refit on those labels
            est = ConvexTSVM(C_l=C, kernel=kern, gamma=g, solver="lowrank", offset=offset,
                             out_of_sample="svm", refine="tsvm", fallback="none").fit(X, ys)
            res["t"].append(time.perf_counter() - t)
            res["CTSVM"].append(np.mean((est.relaxed_scores_[unl] >= 0) == (y[unl] == 1)))
            lead = est._leading_vector(lab, np.where(y[lab] == 1, 1.0, -1.0))
            res["CTSVM-eig"].append(np.mean((lead[unl] >= 0) == (y[unl] == 1)))
            res["CTSVM-tsvm"].append(np.mean(est.transduction_[unl] == y[unl]))
            res["CTSVM-svm"].append(np.mean(est.predict(X)[unl] == y[unl]))
            if kern == "linear":
                for key, cls in (("TSVM", TransductiveSVM), ("DA", DeterministicAnnealingSVM)):
                    # their defaults as published (the guard came after these protocols)
                    m = cls(fallback="none").fit(X, ys)
                    res[key].append(np.mean(m.transduction_[unl] == y[unl]))
        def ms(key, res=res):
            v = 100 * np.array(res[key])
            return f"{v.mean():.2f} ± {v.std():.2f}" if v.size else "-"
        th = THESIS.get(name, (None, None))
        rows.append([name, X.shape[0], kern, ms("SVM"), ms("TSVM"), ms("DA"), ms("CTSVM"),
                     f"{th[0]} / {th[1]}", fmt(float(np.median(res["t"])))])
        rounding_rows.append([name, ms("CTSVM"), ms("CTSVM-eig"), ms("CTSVM-tsvm"),
                              ms("CTSVM-svm")])
        print(rows[-1], flush=True)
    return [f"l = {l} labeled rows per trial, {trials} trials, transductive accuracy (%) on "
            "the unlabeled rows, mean ± std.",
            table(["set", "n", "kernel", "SVM", "TSVM (semisup.linear)", "DA (semisup.linear)",
                   "CTSVM (low-rank, sign)", "thesis SVM / CTSVM", "CTSVM median s"], rows),
            "Rounding study (same fits): sign(w_u); sign of the leading eigenvector of W; "
            "the multi-switch TSVM started from the sign-rounded labels (refine='tsvm'); "
            "an SVM refit on the refined labels, evaluated on the unlabeled rows.",
            table(["set", "sign", "eigenvector", "sign + TSVM refine", "SVM refit"],
                  rounding_rows)]


def run_scale(sizes, data="digit1", limits=(100, 40)):
    """Seconds per fit vs n (Fig. 3.1): low-rank, exact (SCS) and RTSVM (SCS), l = 20."""
    if data == "digit1":
        from semisup.datasets import load_sslbook
        b = load_sslbook("digit1", 10)
        X_all, y_all, kern = b.X, (b.y > 0).astype(int), "rbf"
    else:                    # Course (WebKB), TF-IDF, linear kernel as in the thesis's figure
        X_all, y_all = load_text("Course", max(sizes))
        kern = "linear"
    rows, curves = [], {"lowrank": [], "scs": [], "rtsvm": []}
    for n in sizes:
        X, y = X_all[:n], y_all[:n]
        lab = np.r_[np.flatnonzero(y == 0)[:10], np.flatnonzero(y == 1)[:10]]
        ys = np.full(n, -1)
        ys[lab] = y[lab]
        Xd = X.toarray() if hasattr(X, "toarray") and n <= max(limits) else X
        row = [n, n - lab.size]
        objs = {}
        for key, make in (("lowrank", lambda: ConvexTSVM(C_l=10, kernel=kern, solver="lowrank",
                                                         offset="none", fallback="none")),
                          ("scs", lambda: ConvexTSVM(C_l=10, kernel=kern, solver="scs",
                                                     max_exact=10**6, offset="none",
                                                     fallback="none")),
                          ("rtsvm", lambda: SDPRelaxedTSVM(C=10, kernel=kern, solver="scs",
                                                           max_n=10**6))):
            limit = {"lowrank": 10**9, "scs": limits[0], "rtsvm": limits[1]}[key]
            if n > limit:
                row.append("-")
                continue
            t = time.perf_counter()
            est = make().fit(X if key == "lowrank" else Xd, ys)
            dt = time.perf_counter() - t
            row.append(fmt(dt))
            curves[key].append((n - lab.size, dt))
            objs[key] = est.objective_
            if key == "lowrank":
                cert = (est.lmi_min_eig_, est.fit_results_["gap"], est.fit_results_["rank"])
        gap = (objs["scs"] - objs["lowrank"]) / objs["scs"] if "scs" in objs else None
        row += [fmt(cert[0]), fmt(cert[1]), cert[2], fmt(gap) if gap is not None else "-"]
        rows.append(row)
        print(row, flush=True)
    png = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results",
                       f"ctsvm_scale_{data}.png")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(5, 3.6))
    for key, label in (("rtsvm", "RTSVM (SDP, SCS)"), ("scs", "CTSVM exact (SCS)"),
                       ("lowrank", "CTSVM low-rank")):
        if curves[key]:
            a = np.array(curves[key])
            ax.loglog(a[:, 0], a[:, 1], "o-", label=label)
    ax.set_xlabel("number of unlabeled points")
    ax.set_ylabel("seconds per fit (wall)")
    ax.set_title(f"Fig. 3.1 analogue: {data}, l = 20")
    ax.legend()
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    what = "Digit1 (SSL book, RBF)" if data == "digit1" else "Course (WebKB, TF-IDF, linear)"
    return [f"Fig. 3.1 analogue on {what}, first n rows, l = 20, C = 10, offset='none'; "
            f"wall seconds per fit (plot: `results/ctsvm_scale_{data}.png`).",
            table(["n", "unlabeled", "CTSVM low-rank", "CTSVM exact (SCS)", "RTSVM (SCS)",
                   "LMI min eig", "rel. gap", "rank", "(SCS - lowrank)/SCS objective"], rows)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--part", choices=("table", "scale", "text", "rows"), default="table")
    ap.add_argument("--rows", default="Iono,Sonar,Banana,Breast,IBM-s,Course-s,WinMac-m,"
                    "IBM-m,Course-m,WinMac-l,IBM-l,Course-l", help="rows: Table 3.2 rows")
    ap.add_argument("--select", choices=("ctsvm", "svm", "v2", "v3", "v4", "v5", "v6"),
                    default="ctsvm",
                    help="rows: C of CTSVM by CV of CTSVM itself or of the supervised SVM; "
                    "v2: C and RBF width by 5-fold CV of CTSVM, balanced IBM; v3: v2 with "
                    "the balanced rounding; v4: v3 with Table 3.1's corpus vocabularies; "
                    "v5: v4 with the learned bias (rounding 'prior', offset 'none'); v6: v5 "
                    "with stratified labeled draws")
    ap.add_argument("--jsonl", default=None, help="rows: resumable per-trial results")
    ap.add_argument("--report-only", action="store_true", help="rows: table from the JSON")
    ap.add_argument("--text", default="WinMac:300:20,Course:300:20,IBM:300:20")
    ap.add_argument("--offset", default="none", help="ConvexTSVM offset ('none' or 'prior')")
    ap.add_argument("--name", default=None, help="results file name")
    ap.add_argument("--trials", type=int, default=10)
    ap.add_argument("--cv", action="store_true", help="text: C by CV on the labeled rows")
    ap.add_argument("--sets", default="Iono,Sonar,Banana,Breast")
    ap.add_argument("--sizes", default="40,100,200,400,800,1500")
    ap.add_argument("--data", choices=("digit1", "course"), default="digit1",
                    help="scale: data set")
    ap.add_argument("--limits", default="100,40", help="scale: largest n for SCS, RTSVM")
    args = ap.parse_args()
    load = f"Machine load (uptime) at start: {os.getloadavg()}"
    if args.part == "table":
        sections = run_table(args.sets.split(","), args.trials, 20, args.offset)
        report(args.name or "ctsvm_table", f"CTSVM, thesis Table 3.2 (UCI/IDA rows), offset="
               f"{args.offset}", [load, *sections])
    elif args.part == "rows":
        tag = args.select
        jsonl = args.jsonl or os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                           "results", f"ctsvm_rows_{tag}.jsonl")
        rows = args.rows.split(",")
        sections = (rows_report(rows, args.select, jsonl) if args.report_only
                    else run_rows(rows, args.trials, args.select, jsonl))
        title = {"ctsvm": "C selected by CV of CTSVM itself", "svm": "C selected by CV of "
                 "the SVM", "v2": "protocol v2 (C and RBF width by 5-fold CV of CTSVM, "
                 "balanced IBM)", "v3": "protocol v3 (v2 with the balanced rounding)",
                 "v4": "protocol v4 (v3 with Table 3.1's corpus vocabularies)",
                 "v5": "protocol v5 (v4 with the learned bias)",
                 "v6": "protocol v6 (v5 with stratified labeled draws)"}[
                     args.select]
        report(args.name or f"ctsvm_rows_{tag}", f"CTSVM, thesis Table 3.2, {title}",
               [load, *sections])
    elif args.part == "text":
        specs = [(a, int(b), int(c)) for a, b, c in (t.split(":") for t in args.text.split(","))]
        sections = run_text(specs, args.trials, args.offset, args.cv)
        report(args.name or "ctsvm_text", f"CTSVM, thesis Table 3.2 (text rows), offset="
               f"{args.offset}", [load, *sections])
    else:
        sections = run_scale([int(s) for s in args.sizes.split(",")], args.data,
                             tuple(int(v) for v in args.limits.split(",")))
        report(args.name or f"ctsvm_scale_{args.data}", "CTSVM time vs n (Fig. 3.1 analogue)",
               [load, *sections])


if __name__ == "__main__":
    main()
