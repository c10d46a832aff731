"""The exact (interior-point / splitting) SDP routes: CTSVM eq. 3.8/3.11 and RTSVM eq. 3.2."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from semisup.solvers.convex import cvxpy_module, solve_conic


@dataclass
class CTSVMSDPResult:
    """Solution of eq. 3.11 (or 3.8) by a conic solver.

    Attributes
    ----------
    w : ndarray of shape (N,)
        Primal vector of eq. 3.6 recovered from the LMI's dual matrix (``N = n`` or ``n+1``).
    W : ndarray of shape (N, N)
        Second-moment block of the same matrix (the Shor relaxation's ``W``).
    w_37 : ndarray of shape (N,)
        ``w`` by eq. 3.7 (least squares; ill-posed when the LMI is tight, kept for study).
    gamma : ndarray of shape (n,)
    alpha, beta, t : float
    objective : float
        Optimal value of the dual SDP (= the relaxation's optimum).
    solve_time : float
    status : str
    n_iter : int
        Conic solver iterations (``-1`` when the solver does not say).
    """

    w: np.ndarray
    W: np.ndarray
    w_37: np.ndarray
    gamma: np.ndarray
    alpha: float
    beta: float
    t: float
    objective: float
    solve_time: float
    status: str
    n_iter: int = -1


def ctsvm_vectors(n: int, labeled: np.ndarray, y_l: np.ndarray, intercept: bool):
    """The vectors ``a, b, c`` of Theorem 1 (eq. 3.8), of length ``n`` or ``n + 1``."""
    N = n + 1 if intercept else n
    a, b, c = np.zeros(N), np.zeros(N), np.zeros(N)
    is_l = np.zeros(n, dtype=bool)
    is_l[labeled] = True
    a[labeled] = y_l
    b[:n][~is_l] = 1.0
    c[labeled] = 1.0 / labeled.size
    c[:n][~is_l] = -1.0 / (n - labeled.size)
    return a, b, c


def ctsvm_sdp(A: np.ndarray, a: np.ndarray, b: np.ndarray, c: np.ndarray, C: np.ndarray,
              eps: float, *, slack: str = "hinge", solver: str = "scs", tol: float = 1e-6,
              max_iter: int = 100_000, offset: float = 0.0) -> CTSVMSDPResult:
    """Solve the CTSVM dual SDP, eq. 3.11 (eq. 3.8 when every ``C_i`` is infinite).

    ``max -t/4 + sum(gamma) - eps (alpha + beta)`` s.t.
    ``[[A - D(gamma*b), g], [g^T, t]] >= 0`` with ``g = gamma*a - (alpha - beta) c``,
    ``0 <= gamma_i <= C_i``, ``alpha, beta >= 0``.  With ``slack='squared'`` the box is
    replaced by the term ``-sum gamma_i^2 / (4 C_i)`` (the exact dual of the squared slacks
    that the thesis's primal writes).

    Parameters
    ----------
    A : ndarray of shape (N, N)
        ``P^T K^{-1} P`` (+ ridge) of eq. 3.6, or ``K^{-1}`` without intercept.
    a, b, c : ndarray of shape (N,)
        As :func:`ctsvm_vectors`.
    C : ndarray of shape (n,)
        Slack weight per row (``inf``: hard margin).
    eps : float
        Balance tolerance.
    slack : {'hinge', 'squared'}
    solver : {'scs', 'clarabel'}
    tol : float
    max_iter : int
    offset : float
        Fixed prediction offset ``b0`` (no intercept only): the labeled constraints become
        ``y_i w_i >= 1 - b0 y_i`` and the unlabeled ones ``W_ii + 2 b0 w_i >= 1 - b0^2``, so
        ``sum gamma`` becomes ``sum_L gamma_i (1 - b0 y_i) + sum_U gamma_i (1 - b0^2)`` and
        ``g`` gains ``2 b0 gamma_i`` on the unlabeled rows.

    Returns
    -------
    CTSVMSDPResult
    """
    cp = cvxpy_module()
    N = A.shape[0]
    n = C.size
    gamma = cp.Variable(n, nonneg=True)
    t = cp.Variable()
    alpha = cp.Variable(nonneg=True)
    beta = cp.Variable(nonneg=True)
    gpad = cp.hstack([gamma, np.zeros(N - n)]) if N > n else gamma
    g = cp.multiply(gpad, a + 2.0 * offset * b) - (alpha - beta) * c
    S = A - cp.diag(cp.multiply(gpad, b))
    lmi_mat = cp.bmat([[S, cp.reshape(g, (N, 1), order="F")],
                       [cp.reshape(g, (1, N), order="F"), cp.reshape(t, (1, 1), order="F")]])
    lmi = 0.5 * (lmi_mat + lmi_mat.T) >> 0
    rhs = (1.0 - offset * a - offset ** 2 * b)[:n]
    objective = -0.25 * t + rhs @ gamma - eps * (alpha + beta)
    cons = [lmi]
    finite = np.isfinite(C)
    if slack == "hinge":
        if finite.any():
            cons.append(gamma[np.flatnonzero(finite)] <= C[finite])
    elif slack == "squared":
        objective = objective - cp.sum(cp.multiply(1.0 / (4.0 * C[finite]),
                                                   cp.square(gamma[np.flatnonzero(finite)])))
    else:
        raise ValueError(f"slack must be 'hinge' or 'squared', got {slack!r}")
    prob = cp.Problem(cp.Maximize(objective), cons)
    res = solve_conic(prob, solver, tol=tol, max_iter=max_iter)
    Z = np.asarray(lmi.dual_value)
    Z = 0.5 * (Z + Z.T)
    znn = Z[N, N]
    if not znn > 0:
        raise RuntimeError("the SDP's dual matrix has a zero corner; the LMI multiplier cannot "
                           "give w (raise the solver accuracy)")
    # Z ~ k [[W, -w/2], [-w^T/2, 1/4]]: stationarity in t makes Z_NN = 1/4
    w = -Z[:N, N] / (2.0 * znn)
    W = Z[:N, :N] / (4.0 * znn)
    gam = np.asarray(gamma.value, dtype=np.float64)
    gv = np.asarray(g.value, dtype=np.float64)
    Sv = A - np.diag(np.r_[gam, np.zeros(N - n)] * b)
    w37 = 0.5 * np.linalg.lstsq(Sv, gv, rcond=None)[0]
    return CTSVMSDPResult(w=w, W=W, w_37=w37, gamma=gam, alpha=float(alpha.value),
                          beta=float(beta.value), t=float(t.value), objective=res.objective,
                          solve_time=res.solve_time, status=res.status, n_iter=res.n_iter)


@dataclass
class RTSVMResult:
    """Solution of eq. 3.2.

    Attributes
    ----------
    M : ndarray of shape (n, n)
        Relaxed label matrix (``y y^T`` when the relaxation is tight).
    objective : float
        Optimal ``t``.
    solve_time : float
    status : str
    n_iter : int
        Conic solver iterations (``-1`` when the solver does not say).
    """

    M: np.ndarray
    objective: float
    solve_time: float
    status: str
    n_iter: int = -1


def rtsvm_sdp(K: np.ndarray, labeled: np.ndarray, y_l: np.ndarray, C: float,
              balance: float | None, *, solver: str = "scs", tol: float = 1e-6,
              max_iter: int = 100_000) -> RTSVMResult:
    """Solve the RTSVM SDP relaxation (eq. 3.2; De Bie & Cristianini, Xu & Schuurmans).

    ``min t`` s.t. ``[[M o K, e + nu - delta], [., t - 2 C delta^T e]] >= 0``, ``M >= 0``,
    ``diag(M) = 1``, ``M_ij = y_i y_j`` on the labeled block, ``nu, delta >= 0``; plus,
    when ``balance`` is given, ``e^T M e <= (balance n)^2`` (the relaxed ``|sum y| <= balance
    n``; eq. 3.2 as printed has none and then admits one-class labelings).

    Parameters
    ----------
    K : ndarray of shape (n, n)
    labeled : ndarray of int
    y_l : ndarray of shape (l,)
    C : float
    balance : float or None
    solver : {'scs', 'clarabel'}
    tol : float
    max_iter : int

    Returns
    -------
    RTSVMResult
    """
    cp = cvxpy_module()
    n = K.shape[0]
    M = cp.Variable((n, n), symmetric=True)
    nu = cp.Variable(n, nonneg=True)
    delta = cp.Variable(n, nonneg=True)
    t = cp.Variable()
    v = 1.0 + nu - delta
    top = cp.multiply(M, K)
    lmi_mat = cp.bmat([[top, cp.reshape(v, (n, 1), order="F")],
                       [cp.reshape(v, (1, n), order="F"),
                        cp.reshape(t - 2 * C * cp.sum(delta), (1, 1), order="F")]])
    yy = np.outer(y_l, y_l)
    cons = [0.5 * (lmi_mat + lmi_mat.T) >> 0, M >> 0, cp.diag(M) == 1,
            M[np.ix_(labeled, labeled)] == yy]
    if balance is not None:
        cons.append(cp.sum(M) <= (balance * n) ** 2)
    prob = cp.Problem(cp.Minimize(t), cons)
    res = solve_conic(prob, solver, tol=tol, max_iter=max_iter)
    Mv = np.asarray(M.value, dtype=np.float64)
    return RTSVMResult(M=0.5 * (Mv + Mv.T), objective=res.objective,
                       solve_time=res.solve_time, status=res.status, n_iter=res.n_iter)
