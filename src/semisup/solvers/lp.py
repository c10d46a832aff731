"""Linear programs solved by HiGHS through :func:`scipy.optimize.linprog`.

The one LP the library needs is the minimum over the probability simplex of a maximum of
affine functions (a cutting-plane model),

    min_{p in simplex, theta}  theta   s.t.  c_j - a_j^T p <= theta,  j = 1..J,       (*)

which is the SILP master problem (Sonnenburg et al. 2006) and the lower bound ``f_low`` of
the level method for multiple kernel learning (Xu et al. 2009, eq. 4.6).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog


def min_max_affine_on_simplex(c: np.ndarray, A: np.ndarray) -> tuple[np.ndarray, float]:
    """Solve (*): the minimum over the simplex of ``max_j (c_j - A[j] @ p)``.

    Parameters
    ----------
    c : ndarray of shape (J,)
        Offsets of the affine pieces.
    A : ndarray of shape (J, m)
        Slopes (with a minus sign) of the affine pieces.

    Returns
    -------
    p : ndarray of shape (m,)
        A minimiser on the simplex (a vertex of the LP's feasible set, as HiGHS returns).
    theta : float
        The optimal value.

    Raises
    ------
    RuntimeError
        When HiGHS reports a failure (the LP is always feasible and bounded).
    """
    c = np.asarray(c, dtype=np.float64)
    A = np.atleast_2d(np.asarray(A, dtype=np.float64))
    n_cuts, m = A.shape
    if c.shape != (n_cuts,):
        raise ValueError(f"c must have shape ({n_cuts},) to match A, got {c.shape}")
    # variables (p, theta): c_j - A_j p - theta <= 0  <=>  -A_j p - theta <= -c_j
    A_ub = np.hstack([-A, -np.ones((n_cuts, 1))])
    A_eq = sp.csr_matrix(np.r_[np.ones(m), 0.0][None, :])
    obj = np.zeros(m + 1)
    obj[-1] = 1.0
    bounds = [(0.0, None)] * m + [(None, None)]
    res = linprog(obj, A_ub=A_ub, b_ub=-c, A_eq=A_eq, b_eq=[1.0], bounds=bounds,
                  method="highs")
    if res.status != 0:
        raise RuntimeError(f"HiGHS failed on the cutting-plane LP: {res.message}")
    p = np.clip(res.x[:m], 0.0, None)
    p /= p.sum()
    theta = float(np.max(c - A @ p))
    return p, theta
