"""Chapter 8 of the thesis on local corpora: active search with a real BM25 engine.

The union of 20 Newsgroups (bydate), Reuters-21578 (every story with a body), OHSUMED
(single-label) and WebKB (course, full text) -- 48,875 documents -- stands in for the Web.

1. **Engine**: build rate and query latency of the on-disk SQLite FTS5 index
   (:class:`semisup.text.SQLiteIndex`) next to the in-memory sparse BM25
   (:class:`semisup.text.MemoryBM25Index`), same tokenizer and formula; reopen time.
2. **Table 8.4**: precision of the top 100 documents per query (a retrieved document is
   relevant when it belongs to the task's corpus and carries the query's class), query
   sizes 3-5, 10 labeled documents (5 per class), all five generators, ``--reps`` draws.
3. **Table 8.5**: accuracy on the rest of the task's documents of SVM (labeled only),
   Aux-SVM, Semi-SVM (CCCPS3VM) and the library's TSVM and DA, each trained on the labeled
   plus the retrieved documents (one 3-term DQG query per labeled document, top 100, labeled
   documents excluded), 600 most class-correlated terms, unit-length tf, lambda = gamma = 0.01.
4. **Scale**: CCCPS3VM vs TransductiveSVM (same lam, lam_u; s = 0 makes the objectives
   equal up to the bias treatment) on 20 Newsgroups split into 5-line chunks (comp/sci vs
   the rest), 10^4 and 10^5 rows, 500 labeled.

Usage: ``python benchmarks/bench_active_search.py [--reps 5] [--sections index,precision,
accuracy,scale]``
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import Contention, PeakRSS, Timer, fmt, report, table  # noqa: E402
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer  # noqa: E402
from sklearn.preprocessing import normalize  # noqa: E402

from semisup.linear import CCCPS3VM, L2SVM, DeterministicAnnealingSVM, TransductiveSVM  # noqa: E402
from semisup.text import ActiveSearchPipeline, AuxiliarySVM, MemoryBM25Index, SQLiteIndex  # noqa: E402
from semisup.text.corpora import load_corpora  # noqa: E402
from semisup.text.querygen import METHODS, generate_queries, query_analyzer  # noqa: E402
from semisup.text.search import tokenize  # noqa: E402

LAM = GAMMA = 0.01
# (name, corpus prefix, classes) -- the thesis's Table 8.1 tasks available locally
TASKS = [
    ("auto vs motor", "20ng/", ("rec.autos", "rec.motorcycles")),
    ("corn vs wheat", "reuters/", ("corn", "wheat")),
    ("ship vs trade", "reuters/", ("ship", "trade")),
    ("money vs trade", "reuters/", ("money-fx", "trade")),
    ("bacterial vs virus", "ohsumed/", ("C01", "C02")),
    ("musculo vs digestive", "ohsumed/", ("C05", "C06")),
    ("male vs female", "ohsumed/", ("C12", "C13")),
    ("sci (4 groups)", "20ng/", ("sci.crypt", "sci.electronics", "sci.med", "sci.space")),
    ("fourDiseases", "ohsumed/", ("C07", "C08", "C09", "C10")),
]
PRECISION_TASKS = ["musculo vs digestive", "corn vs wheat", "bacterial vs virus",
                   "auto vs motor"]


def task_docs(docs, prefix, classes):
    """Documents of the corpus carrying exactly one of the task's classes, and that class."""
    out = []
    for d in docs:
        if d.id.startswith(prefix):
            hit = [c for c in classes if c in d.labels]
            if len(hit) == 1:
                out.append((d.id, d.text, hit[0]))
    return out


def draw(rng, items, classes, per_class):
    labels = np.array([c for _, _, c in items])
    return np.concatenate([rng.choice(np.flatnonzero(labels == c), per_class, replace=False)
                           for c in classes])


def section_index(docs, workdir):
    pairs = [(d.id, d.text) for d in docs]
    with Contention() as load:
        with PeakRSS() as mem_sql, Timer() as t_sql:
            index = SQLiteIndex.build(workdir / "index", pairs)
        with Timer() as t_open:
            index.close()
            index = SQLiteIndex.open(workdir / "index")
        with PeakRSS() as mem_mem, Timer() as t_mem:
            memory = MemoryBM25Index(pairs)
        rng = np.random.default_rng(0)
        vocab = np.array(list(memory.vocabulary_))
        df = np.diff(memory._Xt.indptr)
        common = vocab[(df >= 5) & (df <= 5000)]
        queries = [list(rng.choice(common, 3, replace=False)) for _ in range(300)]
        lat = {}
        for name, backend in (("sqlite", index), ("memory", memory)):
            times = []
            for q in queries:
                t0 = time.perf_counter()
                backend.search(q, 100)
                times.append(time.perf_counter() - t0)
            lat[name] = np.array(times)
        agree = np.mean([index.search(q, 100)[0] == memory.search(q, 100)[0]
                         for q in queries[:50]])
    size = sum(p.stat().st_size for p in (workdir / "index").iterdir())
    rows = [["SQLite FTS5 (on disk)", len(pairs), t_sql.seconds, len(pairs) / t_sql.seconds,
             np.median(lat["sqlite"]) * 1e3, np.percentile(lat["sqlite"], 95) * 1e3,
             mem_sql.peak / 2**20, size / 2**20],
            ["sparse BM25 (in memory)", len(pairs), t_mem.seconds, len(pairs) / t_mem.seconds,
             np.median(lat["memory"]) * 1e3, np.percentile(lat["memory"], 95) * 1e3,
             mem_mem.peak / 2**20, float("nan")]]
    text = ("## 1. Search engine\n\n" + table(
        ["backend", "docs", "build s", "docs/s", "query ms (median)", "query ms (p95)",
         "peak RSS MiB", "index MiB"], rows)
        + f"\n\nReopening the FTS5 index: {t_open.seconds * 1e3:.1f} ms (no re-indexing). "
        f"Build-rate ratio FTS5 / in-memory = {t_mem.seconds and t_sql.seconds / t_mem.seconds:.2f}"
        f" (time), median latency ratio FTS5 / in-memory = "
        f"{np.median(lat['sqlite']) / np.median(lat['memory']):.2f}.  300 random 3-term OR "
        "queries (terms with document frequency 5-5000), top 100.  The two backends return "
        f"the same top-100 id list on {agree:.0%} of 50 queries (scores agree; order can differ "
        "only on ties).\n\n" + load.line())
    return index, text


def section_precision(docs, index, reps):
    rows = []
    by_id = {}
    for d in docs:
        by_id[d.id] = d.labels
    summary = {m: [] for m in METHODS}
    for name, prefix, classes in TASKS:
        if name not in PRECISION_TASKS:
            continue
        items = task_docs(docs, prefix, classes)
        res = {(m, k): [] for m in METHODS for k in (3, 4, 5)}
        for rep in range(reps):
            rng = np.random.default_rng(100 + rep)
            lab = draw(rng, items, classes, 5)
            texts = [items[i][1] for i in lab]
            labels = np.array([items[i][2] for i in lab])
            ids = [items[i][0] for i in lab]

            def relevant(doc_id, label, prefix=prefix):
                return doc_id.startswith(prefix) and label in by_id[doc_id]

            for m in METHODS:
                for k in (3, 4, 5):
                    cv = CountVectorizer(analyzer=query_analyzer())
                    X = cv.fit_transform(texts)
                    qs = generate_queries(normalize(X), labels, cv.get_feature_names_out(), m,
                                          k)  # C = 10 for DQG, as the pipeline
                    precs = []
                    for q in qs:
                        found, _ = index.search(list(q.terms), 100 + len(ids))
                        found = [f for f in found if f not in ids][:100]
                        precs.append(np.mean([relevant(f, q.label) for f in found])
                                     if found else 0.0)
                    res[(m, k)].append(np.mean(precs))
        for m in METHODS:
            vals = [100 * np.mean(res[(m, k)]) for k in (3, 4, 5)]
            rows.append([name, m.upper()] + vals)
            summary[m].append(vals)
    # rank of each generator per (task, size)
    ranks = {m: [] for m in METHODS}
    n_tasks = len(next(iter(summary.values())))
    for t in range(n_tasks):
        for j in range(3):
            vals = {m: summary[m][t][j] for m in METHODS}
            order = sorted(METHODS, key=lambda m: -vals[m])
            for m in METHODS:
                ranks[m].append(order.index(m) + 1)
    rank_rows = [[m.upper(), np.mean(np.array(summary[m])), np.mean(ranks[m]),
                  sum(r <= 2 for r in ranks[m]), len(ranks[m])] for m in METHODS]
    return ("## 2. Table 8.4: retrieval precision of the top 100 (%)\n\n"
            f"10 labeled documents (5 per class), {reps} random draws, union index; DQG: one "
            "query per labeled document, baselines: one per class.\n\n"
            + table(["task", "generator", "size 3", "size 4", "size 5"], rows)
            + "\n\nSummary over tasks and sizes:\n\n"
            + table(["generator", "mean precision %", "mean rank", "times 1st or 2nd",
                     "cases"], rank_rows))


def train(learner, X, labels, y_semi, aux_y, aux):
    """One learner of Table 8.5 on the pipeline's features (labeled rows first)."""
    l = labels.shape[0]
    u = X.shape[0] - l
    semi = dict(lam=LAM / l, lam_u=GAMMA * u / l)  # thesis scaling -> (1/2l, 1/2u) form
    if learner == "SVM":
        return L2SVM(lam=2 * LAM).fit(X[:l], labels)
    if learner == "Aux-SVM":
        return AuxiliarySVM(lam=2 * LAM, gamma=GAMMA).fit(X, aux_y, auxiliary=aux)
    if learner == "Semi-SVM (CCCP)":
        return CCCPS3VM(**semi).fit(X, y_semi)
    if learner == "TSVM":
        return TransductiveSVM(**semi).fit(X, y_semi)
    return DeterministicAnnealingSVM(**semi).fit(X, y_semi)


def section_accuracy(docs, index, reps, tasks):
    learners = ["SVM", "Aux-SVM", "Semi-SVM (CCCP)", "TSVM", "DA"]
    rows, errs = [], {(n, lrn): [] for n in (2, 5) for lrn in learners}
    timing = {lrn: 0.0 for lrn in learners}
    for name, prefix, classes in TASKS:
        if tasks and name not in tasks:
            continue
        items = task_docs(docs, prefix, classes)
        accs = {(n, lrn): [] for n in (2, 5) for lrn in learners}
        for rep in range(reps):
            rng = np.random.default_rng(200 + rep)
            five = draw(rng, items, classes, 5).reshape(len(classes), 5)
            test = np.setdiff1d(np.arange(len(items)), five.ravel())
            for n in (2, 5):
                lab = five[:, :n].ravel()
                texts = [items[i][1] for i in lab]
                labels = np.array([items[i][2] for i in lab])
                ids = [items[i][0] for i in lab]
                pipe = ActiveSearchPipeline(index, generator="dqg", query_size=3,
                                            per_query=100, learner="svm", lam=LAM,
                                            gamma=GAMMA).fit(texts, labels, ids=ids)
                X = pipe.X_train_
                l, u = len(lab), X.shape[0] - len(lab)
                X_test = pipe.transform([items[i][1] for i in test])
                y_test = np.array([items[i][2] for i in test])
                y_semi = np.concatenate([labels, np.full(u, "-1")]).astype(object)
                y_semi[l:] = -1
                aux_y = np.concatenate([labels, pipe.retrieved_labels_])
                aux = np.r_[np.zeros(l, bool), np.ones(u, bool)]
                for lrn in learners:
                    t0 = time.perf_counter()
                    model = train(lrn, X, labels, y_semi, aux_y, aux)
                    timing[lrn] += time.perf_counter() - t0
                    accs[(n, lrn)].append(100 * np.mean(model.predict(X_test) == y_test))
        row = [name]
        for n in (2, 5):
            for lrn in learners:
                a = np.mean(accs[(n, lrn)])
                row.append(a)
                errs[(n, lrn)].append(100 - a)
        rows.append(row)
        print(f"  accuracy: {name} done", file=sys.stderr, flush=True)
    avg = ["**average**"] + [np.mean([100 - e for e in errs[(n, lrn)]]) for n in (2, 5)
                             for lrn in learners]
    red = ["**error reduction vs SVM %**"]
    for n in (2, 5):
        base = np.array(errs[(n, "SVM")])
        for lrn in learners:
            red.append(100 * np.mean((base - np.array(errs[(n, lrn)])) / base))
    heads = ["task"] + [f"{lrn} ({n}/cls)" for n in (2, 5) for lrn in learners]
    return ("## 3. Table 8.5: accuracy (%) with retrieved documents\n\n"
            f"{reps} random draws per task (the 5-per-class set contains the 2-per-class "
            "set; the test set is the rest of the task's documents, the same for both). "
            "lambda = gamma = 0.01 in the thesis's scaling: L2SVM/Aux-SVM lam = 2 lambda; "
            "CCCP, TSVM, DA lam = lambda / l, lam_u = gamma u / l.  Error reduction = mean over "
            "tasks of (err_SVM - err) / err_SVM.\n\n"
            + table(heads, rows + [avg, red])
            + "\n\nTotal training seconds per learner (all tasks, draws, sizes): "
            + ", ".join(f"{k} {fmt(v)}" for k, v in timing.items()))


def chunks_20ng(docs, lines=5):
    texts, labels = [], []
    for d in docs:
        if not d.id.startswith("20ng/"):
            continue
        body = [x for x in d.text.splitlines() if x.strip()]
        group = d.labels[0]
        for i in range(0, len(body), lines):
            texts.append("\n".join(body[i:i + lines]))
            labels.append(int(group.startswith(("comp.", "sci."))))
    return texts, np.array(labels)


def section_scale(docs):
    texts, y = chunks_20ng(docs)
    rng = np.random.default_rng(0)
    rows = []
    for n in (10_000, 100_000):
        n = min(n, len(texts))
        idx = rng.choice(len(texts), n, replace=False)
        X = TfidfVectorizer(analyzer=tokenize, min_df=2, sublinear_tf=True).fit_transform(
            [texts[i] for i in idx])
        yy = y[idx]
        lab = rng.choice(n, 500, replace=False)
        y_semi = np.full(n, -1)
        y_semi[lab] = yy[lab]
        unl = y_semi == -1
        res = {}
        for name, make in (("CCCPS3VM", lambda: CCCPS3VM(lam=1e-4, lam_u=1.0)),
                           ("TransductiveSVM", lambda: TransductiveSVM(lam=1e-4, lam_u=1.0)),
                           ("L2SVM (labeled only)", lambda: L2SVM(lam=1e-4 * 500))):
            with PeakRSS() as mem, Timer() as t:
                model = make().fit(X, y_semi)
            acc = 100 * np.mean(model.predict(X[unl]) == yy[unl])
            res[name] = t.seconds
            extra = ""
            if name == "CCCPS3VM":
                r = model.fit_results_[0]
                extra = f"{r.n_iter} CCCP steps, {r.n_newton_iter} Newton, {r.n_cg_iter} CG"
            elif name == "TransductiveSVM":
                r = model.fit_results_[0]
                extra = f"{r.n_iter} MFN fits, {r.n_cg_iter} CG"
            rows.append([f"{n:,} x {X.shape[1]:,} (nnz {X.nnz:,})", name, t.seconds,
                         mem.peak / 2**20, acc, extra])
        rows.append(["", "ratio CCCP / TSVM time", res["CCCPS3VM"] / res["TransductiveSVM"],
                     "", "", ""])
        print(f"  scale {n} done", file=sys.stderr, flush=True)
    return ("## 4. CCCPS3VM vs TransductiveSVM at scale\n\n20 Newsgroups posts cut into "
            "5-line chunks, label comp.*/sci.* vs the rest, tf-idf (sublinear, min_df 2), "
            "500 random labeled rows, lam = 1e-4, lam_u = 1 for both; accuracy on the "
            "unlabeled rows.\n\n"
            + table(["data", "method", "fit s", "peak RSS MiB", "acc % (unlabeled)", "work"],
                    rows))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--acc-reps", type=int, default=3)
    ap.add_argument("--sections", default="index,precision,accuracy,scale")
    ap.add_argument("--tasks", default="", help="comma-separated task names for section 3")
    ap.add_argument("--workdir", default=None)
    args = ap.parse_args()
    sections = args.sections.split(",")
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="bench_active_search-"))
    with Timer() as t_load:
        docs = list(load_corpora(newsgroups_remove=()))  # raw posts, as measured
    out = [f"Collection: {len(docs):,} documents loaded from the archives in "
           f"{t_load.seconds:.0f} s."]
    index = None
    if "index" in sections or not (workdir / "index").exists():
        index, text = section_index(docs, workdir)
        out.append(text)
        print(text, file=sys.stderr, flush=True)
    else:
        index = SQLiteIndex.open(workdir / "index")
    if "precision" in sections:
        text = section_precision(docs, index, args.reps)
        out.append(text)
        print(text, file=sys.stderr, flush=True)
    if "accuracy" in sections:
        tasks = [t for t in args.tasks.split(",") if t]
        text = section_accuracy(docs, index, args.acc_reps, tasks)
        out.append(text)
        print(text, file=sys.stderr, flush=True)
    if "scale" in sections:
        text = section_scale(docs)
        out.append(text)
    name = "bench_active_search" if len(sections) == 4 else \
        "bench_active_search_" + "_".join(sections)
    report(name, "Active search (thesis chapter 8) on local corpora", out)
    (workdir / "done.json").write_text(json.dumps({"sections": sections}))


if __name__ == "__main__":
    main()
