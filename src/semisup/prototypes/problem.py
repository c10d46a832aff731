"""The PVM optimisation problem: label-independent pieces, then the square/hinge solves.

:class:`PrototypeGraph` computes, once per data set, prototype set and kernel width, what
does not depend on the labels: ``H = K(X, V)`` (eq. 17), the Nyström graph term
``H^T S H`` (eqs. 13-14, ``O(n m^2)``), ``H^T H`` and ``K_v``.  :meth:`PrototypeGraph.solve`
then fits any labeling in ``O(l m^2 + m^3)``: eq. (23) for the square loss, eqs. (24)-(29)
for the hinge loss.  The hinge dual (eq. 27) is ``max_beta -1/2 beta^T Q beta + 1^T beta``,
``0 <= beta_i <= C1``, with ``Q = (H_l A^+ H_l^T) o (y y^T)`` (eq. 28): an SVM dual on ``l``
variables with the kernel ``G = H_l A^+ H_l^T`` (:func:`hinge_kernel`), solved by libsvm
through :func:`semisup.solvers.qp.svm_dual` with the unpenalised bias
(``fit_intercept=True``, the standard SVM dual) or without it (eq. 27 exactly).

The estimator :class:`~semisup.prototypes.PrototypeVectorMachine` is one ``PrototypeGraph``
plus one ``solve``; model selection over labelings, folds and ``C1`` reuses one
``PrototypeGraph`` per kernel width.

Internally the prototype labels are written ``f_v = P g`` with ``P = U Sigma^-1/2`` from
``H^T H = U Sigma U^T``, so that ``||H f_v|| = ||g||``.  Directions of ``f_v`` that ``H``
maps to (numerically) zero change no prediction on the data and only make the ``m x m``
systems ill-conditioned (wide kernels give nearly collinear columns of ``H``); they are
dropped.
"""

from __future__ import annotations

import numbers
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from semisup.kernels import kernel_matrix
from semisup.prototypes.lowrank import (
    NystromLaplacian,
    prototype_kernel,
    psd_eigh,
    psd_solve,
    sparsify_rows,
    weighted_cross,
)
from semisup.solvers.qp import svm_dual

LOSSES = ("square", "hinge")
REGULARIZERS = ("unlabeled", "rkhs")
# relative eigenvalue cut-off of the m x m pseudo-inverses; in the whitened coordinates the
# round-off of P^T (H^T S H) P is about 1e-16 / RTOL relative, so RTOL = 1e-8 keeps every
# direction that is resolved
RTOL = 1e-8


def check_graph_scale(graph_scale):
    """Validate ``graph_scale``: ``'auto'``, ``'none'`` or a positive number."""
    ok = graph_scale in ("auto", "none") if isinstance(graph_scale, str) else (
        isinstance(graph_scale, numbers.Real) and not isinstance(graph_scale, bool)
        and np.isfinite(graph_scale) and graph_scale > 0)
    if not ok:
        raise ValueError(f"graph_scale must be 'auto', 'none' or a positive number, got "
                         f"{graph_scale!r}")
    return graph_scale


class PVMSolution(NamedTuple):
    """Prototype labels of one fit.

    Attributes
    ----------
    prototype_labels : ndarray of shape (m, n_outputs)
        ``f_v`` per output column.
    intercept : ndarray of shape (n_outputs,)
    n_iter : ndarray of shape (n_outputs,)
        SMO iterations (hinge) or 1 (closed form).
    graph_scale : float
        The multiplier ``s`` of the graph term that was used.
    """

    prototype_labels: np.ndarray
    intercept: np.ndarray
    n_iter: np.ndarray
    graph_scale: float


class PrototypeGraph:
    """Label-independent part of the PVM problem for fixed data, prototypes and kernel.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, d)
        All rows, labeled and unlabeled.
    prototypes : ndarray of shape (m, d)
    gamma : float
        Gaussian kernel parameter.
    laplacian : {'normalized', 'unnormalized'}
        Eq. (14) or eq. (13).
    n_nearest_prototypes : int, optional
        Sparsify the label-reconstruction matrix ``H`` to each row's nearest prototypes;
        the graph keeps the dense ``E = K(X, V)`` (eq. 12).

    Attributes
    ----------
    H : ndarray or csr_matrix of shape (n, m)
    n : int
    degree_sum : float
        Sum of the approximate degrees ``1^T E W^+ E^T 1``.
    """

    def __init__(self, X, prototypes: np.ndarray, gamma: float,
                 laplacian: str = "normalized", n_nearest_prototypes: int | None = None):
        V = prototypes
        E = prototype_kernel(X, V, gamma)
        H = E if n_nearest_prototypes is None else sparsify_rows(E, n_nearest_prototypes)
        Kv = kernel_matrix(V, V, kernel="rbf", gamma=gamma)
        lap = NystromLaplacian(E, Kv, kind=laplacian, rtol=1e-10)
        gram = weighted_cross(H)
        graph = lap.project(H, gram=gram)
        self._set_products(H, X.shape[0], laplacian, float(lap.degree.sum()), gram, graph, Kv)

    @classmethod
    def from_products(cls, H, n: int, laplacian: str, degree_sum: float, gram: np.ndarray,
                      graph: np.ndarray, Kv: np.ndarray) -> PrototypeGraph:
        """The same object from ``H^T H``, ``H^T S H`` and ``K_v`` computed elsewhere.

        Used by the distributed PVM (:mod:`semisup.distributed`), whose workers sum the
        ``m x m`` products over their row blocks; ``H`` then only needs the rows that
        :meth:`solve` will be given as ``labeled``, and ``n`` is the number of all rows.
        """
        self = cls.__new__(cls)
        self._set_products(H, n, laplacian, degree_sum, gram, graph, Kv)
        return self

    def _set_products(self, H, n, laplacian, degree_sum, gram, graph, Kv) -> None:
        sig, U = psd_eigh(gram, RTOL)
        P = U / np.sqrt(sig)
        self.H = H
        self.n = int(n)
        self.laplacian = laplacian
        self.degree_sum = float(degree_sum)
        self.P = P
        self.graph_w = P.T @ graph @ P          # P^T H^T S H P
        self.Kv_w = P.T @ Kv @ P                # P^T K_v P (RKHS regulariser)

    def graph_scale(self, graph_scale, n_labeled: int) -> float:
        """Multiplier ``s`` of the graph term ``f^T S f``.

        ``'auto'`` is ``l / sum_i d_i`` for the unnormalised Laplacian and ``l / n`` for the
        normalised one: ``s f^T S f`` is then ``l`` times an average over the graph (half the
        affinity-weighted mean of ``(f_i - f_j)^2``, resp. of the degree-normalised
        differences), so the objective is ``l (graph average + C1 mean labeled loss) + C2 R``
        and ``C1`` keeps its meaning across data sizes, kernel widths and numbers of labels
        (as the ``l / n^2`` of LapRLS, eq. 5).  ``'none'`` is eq. (22) as printed; a
        positive number is used as is.
        """
        check_graph_scale(graph_scale)
        if graph_scale == "none":
            return 1.0
        if graph_scale == "auto":
            if self.laplacian == "normalized":
                return n_labeled / self.n
            return n_labeled / self.degree_sum if self.degree_sum > 0 else 1.0
        return float(graph_scale)

    def labeled_rows(self, labeled: np.ndarray) -> np.ndarray:
        """``H_l P`` (dense ``l x r``)."""
        Hl = self.H[labeled]
        Hl = Hl.toarray() if sp.issparse(Hl) else np.asarray(Hl)
        return Hl @ self.P

    def system(self, labeled: np.ndarray, C2: float, regularizer: str,
               graph_scale) -> tuple[np.ndarray, np.ndarray, float]:
        """``A = s H^T S H + C2 R`` (eq. 24) and ``H_l``, both in the coordinates ``g``."""
        Hl = self.labeled_rows(labeled)
        scale = self.graph_scale(graph_scale, labeled.size)
        A = scale * self.graph_w
        if C2 > 0:
            # P^T H^T H P = I, so P^T H_u^T H_u P = I - (H_l P)^T (H_l P)
            R = self.Kv_w if regularizer == "rkhs" else np.eye(A.shape[0]) - Hl.T @ Hl
            A = A + C2 * R
        return A, Hl, scale

    def solve(self, labeled: np.ndarray, Y: np.ndarray, loss: str = "square", C1: float = 1.0,
              C2: float = 0.0, regularizer: str = "unlabeled", graph_scale="auto",
              fit_intercept: bool = False, tol: float = 1e-3) -> PVMSolution:
        """Prototype labels for the labeled rows ``labeled`` with ``+1/-1`` targets ``Y``.

        Parameters
        ----------
        labeled : ndarray of int of shape (l,)
        Y : ndarray of shape (l, n_outputs)
            One ``+1/-1`` column per binary (one-vs-rest) problem.
        loss, C1, C2, regularizer, graph_scale, fit_intercept, tol
            As :class:`~semisup.prototypes.PrototypeVectorMachine`.

        Returns
        -------
        PVMSolution
        """
        A, Hl, scale = self.system(labeled, C2, regularizer, graph_scale)
        if loss == "square":
            # eq. (23): f_v = C1 (H^T S H + C1 H_l^T H_l + C2 R)^+ H_l^T Y_l
            g = C1 * psd_solve(A + C1 * (Hl.T @ Hl), Hl.T @ Y, RTOL)
            return PVMSolution(self.P @ g, np.zeros(Y.shape[1]),
                               np.ones(Y.shape[1], dtype=np.int64), scale)
        if loss != "hinge":
            raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")
        G, A_pinv_Hl = hinge_kernel(A, Hl)
        F = np.empty((self.P.shape[0], Y.shape[1]))
        b = np.zeros(Y.shape[1])
        n_iter = np.zeros(Y.shape[1], dtype=np.int64)
        for k in range(Y.shape[1]):
            # eq. (27) is an SVM dual with kernel G (with or without the bias)
            res = svm_dual(G, Y[:, k], C1, tol=tol, fit_intercept=fit_intercept)
            F[:, k] = self.P @ (A_pinv_Hl @ (res.beta * Y[:, k]))   # eq. (29): beta o y
            b[k], n_iter[k] = res.bias, res.n_iter
        return PVMSolution(F, b, n_iter, scale)

    def square_path(self, labeled: np.ndarray, Y: np.ndarray, C1_values, C2: float = 0.0,
                    regularizer: str = "unlabeled", graph_scale="auto") -> list[np.ndarray]:
        """Square-loss prototype labels (eq. 23) for several ``C1`` at the cost of about one.

        With ``T = A + B`` (``B = H_l^T H_l``) and the eigenvectors ``Q``, ``theta`` of
        ``T^-1/2 B T^-1/2`` (so ``T^-1/2 A T^-1/2 = Q diag(1 - theta) Q^T``),
        ``(A + C1 B)^+ = T^-1/2 Q diag(1 / (1 - theta + C1 theta)) Q^T T^-1/2`` on the range
        of ``T``: two ``m x m`` eigendecompositions, then ``O(m^2)`` per ``C1``.  Used for
        model selection; :meth:`solve` gives the same solutions.

        Returns
        -------
        list of ndarray of shape (m, n_outputs), one per value of ``C1_values``
        """
        A, Hl, _ = self.system(labeled, C2, regularizer, graph_scale)
        B = Hl.T @ Hl
        t, U = psd_eigh(A + B, RTOL)
        Ti = U / np.sqrt(t)                     # T^-1/2 on the range of T
        theta, Q = np.linalg.eigh(Ti.T @ B @ Ti)
        theta = np.clip(theta, 0.0, 1.0)
        R = Ti @ Q
        rhs = R.T @ (Hl.T @ Y)
        return [self.P @ (R @ ((C1 / (1.0 - theta + C1 * theta))[:, None] * rhs))
                for C1 in C1_values]


def hinge_kernel(A: np.ndarray, Hl: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``G = H_l A^+ H_l^T`` (the kernel of the dual, eq. 28 without the labels) and
    ``A^+ H_l^T`` (eq. 29 maps ``beta o y`` to the prototype labels through it)."""
    values, vectors = psd_eigh(A, RTOL)
    A_pinv_Hl = vectors @ ((vectors.T @ Hl.T) / values[:, None])
    G = Hl @ A_pinv_Hl
    return 0.5 * (G + G.T), A_pinv_Hl
