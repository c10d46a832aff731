"""10-NN graph of all 70,000 MNIST digits: time of the approximate search and its recall.

Recall is measured against the exact neighbours of a random sample of rows (brute force
against all 70,000 rows), the peer being scikit-learn's exact search on that sample.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import Contention, PeakRSS, Timer, report, table  # noqa: E402

from semisup.datasets import load_mnist  # noqa: E402
from semisup.graph import adjacency_graph, knn_search  # noqa: E402


def main(k: int = 10, n_sample: int = 1000) -> None:
    Xtr, _ = load_mnist(split="train")
    Xte, _ = load_mnist(split="test")
    X = sp.vstack([sp.csr_matrix(Xtr), sp.csr_matrix(Xte)]).tocsr()
    Xd = X.toarray().astype(np.float32)
    n = X.shape[0]
    with Contention() as c:
        with PeakRSS() as mem, Timer() as t_approx:
            idx, _ = knn_search(Xd, k, method="approximate", random_state=0)
        with Timer() as t_graph:
            W = adjacency_graph(Xd, k, method="approximate", random_state=0, warn=False)
        rng = np.random.default_rng(0)
        sample = np.sort(rng.choice(n, n_sample, replace=False))
        from sklearn.neighbors import NearestNeighbors

        with Timer() as t_exact:
            nn = NearestNeighbors(n_neighbors=k + 1, algorithm="brute").fit(Xd)
            exact = nn.kneighbors(Xd[sample], return_distance=False)
        hits = 0
        for row, i in enumerate(sample):
            truth = set(exact[row].tolist()) - {i}
            truth = set(list(truth)[:k]) if len(truth) > k else truth
            hits += len(truth & set(idx[i].tolist()))
        recall = hits / (k * n_sample)
    rows = [[n, k, t_approx.seconds, t_graph.seconds, recall, W.nnz, mem.peak / 2**20,
             t_exact.seconds * n / n_sample]]
    report("bench_knn_graph", "Approximate 10-NN graph of MNIST (70,000 x 784)", [
        table(["rows", "k", "NN-descent s", "adjacency_graph s (search + weights)",
               f"recall@{k} on {n_sample} rows", "edges (symmetrised)", "peak RSS MiB",
               "exact brute force s (extrapolated to all rows)"], rows),
        c.line()])


if __name__ == "__main__":
    main()
