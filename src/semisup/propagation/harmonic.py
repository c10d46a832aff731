"""The harmonic function / label propagation (Zhu, Ghahramani & Lafferty, ICML 2003)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from semisup._validation import check_bool
from semisup.base import SupervisedFallbackMixin
from semisup.propagation._base import (
    FITTED_ATTRIBUTES,
    GRAPH_PARAMS,
    GraphPropagation,
    _normalise_rows,
    matmat_operator,
)
from semisup.propagation._cg import block_pcg


def harmonic_system(W: sp.csr_matrix, degree: np.ndarray, labeled: np.ndarray,
                    Y: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
    """The harmonic function's linear system ``L_uu f_u = W_ul Y_l`` (Zhu et al., eq. 5).

    Parameters
    ----------
    W : csr_matrix of shape (n, n)
        Symmetric adjacency matrix.
    degree : ndarray of shape (n,)
        ``D_ii = sum_j W_ij``.
    labeled : ndarray of int
        Indices of the labeled rows.
    Y : ndarray of shape (n, c)
        One-hot labels on the labeled rows (other rows ignored).

    Returns
    -------
    A : csr_matrix
        ``L_uu = D_uu - W_uu`` over the unlabeled rows (positive definite when every
        connected component holds a labeled row).
    B : ndarray of shape (u, c)
        ``W_ul Y_l``.
    unlabeled : ndarray of int
        Indices of the unlabeled rows (the rows of ``A`` and ``B``).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> W = sp.csr_matrix(np.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]], dtype=float))
    >>> Y = np.array([[1.0, 0.0], [0.0, 0.0], [0.0, 1.0]])
    >>> A, B, u = harmonic_system(W, np.array([1.0, 2.0, 1.0]), np.array([0, 2]), Y)
    >>> np.linalg.solve(A.toarray(), B)          # the middle vertex: halfway
    array([[0.5, 0.5]])
    """
    n = W.shape[0]
    is_unl = np.ones(n, dtype=bool)
    is_unl[labeled] = False
    unlabeled = np.flatnonzero(is_unl)
    W_u = W[unlabeled]
    Y_l = np.zeros_like(Y)
    Y_l[labeled] = Y[labeled]
    B = np.asarray(W_u @ Y_l)
    A = (sp.diags(degree[unlabeled]) - W_u[:, unlabeled]).tocsr()
    return A, B, unlabeled


class LabelPropagation(SupervisedFallbackMixin, GraphPropagation):
    """Label propagation: the harmonic function on a kNN graph, by conjugate gradients.

    The harmonic function (Zhu, Ghahramani & Lafferty 2003) minimises the energy
    ``E(f) = 1/2 sum_ij w_ij ||f_i - f_j||^2`` with the labeled rows clamped to their
    one-hot labels; its unlabeled part solves ``L_uu f_u = W_ul Y_l`` (eq. 5,
    ``L = D - W``): every unlabeled row is the weighted average of its neighbours (eq. 3),
    the fixed point that iterative label propagation approaches.  Here the system is
    solved for all classes at once by Jacobi-preconditioned conjugate gradients to a
    relative residual ``tol``, started from the labeled class prior; memory is linear in
    ``n k``.  With ``cmn=True`` the columns are rescaled by class mass normalisation
    (section 4): class ``k`` gets weight ``q_k / sum_u f_uk`` with ``q`` the class
    frequencies of the labeled rows, so that an unbalanced harmonic solution does not put
    every row in one class.

    ``cmn=False`` and the same graph give scikit-learn's
    :class:`sklearn.semi_supervised.LabelPropagation` at convergence (its ``kernel='knn'``
    graph is not symmetrised and keeps self loops; pass it the same affinity to compare).

    Parameters
    ----------
    cmn : bool, default=False
        Class mass normalisation (Zhu et al., section 4).
{graph_params}

    Attributes
    ----------
{fitted_attributes}

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_moons
    >>> from semisup.propagation import LabelPropagation
    >>> X, y_true = make_moons(300, noise=0.05, random_state=0)
    >>> y = np.full(300, -1)
    >>> y[[0, 2]] = y_true[[0, 2]]          # one label per moon
    >>> y_true[[0, 2]]
    array([1, 0])
    >>> clf = LabelPropagation(n_neighbors=7).fit(X, y)
    >>> float(np.mean(clf.transduction_ == y_true))
    1.0
    >>> clf.predict_proba(X[[0, 2]]).round(3)
    array([[0., 1.],
           [1., 0.]])
    """

    def __init__(self, cmn: bool = False, n_neighbors: int = 10, graph_weight: str = "heat",
                 t=None, graph_metric: str = "euclidean", graph_method: str = "auto",
                 tol: float = 1e-4, max_iter: int = 1000, warm_start: bool = False,
                 n_jobs: int | None = None, random_state: int | None = None,
                 verbose: int = 0, fallback: str = "cv"):
        self.cmn = cmn
        self.n_neighbors = n_neighbors
        self.graph_weight = graph_weight
        self.t = t
        self.graph_metric = graph_metric
        self.graph_method = graph_method
        self.tol = tol
        self.max_iter = max_iter
        self.warm_start = warm_start
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.fallback = fallback

    def _check_method_params(self) -> None:
        check_bool(self.cmn, "cmn")

    def _solve(self, W, degree, labeled_local, Y, X0, prior):
        A, B, unlabeled = harmonic_system(W, degree, labeled_local, Y)
        # the prior is the solution's constant part: starting there removes the slowest
        # (smoothest) error component of a graph with few labels
        start = X0[unlabeled] if X0 is not None else np.tile(prior, (unlabeled.size, 1))
        res = block_pcg(matmat_operator(A), B, inv_diag=1.0 / degree[unlabeled], X0=start,
                        tol=float(self.tol), max_iter=int(self.max_iter), verbose=self.verbose)
        F = Y.copy()
        F[unlabeled] = res.X
        return F, res

    def _distributions(self, F, labeled_local, y_index, prior):
        if not self.cmn:
            return _normalise_rows(F, prior)
        is_unl = np.ones(F.shape[0], dtype=bool)
        is_unl[labeled_local] = False
        mass = np.maximum(F[is_unl], 0.0).sum(axis=0)
        # a class with no mass on the unlabeled rows stays at zero
        scale = np.divide(prior, mass, out=np.zeros_like(prior), where=mass > 0)
        return _normalise_rows(F * scale, prior)


LabelPropagation.__doc__ = LabelPropagation.__doc__.replace(
    "{graph_params}", GRAPH_PARAMS).replace("{fitted_attributes}", FITTED_ATTRIBUTES)
