"""The hinge-loss dual of the prototype vector machine, handed to an existing SVM solver.

The PVM dual (eq. 27) is ``max_beta -1/2 beta^T Q beta + 1^T beta``, ``0 <= beta_i <= C1``,
with ``Q = (H_l A^+ H_l^T) o (y y^T)`` (eq. 28): an SVM dual on ``l`` variables whose
kernel matrix is ``G = H_l A^+ H_l^T = Z Z^T`` with ``Z = H_l U Lambda^-1/2``
(``A = U Lambda U^T``).  libsvm (:func:`semisup.solvers.qp.svm_dual`, precomputed kernel)
solves it in both forms:

* with an unpenalised bias ``b``: the standard SVM dual, which adds the equality constraint
  ``sum_i beta_i y_i = 0``;
* without a bias (eq. 27 exactly): libsvm always has a bias, so it is given the symmetrised
  set ``{(z_i, y_i)} U {(-z_i, -y_i)}`` (kernel ``[[G, -G], [-G, G]]``) with ``C1 / 2``.
  Its objective is invariant under ``b -> -b``, so by convexity ``b = 0`` is optimal and
  ``w`` (unique) minimises ``1/2 ||w||^2 + C1 sum_i max(0, 1 - y_i w^T z_i)``; the dual
  variables of eq. (27) are ``beta_i = beta_i^+ + beta_i^-``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from semisup.solvers.qp import svm_dual


class HingeDualSolution(NamedTuple):
    """Solution of one binary PVM hinge dual.

    Attributes
    ----------
    signed_beta : ndarray of shape (l,)
        ``beta o y`` (eq. 29 turns it into the prototype labels).
    bias : float
        ``b`` (0 without intercept).
    n_iter : int
        SMO iterations.
    """

    signed_beta: np.ndarray
    bias: float
    n_iter: int


def solve_hinge_dual(G: np.ndarray, y_pm: np.ndarray, C: float, fit_intercept: bool,
                     tol: float = 1e-3) -> HingeDualSolution:
    """Solve the PVM hinge dual (eq. 27) for one binary problem.

    Parameters
    ----------
    G : ndarray of shape (l, l)
        ``H_l A^+ H_l^T`` (symmetric PSD).
    y_pm : ndarray of shape (l,)
        ``+1/-1`` targets.
    C : float
        ``C1``, the box bound of the dual variables.
    fit_intercept : bool
        Add the unpenalised bias (standard SVM dual) or not (eq. 27).
    tol : float
        libsvm's tolerance on the KKT violation.

    Returns
    -------
    HingeDualSolution
    """
    if fit_intercept:
        res = svm_dual(G, y_pm, C, tol=tol)
        return HingeDualSolution(res.beta * y_pm, res.bias, res.n_iter)
    l = y_pm.size
    G2 = np.empty((2 * l, 2 * l))
    G2[:l, :l] = G2[l:, l:] = G
    G2[:l, l:] = G2[l:, :l] = -G
    res = svm_dual(G2, np.r_[y_pm, -y_pm], 0.5 * C, tol=tol)
    return HingeDualSolution((res.beta[:l] + res.beta[l:]) * y_pm, 0.0, res.n_iter)
