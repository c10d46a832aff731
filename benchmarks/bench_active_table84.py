"""Table 8.4 of the thesis (retrieval precision of the top 100), with the thesis's DQG merge.

Per task and draw: 10 labeled documents (5 per class), queries of size 3, 4, 5 from

* ``DQG``: the batch of per-document DQG queries **merged into one query per class** (the
  ``query_size`` most popular terms, :func:`semisup.text.merge_queries`), as section 8.2.2
  does to compare DQG with the one-query-per-class generators;
* ``DQG-batch``: every per-document DQG query, precision averaged over the queries (what
  the pipeline retrieves with; the earlier Table 8.4 run measured this);
* ``TF``, ``TFIDF``, ``OR``, ``SVM`` (SVM-LW): one query per class.

Precision = share of the top 100 (labeled documents excluded) that carry the query's class.
Two collections: ``union`` (the on-disk index of the four corpora, the issue's setting) and
``dataset`` (an index of the task's own documents only, the thesis's "test database using
the existing text corpus"; random retrieval then scores the class prior, about 50 %).

Usage::

    python benchmarks/bench_active_table84.py --workdir /tmp/semisup-active --reps 5
"""

from __future__ import annotations

import argparse
import os
import pickle
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import RESULTS_DIR, command_line, machine_info, table  # noqa: E402
from bench_active_search import PRECISION_TASKS, TASKS, draw  # noqa: E402
from sklearn.feature_extraction.text import CountVectorizer  # noqa: E402
from sklearn.preprocessing import normalize  # noqa: E402

from semisup.text import (  # noqa: E402
    MemoryBM25Index,
    SQLiteIndex,
    generate_queries,
    merge_queries,
    query_analyzer,
)

GENERATORS = ["DQG", "DQG-batch", "TF", "TFIDF", "OR", "SVM-LW"]
CODE = {"TF": "tf", "TFIDF": "tfidf", "OR": "or", "SVM-LW": "svm"}
SIZES = (3, 4, 5)


def precision_table(backend, items, labels_of, prefix, classes, reps):
    res = {(g, k): [] for g in GENERATORS for k in SIZES}
    for rep in range(reps):
        rng = np.random.default_rng(100 + rep)  # same draws as bench_active_search.py
        lab = draw(rng, items, classes, 5)
        texts = [items[i][1] for i in lab]
        labels = np.array([items[i][2] for i in lab])
        ids = {items[i][0] for i in lab}
        cv = CountVectorizer(analyzer=query_analyzer())
        X = normalize(cv.fit_transform(texts))
        vocab = cv.get_feature_names_out()
        for k in SIZES:
            batch = generate_queries(X, labels, vocab, "dqg", k)
            sets = {"DQG": merge_queries(batch, k), "DQG-batch": batch}
            for g, code in CODE.items():
                sets[g] = generate_queries(X, labels, vocab, code, k)
            for g, qs in sets.items():
                precs = []
                for q in qs:
                    found, _ = backend.search(list(q.terms), 100 + len(ids))
                    found = [f for f in found if f not in ids][:100]
                    precs.append(np.mean([f.startswith(prefix) and q.label in labels_of[f]
                                          for f in found]) if found else 0.0)
                res[(g, k)].append(100 * float(np.mean(precs)))
    return res


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workdir", default="/tmp/semisup-active")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--collections", default="union,dataset")
    ap.add_argument("--tag", default="", help="write results/active_table84_<tag>.md")
    args = ap.parse_args()
    workdir = Path(args.workdir)
    with open(workdir / "tasks.pkl", "rb") as fh:
        cache = pickle.load(fh)
    union = SQLiteIndex.open(workdir / "index")
    out = []
    t0, c0 = time.perf_counter(), time.process_time()
    for coll in args.collections.split(","):
        rows, means = [], {g: [] for g in GENERATORS}
        ranks = {g: [] for g in GENERATORS}
        for name, prefix, classes in TASKS:
            if name not in PRECISION_TASKS:
                continue
            items = cache["tasks"][name]
            backend = union if coll == "union" else MemoryBM25Index(
                [(i, t) for i, t, _ in items])
            res = precision_table(backend, items, cache["labels"], prefix, classes, args.reps)
            for g in GENERATORS:
                rows.append([name, g] + [f"{np.mean(res[(g, k)]):.1f} ± {np.std(res[(g, k)]):.1f}"
                                         for k in SIZES])
                means[g] += [np.mean(res[(g, k)]) for k in SIZES]
            for k in SIZES:  # rank among the thesis's five (DQG = merged)
                five = [g for g in GENERATORS if g != "DQG-batch"]
                order = sorted(five, key=lambda g: -np.mean(res[(g, k)]))
                for g in five:
                    ranks[g].append(order.index(g) + 1)
            print(coll, name, "done", flush=True)
        summ = [[g, np.mean(means[g]), np.mean(ranks[g]) if ranks[g] else "",
                 sum(r <= 2 for r in ranks[g]) if ranks[g] else "", len(ranks[g]) or ""]
                for g in GENERATORS]
        out.append(f"## Collection `{coll}`\n\n"
                   + table(["task", "generator", "size 3", "size 4", "size 5"], rows)
                   + "\n\nSummary over tasks and sizes (rank among DQG-merged, TF, TFIDF, OR, "
                   "SVM-LW):\n\n"
                   + table(["generator", "mean precision %", "mean rank", "times 1st or 2nd",
                            "cases"], summ))
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    text = ("# Table 8.4 (thesis ch. 8): retrieval precision of the top 100 (%)\n\n"
            f"Command: `{command_line()}`.  {machine_info()}  Load average at the end "
            f"{os.getloadavg()[0]:.1f}; {wall:.0f} s wall / {cpu:.0f} s CPU.\n\n"
            f"10 labeled documents (5 per class), {args.reps} draws (mean ± std).  Thesis "
            "(musculo vs digestive, grain vs wheat): DQG first at size 3 on both, second "
            "at size 4 on grain vs wheat; mean precision 43-65 %.\n\n"
            + "\n\n".join(out) + "\n")
    removed = ", ".join(cache.get("newsgroups_remove", [])) or "none"
    text = text.replace("\n\n10 labeled", f"  20 Newsgroups parts removed: {removed}."
                        "\n\n10 labeled", 1)
    name = f"active_table84_{args.tag}.md" if args.tag else "active_table84.md"
    (RESULTS_DIR / name).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
