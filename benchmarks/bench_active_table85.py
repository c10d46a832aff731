"""Table 8.5 of the thesis, resumable, with the diagnostics of why retrieval helps or not.

For every (task, draw, labeled per class in {2, 5}) the active-search pipeline is run once
(DQG, one 3-term query per labeled document, top 100, labeled documents excluded, 600
class-correlated tf features, unit rows) and every learner is trained on the same features:

* ``SVM``: L2-SVM on the labeled rows;  ``Aux``: Aux-SVM (eq. 8.2, gamma = 0.01);
* ``CCCP-lab``: CCCPS3VM with the balance fraction of the labeled rows (the thesis /
  Collobert rule; here always 1/K since the labeled set is balanced by construction);
* ``CCCP-ret``: CCCPS3VM with the class shares of the retrieved documents' weak (query)
  labels -- no test label is used, only which query retrieved a document;
* ``CCCP-ret-s``: the same with ``s = 0.3`` (flat ramp near the boundary);
* ``TSVM``, ``DA``: the library's TransductiveSVM / DeterministicAnnealingSVM, same
  ``lam``/``lam_u``, balance fractions as ``CCCP-ret`` (one per class, one-vs-rest, on the
  multi-class tasks too);  ``TSVM-lab``, ``DA-lab``: the labeled prior (before round 2
  session 4, ``TSVM``/``DA`` were ``-lab`` on the multi-class tasks and ``-ret`` on the
  binary ones).

``--setup --strip`` builds the index and the task documents from 20 Newsgroups posts without
their headers (the Subject line kept), quoted text and signatures
(:func:`semisup.text.corpora.strip_newsgroup_post`); use another ``--workdir`` for it.

Diagnostics (test labels used only to *measure*, never to choose): per-query precision, the
share of retrieved documents that belong to the task's corpus / classes, weak-label accuracy
on those, the weak-label class share vs the true share, overlap with the test set.

Each unit appends one JSON line to ``benchmarks/results/active_table85_<tag>_w<worker>.jsonl``;
finished units are skipped on restart.  ``--summary`` writes
``benchmarks/results/active_table85_<tag>.md`` from the tag's JSONL files.

Feature protocols (``--protocols``): ``lib`` = the pipeline's features (600 terms most
correlated with the labeled + weak labels, rows renormalised); ``nonorm`` = the thesis's literal
order (unit tf over the whole vocabulary, then 600 terms, no renormalisation); ``oracle`` =
600 terms selected with the true labels of the whole data set (a guess at how the thesis's
fixed data sets were prepared; uses test labels, diagnostic only).  ``--collection dataset``
retrieves from the task's own documents only (an on-topic engine, control experiment).

Oracle pool (protocol ``lib+opool`` or ``nonorm+opool``): the unlabeled rows are as many of
the task's own documents (its classes, labeled documents excluded) as were retrieved, with
their true class shares as the ``-ret`` balance and their true labels as Aux-SVM's weak
labels; the features are those chosen with the retrieved pool, so the SVM is unchanged.  It
bounds what a perfect search engine could give these learners.  Further pool / balance
variants (``lib+VARIANT``): ``opoolw`` = the oracle documents with the retrieved weak-label
balance; ``tbal`` = the retrieved pool with the test set's true class shares; ``ppred`` = the
retrieved pool with the class shares of the labeled SVM's predictions on the test documents;
``simNN`` = the NN % of the retrieved documents most similar to a labeled one.  ``tbal``,
``opool`` and ``opoolw`` use test labels: diagnostics only.  ``--per-query`` and
``--query-size`` change the retrieval depth and the DQG query size; ``--summary
--single-draw`` resamples one draw per task (is the thesis's table one lucky draw?).
Label-free class priors (``lib+em``, ``lib+mix``, ``lib+mixfix``, ``lib+nb``): the
retrieved pool with the class shares of the documents to classify estimated by
:class:`semisup.prior.ClassPriorEstimator` (methods ``em``, ``mixture``, ``mixture-fixed``,
``multinomial``) from the benchmark's SVM, no label used; every estimate goes to the
diagnostics.  ``lib+tbalNN``: the true shares moved by NN points (a noisy oracle: how precise
a prior must be).  ``--tag A,B --prior-summary RET_TAG,TRUE_TAG`` writes
``results/active_table85_A+B_prior.md`` (prior errors, reductions, paired differences
against the retrieved balance and the true shares).
``--verdict ORACLE_TAG[:PROTOCOL]``
writes the per-task errors (retrieved pool of ``--tag``, oracle pool, thesis) to
``results/active_table85_<ORACLE_TAG>_verdict.md``.

``--baseline``: supervised SVMs only, no retrieval, in several settings (features chosen on
the labeled documents / on the whole data set's true classes / none; rows renormalised or
not; squared hinge vs hinge at C = 50 vs SVM-light's default C), to find where the thesis's
weak SVM column comes from; ``--baseline --summary --compare TAG`` writes the per-task table
next to the thesis's SVM and the SVM of run ``TAG``.

Usage::

    python benchmarks/bench_active_table85.py --setup --workdir /tmp/i12      # index, cache
    python benchmarks/bench_active_table85.py --workdir /tmp/i12 --reps 10 --task-major
        --worker 0 --n-workers 2 --tag main --learners SVM,Aux,CCCP-lab,CCCP-ret,TSVM,DA
    python benchmarks/bench_active_table85.py --summary --tag main
    python benchmarks/bench_active_table85.py --summary --tag strip --compare main
    python benchmarks/bench_active_table85.py --baseline --workdir DIR --reps 14 --tag base
    python benchmarks/bench_active_table85.py --baseline --summary --tag base --compare strip
    python benchmarks/bench_active_table85.py --workdir DIR --reps 14 --tag oracle
        --protocols lib+opool --learners SVM,Aux,CCCP-lab,CCCP-ret,TSVM,DA
    python benchmarks/bench_active_table85.py --tag strip --verdict oracle
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import RESULTS_DIR, command_line, machine_info, table  # noqa: E402
from bench_active_search import TASKS, task_docs  # noqa: E402

from semisup.linear import CCCPS3VM, L2SVM, DeterministicAnnealingSVM, TransductiveSVM  # noqa: E402
from semisup.text import ActiveSearchPipeline, AuxiliarySVM, MemoryBM25Index, SQLiteIndex  # noqa: E402

LAM = GAMMA = 0.01
N_FEATURES = 600
PER_QUERY = 100  # retrieved documents per query (thesis: 100)
QUERY_SIZE = 3  # terms per DQG query (thesis: 3)
PROTOCOLS = ["lib", "nonorm", "oracle"]
LEARNERS = ["SVM", "Aux", "CCCP-lab", "CCCP-ret", "CCCP-ret-s", "TSVM", "DA", "TSVM-lab",
            "DA-lab"]
EVAL_TASKS = ["auto vs motor", "corn vs wheat", "ship vs trade", "money vs trade",
              "bacterial vs virus", "musculo vs digestive", "male vs female",
              "sci (4 groups)", "fourDiseases"]


def setup(workdir: Path, strip: bool = False) -> None:
    from semisup.text.corpora import NEWSGROUP_PARTS, load_corpora

    workdir.mkdir(parents=True, exist_ok=True)
    remove = NEWSGROUP_PARTS if strip else ()
    t0 = time.perf_counter()
    docs = list(load_corpora(newsgroups_remove=remove))
    print(f"loaded {len(docs)} documents in {time.perf_counter() - t0:.0f} s "
          f"(20NG parts removed: {list(remove)})", flush=True)
    tasks = {name: task_docs(docs, prefix, classes) for name, prefix, classes in TASKS}
    labels = {d.id: d.labels for d in docs}
    with open(workdir / "tasks.pkl", "wb") as fh:
        pickle.dump({"tasks": tasks, "labels": labels, "newsgroups_remove": list(remove)}, fh)
    if not (workdir / "index").exists():
        t0, c0 = time.perf_counter(), time.process_time()
        SQLiteIndex.build(workdir / "index", ((d.id, d.text) for d in docs))
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        print(f"index: {len(docs)} docs in {wall:.0f} s wall / {cpu:.0f} s CPU "
              f"({len(docs) / wall:.0f} docs/s wall, {len(docs) / cpu:.0f} docs/s CPU), "
              f"load {os.getloadavg()}", flush=True)


def fit(learner, X, labels, y_semi, aux_y, aux, r_weak, classes):
    l = labels.shape[0]
    u = X.shape[0] - l
    semi = dict(lam=LAM / l, lam_u=GAMMA * u / l)  # thesis scaling -> (1/2l, 1/2u) form
    if learner == "SVM":
        return L2SVM(lam=2 * LAM).fit(X[:l], labels)
    if learner == "Aux":
        return AuxiliarySVM(lam=2 * LAM, gamma=GAMMA).fit(X, aux_y, auxiliary=aux)
    if learner == "CCCP-lab":
        return CCCPS3VM(**semi).fit(X, y_semi)
    if learner == "CCCP-ret":
        return CCCPS3VM(**semi, positive_fraction=r_weak).fit(X, y_semi)
    if learner == "CCCP-ret-s":
        return CCCPS3VM(**semi, positive_fraction=r_weak, s=0.3).fit(X, y_semi)
    # "-lab": the labeled prior; otherwise one fraction per class from the weak labels
    r = None if learner.endswith("-lab") else r_weak
    if learner.startswith("TSVM"):
        return TransductiveSVM(**semi, positive_fraction=r).fit(X, y_semi)
    return DeterministicAnnealingSVM(**semi, positive_fraction=r).fit(X, y_semi)


def features(protocol, pipe, index, items, lab, test, labels, weak, pool=None):
    """Training / test matrices of one feature protocol (see the module docstring).

    ``pool``: indices into ``items`` that replace the retrieved documents as the unlabeled
    rows (the oracle pool); the feature space stays the one chosen with the retrieved pool,
    so the SVM column is unchanged and only the unlabeled data differ.
    """
    import scipy.sparse as sp
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.preprocessing import normalize

    from semisup.text.pipeline import class_correlation
    from semisup.text.querygen import query_analyzer

    def with_pool(Xtr, transform):
        if pool is None:
            return Xtr
        return sp.vstack([Xtr[: len(lab)], transform([items[i][1] for i in pool])]).tocsr()

    if protocol == "lib":
        return (with_pool(pipe.X_train_, pipe.transform),
                pipe.transform([items[i][1] for i in test]))
    retrieved = index.documents(pipe.retrieved_ids_)
    vec = CountVectorizer(analyzer=query_analyzer("english"))
    if protocol == "nonorm":
        # thesis order, honest: unit tf over the whole vocabulary, then the 600 terms most
        # correlated with the labeled + weak labels, no renormalisation
        Xtr = normalize(vec.fit_transform([items[i][1] for i in lab] + retrieved)
                        .astype(np.float64))
        keep = np.argsort(-class_correlation(Xtr, np.concatenate([labels, weak])),
                          kind="stable")[:N_FEATURES]

        def transform(texts):
            return normalize(vec.transform(texts).astype(np.float64))[:, keep]

        return with_pool(Xtr[:, keep], transform), transform([items[i][1] for i in test])
    if pool is not None:
        raise ValueError("the oracle pool is implemented for the 'lib' and 'nonorm' features")
    # "oracle": the thesis's data sets as fixed matrices -- unit tf, the 600 terms most
    # correlated with the TRUE classes of the whole data set (uses test labels: upper bound
    # of what the thesis's preprocessing may have done), retrieved pages projected on them
    vec.fit([t for _, t, _ in items] + retrieved)
    Xd = normalize(vec.transform([t for _, t, _ in items]).astype(np.float64))
    keep = np.argsort(-class_correlation(Xd, np.array([c for _, _, c in items])),
                      kind="stable")[:N_FEATURES]
    Xr = normalize(vec.transform(retrieved).astype(np.float64))
    return sp.vstack([Xd[lab], Xr]).tocsr()[:, keep], Xd[test][:, keep]


def run_unit(index, items, labels_of, prefix, classes, rep, n, protocols, learners):
    rng = np.random.default_rng(200 + rep)  # same draws as bench_active_search.py
    lab_all = np.array([c for _, _, c in items])
    five = np.stack([rng.choice(np.flatnonzero(lab_all == c), 5, replace=False)
                     for c in classes])
    test = np.setdiff1d(np.arange(len(items)), five.ravel())
    lab = five[:, :n].ravel()
    texts = [items[i][1] for i in lab]
    labels = np.array([items[i][2] for i in lab])
    ids = [items[i][0] for i in lab]
    t0 = time.perf_counter()
    pipe = ActiveSearchPipeline(index, generator="dqg", query_size=QUERY_SIZE,
                                per_query=PER_QUERY,
                                learner="svm", lam=LAM, gamma=GAMMA).fit(texts, labels, ids=ids)
    t_pipe = time.perf_counter() - t0
    l, u = len(lab), len(pipe.retrieved_ids_)
    y_test = np.array([items[i][2] for i in test])
    y_semi = np.concatenate([labels, np.full(u, "-1")]).astype(object)
    y_semi[l:] = -1
    weak = pipe.retrieved_labels_
    aux_y = np.concatenate([labels, weak])
    aux = np.r_[np.zeros(l, bool), np.ones(u, bool)]
    # balance fractions from the weak labels (class order = sorted, as classes_)
    cls_sorted = np.unique(labels)
    r_weak = np.array([np.mean(weak == c) for c in cls_sorted])
    r_weak = np.clip(r_weak, 0.02, 0.98)
    # diagnostics (truth used to measure only)
    rid = pipe.retrieved_ids_
    in_corpus = np.array([d.startswith(prefix) for d in rid])
    truth = np.array([next((c for c in classes if c in labels_of[d]), None)
                      if d.startswith(prefix) else None for d in rid], dtype=object)
    in_task = np.array([t is not None for t in truth])
    test_ids = {items[i][0] for i in test}
    diag = {
        "n_queries": len(pipe.queries_), "n_unique": int(u),
        "precision": float(np.mean([truth[k] == weak[k] for k in range(u)])),
        "share_corpus": float(in_corpus.mean()), "share_task": float(in_task.mean()),
        "weak_acc_in_task": float(np.mean(truth[in_task] == weak[in_task]))
        if in_task.any() else None,
        "r_weak": r_weak.tolist(),
        "r_true_in_task": [float(np.mean(truth[in_task] == c)) for c in cls_sorted]
        if in_task.any() else None,
        "r_test": [float(np.mean(y_test == c)) for c in cls_sorted],
        "share_test_overlap": float(np.mean([d in test_ids for d in rid])),
        "queries": [" ".join(q.terms) + f" ->{q.label}" for q in pipe.queries_],
        "t_pipeline": t_pipe,
    }
    # oracle pool: as many documents as were retrieved, drawn from the task's own documents
    # of its classes (the labeled ones excluded, so from the test set: transductive), with
    # their TRUE labels as "weak" labels and their true class shares as balance -- what a
    # perfect search engine would return; an upper bound for better retrieval
    prng = np.random.default_rng(10_000 + 100 * rep + n)
    pool = np.sort(prng.choice(test, min(u, test.size), replace=False))
    pool_y = np.array([items[i][2] for i in pool])
    diag["n_oracle_pool"] = int(pool.size)
    acc, wall, cpu = {}, {}, {}
    priors: dict[str, np.ndarray] = {}
    for proto in protocols:
        base, _, variant = proto.partition("+")
        if variant not in ("", "opool", "opoolw", "tbal", "ppred") + tuple(PRIOR_METHODS) \
                and not variant.startswith(("sim", "tbal")):
            raise ValueError(f"unknown protocol {proto!r}")
        if variant in PRIOR_METHODS:
            # the retrieved pool, balance = a label-free estimate of the class prior of the
            # documents to classify (semisup.prior on the labeled SVM's outputs; no test
            # label used); every estimator is run once, its error goes to the diagnostics
            X, X_test = features(base, pipe, index, items, lab, test, labels, weak)
            if base not in priors:
                priors[base] = estimate_priors(X[:l], labels, X_test)
                for k, v in priors[base].items():
                    diag[f"prior_{k}" + ("" if base == "lib" else f"@{base}")] = v.tolist()
            args = (y_semi, aux_y, aux, np.clip(priors[base][variant], 0.02, 0.98))
        elif variant.startswith("sim"):
            # filtered retrieved pool: keep the share simNN % of the retrieved documents most
            # similar (cosine, selected features) to their nearest labeled document -- no
            # test label used; the features stay those of the whole pool
            X, X_test = features(base, pipe, index, items, lab, test, labels, weak)
            sim = np.asarray((X[l:] @ X[:l].T).max(axis=1).todense()).ravel()
            kept = np.sort(np.argsort(-sim, kind="stable")[:max(1, round(
                int(variant[3:]) / 100 * u))])
            X = X[np.r_[np.arange(l), l + kept]]
            ys = np.concatenate([labels, np.full(kept.size, "-1")]).astype(object)
            ys[l:] = -1
            args = (ys, np.concatenate([labels, weak[kept]]),
                    np.r_[np.zeros(l, bool), np.ones(kept.size, bool)],
                    np.clip([np.mean(weak[kept] == c) for c in cls_sorted], 0.02, 0.98))
            diag[f"share_task_{variant}"] = float(in_task[kept].mean())
            diag[f"precision_{variant}"] = float(np.mean(truth[kept] == weak[kept]))
        elif variant == "ppred":
            # the retrieved pool, balance = class shares of the labeled-only SVM's
            # predictions on the documents to classify (transductive, no label used)
            X, X_test = features(base, pipe, index, items, lab, test, labels, weak)
            pred = L2SVM(lam=2 * LAM).fit(X[:l], labels).predict(X_test)
            args = (y_semi, aux_y, aux,
                    np.clip([np.mean(pred == c) for c in cls_sorted], 0.02, 0.98))
        elif variant.startswith("tbal") and variant != "tbal":
            # the true test shares moved by NN points of mean absolute error in a random
            # zero-sum direction: how precise a prior estimate must be (diagnostic only)
            X, X_test = features(base, pipe, index, items, lab, test, labels, weak)
            true = np.array([np.mean(y_test == c) for c in cls_sorted])
            drng = np.random.default_rng(20_000 + 100 * rep + n)
            direction = drng.normal(size=true.size)
            direction -= direction.mean()
            direction /= np.mean(np.abs(direction))
            noisy = np.clip(true + int(variant[4:]) / 100 * direction, 0.02, 0.98)
            diag[f"prior_{variant}"] = (noisy / noisy.sum()).tolist()
            args = (y_semi, aux_y, aux, noisy / noisy.sum())
        elif variant == "tbal":
            # the retrieved pool, but the TRUE class shares of the test set as balance:
            # what knowing the prior alone is worth (oracle, diagnostic only)
            X, X_test = features(base, pipe, index, items, lab, test, labels, weak)
            args = (y_semi, aux_y, aux,
                    np.clip([np.mean(y_test == c) for c in cls_sorted], 0.02, 0.98))
        elif variant:
            X, X_test = features(base, pipe, index, items, lab, test, labels, weak, pool)
            u_ = pool.size
            ys = np.concatenate([labels, np.full(u_, "-1")]).astype(object)
            ys[l:] = -1
            # "opoolw": the same documents, but the balance of the retrieved weak labels
            # (separates a clean pool from knowing the true class shares)
            args = (ys, np.concatenate([labels, pool_y]),
                    np.r_[np.zeros(l, bool), np.ones(u_, bool)],
                    r_weak if variant == "opoolw" else
                    np.clip([np.mean(pool_y == c) for c in cls_sorted], 0.02, 0.98))
        else:
            X, X_test = features(proto, pipe, index, items, lab, test, labels, weak)
            args = (y_semi, aux_y, aux, r_weak)
        for lrn in learners:
            key = lrn if proto == "lib" else f"{lrn}@{proto}"
            t0, c0 = time.perf_counter(), time.process_time()
            model = fit(lrn, X, labels, *args, classes)
            wall[key], cpu[key] = time.perf_counter() - t0, time.process_time() - c0
            acc[key] = 100 * float(np.mean(model.predict(X_test) == y_test))
    return {"acc": acc, "wall": wall, "cpu": cpu, "diag": diag, "n_test": int(test.size)}


# label-free prior estimates (protocol variants lib+em, lib+mix, lib+mixfix, lib+nb): method of
# semisup.prior.ClassPriorEstimator
PRIOR_METHODS = {"em": "em", "mix": "mixture", "mixfix": "mixture-fixed", "nb": "multinomial"}


def estimate_priors(X_lab, labels, X_test) -> dict[str, np.ndarray]:
    """Class shares of the test documents estimated without their labels, every method.

    ``pred`` is the naive estimate (shares of the labeled SVM's predictions, the ``ppred``
    balance).  The estimator is the benchmark's SVM (``L2SVM(lam=2 LAM)``).
    """
    import scipy.sparse as sp

    from semisup.prior import ClassPriorEstimator

    Xa = sp.vstack([X_lab, X_test]).tocsr()
    y = np.concatenate([labels, np.full(X_test.shape[0], "-1")]).astype(object)
    y[len(labels):] = -1
    out = {}
    for key, method in PRIOR_METHODS.items():
        est = ClassPriorEstimator(L2SVM(lam=2 * LAM), method=method).fit(Xa, y)
        out[key] = est.prior_
        out["pred"] = est.predicted_prior_
    return out


# Table 8.5 of the thesis: (SVM, Aux-SVM, Semi-SVM) at 2 and at 5 labeled per class
THESIS = {
    "male vs female": (56.5, 65.6, 59.4, 47.6, 76.1, 73.1),
    "bacterial vs virus": (72.6, 43.7, 72.8, 61.8, 77.6, 78.3),
    "musculo vs digestive": (66.8, 69.7, 67.6, 69.9, 71.3, 77.0),
    "fourDiseases": (10.3, 22.3, 51.4, 31.6, 38.4, 58.0),
    "ship vs trade": (75.1, 91.5, 95.1, 94.1, 95.5, 95.9),
    "corn vs wheat": (56.6, 65.3, 63.0, 69.2, 69.0, 71.6),
    "money vs trade": (49.0, 71.0, 59.5, 80.6, 88.8, 88.9),
    "auto vs motor": (62.1, 74.4, 77.5, 59.4, 69.1, 69.2),
    "sci (4 groups)": (29.2, 49.1, 50.2, 35.5, 56.1, 56.8),
}
# supervised baselines without retrieval (--baseline): feature source x row norm x loss
BASE_FEATURES = {"lab": "600 terms most correlated with the labeled documents' classes "
                        "(only their own words can be chosen)",
                 "data": "600 terms most correlated with the TRUE classes of the whole data "
                         "set (a fixed, pre-processed data set; uses test labels)",
                 "all": "every term of the data set, no selection"}
BASE_LOSSES = {"sq": "L2SVM, squared hinge, lam = 2 lambda = 0.02 (the benchmark's SVM)",
               "hinge": "hinge loss with an unregularised bias (libsvm, the SVM-light "
                        "problem), C = 1/(2 lambda) = 50, one-vs-rest",
               "hinge-c1": "the same with C = 1 / mean ||x||^2 (SVM-light's default C)"}


def baseline_unit(X_all, items, classes, rep, n):
    """Supervised SVMs on the labeled documents only, no retrieval, several settings."""
    from sklearn.multiclass import OneVsRestClassifier
    from sklearn.preprocessing import normalize
    from sklearn.svm import SVC

    from semisup.text.pipeline import class_correlation

    rng = np.random.default_rng(200 + rep)  # the draws of run_unit
    y_all = np.array([c for _, _, c in items])
    five = np.stack([rng.choice(np.flatnonzero(y_all == c), 5, replace=False)
                     for c in classes])
    test = np.setdiff1d(np.arange(len(items)), five.ravel())
    lab = five[:, :n].ravel()
    y, y_test = y_all[lab], y_all[test]
    unit = normalize(X_all)  # unit tf over the whole vocabulary
    acc, top, zero = {}, {}, {}
    for feat in BASE_FEATURES:
        if feat == "all":
            keep = np.arange(X_all.shape[1])
        else:
            rows, target = (lab, y) if feat == "lab" else (slice(None), y_all)
            corr = class_correlation(unit[rows], target)
            keep = np.argsort(-corr, kind="stable")[:N_FEATURES]
            keep = keep[corr[keep] > 0]  # "lab": at most the labeled documents' own words
        for norm in ("renorm", "nonorm"):
            X = normalize(X_all[:, keep]) if norm == "renorm" else unit[:, keep]
            Xl, Xt = X[lab], X[test]
            zero[f"{feat}/{norm}"] = float(np.mean(np.diff(Xt.tocsr().indptr) == 0))
            for loss in BASE_LOSSES:
                if loss == "sq":
                    model = L2SVM(lam=2 * LAM).fit(Xl, y)
                else:
                    C = 1 / (2 * LAM) if loss == "hinge" else \
                        1 / float(np.mean(Xl.multiply(Xl).sum(axis=1)))
                    model = OneVsRestClassifier(SVC(kernel="linear", C=C)).fit(Xl, y)
                pred = model.predict(Xt)
                key = f"{feat}/{norm}/{loss}"
                acc[key] = 100 * float(np.mean(pred == y_test))
                top[key] = 100 * float(max(np.mean(pred == c) for c in classes))
    return {"acc": acc, "top_pred_share": top, "zero_rows": zero,
            "test_share": [float(np.mean(y_test == c)) for c in classes],
            "n_test": int(test.size)}


def baseline(args) -> None:
    """--baseline: every (task, draw, size) of the supervised settings, resumable."""
    from sklearn.feature_extraction.text import CountVectorizer

    from semisup.text.querygen import query_analyzer

    with open(Path(args.workdir) / "tasks.pkl", "rb") as fh:
        cache = pickle.load(fh)
    out = RESULTS_DIR / f"active_table85_{args.tag}_w{args.worker}.jsonl"
    done = {(r["task"], r["rep"], r["n"]) for r in load_rows(args.tag)}
    names = args.tasks.split(",") if args.tasks else EVAL_TASKS
    for name, _, classes in [t for t in TASKS if t[0] in names]:
        items = cache["tasks"][name]
        vec = CountVectorizer(analyzer=query_analyzer("english"))
        X_all = vec.fit_transform([t for _, t, _ in items]).astype(np.float64).tocsr()
        for rep in range(args.reps):
            for n in (2, 5):
                if (name, rep, n) in done:
                    continue
                res = baseline_unit(X_all, items, classes, rep, n)
                res.update(task=name, rep=rep, n=n, load=os.getloadavg()[0],
                           newsgroups_remove=cache.get("newsgroups_remove", []))
                with open(out, "a") as fh:
                    fh.write(json.dumps(res) + "\n")
        print(f"{name}: done", flush=True)


def baseline_summary(tag: str, lib_tag: str) -> str:
    """Per task: the thesis's SVM, the benchmark's SVM (from ``lib_tag``), every setting."""
    rows = load_rows(tag)
    lib = {(r["task"], r["rep"], r["n"]): r["acc"]["SVM"] for r in load_rows(lib_tag)}
    keys = list(rows[0]["acc"])
    out = []
    for n in (2, 5):
        body, avg = [], {k: [] for k in ["thesis", "lib", "top"] + keys}
        for name in [t[0] for t in TASKS]:
            rs = [r for r in rows if r["task"] == name and r["n"] == n]
            if not rs:
                continue
            th = THESIS[name][0 if n == 2 else 3]
            lb = [lib[(name, r["rep"], n)] for r in rs if (name, r["rep"], n) in lib]
            shares = np.mean([r["test_share"] for r in rs], axis=0)
            cells = {k: np.mean([r["acc"][k] for r in rs]) for k in keys}
            for k, v in [("thesis", th), ("lib", np.mean(lb) if lb else np.nan),
                         ("top", 100 * shares.max())] + list(cells.items()):
                avg[k].append(v)
            body.append([name, len(rs), th, f"{np.mean(lb):.1f} ({len(lb)})" if lb else "-",
                         " / ".join(f"{100 * x:.0f}" for x in shares)]
                        + [f"{cells[k]:.1f}" for k in keys])
        body.append(["**average**", "", f"{np.mean(avg['thesis']):.1f}",
                     f"{np.nanmean(avg['lib']):.1f}", f"{np.mean(avg['top']):.0f} (majority)"]
                    + [f"{np.mean(avg[k]):.1f}" for k in keys])
        body.append(["**average minus thesis**", "", "",
                     f"{np.nanmean(avg['lib']) - np.mean(avg['thesis']):+.1f}", ""]
                    + [f"{np.mean(avg[k]) - np.mean(avg['thesis']):+.1f}" for k in keys])
        # how often a setting puts (nearly) every test document in one class
        rn = [r for r in rows if r["n"] == n]
        body.append(["draws with >= 90 % of the test set predicted as one class", "", "", "",
                     ""] + [f"{100 * np.mean([r['top_pred_share'][k] >= 90 for r in rn]):.0f} %"
                            for k in keys])
        out.append(f"### {n} labeled per class: SVM accuracy (%), mean over draws\n\n"
                   + table(["task", "draws", "thesis SVM", f"benchmark SVM (`{lib_tag}`, "
                            "draws)", "test class shares %"] + [f"`{k}`" for k in keys], body))
    zr = {k: np.mean([r["zero_rows"][k] for r in rows]) for k in rows[0]["zero_rows"]}
    legend = ("Settings `features/norm/loss`: features "
              + "; ".join(f"`{k}` = {v}" for k, v in BASE_FEATURES.items())
              + ". norm `renorm` = unit rows after the selection (the library), `nonorm` = "
              "unit tf over the whole vocabulary, then the selection (the thesis's order). "
              "loss " + "; ".join(f"`{k}` = {v}" for k, v in BASE_LOSSES.items())
              + ". Test documents without any selected term (score = bias only): "
              + ", ".join(f"`{k}` {100 * v:.0f} %" for k, v in zr.items()) + ".")
    loads = [r["load"] for r in rows]
    return (legend + f"\n\n{len(rows)} units; load average (1 min) at the end of the units: "
            f"median {np.median(loads):.1f}, max {max(loads):.1f}.\n\n" + "\n\n".join(out))


def load_rows(tag="main"):
    rows = []
    for f in sorted(RESULTS_DIR.glob(f"active_table85_{tag}_w*.jsonl")):
        for line in f.read_text().splitlines():
            if line.strip():
                rows.append(json.loads(line))
    return rows


def work(args) -> None:
    workdir = Path(args.workdir)
    with open(workdir / "tasks.pkl", "rb") as fh:
        cache = pickle.load(fh)
    index = SQLiteIndex.open(workdir / "index")
    out = RESULTS_DIR / f"active_table85_{args.tag}_w{args.worker}.jsonl"
    done = {(r["task"], r["rep"], r["n"]) for r in load_rows(args.tag)}
    protocols, learners = args.protocols.split(","), args.learners.split(",")
    tasks = [t for t in TASKS if t[0] in (args.tasks.split(",") if args.tasks else EVAL_TASKS)]
    units = [(rep, t, n) for rep in range(args.reps) for t in tasks for n in (2, 5)]
    if args.task_major:  # all draws of a task before the next (complete tasks first)
        units.sort(key=lambda x: ([t[0] for t in tasks].index(x[1][0]), x[0], x[2]))
    per_task = {}
    for unit, (rep, (name, prefix, classes), n) in enumerate(units):
        if unit % args.n_workers == args.worker and (name, rep, n) not in done:
            backend = index
            if args.collection == "dataset":
                # controlled stand-in for an on-topic search engine: the task's own data
                # set (labeled documents excluded by the pipeline), as in Table 8.4's Indri
                # test database
                if name not in per_task:
                    per_task.clear()
                    per_task[name] = MemoryBM25Index(
                        [(i, t) for i, t, _ in cache["tasks"][name]])
                backend = per_task[name]
            res = run_unit(backend, cache["tasks"][name], cache["labels"], prefix, classes,
                           rep, n, protocols, learners)
            res.update(task=name, rep=rep, n=n, load=os.getloadavg()[0], per_query=PER_QUERY,
                       query_size=QUERY_SIZE,
                       newsgroups_remove=cache.get("newsgroups_remove", []))
            with open(out, "a") as fh:
                fh.write(json.dumps(res) + "\n")
            print(f"{name} rep {rep} n {n}: " + ", ".join(
                f"{k} {v:.1f}" for k, v in res["acc"].items()), flush=True)


def _base(key: str) -> str:
    """The supervised baseline of a result key (same feature protocol)."""
    return "SVM" + key[key.index("@"):] if "@" in key else "SVM"


def compare(rows, other, tag, other_tag) -> str:
    """Same learner, same task and draw in two result sets (e.g. stripped vs raw 20NG)."""
    by = {(r["task"], r["rep"], r["n"]): r for r in other}
    keys = [k for k in rows[0]["acc"] if all(k in r["acc"] for r in rows)]
    pairs = [(r, by[(r["task"], r["rep"], r["n"])]) for r in rows
             if (r["task"], r["rep"], r["n"]) in by]
    # a key "L@PROTO" of this run is paired with "L" of the other run when the other run
    # lacks it (e.g. a filtered or oracle pool against the plain retrieved pool)
    okey = {k: k if all(k in b["acc"] for _, b in pairs) else k.partition("@")[0]
            for k in keys}
    keys = [k for k in keys if all(okey[k] in b["acc"] for _, b in pairs)]
    body = []
    names = [t[0] for t in TASKS if any(a["task"] == t[0] for a, _ in pairs)]
    for n in (2, 5):
        for name in names + ["**all tasks**"]:
            ps = [(a, b) for a, b in pairs if a["n"] == n
                  and (name == "**all tasks**" or a["task"] == name)]
            if not ps:
                continue
            cells = []
            for k in keys:
                d = np.array([a["acc"][k] - b["acc"][okey[k]] for a, b in ps])
                se = d.std(ddof=1) / np.sqrt(d.size) if d.size > 1 else 0.0
                cells.append(f"{d.mean():+.1f} ± {se:.1f}")
            body.append([name, n, len(ps)] + cells)
    return (f"## `{tag}` minus `{other_tag}`: accuracy points, same task and draw "
            "(mean ± s.e.)\n\n" + table(["task", "l/cls", "draws"] + keys, body))


def summary(tag: str = "main", compare_tag: str = "") -> None:
    rows = load_rows(tag)
    names = [t[0] for t in TASKS if any(r["task"] == t[0] for r in rows)]
    keys = [k for k in rows[0]["acc"] if all(k in r["acc"] for r in rows)]
    out, red_rows = [], []
    for n in (2, 5):
        per_task, draws = {}, {}
        for name in names:
            rs = [r for r in rows if r["task"] == name and r["n"] == n]
            if rs:
                per_task[name] = {k: np.array([r["acc"][k] for r in rs]) for k in keys}
                draws[name] = len(rs)
        avg = {k: np.mean([per_task[t][k].mean() for t in per_task]) for k in keys}
        # reduction of the average error (the thesis's 28 % / 34 % are computed this way)
        red_avg = {k: 100 * (avg[k] - avg[_base(k)]) / (100 - avg[_base(k)]) for k in keys}
        red = {k: 100 * np.mean([(per_task[t][k].mean() - per_task[t][_base(k)].mean())
                                 / (100 - per_task[t][_base(k)].mean()) for t in per_task])
               for k in keys}
        red_rows.append([f"{n}/cls"] + [f"{red_avg[k]:+.1f}" for k in keys])
        for proto in dict.fromkeys(k.partition("@")[2] for k in keys):
            ks = [k for k in keys if k.partition("@")[2] == proto]
            body = [[t, draws[t]] + [f"{per_task[t][k].mean():.1f} ± {per_task[t][k].std():.1f}"
                                     for k in ks] for t in per_task]
            body.append(["**average**", ""] + [f"{avg[k]:.1f}" for k in ks])
            body.append(["**reduction of the average error vs SVM %**", ""]
                        + [f"{red_avg[k]:+.1f}" for k in ks])
            body.append(["mean over tasks of the per-task error reduction %", ""]
                        + [f"{red[k]:+.1f}" for k in ks])
            # paired gains: per (task, draw) accuracy minus the SVM's on the same draw
            gains = {k: np.concatenate([per_task[t][k] - per_task[t][_base(k)]
                                        for t in per_task]) for k in ks}
            body.append(["paired gain over SVM, points (mean ± s.e. over task-draws)", ""]
                        + [f"{gains[k].mean():+.1f} ± "
                           f"{gains[k].std(ddof=1) / np.sqrt(gains[k].size):.1f}"
                           if gains[k].size > 1 else "" for k in ks])
            out.append(f"## Accuracy (%), {n} labeled per class, features "
                       f"'{proto or 'lib'}', mean ± std over draws\n\n"
                       + table(["task", "draws"] + ks, body))
    # diagnostics
    drows = []
    for name in names:
        for n in (2, 5):
            rs = [r for r in rows if r["task"] == name and r["n"] == n]
            if not rs:
                continue
            d = [r["diag"] for r in rs]

            def m(key, d=d):
                v = [x[key] for x in d if x[key] is not None]
                return 100 * float(np.mean(v)) if v else float("nan")

            rw = np.mean([x["r_weak"][-1] for x in d])
            rt = np.mean([x["r_true_in_task"][-1] for x in d if x["r_true_in_task"]])
            rte = np.mean([x["r_test"][-1] for x in d])
            suffix = next((k[k.index("@"):] for k in rs[0]["acc"] if "@" in k), "") \
                if "SVM" not in rs[0]["acc"] else ""
            gain = np.mean([r["acc"].get("CCCP-lab" + suffix, np.nan)
                            - r["acc"]["SVM" + suffix] for r in rs])
            again = np.mean([r["acc"].get("Aux" + suffix, np.nan)
                             - r["acc"]["SVM" + suffix] for r in rs])
            drows.append([name, n, np.mean([x["n_unique"] for x in d]), m("precision"),
                          m("share_corpus"), m("share_task"), m("weak_acc_in_task"),
                          f"{rw:.2f} / {rt:.2f} / {rte:.2f}", m("share_test_overlap"),
                          f"{again:+.1f}", f"{gain:+.1f}"])
    out.append(
        "## Diagnostics of the retrieved pool (mean over draws)\n\n"
        "precision: share of the distinct retrieved documents whose true class (in the task's "
        "corpus) equals their weak (query) label; corpus / task: share from the task's corpus "
        "/ carrying one of the task's classes; weak acc: weak-label accuracy on the latter; "
        "r: share of the last class among weak labels / among the in-task retrieved / in the "
        "test set; overlap: share of retrieved documents that are test documents; gains: "
        "accuracy points over SVM.\n\n"
        + table(["task", "l/cls", "distinct retrieved", "precision %", "corpus %", "task %",
                 "weak acc %", "r weak / true / test", "test overlap %", "Aux gain",
                 "CCCP-lab gain"], drows))
    tw = {k: sum(r["wall"][k] for r in rows) for k in keys}
    tc = {k: sum(r["cpu"][k] for r in rows) for k in keys}
    loads = [r["load"] for r in rows]
    ref = next((k for k in keys if k.startswith("CCCP-lab")), keys[0])
    out.append("## Training time over all units (s, wall / CPU)\n\n"
               + table(["learner", "wall s", "CPU s", f"CPU ratio to {ref}"],
                       [[k, tw[k], tc[k], tc[k] / tc[ref]] for k in keys])
               + f"\n\n{len(rows)} units; load average (1 min) at the end of the units: "
               f"min {min(loads):.1f}, median {np.median(loads):.1f}, max {max(loads):.1f}.")
    head = ("# Table 8.5 (thesis ch. 8) on local corpora: retrieval-based unlabeled data\n\n"
            f"Commands: `python benchmarks/bench_active_table85.py --setup --workdir DIR`, then "
            "`... --workdir DIR --reps R --worker i --n-workers 2` (resumable), summary by "
            f"`{command_line()}`.\n\n{machine_info()}\n\n"
            "Thesis (Semi-SVM, reduction of the average error): 28.0 % (2/cls), 34.0 % (5/cls); "
            "Aux-SVM 17.6 % / 26.3 %.  Summary of the reductions of the average error here:\n\n"
            + table(["labeled"] + keys, red_rows))
    removed = sorted({", ".join(r.get("newsgroups_remove", [])) or "none" for r in rows})
    head += f"\n\n20 Newsgroups parts removed from the posts: {'; '.join(removed)}."
    if compare_tag:
        out.append(compare(rows, load_rows(compare_tag), tag, compare_tag))
    text = head + "\n\n" + "\n\n".join(out) + "\n"
    (RESULTS_DIR / f"active_table85_{tag}.md").write_text(text)
    print(text)


SEMI = ["CCCP-lab", "CCCP-ret", "TSVM", "DA"]


def verdict(tag: str, oracle_tag: str, proto: str = "lib+opool") -> str:
    """Per task: errors of SVM, the best S3VM on the retrieved pool, the best on the oracle
    pool, the thesis's SVM and Semi-SVM, and the reductions (same draws in both tags)."""
    rows = {(r["task"], r["rep"], r["n"]): r for r in load_rows(tag)}
    orows = [r for r in load_rows(oracle_tag) if (r["task"], r["rep"], r["n"]) in rows]
    out = []
    for n in (2, 5):
        body, tot = [], {k: [] for k in ("svm", "semi", "orc", "th_svm", "th_semi", "svm_o")}
        summ: dict[str, list] = {}
        for name in [t[0] for t in TASKS]:
            os_ = [r for r in orows if r["task"] == name and r["n"] == n]
            if not os_:
                continue
            rs = [rows[(name, r["rep"], n)] for r in os_]
            err = {k: 100 - np.mean([r["acc"][k] for r in rs]) for k in ["SVM", "Aux"] + SEMI}
            oerr = {k: 100 - np.mean([r["acc"][f"{k}@{proto}"] for r in os_])
                    for k in ["SVM", "Aux"] + SEMI}
            for k in ["Aux"] + SEMI:
                summ.setdefault(k, []).append(err[k])
                summ.setdefault(f"{k} (oracle pool)", []).append(oerr[k])
            summ.setdefault("SVM", []).append(err["SVM"])
            best = min(SEMI, key=err.get)
            obest = min(SEMI, key=oerr.get)
            th = THESIS[name][0 if n == 2 else 3: 3 if n == 2 else 6]
            th_svm, th_semi = 100 - th[0], 100 - th[2]

            def red(e, b):
                return f"{100 * (b - e) / b:+.0f}"

            body.append([name, len(os_), f"{err['SVM']:.1f}", f"{err[best]:.1f} ({best})",
                         red(err[best], err["SVM"]), f"{oerr[obest]:.1f} ({obest})",
                         red(oerr[obest], err["SVM"]), f"{oerr['Aux']:.1f}",
                         f"{th_svm:.1f}", f"{th_semi:.1f}", red(th_semi, th_svm)])
            for k, v in [("svm", err["SVM"]), ("semi", err[best]), ("orc", oerr[obest]),
                         ("th_svm", th_svm), ("th_semi", th_semi), ("svm_o", oerr["SVM"])]:
                tot[k].append(v)
        a = {k: np.mean(v) for k, v in tot.items()}
        body.append(["**average** (reduction of the average error)", "", f"{a['svm']:.1f}",
                     f"{a['semi']:.1f}", f"{100 * (a['svm'] - a['semi']) / a['svm']:+.1f}",
                     f"{a['orc']:.1f}", f"{100 * (a['svm'] - a['orc']) / a['svm']:+.1f}", "",
                     f"{a['th_svm']:.1f}", f"{a['th_semi']:.1f}",
                     f"{100 * (a['th_svm'] - a['th_semi']) / a['th_svm']:+.1f}"])
        assert np.allclose(a["svm"], a["svm_o"]), "the oracle run must reproduce the SVM"
        out.append(f"### {n} labeled per class: test error (%), mean over draws\n\n" + table(
            ["task", "draws", "SVM", "best S3VM, retrieved pool", "reduction %",
             "best S3VM, oracle pool", "reduction %", "Aux-SVM, oracle pool (true labels)",
             "thesis SVM", "thesis Semi-SVM", "thesis reduction %"], body))
        e_svm = np.mean(summ["SVM"])
        out.append(f"Reduction of the average error vs SVM, one method for all tasks "
                   f"({n}/cls): " + ", ".join(
                       f"{k} {100 * (e_svm - np.mean(v)) / e_svm:+.1f} %"
                       for k, v in summ.items() if k != "SVM") + ".")
    loads = [r["load"] for r in orows] + [rows[(r["task"], r["rep"], r["n"])]["load"]
                                          for r in orows]
    balance = ("the true class shares as balance (`-ret`)" if proto.endswith("opool")
               else "the retrieved weak labels' class shares as balance (`-ret`)")
    return (f"Units: {len(orows)} (task, draw, size) present in both `{tag}` and "
            f"`{oracle_tag}`; machine load (1-min average at the end of each unit) median "
            f"{np.median(loads):.1f}, max {max(loads):.1f}; `uptime` now: "
            f"{os.getloadavg()}.\n\n"
            "\"best\" = the S3VM (of " + ", ".join(SEMI) + ") with the lowest mean error on "
            "that task, chosen after the fact: an optimistic bound, not a method. The oracle "
            "pool has as many documents as the retrieved pool, drawn from the task's own "
            f"documents of its classes (labeled ones excluded), with {balance} and the true "
            f"labels as Aux-SVM's weak labels (`{proto}`); the features are "
            "those chosen with the retrieved pool, so the SVM is the same.\n\n"
            + "\n\n".join(out))


PRIOR_LABELS = {"weak": "retrieved weak-label shares (library default, `-ret`)",
                "lab": "labeled shares (1/K)", "pred": "labeled SVM's predicted shares "
                "(`ppred`)", "em": "EM prior adjustment, Platt posteriors (Saerens 2002)",
                "mix": "score mixture, means re-estimated", "mixfix": "score mixture, "
                "labeled score model fixed (Saerens EM on Gaussian scores)",
                "nb": "multinomial mixture on the features (Nigam et al. 2000)"}


def prior_summary(tag: str, ret_tag: str = "strip", true_tag: str = "tbal") -> str:
    """Label-free prior estimates (``lib+em/mix/mixfix`` of ``tag``): their error against the
    test set's true class shares, and what they give as balance, paired on the same draws
    with the retrieved balance (``ret_tag``) and the true shares (``true_tag``, ``lib+tbal``).
    """
    merged: dict = {}
    for i, t in enumerate(tag.split(",")):  # several runs of the same draws, merged
        for r in load_rows(t):
            key = (r["task"], r["rep"], r["n"])
            if i == 0:
                merged[key] = r
            elif key in merged:
                merged[key]["acc"].update(r["acc"])
                merged[key]["diag"].update(r["diag"])
                merged[key]["seen"] = i
    n_tags = len(tag.split(","))
    rows = [r for r in merged.values() if n_tags == 1 or r.get("seen") == n_tags - 1]
    ret = {(r["task"], r["rep"], r["n"]): r for r in load_rows(ret_tag)}
    tru = {(r["task"], r["rep"], r["n"]): r for r in load_rows(true_tag)}
    variants = [k.partition("+")[2] for k in rows[0]["acc"] if k.startswith("SVM@lib+")
                and (k.partition("+")[2] in PRIOR_METHODS
                     or k.partition("+")[2][4:].isdigit())]
    learners = [k.partition("@")[0] for k in rows[0]["acc"]
                if k.endswith(f"@lib+{variants[0]}") and not k.startswith("SVM")]
    # a variant run with the SVM only (its prior estimates) enters the prior-error table only
    variants = [v for v in variants if all(f"{lrn}@lib+{v}" in rows[0]["acc"]
                                           for lrn in learners)]
    rows = [r for r in rows if (r["task"], r["rep"], r["n"]) in ret]
    for r in rows:
        assert r["acc"][f"SVM@lib+{variants[0]}"] == ret[(r["task"], r["rep"], r["n"])][
            "acc"]["SVM"], "the SVM must be the one of the retrieved-balance run"
    names = [t[0] for t in TASKS if any(r["task"] == t[0] for r in rows)]
    out = []
    # 1. prior error: mean over units of the mean absolute error over the classes
    est_keys = ["weak", "lab"] + [k for k in ["pred"] + list(PRIOR_METHODS) + variants
                                  if f"prior_{k}" in rows[0]["diag"]]
    est_keys = list(dict.fromkeys(est_keys))

    def estimate(r, k):
        d = r["diag"]
        if k == "weak":
            return np.array(d["r_weak"])
        if k == "lab":
            return np.full(len(d["r_test"]), 1 / len(d["r_test"]))
        return np.array(d[f"prior_{k}"])

    body = []
    for n in (2, 5):
        for name in names + ["**all tasks**"]:
            rs = [r for r in rows if r["n"] == n and name in (r["task"], "**all tasks**")]
            cells = []
            for k in est_keys:
                e = [np.mean(np.abs(estimate(r, k) - np.array(r["diag"]["r_test"])))
                     for r in rs]
                cells.append(f"{100 * np.mean(e):.1f}")
            rt = np.mean([r["diag"]["r_test"][-1] for r in rs])
            body.append([name, n, len(rs), f"{100 * rt:.0f}"] + cells)
    def label(k):
        return PRIOR_LABELS.get(k, f"true shares moved by {k[4:]} points (oracle, diagnostic)")

    out.append("## Error of the class-prior estimates on the documents to classify\n\n"
               "Mean over draws of the mean absolute error over the classes, in points of "
               "class share (the true shares are those of the test documents, used only "
               "here).  Columns: " + "; ".join(f"`{k}` = {label(k)}" for k in est_keys)
               + ".\n\n" + table(["task", "l/cls", "draws", "true share of the last class %"]
                                  + [f"`{k}`" for k in est_keys], body))
    # 2. reductions of the average error vs SVM, per balance
    bal = [("retrieved", ret, ""), ("true shares", tru, "@lib+tbal")] + [
        (v, None, f"@lib+{v}") for v in variants]

    def acc_of(r, learner, source, suffix):
        key = (r["task"], r["rep"], r["n"])
        if source is None:
            return r["acc"][learner + suffix]
        other = source.get(key)
        return np.nan if other is None else other["acc"].get(learner + suffix, np.nan)

    red_body, task_out = [], []
    for n in (2, 5):
        rn = [r for r in rows if r["n"] == n]
        svm = {t: np.mean([r["acc"][f"SVM@lib+{variants[0]}"] for r in rn if r["task"] == t])
               for t in names}
        e_svm = 100 - np.mean(list(svm.values()))
        for lrn in learners:
            cells = []
            for _, source, suffix in bal:
                a = [np.mean([acc_of(r, lrn, source, suffix) for r in rn if r["task"] == t])
                     for t in names]
                cells.append(f"{100 * (e_svm - (100 - np.mean(a))) / e_svm:+.1f}"
                             if np.all(np.isfinite(a)) else "-")
            red_body.append([n, lrn] + cells)
        tb = []
        for t in names:
            rt = [r for r in rn if r["task"] == t]
            tb.append([t, len(rt), f"{100 - svm[t]:.1f}"] + [
                f"{100 - np.mean([acc_of(r, 'DA', src, suf) for r in rt]):.1f}"
                for _, src, suf in bal])
        task_out.append(f"### DA test error (%), {n} labeled per class\n\n" + table(
            ["task", "draws", "SVM"] + [f"DA, {b}" for b, _, _ in bal], tb))
    out.append("## Reduction of the average error vs SVM (%), same draws\n\n"
               f"`retrieved` = `{ret_tag}`, `true shares` = `{true_tag}` (`lib+tbal`), the "
               "others this run; all on the same retrieved pool and features.  Thesis "
               "Semi-SVM: 28.0 % (2/cls), 34.0 % (5/cls).\n\n"
               + table(["l/cls", "learner"] + [b for b, _, _ in bal], red_body))
    out += task_out
    # 3. paired accuracy differences
    pb = []
    for n in (2, 5):
        rn = [r for r in rows if r["n"] == n]
        for lrn in learners:
            cells = []
            for v in variants:
                for _, source, suffix in bal[:2]:
                    d = np.array([r["acc"][f"{lrn}@lib+{v}"] - acc_of(r, lrn, source, suffix)
                                  for r in rn])
                    d = d[np.isfinite(d)]
                    cells.append(f"{d.mean():+.1f} ± {d.std(ddof=1) / np.sqrt(d.size):.1f}"
                                 f" ({d.size})")
            pb.append([n, lrn] + cells)
    out.append("## Paired accuracy differences (points, mean ± s.e. (task-draws))\n\n"
               + table(["l/cls", "learner"] + [f"{v} − {b}" for v in variants
                                               for b, _, _ in bal[:2]], pb))
    loads = [r["load"] for r in rows]
    return (f"{len(rows)} units of `{tag}`; load average (1 min) at the end of the units: "
            f"median {np.median(loads):.1f}, max {max(loads):.1f}.\n\n" + "\n\n".join(out))


def single_draw(tag: str, n_boot: int = 20000) -> str:
    """How likely is a table like the thesis's if it came from ONE draw per task?

    Resamples one of our draws per task (bootstrap, ``n_boot`` tables) and reports the
    distribution of the 9-task SVM average and of each learner's reduction of the average
    error, with the probability of reaching the thesis's figures.
    """
    rows = load_rows(tag)
    rng = np.random.default_rng(0)
    body = []
    for n in (2, 5):
        names = [t[0] for t in TASKS if any(r["task"] == t[0] and r["n"] == n for r in rows)]
        by = {t: [r["acc"] for r in rows if r["task"] == t and r["n"] == n] for t in names}
        keys = [k for k in by[names[0]][0] if all(k in a for t in names for a in by[t])]
        picks = [[by[t][rng.integers(len(by[t]))] for t in names] for _ in range(n_boot)]
        avg = {k: np.array([np.mean([a[k] for a in p]) for p in picks]) for k in keys}
        th_svm = np.mean([THESIS[t][0 if n == 2 else 3] for t in names])
        th_red = 28.0 if n == 2 else 34.0
        body.append([n, "SVM average accuracy", f"{avg['SVM'].mean():.1f} ± "
                     f"{avg['SVM'].std():.1f}", f"thesis {th_svm:.1f}",
                     f"{np.mean(avg['SVM'] <= th_svm):.4f} (P(<= thesis))"])
        for k in keys:
            if k == "SVM" or "@" in k:
                continue
            red = 100 * (avg[k] - avg["SVM"]) / (100 - avg["SVM"])
            body.append([n, f"{k}: reduction of the average error %", f"{red.mean():+.1f} ± "
                         f"{red.std():.1f} (99th pct {np.percentile(red, 99):+.1f})",
                         f"thesis Semi-SVM {th_red:.0f}",
                         f"{np.mean(red >= th_red):.4f} (P(>= thesis))"])
    return (f"## One draw per task: {n_boot} resampled tables of `{tag}`\n\n"
            "The thesis does not say how many draws Table 8.5 averages; if it were one, "
            "its figures would be one such table.\n\n"
            + table(["l/cls", "figure", "mean ± sd over resampled tables", "thesis",
                     "probability"], body))


def main() -> None:
    global GAMMA, PER_QUERY, QUERY_SIZE
    ap = argparse.ArgumentParser()
    ap.add_argument("--workdir", default="/tmp/semisup-active")
    ap.add_argument("--setup", action="store_true")
    ap.add_argument("--summary", action="store_true")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--tasks", default="")
    ap.add_argument("--worker", type=int, default=0)
    ap.add_argument("--n-workers", type=int, default=1)
    ap.add_argument("--collection", choices=["union", "dataset"], default="union",
                    help="retrieve from the union index or from the task's own data set")
    ap.add_argument("--gamma", type=float, default=GAMMA,
                    help="weight of each retrieved document (thesis: 0.01)")
    ap.add_argument("--per-query", type=int, default=PER_QUERY,
                    help="documents retrieved per query (retrieval depth; thesis: 100)")
    ap.add_argument("--query-size", type=int, default=QUERY_SIZE,
                    help="terms per DQG query (thesis: 3)")
    ap.add_argument("--task-major", action="store_true",
                    help="run every draw of a task before the next task")
    ap.add_argument("--tag", default="main", help="name of the result set (JSONL files)")
    ap.add_argument("--protocols", default="lib", help=f"comma list of {PROTOCOLS}")
    ap.add_argument("--learners", default=",".join(LEARNERS), help="comma list")
    ap.add_argument("--strip", action="store_true",
                    help="--setup: strip headers, quotes, signatures of the 20NG posts")
    ap.add_argument("--baseline", action="store_true",
                    help="supervised SVM settings only, no retrieval (with --summary: the "
                         "per-task table; --compare names the tag of the benchmark's SVM)")
    ap.add_argument("--single-draw", action="store_true",
                    help="--summary: distribution of one-draw-per-task tables (bootstrap)")
    ap.add_argument("--verdict", default="",
                    help="TAG[:PROTOCOL] of an oracle-pool run (protocol default lib+opool): "
                         "per-task errors of --tag's retrieved pool, of that pool and of "
                         "the thesis")
    ap.add_argument("--prior-summary", default="",
                    help="RET_TAG,TRUE_TAG: label-free prior estimates of --tag (lib+em, "
                         "lib+mix, lib+mixfix) against the retrieved balance and the true "
                         "shares (lib+tbal) of those runs")
    ap.add_argument("--compare", default="",
                    help="--summary: also compare with this tag, task and draw paired")
    args = ap.parse_args()
    GAMMA, PER_QUERY, QUERY_SIZE = args.gamma, args.per_query, args.query_size
    if args.setup:
        setup(Path(args.workdir), args.strip)
    elif args.baseline and args.summary:
        text = (f"# Table 8.5: the supervised SVM baseline vs the thesis's\n\nCommand: "
                f"`{command_line()}`\n\n{machine_info()}\n\n"
                + baseline_summary(args.tag, args.compare or "strip") + "\n")
        (RESULTS_DIR / f"active_table85_{args.tag}.md").write_text(text)
        print(text)
    elif args.baseline:
        baseline(args)
    elif args.verdict:
        vtag, _, vproto = args.verdict.partition(":")
        text = (f"# Table 8.5: retrieved pool vs oracle pool vs the thesis\n\nCommand: "
                f"`{command_line()}`\n\n{machine_info()}\n\n"
                + verdict(args.tag, vtag, vproto or "lib+opool") + "\n")
        name = f"{vtag}_{vproto}" if vproto else vtag
        (RESULTS_DIR / f"active_table85_{name}_verdict.md").write_text(text)
        print(text)
    elif args.prior_summary:
        ret_tag, _, true_tag = args.prior_summary.partition(",")
        text = (f"# Table 8.5: a label-free class prior as the balance\n\nCommand: "
                f"`{command_line()}`\n\n{machine_info()}\n\n"
                + prior_summary(args.tag, ret_tag, true_tag or "tbal") + "\n")
        (RESULTS_DIR / f"active_table85_{args.tag.replace(',', '+')}_prior.md").write_text(text)
        print(text)
    elif args.summary and args.single_draw:
        text = (f"# Table 8.5 as one draw per task\n\nCommand: `{command_line()}`\n\n"
                + single_draw(args.tag) + "\n")
        (RESULTS_DIR / f"active_table85_{args.tag}_single_draw.md").write_text(text)
        print(text)
    elif args.summary:
        summary(args.tag, args.compare)
    else:
        work(args)


if __name__ == "__main__":
    main()
