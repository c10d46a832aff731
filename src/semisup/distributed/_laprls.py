"""Linear LapRLS over a :class:`~semisup.distributed.DistributedDesign`, partition-local graphs.

Linear LapRLS (Sindhwani, Niyogi, Belkin & Keerthi 2005, eq. 3) solves
``(X_l^T X_l + R) w = X_l^T y`` with ``R = l gamma_A I + l gamma_I s X^T L^p X``.  Only
``R p`` touches the unlabeled rows, and with a graph whose edges stay inside partitions
(``L`` block diagonal over the partitions) it is a sum over blocks,
``X^T L^p X p = sum_b X_b^T L_b^p X_b p``: one ``d``-vector out and one back per worker.
:class:`DistributedGraphRidge` is that ``R`` as a regulariser object, so the fit is the
single-machine :meth:`semisup.linear.LinearLapRLS._fit_binary` unchanged (its CGLS, or the
Cholesky route for small ``d``) on the ``l`` labeled rows, which are gathered to the client
(``l x d``; semi-supervised problems have few labels).

**Approximation.**  Each block gets its own kNN graph over its rows, built with the
estimator's graph parameters: edges between rows of different partitions are missing, and a
row's neighbours are its ``k`` nearest *within its partition*.  With one partition the graph
(and the fit) is the single-machine one.  With many, the partitions should each be a random
sample of the data (shuffle before partitioning) so that every partition covers the manifold
densely enough; a row in a tiny partition gets far "neighbours" (a partition of fewer than two
rows contributes no graph term).  ``graph_scale='n2'`` uses the global ``n``; ``'sum'`` the
total weight of all the partition graphs.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from semisup._validation import check_semi_supervised
from semisup.graph import graph_scale


class DistributedGraphRidge:
    """``R = lam I + mu sum_b X_b^T L_b^p X_b`` with the blocks on the workers.

    The interface of :class:`semisup.regularizers.GraphRidge` (``matvec``, ``value``,
    ``diagonal``, ``dense``); each ``matvec`` is one round trip.

    Parameters
    ----------
    lam, mu : float
        Ridge and graph strengths.
    dd : DistributedDesign
        Whose workers built their block Laplacians (``lap_graph``).
    """

    def __init__(self, lam: float, mu: float, dd):
        self.lam = float(lam)
        self.mu = float(mu)
        self.dd = dd

    def matvec(self, p: np.ndarray) -> np.ndarray:
        """``R p``."""
        out = self.lam * p
        if self.mu:
            out = out + self.mu * self.dd._sum("lap_matvec", p)
        return out

    def value(self, w: np.ndarray) -> float:
        """``(1/2) w^T R w``."""
        return 0.5 * float(w @ self.matvec(w))

    def diagonal(self, n: int) -> np.ndarray:
        """``lam`` (a lower bound of ``diag(R)``, as :class:`~semisup.regularizers.GraphRidge`)."""
        return np.full(n, self.lam)

    def dense(self, n_weights: int) -> np.ndarray:
        """``R`` as a dense ``d x d`` matrix (sum of the blocks' dense graph terms)."""
        R = np.zeros((n_weights, n_weights))
        if self.mu:
            for part in self.dd._call("lap_dense"):
                if part is not None:
                    R += part
            R = self.mu * 0.5 * (R + R.T)
        R[np.diag_indices(n_weights)] += self.lam
        return R


def fit_laprls(est, dd) -> dict:
    """Fitted attributes of :class:`~semisup.linear.LinearLapRLS` on ``dd``."""
    from semisup.linear.laplacian import DIRECT_MAX_WEIGHTS, _GraphContext
    from semisup.solvers.design import Design

    if est.graph is not None:
        raise ValueError("graph: a precomputed n x n adjacency cannot be split over the "
                         "partitions of a DistributedDesign; set graph=None (each partition "
                         "then gets its own kNN graph) or pass a matrix")
    est._validate_params()
    classes = dd.classes
    if classes.size < 2:
        raise ValueError(f"y contains {classes.size} class among its labeled rows; at least 2 "
                         f"are needed")
    options = dict(n_neighbors=est.n_neighbors, metric=est.metric, weight=est.graph_weight,
                   kind=est.laplacian_kind, method=est.graph_method,
                   random_state=est.random_state)
    try:
        n_rows, weight_sum = dd._sum("lap_graph", bool(est.fit_intercept),
                                     float(est.intercept_scaling), int(est.laplacian_power),
                                     options)
        per_block = sorted(b for per in dd._call("labeled_rows") for b in per)
        parts = [b[1] for b in per_block if b[1].shape[0]]
        X_l = sp.vstack(parts, format="csr") if sp.issparse(parts[0]) else np.vstack(parts)
        y_l = np.concatenate([b[2] for b in per_block])
        data = check_semi_supervised(X_l, y_l, require_unlabeled=False, estimator=est)
        l = y_l.size
        design = Design(data.X, est.fit_intercept, est.intercept_scaling)
        scale = graph_scale(np.array([weight_sum]), dd.n_rows, est.graph_scale)
        reg = DistributedGraphRidge(est._ridge(l), l * est.gamma_I * scale, dd)
        solver = est.solver
        if solver == "auto":
            solver = "direct" if design.n_weights <= DIRECT_MAX_WEIGHTS else "cg"
        context = _GraphContext(reg=reg, n_labeled=l, solver=solver)
        if solver == "direct":
            context.dense_R = reg.dense(design.n_weights)
        positives = [1] if classes.size == 2 else list(range(classes.size))
        results = []
        for k in positives:
            y_pm = data.binary_targets(k)
            results.append(est._fit_binary(design, data, y_pm, float(np.mean(y_pm > 0)), None,
                                           context=context, seed=None))
    finally:
        dd._call("lap_clear")
    coefs, intercepts = zip(*(design.weights_to_coef(r.w) for r in results), strict=True)
    return {"coef": np.vstack(coefs), "intercept": np.asarray(intercepts, dtype=np.float64),
            "results": results, "n_rows": n_rows}
