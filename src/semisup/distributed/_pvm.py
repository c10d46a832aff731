"""The prototype vector machine over a :class:`~semisup.distributed.DistributedDesign`.

:class:`~semisup.prototypes.PrototypeVectorMachine` is linear in ``n``: everything it needs
from the rows is a handful of ``m x m`` sums (Zhang, Kwok & Parvin, eqs. 12-14 and 17).
Here the workers compute those sums over their row blocks and the client does the small
solve with the single-machine :class:`~semisup.prototypes.problem.PrototypeGraph`:

1. prototypes: k-means with the same seeding as one machine (k-means++ on a random
   subsample of ``max(1000, 10 m)`` rows, fetched from the workers), then ``max_iter``
   Lloyd iterations, each one round trip carrying the ``m x d`` centres out and the per-centre
   sums and counts back;
2. the default kernel width from the same random pairs of rows as one machine;
3. ``E^T 1`` (one round trip), the degrees ``E W^+ E^T 1`` (their sum and maximum, one
   round trip), then ``H^T H``, ``H^T S H``'s cross term and ``H^T D H`` (one round trip of
   ``3 m^2`` numbers per worker);
4. the labeled rows of ``H`` (``l x m``) gathered, the ``m x m`` solve on the client.

``H`` (``n x m``) stays on the workers; ``transduction_`` is computed there (a dask array
whose chunks stay there, unless the design gathers it).  Differences
from one machine: summation order (round-off), and k-means leaves a centre that loses all
its rows where it is (scikit-learn moves it to a far point).
"""

from __future__ import annotations

import time
import types

import numpy as np
from sklearn.utils import check_random_state

from semisup.distributed.design import DistributedLabels
from semisup.kernels import kernel_matrix
from semisup.prototypes.lowrank import psd_pinv
from semisup.prototypes.problem import PrototypeGraph
from semisup.prototypes.prototypes import _seeds, resolve_n_prototypes


class DesignRows:
    """Rows of a design by global position, as dense arrays: ``rows[idx]``, ``rows.shape``.

    Lets the single-machine code written against ``X[idx]`` (k-means seeding, the default
    kernel width, random prototypes) run unchanged; only the requested rows travel.
    """

    def __init__(self, dd):
        self.dd = dd
        self.shape = (dd.n_rows, dd.n_features)

    def __getitem__(self, rows) -> np.ndarray:
        rows = np.asarray(rows, dtype=np.int64)
        unique, inverse = np.unique(rows, return_inverse=True)
        out = np.empty((unique.size, self.shape[1]))
        for per in self.dd._call("fetch_rows", unique):
            for pos, values in per:
                out[np.searchsorted(unique, pos)] = values
        return out[inverse.ravel()]


def kmeans(dd, n_prototypes: int, max_iter: int, random_state) -> np.ndarray:
    """k-means centres of all rows of ``dd``, as
    :func:`semisup.prototypes.prototypes.select_prototypes` (``method='kmeans'``) computes
    them on one machine: the same seeds, then ``max_iter`` Lloyd iterations."""
    if not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise ValueError(f"kmeans_max_iter must be a positive integer, got {max_iter!r}")
    rng = check_random_state(random_state)
    m = resolve_n_prototypes(n_prototypes, dd.n_rows)
    rng.randint(np.iinfo(np.int32).max)  # scikit-learn's seed on one machine: same stream
    V = _seeds(DesignRows(dd), m, rng)
    d = dd.n_features
    for _ in range(int(max_iter)):
        sums = dd._sum("kmeans_step", V)[:-1].reshape(m, d + 1)
        counts = sums[:, d]
        new = V.copy()
        filled = counts > 0
        new[filled] = sums[filled, :d] / counts[filled, None]
        if np.array_equal(new, V):
            break
        V = new
    return np.ascontiguousarray(V)


def prototype_graph(dd, V: np.ndarray, gamma: float, laplacian: str,
                    n_nearest: int | None) -> tuple[PrototypeGraph, np.ndarray]:
    """:class:`PrototypeGraph` from the workers' ``m x m`` sums; the labels of its rows.

    The graph's ``H`` holds the labeled rows only (global order); pass
    ``labeled = arange(l)`` to its :meth:`~PrototypeGraph.solve`.
    """
    Kv = kernel_matrix(V, V, kernel="rbf", gamma=gamma)
    W_pinv = psd_pinv(Kv, 1e-10)          # as NystromLaplacian
    col_sums = dd._sum("pvm_kernel", V, gamma, n_nearest)
    deg = dd._call("pvm_degree", W_pinv @ col_sums)
    degree_sum = float(sum(r[0] for r in deg))
    floor = 1e-12 * max(max(float(r[1]) for r in deg), 1e-300)
    gram, C, HDH = dd._sum("pvm_products", laplacian, floor)
    out = (HDH if laplacian == "unnormalized" else gram) - C @ W_pinv @ C.T
    graph = 0.5 * (out + out.T)
    per_block = sorted(b for per in dd._call("pvm_labeled") for b in per)
    Hl = np.vstack([b[1] for b in per_block])
    y_l = np.concatenate([b[2] for b in per_block])
    return PrototypeGraph.from_products(Hl, dd.n_rows, laplacian, degree_sum, 0.5 * (gram + gram.T),
                                        graph, Kv), y_l


def fit_pvm(est, dd, y=None) -> None:
    """``PrototypeVectorMachine.fit`` on a distributed design (the same attributes)."""
    from semisup.prototypes.pvm import class_targets, resolve_gamma, resolve_prototypes

    if y is not None and not (isinstance(y, DistributedLabels) and y.design is dd):
        raise ValueError("y: the labels of a DistributedDesign travel with its rows; call "
                         "fit(design, design.labels) or fit(design, None)")
    est._check_params()
    if est.probability:
        raise ValueError("probability=True needs cross-validation on the rows, not available "
                         "on a DistributedDesign; set probability=False or pass a matrix")
    classes = dd.classes
    if classes.size < 2:
        raise ValueError(f"y contains {classes.size} class among its labeled rows; at least 2 "
                         f"are needed")
    if dd.n_unlabeled == 0:
        raise ValueError("y has no unlabeled rows (-1): a semi-supervised fit needs some")
    rng = check_random_state(est.random_state)
    rows = DesignRows(dd)
    timings = {}
    t0 = time.perf_counter()
    if isinstance(est.prototypes, str) and est.prototypes == "kmeans":
        V = kmeans(dd, est.n_prototypes, est.kmeans_max_iter, rng)
    elif isinstance(est.prototypes, str) and est.prototypes == "minibatch":
        raise ValueError("prototypes='minibatch' is not available on a DistributedDesign (its "
                         "batches are sequential); use 'kmeans', 'random' or an array")
    else:
        V = resolve_prototypes(est, rows, rng)
    timings["prototypes"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    gamma = resolve_gamma(est.gamma, rows)
    try:
        graph, y_l = prototype_graph(dd, V, gamma, est.laplacian, est.n_nearest_prototypes)
        timings["graph"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        y_index = np.searchsorted(classes, y_l)
        data = types.SimpleNamespace(
            classes=classes, y_index=y_index,
            binary_targets=lambda k: np.where(y_index == k, 1.0, -1.0))
        sol = graph.solve(np.arange(y_l.size), class_targets(data), loss=est.loss, C1=est.C1,
                          C2=est.C2, regularizer=est.regularizer, graph_scale=est.graph_scale,
                          fit_intercept=est.fit_intercept, tol=est.tol)
        timings["solve"] = time.perf_counter() - t0
        args = (sol.prototype_labels, sol.intercept, classes)
        if dd.gather_transduction:
            per_block = sorted(b for per in dd._call("pvm_transduction", *args) for b in per)
            transduction = classes[np.concatenate([b[1] for b in per_block])]
        else:  # a dask array whose chunks stay on the workers
            transduction = dd.row_values("pvm_block_labels", *args, dtype=classes.dtype)
    finally:
        dd._call("pvm_clear")
    est._set_fitted(classes, V, sol, gamma, dd.n_features, timings, transduction)
