"""Regularisers as symmetric positive (semi-)definite operators ``R``.

The Newton systems of every linear method in the library have the form
``[R + X_j^T C_j X_j] w = X_j^T C_j Y_j``; the solvers only need ``R p`` and
quadratic forms, so SVMlin's ``lambda I`` and the graph-regularised operators of
linear manifold regularization plug into the same CGLS and line search.
"""

from __future__ import annotations

import numpy as np


class Ridge:
    """``R = lam * I``: the squared Euclidean norm ``(lam/2) ||w||^2`` (bias included, as SVMlin).

    Parameters
    ----------
    lam : float
        Regularisation strength ``lambda`` (eq. 1 of the SVMlin paper), ``>= 0``.
    """

    def __init__(self, lam: float):
        self.lam = float(lam)

    def matvec(self, p: np.ndarray) -> np.ndarray:
        """``R p``."""
        return self.lam * p

    def value(self, w: np.ndarray) -> float:
        """``(1/2) w^T R w``."""
        return 0.5 * self.lam * float(w @ w)
