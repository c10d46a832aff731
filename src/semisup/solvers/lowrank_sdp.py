r"""Low-rank (Burer-Monteiro) solver for the Shor relaxation behind the convex TSVM (CTSVM).

The relaxation (the primal whose conic dual is eq. 3.11 of the thesis, without intercept):

.. math::

    \min_{z, W} \; \langle A, W\rangle + \sum_{i \in L} C_i \max(0, 1 - y_i z_i)
        + \sum_{i \in U} C_i \max(0, 1 - W_{ii})
    \quad\text{s.t.}\quad \begin{pmatrix} W & z \\ z^\top & 1\end{pmatrix} \succeq 0,\;
    |c^\top z| \le \varepsilon

with ``A = (F F^T)^{-1}`` for a factor ``F`` of the kernel (``n x p``).  Writing ``z = F u``
and ``W = F (u u^T + R R^T) F^T`` with ``R`` of shape ``(p, r)`` makes the PSD constraint
automatic and gives ``<A, W> = ||u||^2 + ||R||_F^2``.  The hinge terms and the balance
constraint are handled by an augmented Lagrangian whose inner problems are smooth (each
hinge becomes its Moreau envelope, a Huber function) and solved by L-BFGS; the hinge
multipliers ``gamma_i = clip(gamma_i + sigma (1 - m_i), 0, C_i)`` stay in the box of eq.
3.11, so they are the dual variables of 3.11 directly.

Certificate: with ``D = diag(gamma_U)``, the LMI of eq. 3.11 holds iff
``A - D >= 0`` iff ``I_p - F^T D F >= 0`` (congruence through ``F``), checked by Lanczos
(:func:`scipy.sparse.linalg.eigsh`) on the ``p x p`` operator.  When it fails, its leading
eigenvector is a descent direction and becomes a new column of ``R`` (rank escape).  The
dual value ``sum gamma - eps |mu| - (1/4) g^T (A - D)^{-1} g`` (``g = gamma*a - mu c``) uses
``g^T (A-D)^{-1} g = h^T (I - F^T D F)^{-1} h = 2 h^T u`` (``h = F^T g``), exact at a
stationary point of the inner problem, since the multipliers are the Huber slopes there.

``F`` is given as a :class:`FeatureFactor`: a dense Cholesky factor of the kernel, or
implicit centred (sparse) features for the linear kernel, so that no ``n x n`` matrix is
formed for linear kernels on sparse text.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from scipy.linalg.blas import daxpy as _axpy
from scipy.linalg.blas import ddot as _dot
from scipy.linalg.blas import dger as _ger
from scipy.linalg.blas import dtrmm as _trmm
from scipy.sparse.linalg import LinearOperator, eigsh

from semisup._accel import use_compiled
from semisup.solvers import _kernels
from semisup.solvers.design import _unsigned

logger = logging.getLogger("semisup.solvers.lowrank_sdp")


class FeatureFactor:
    """A factor ``F`` (``n x p``) of a kernel matrix ``K = F F^T``, applied to blocks.

    Parameters
    ----------
    dense : ndarray of shape (n, p), optional
        The factor itself (e.g. a Cholesky factor).
    X : ndarray or sparse matrix of shape (n, d), optional
        Explicit features, used as ``X - 1 mean^T`` (centred implicitly; sparsity kept).
    mean : ndarray of shape (d,), optional
        Column means to subtract from ``X`` (zeros: no centring).
    ridge : float
        With ``X``: append ``sqrt(ridge) I_n`` to the features (``K + ridge I``).
    lower : bool
        ``dense`` is lower triangular (a Cholesky factor): products go through BLAS
        ``trmm``, which reads half the matrix (4x faster than a general product here).
    """

    def __init__(self, dense=None, X=None, mean=None, ridge: float = 0.0, lower: bool = False):
        if (dense is None) == (X is None):
            raise ValueError("give exactly one of dense and X")
        self.lower = bool(lower) and dense is not None
        if dense is None:
            self.dense = None
        elif self.lower:
            self.dense = np.asfortranarray(dense, dtype=np.float64)
        else:
            self.dense = np.asarray(dense, dtype=np.float64)
        self._compiled = X is not None and sp.issparse(X) and use_compiled(X.nnz)
        if self._compiled:
            X = sp.csr_matrix(X, dtype=np.float64)
            self._X_arrays = (X.indptr, _unsigned(X.indices), X.data)
        self.X = X
        if X is not None:
            # an explicit CSR transpose: F^T G gathers rows instead of scattering (faster)
            self._XT = X.T.tocsr() if sp.issparse(X) else np.ascontiguousarray(X.T)
            if self._compiled:
                self._XT_arrays = (self._XT.indptr, _unsigned(self._XT.indices),
                                   self._XT.data)
            self.mean = np.zeros(X.shape[1]) if mean is None else np.asarray(mean, float)
            self.sqrt_ridge = float(np.sqrt(ridge))
        src = self.dense if self.dense is not None else X
        self.n = src.shape[0]
        self.d = src.shape[1]
        self.p = self.d + (self.n if X is not None and ridge > 0 else 0)

    def matvec(self, M: np.ndarray) -> np.ndarray:
        """``F @ M`` for ``M`` of shape (p, k)."""
        if self.lower:
            return _trmm(1.0, self.dense, np.asarray(M, dtype=np.float64), lower=1)
        if self.dense is not None:
            return self.dense @ M
        Mx = M[:self.d]
        if self._compiled:
            out = np.empty((self.n, M.shape[1]))
            _kernels.csr_matmat(*self._X_arrays, np.ascontiguousarray(Mx, dtype=np.float64),
                                out)
        else:
            out = np.asarray(self.X @ Mx)
        out -= (self.mean @ Mx)[None, :]
        if self.p > self.d:
            out += self.sqrt_ridge * M[self.d:]
        return out

    def rmatvec(self, G: np.ndarray) -> np.ndarray:
        """``F^T @ G`` for ``G`` of shape (n, k)."""
        if self.lower:
            return _trmm(1.0, self.dense, np.asarray(G, dtype=np.float64), lower=1, trans_a=1)
        if self.dense is not None:
            return self.dense.T @ G
        out = np.empty((self.p, G.shape[1]))
        top = out[:self.d]
        if self._compiled:
            _kernels.csr_matmat(*self._XT_arrays, np.ascontiguousarray(G, dtype=np.float64),
                                top)
        else:
            top[...] = self._XT @ G
        # top -= mean colsum^T in place (rank-one BLAS update of the Fortran view top.T)
        _ger(-1.0, G.sum(axis=0), self.mean, a=top.T, overwrite_a=True)
        if self.p > self.d:
            np.multiply(G, self.sqrt_ridge, out=out[self.d:])
        return out


def top_spectrum(F: FeatureFactor, k: int, rng: np.random.RandomState, n_power: int = 3):
    """Leading eigenpairs of ``F^T F`` (``k`` of them) by randomized subspace iteration.

    Returns ``(V, lam)``: ``V`` of shape (p, k) orthonormal, ``lam`` descending.  Only block
    products with ``F`` and ``F^T`` are used (Halko, Martinsson & Tropp 2011, Alg. 4.4), so
    the sparse linear route still forms no ``n x n`` matrix.
    """
    k = int(min(k, F.p, F.n))
    Q = np.linalg.qr(rng.standard_normal((F.p, k + 10)))[0]
    for _ in range(n_power):
        Q = np.linalg.qr(F.rmatvec(F.matvec(Q)))[0]
    FQ = F.matvec(Q)
    lam, Wv = np.linalg.eigh(FQ.T @ FQ)
    order = np.argsort(lam)[::-1][:k]
    return Q @ Wv[:, order], np.maximum(lam[order], 0.0)


@dataclass
class LowRankResult:
    """Solution of the CTSVM relaxation by the low-rank route.

    Attributes
    ----------
    z : ndarray of shape (n,)
        First moment ``w`` of eq. 3.6 (the relaxed predictions).
    Q : ndarray of shape (n, r)
        ``W = z z^T + Q Q^T``.
    u, R : ndarray
        Factor-space variables (``z = F u``, ``Q = F R``).
    gamma : ndarray of shape (n,)
        Multipliers of eq. 3.11 (in ``[0, C_i]``).
    mu : float
        Balance multiplier ``alpha - beta``.
    objective : float
        Primal objective (exact hinge terms).
    dual_objective : float
        Dual objective of eq. 3.11 at ``(gamma, mu)``.
    min_eig : float
        Smallest eigenvalue of ``I - F^T diag(gamma_U) F`` (``>= 0``: the LMI holds).
    balance : float
        ``c^T z``.
    n_outer, n_evals : int
        Augmented Lagrangian rounds and function evaluations.
    converged : bool
    history : list of dict
    """

    z: np.ndarray
    Q: np.ndarray
    u: np.ndarray
    R: np.ndarray
    gamma: np.ndarray
    mu: float
    objective: float
    dual_objective: float
    min_eig: float
    balance: float
    n_outer: int
    n_evals: int
    converged: bool
    history: list = field(default_factory=list)

    @property
    def rank(self) -> int:
        """Numerical rank of ``[z, Q]``."""
        Z = np.column_stack([self.z, self.Q])
        s = np.linalg.svd(Z, compute_uv=False)
        return int(np.count_nonzero(s > 1e-3 * s[0])) if s.size and s[0] > 0 else 0

    @property
    def gap(self) -> float:
        """Relative primal-dual gap."""
        return (self.objective - self.dual_objective) / max(1.0, abs(self.objective))


def _huber(G, gamma, C, sigma):
    """Moreau-envelope term of ``C max(0, G)`` in the augmented Lagrangian, and its slope."""
    v = G + gamma / sigma
    slope = np.clip(sigma * v, 0.0, C)
    Cf = np.where(np.isfinite(C), C, 0.0)     # hard margin (C = inf): never the linear piece
    val = np.where(v <= 0, 0.0, np.where(slope < C, 0.5 * sigma * v * v,
                                         Cf * v - 0.5 * Cf * Cf / sigma))
    return val.sum() - (gamma * gamma).sum() / (2 * sigma), slope


def lbfgs(fun, x0: np.ndarray, *, max_iter: int = 1000, memory: int = 10, gtol: float = 1e-9,
          ftol: float = 1e-13, precond=None, state: dict | None = None):
    """Minimise a smooth function by L-BFGS (two-loop recursion, Armijo backtracking).

    A plain numpy implementation: its per-iteration cost is a few vector operations, far
    below scipy's L-BFGS-B for the ``p x (r+1)`` unknowns here.  The correction pairs live
    in two preallocated ``memory x P`` arrays and the recursion updates in place (BLAS
    ``axpy``/``dot``): with ``P`` in the hundreds of thousands (sparse text) the vector
    passes, not the function, dominated the iteration.

    Parameters
    ----------
    fun : callable
        ``x -> (value, gradient)``.
    x0 : ndarray
    max_iter, memory : int
    gtol : float
        Stop when ``max |grad| <= gtol * max(1, |value|)``.
    ftol : float
        Stop when the relative decrease of one step is below ``ftol``.
    precond : callable or None
        ``v -> P^{-1} v`` for a fixed SPD approximation ``P`` of the Hessian; the initial
        matrix of the two-loop recursion is then ``theta P^{-1}`` with the usual scaling
        ``theta = s^T y / y^T P^{-1} y`` (Nocedal & Wright, eq. 7.20 with a preconditioner).
    state : dict or None
        Carried between calls on a sequence of related problems (the augmented Lagrangian
        rounds): on entry its correction pairs (same size and memory) and its last scaling
        ``theta`` start the recursion; on exit they are stored back.  Without it every call
        starts with a unit step along ``-g / ||g||``, which near the solution needs a dozen
        backtracking halvings before the first accepted step.

    Returns
    -------
    x : ndarray
    n_iter : int
    """
    x = np.array(x0, dtype=np.float64, copy=True).ravel()
    f, g = fun(x)
    size = x.size
    theta0 = None
    if state is not None and state.get("S") is not None and state["S"].shape == (memory, size):
        S, Y, rho = state["S"], state["Y"], state["rho"]
        stored, head = state["stored"], state["head"]
    else:
        S = np.empty((memory, size))
        Y = np.empty((memory, size))
        rho = np.empty(memory)
        stored, head = 0, 0                   # pairs held; slot of the next pair
        if state is not None:
            theta0 = state.get("theta")
    alphas = np.empty(memory)
    s_vec, y_vec = np.empty(size), np.empty(size)
    it = 0
    while it < max_iter:
        it += 1
        if np.abs(g).max() <= gtol * max(1.0, abs(f)):
            break
        q = g.copy()
        order = [(head - 1 - j) % memory for j in range(stored)]      # newest first
        for j, i in enumerate(order):
            alphas[j] = rho[i] * _dot(S[i], q)
            q = _axpy(Y[i], q, a=-alphas[j])
        if precond is not None:
            q = precond(q)
            if stored:
                i = order[0]
                q *= (1.0 / rho[i]) / _dot(Y[i], precond(Y[i]))
        elif stored:
            i = order[0]
            q *= (1.0 / rho[i]) / _dot(Y[i], Y[i])
        elif theta0 is not None:
            q *= theta0
        else:
            q *= 1.0 / max(np.linalg.norm(g), 1e-12)
        for j in range(stored - 1, -1, -1):                            # oldest first
            i = order[j]
            q = _axpy(S[i], q, a=alphas[j] - rho[i] * _dot(Y[i], q))
        d = q
        d *= -1.0
        slope = _dot(g, d)
        if slope >= 0:
            d, slope = -g, -_dot(g, g)
            stored = 0
        step = 1.0
        for _ in range(40):
            x_new = x + step * d
            f_new, g_new = fun(x_new)
            if f_new <= f + 1e-4 * step * slope:
                break
            step *= 0.5
        else:
            break
        np.subtract(x_new, x, out=s_vec)
        np.subtract(g_new, g, out=y_vec)
        sy = _dot(s_vec, y_vec)
        if sy > 1e-12 * np.sqrt(_dot(s_vec, s_vec) * _dot(y_vec, y_vec)):
            S[head] = s_vec
            Y[head] = y_vec
            rho[head] = 1.0 / sy
            head = (head + 1) % memory
            stored = min(stored + 1, memory)
        decrease = f - f_new
        x, f, g = x_new, f_new, g_new
        if decrease <= ftol * max(1.0, abs(f)):
            break
    if state is not None:
        theta = state.get("theta")
        if stored:
            i = (head - 1) % memory
            theta = (1.0 / rho[i]) / _dot(Y[i], Y[i])
        state.update(S=S, Y=Y, rho=rho, stored=stored, head=head, theta=theta)
    return x, it


def pataki_rank(n_constraints: int) -> int:
    """Largest rank an optimal extreme point of an SDP with ``n_constraints`` may need.

    Barvinok (1995) and Pataki (1998): an SDP with ``m`` linear constraints has an optimal
    solution of rank ``r`` with ``r (r + 1) / 2 <= m``.  A Burer-Monteiro factor allowed this
    many columns can therefore always reach the optimum (Burer & Monteiro 2003; Boumal,
    Voroninski & Bandeira 2016 for second-order points).
    """
    m = max(int(n_constraints), 1)
    return int((np.sqrt(8.0 * m + 1.0) - 1.0) // 2)


def ctsvm_lowrank(F: FeatureFactor, *args, **kwargs) -> LowRankResult:
    """:func:`_ctsvm_lowrank` under one BLAS thread.

    Every evaluation multiplies by a thin block (``r + 1`` columns), where BLAS threading
    buys little and its synchronisation cost dominated (8x slower) on a loaded 2-core machine.
    """
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        return _ctsvm_lowrank(F, *args, **kwargs)


def _ctsvm_lowrank(F: FeatureFactor, y_l: np.ndarray, labeled: np.ndarray, C: np.ndarray,
                  eps: float, *, rank: int = 2, max_rank: int | None = None, sigma: float = 10.0,
                  tol: float = 1e-6, max_outer: int = 60, max_inner: int = 2000,
                  offset: float = 0.0, precondition: int = 0, inexact: float = 1e-3,
                  init=None, escape_block: int | str = 1, sigma_max: float | None = None,
                  trim: int | None = None, carry: str = "none", certify: str = "every",
                  escape_scale: str = "fixed", memory: int = 10,
                  sigma_below: float = np.inf, random_state=None) -> LowRankResult:
    """Solve the relaxation by a Burer-Monteiro factorisation and an augmented Lagrangian.

    Parameters
    ----------
    F : FeatureFactor
        ``K + ridge I = F F^T`` (``A = (F F^T)^{-1}`` of eq. 3.6, no intercept).
    y_l : ndarray of shape (l,)
        ``+1/-1`` labels of the rows ``labeled``.
    labeled : ndarray of int
        Indices of the labeled rows (every other row is unlabeled).
    C : ndarray of shape (n,)
        Slack weights ``C_l`` / ``C_u`` per row (``inf``: hard margin, eq. 3.8).
    eps : float
        Balance tolerance of eq. 3.5.
    rank : int
        Initial number of columns of ``R``.
    max_rank : int or None
        Upper bound on the columns after rank escapes.  None: 20, doubled whenever the
        factor sits at the cap with settled multipliers and a violated LMI, up to
        :func:`pataki_rank` of the ``n + 1`` constraints (one per row and the balance),
        which never cuts off the optimum.  A fixed cap of 20 did on g241c, whose optimum
        has rank 23: the LMI stayed at -1.4e-2 for 200 rounds.  Where 20 suffices the path
        is the fixed cap's (20NG n = 10,000: the same 1,059 evaluations); starting at the
        Pataki bound there took as long (70.8 s against 68.6-69.4 s, within this
        machine's run-to-run spread).
    sigma : float
        Augmented Lagrangian penalty (the first round's, with ``sigma_max``).
    sigma_max : float or None
        Adaptive penalty: after a round whose primal residual (multiplier change divided
        by ``sigma``) fell by less than 4x, ``sigma`` doubles, up to ``sigma_max``
        (the classical rule of Conn, Gould & Toint / Nocedal & Wright, Alg. 17.4); the inner
        tolerance shrinks by the same factor.  None: ``sigma`` fixed.
    sigma_below : float
        The adaptive rule acts only once the (relative) multiplier change is below this
        (the end game, where the active set has settled).
    tol : float
        Stopping tolerance on the multiplier change, the LMI and the relative gap.
    max_outer, max_inner : int
        Augmented Lagrangian rounds; L-BFGS iterations per round.
    offset : float
        Fixed offset ``b0`` of the predictions ``z + b0`` (constraints
        ``y_i (z_i + b0) >= 1`` and ``W_ii + 2 b0 z_i + b0^2 >= 1``, still convex).
    precondition : int
        Number of leading eigenpairs of ``F^T F`` (the kernel's spectrum) used to
        precondition L-BFGS (0: none).  The Hessian of the inner problem is
        ``2 I + F^T D F`` with ``D`` the Huber curvatures, whose condition grows with the
        kernel's largest eigenvalues; in the eigenbasis it is nearly diagonal.  Measured
        on Digit1 it did not reduce the evaluations (the slow directions come from the
        factorisation's near-singular Hessian at a tight LMI, not from the kernel), so
        it is off by default.
    inexact : float
        Inner L-BFGS tolerance ``inexact * (last multiplier change)`` (clipped to
        ``[1e-9, 1e-3]``; 0: always ``1e-9``).  Early rounds, whose multipliers are far
        from optimal, are then solved loosely (about half the evaluations on Digit1).
    escape_block : int or 'grow'
        Most columns added by one rank escape: the eigenvectors of the dual slack with a
        violated eigenvalue among its ``escape_block`` smallest (block Lanczos).  One
        column per round needed one augmented Lagrangian round per missing rank.
        ``'grow'``: 1 column at an escape, then 2, 4, ... (at most 16) while the following
        rounds escape too, back to 1 after a round without one.  A high-rank optimum is
        reached in a logarithmic number of rounds (g241c: rank 8 to 23 in 4 escapes
        instead of 15), while the occasional escapes of a low-rank fit stay single
        columns.  Each block needs a block Lanczos, which on sparse features of large
        ``d`` costs more than the rounds it saves.
    trim : int or None
        After each round, rotate ``R`` to its singular vectors (``W`` is unchanged) and keep
        its numerical rank (singular values above ``1e-3`` of the largest of ``[u, R]``)
        plus ``trim`` spare columns; None: never drop columns.  Columns beyond the
        solution's rank cost work in every evaluation and nothing else.
    carry : {'none', 'scale', 'pairs'}
        What L-BFGS keeps from one round to the next (the rounds differ only in the
        multipliers): nothing, the initial Hessian scaling, or the correction pairs too
        (dropped when the number of columns changes).
    certify : {'every', 'lazy'}
        ``'every'``: a Lanczos certificate after every round (loose while the multipliers
        change by more than ``1e-2``).  ``'lazy'``: a loose one (``1e-3``) only while a rank
        escape is still possible, a tight one (``0.1 tol``: a Ritz value within the
        residual of an eigenvalue) only once the multipliers change by less than ``10 tol``,
        where the stopping test can pass.
    escape_scale : {'fixed', 'search'}
        Length of a new column ``t v`` (``v`` a unit violated eigenvector): ``1e-2``, or
        the exact minimiser of the next round's Lagrangian along it.  Only the unlabeled
        ``m_u`` change (by ``t^2 (F v)_u^2``), so the Lagrangian is a convex function of
        ``t^2`` (sum of Huber terms of an affine function, plus ``t^2``), minimised by
        bisection on its derivative at ``O(n)`` per step.  A fixed small column has a
        gradient (``2 t min_eig``) below the loose inner tolerance and is not grown, so
        the violation then stayed for many rounds.
    memory : int
        L-BFGS correction pairs.
    init : dict or None
        Warm start: ``'M'`` (``p x k`` factor ``[u, R]``; padded with small random
        columns up to ``rank + 1``), and optionally ``'gamma'`` (n) and ``'mu'``.
    random_state : int, RandomState or None
        Initial ``R``.

    Returns
    -------
    LowRankResult
    """
    n, p = F.n, F.p
    rank_bound = pataki_rank(n + 1)
    adaptive_cap = max_rank is None
    if adaptive_cap:
        max_rank = min(20, rank_bound)
    b0 = float(offset)
    rng = np.random.RandomState(random_state) if not isinstance(
        random_state, np.random.RandomState) else random_state
    is_l = np.zeros(n, dtype=bool)
    is_l[labeled] = True
    unl = np.flatnonzero(~is_l)
    lab = np.asarray(labeled)
    l, nu = lab.size, unl.size
    c = np.zeros(n)
    c[lab] = 1.0 / l
    c[unl] = -1.0 / nu
    C = np.asarray(C, dtype=np.float64)
    C_l, C_u = C[lab], C[unl]
    y_l = np.asarray(y_l, dtype=np.float64)
    gamma = np.zeros(n)
    mu = 0.0
    # start: u from the labeled targets spread by the kernel, R small and random
    t0 = np.zeros((n, 1))
    t0[lab, 0] = y_l
    u = F.rmatvec(t0)[:, 0]
    scale = np.linalg.norm(F.matvec(u[:, None])[:, 0])
    u *= np.sqrt(n) / max(scale, 1e-12) * 0.5
    R = rng.standard_normal((p, rank)) * (0.5 / np.sqrt(p))
    n_evals = 0
    n_escapes = 0                          # consecutive rounds that ended in an escape
    history: list = []

    def lagrangian(x, k, gamma, mu):
        nonlocal n_evals
        n_evals += 1
        M = x.reshape(p, k)
        Z = F.matvec(M)
        z = Z[:, 0]
        val = _dot(x, x)
        dZ = np.zeros_like(Z)
        hl, sl = _huber(1.0 - y_l * (z[lab] + b0), gamma[lab], C_l, sigma)
        m_u = np.einsum("ij,ij->i", Z[unl], Z[unl]) + 2 * b0 * z[unl] + b0 * b0
        hu, su = _huber(1.0 - m_u, gamma[unl], C_u, sigma)
        val += hl + hu
        dZ[lab, 0] = -sl * y_l
        dZ[unl] = -2.0 * su[:, None] * Z[unl]
        dZ[unl, 0] -= 2.0 * b0 * su
        s = c @ z
        v = s + mu / sigma
        excess = v - np.clip(v, -eps, eps)
        val += 0.5 * sigma * excess * excess - mu * mu / (2 * sigma)
        dZ[:, 0] += sigma * excess * c
        grad = F.rmatvec(dZ).ravel()
        return val, _axpy(x, grad, a=2.0)

    def primal(M):
        Z = F.matvec(M)
        z = Z[:, 0]
        m_u = np.einsum("ij,ij->i", Z[unl], Z[unl]) + 2 * b0 * z[unl] + b0 * b0
        obj = float(np.sum(M * M))
        obj += float(np.sum(np.where(np.isfinite(C_l), C_l, 0)
                            * np.maximum(0, 1 - y_l * (z[lab] + b0))))
        obj += float(np.sum(np.where(np.isfinite(C_u), C_u, 0) * np.maximum(0, 1 - m_u)))
        return obj, Z

    v_prev = np.ones(p) / np.sqrt(p)

    def certificate(gamma, mu, M, eig_tol):
        nonlocal v_prev
        d = np.zeros(n)
        d[unl] = gamma[unl]
        op = LinearOperator((p, p), dtype=np.float64,
                            matvec=lambda v: F.rmatvec(d[:, None] * F.matvec(
                                np.asarray(v).reshape(p, 1)))[:, 0])
        if eig_tol is None:
            min_eig, vec = np.nan, None       # not checked this round
        elif not np.any(d):
            # no unlabeled multiplier: the slack is I (ARPACK refuses a zero operator)
            min_eig, vec = 1.0, v_prev
        elif p <= 3:
            dense_op = op @ np.eye(p)
            vals, vecs = np.linalg.eigh(dense_op)
            min_eig, vec = 1.0 - vals[-1], vecs[:, -1]
        else:
            # warm start from the last round's vector; far from the optimum only the sign
            # of the violation (for a rank escape) is needed
            vals, vecs = eigsh(op, k=1, which="LA", tol=eig_tol, maxiter=5000, v0=v_prev)
            min_eig, vec = 1.0 - float(vals[0]), vecs[:, 0]
            v_prev = vec
        g = np.zeros(n)
        g[lab] = gamma[lab] * y_l
        g[unl] = 2.0 * b0 * gamma[unl]
        g -= mu * c
        h = F.rmatvec(g[:, None])[:, 0]
        # at an inner stationary point the new multipliers satisfy (I - F^T D F)(2u) = h
        # exactly, so g^T (A - D)^{-1} g = h^T (2u); the LMI itself is checked by Lanczos
        dual = float(gamma[lab] @ (1 - b0 * y_l) + (1 - b0 * b0) * gamma[unl].sum()
                     - eps * abs(mu) - 0.5 * h @ M[:, 0])
        return min_eig, vec, dual

    def escape_directions(gamma, b):
        d = np.zeros(n)
        d[unl] = gamma[unl]
        op = LinearOperator((p, p), dtype=np.float64,
                            matvec=lambda v: F.rmatvec(d[:, None] * F.matvec(
                                np.asarray(v).reshape(p, 1)))[:, 0])
        vals, vecs = eigsh(op, k=b, which="LA", tol=1e-3, maxiter=5000, v0=v_prev)
        return vals, vecs

    if precondition > 0:
        V, lam = top_spectrum(F, precondition, rng)
        FV2 = F.matvec(V) ** 2            # (F V)_ij^2 = lam_j U_ij^2
    else:
        V = None

    def make_precond(M, gamma, k):
        """Diagonal model of the Hessian in the leading eigenbasis, per column of M."""
        Z = F.matvec(M)
        H = np.zeros((n, k))
        vl = 1.0 - y_l * (Z[lab, 0] + b0) + gamma[lab] / sigma
        H[lab, 0] = np.where((vl > 0) & (sigma * vl < C_l), sigma, 0.0)
        m_u = np.einsum("ij,ij->i", Z[unl], Z[unl]) + 2 * b0 * Z[unl, 0] + b0 * b0
        vu = 1.0 - m_u + gamma[unl] / sigma
        su = np.clip(sigma * vu, 0.0, C_u)
        quad = (vu > 0) & (sigma * vu < C_u)
        Zu = Z[unl].copy()
        Zu[:, 0] += b0
        H[unl] = 4 * sigma * quad[:, None] * Zu * Zu - 2 * su[:, None]
        curv = np.maximum(2.0 + FV2.T @ H, 0.2)                 # (k_spec, k)
        tail = np.maximum(2.0 + lam[-1] * H.mean(axis=0), 0.2)  # (k,)

        def apply(g):
            G = g.reshape(p, k)
            P = V.T @ G
            out = (G - V @ P) / tail + V @ (P / curv)
            return out.ravel()
        return apply

    M = np.column_stack([u, R])
    if init is not None:
        M0 = np.asarray(init["M"], dtype=np.float64).reshape(p, -1)
        if M0.shape[1] < M.shape[1]:
            M0 = np.column_stack([M0, R[:, :M.shape[1] - M0.shape[1]]])
        M = M0
        if init.get("gamma") is not None:
            gamma = np.clip(np.asarray(init["gamma"], dtype=np.float64), 0.0, C)
        mu = float(init.get("mu", 0.0))
    if carry not in ("none", "scale", "pairs") or certify not in ("every", "lazy"):
        raise ValueError("carry must be 'none', 'scale' or 'pairs'; certify 'every' or 'lazy'")
    sigma0 = sigma
    sigma_max = sigma if sigma_max is None else max(float(sigma_max), sigma)
    residual_prev = np.inf
    lb_state: dict | None = {} if carry != "none" else None
    last_change = 1.0
    converged = False
    min_eig, dual = -np.inf, -np.inf
    outer = 0
    for outer in range(1, max_outer + 1):
        k = M.shape[1]
        def inner(x, k=k, gamma=gamma, mu=mu):
            return lagrangian(x, k, gamma, mu)

        pre = make_precond(M, gamma, k) if V is not None else None
        gtol = 1e-9 if inexact <= 0 else min(
            1e-3, max(1e-9, inexact * last_change * sigma0 / sigma))
        if lb_state is not None and carry == "scale":
            lb_state.pop("S", None)
        t_round, evals_before = time.process_time(), n_evals
        x, nit = lbfgs(inner, M.ravel(), max_iter=max_inner, gtol=gtol, ftol=0.0, precond=pre,
                       state=lb_state, memory=memory)
        M = x.reshape(p, k)
        Z = F.matvec(M)
        z = Z[:, 0]
        new_gamma = gamma.copy()
        new_gamma[lab] = np.clip(gamma[lab] + sigma * (1 - y_l * (z[lab] + b0)), 0, C_l)
        m_u = np.einsum("ij,ij->i", Z[unl], Z[unl]) + 2 * b0 * z[unl] + b0 * b0
        new_gamma[unl] = np.clip(gamma[unl] + sigma * (1 - m_u), 0, C_u)
        v = c @ z + mu / sigma
        new_mu = sigma * (v - np.clip(v, -eps, eps))
        abs_change = np.abs(new_gamma - gamma).max() + abs(new_mu - mu)
        change = abs_change / max(1.0, np.abs(new_gamma).max())
        gamma, mu = new_gamma, new_mu
        last_change = change
        sigma_used = sigma
        residual = abs_change / sigma      # primal residual of the hinge/balance terms
        if sigma < sigma_max and residual > 0.25 * residual_prev and change < sigma_below:
            sigma = min(2.0 * sigma, sigma_max)
        residual_prev = residual
        if trim is not None and k > 2:
            M = _trim_columns(M, int(trim))
        obj, _ = primal(M)
        loose = change > 1e-2
        if certify == "every":
            eig_tol = 1e-3 if loose else 1e-8
        elif change < 10 * tol:
            eig_tol = max(0.1 * tol, 1e-9)
        else:
            eig_tol = 1e-3 if M.shape[1] - 1 < max_rank else None
        t_cert = time.process_time()
        min_eig, vec, dual = certificate(gamma, mu, M, eig_tol)
        gap = (obj - dual) / max(1.0, abs(obj))
        history.append(dict(outer=outer, rank=M.shape[1] - 1, objective=obj, dual=dual,
                            min_eig=min_eig, change=change, sigma=sigma_used, inner_iter=nit,
                            evals=n_evals - evals_before, cpu_inner=t_cert - t_round,
                            cpu_cert=time.process_time() - t_cert))
        logger.debug("outer %d: rank %d obj %.8g dual %.8g min_eig %.2e change %.2e sigma %g",
                     outer, M.shape[1] - 1, obj, dual, min_eig, change, sigma_used)
        k = M.shape[1]
        thr = 1e-2 if loose else max(tol, 1e-6)
        if (adaptive_cap and k - 1 >= max_rank and max_rank < rank_bound
                and change < 10 * tol and min_eig < -thr):
            max_rank = min(2 * max_rank, rank_bound)   # stalled at the cap: raise it
        if vec is not None and min_eig < -thr and k - 1 < max_rank:
            # rank escape along the violated eigenvectors of the dual slack
            room = max_rank - (k - 1)
            cols = vec[:, None]
            block = min(2 ** n_escapes, 16) if escape_block == "grow" else int(escape_block)
            n_escapes += 1
            if block > 1 and room > 1 and p > block + 2:
                vals, vecs = escape_directions(gamma, min(block, room))
                keep = 1.0 - vals < -thr
                if keep.any():
                    cols = vecs[:, keep]
            cols = cols / np.linalg.norm(cols, axis=0)
            if escape_scale == "search":
                W_new = F.matvec(cols)[unl] ** 2          # m_u grows by t^2 (F v)_u^2
                for j in range(cols.shape[1]):
                    t2 = _escape_step(1.0 - m_u, W_new[:, j], gamma[unl], C_u, sigma)
                    cols[:, j] *= np.sqrt(t2) if t2 > 0 else 1e-2
                    history[-1].setdefault("escape_sq", []).append(t2)
                    m_u = m_u + max(t2, 0.0) * W_new[:, j]
            else:
                cols *= 1e-2
            M = np.column_stack([M, cols])
            residual_prev = np.inf        # the next round's residual jumps: not a stall
            continue
        n_escapes = 0
        if abs(gap) < tol and change < 10 * tol and min_eig > -tol:
            converged = True
            break
    if np.isnan(min_eig):                  # the last round skipped its certificate
        min_eig, _, dual = certificate(gamma, mu, M, max(0.1 * tol, 1e-9))
    obj, Z = primal(M)
    return LowRankResult(z=Z[:, 0].copy(), Q=Z[:, 1:].copy(), u=M[:, 0].copy(),
                         R=M[:, 1:].copy(), gamma=gamma, mu=float(mu), objective=obj,
                         dual_objective=dual, min_eig=float(min_eig), balance=float(c @ Z[:, 0]),
                         n_outer=outer, n_evals=n_evals, converged=converged, history=history)


def _escape_step(G: np.ndarray, w2: np.ndarray, gamma: np.ndarray, C: np.ndarray,
                 sigma: float) -> float:
    """Minimiser ``s >= 0`` of ``s + sum_u huber(G_u - s w2_u)`` (the Lagrangian along a
    new column of squared length ``s``; ``huber`` as in :func:`_huber`); 0 if none.

    The derivative ``1 - sum_u clip(gamma_u + sigma (G_u - s w2_u), 0, C_u) w2_u`` is
    nondecreasing in ``s``: bisection on its sign change.
    """
    def slope(s):
        return 1.0 - float(np.clip(gamma + sigma * (G - s * w2), 0.0, C) @ w2)
    if slope(0.0) >= 0:
        return 0.0
    hi = 1.0
    while slope(hi) < 0 and hi < 1e12:
        hi *= 4.0
    lo = 0.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if slope(mid) < 0:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def _trim_columns(M: np.ndarray, margin: int) -> np.ndarray:
    """``[u, R]`` with ``R`` rotated to its singular vectors, negligible columns dropped.

    ``R R^T`` (hence ``W``) is invariant under ``R -> R V``; with ``V`` from the SVD the
    columns are ``U S`` and those with ``s < 1e-3 max(||u||, s_max)`` carry nothing.  The
    numerical rank plus ``margin`` of them stay (the largest first), so that a direction
    still growing is not cut.
    """
    R = M[:, 1:]
    G = R.T @ R
    s2, V = np.linalg.eigh(G)
    order = np.argsort(s2)[::-1]
    s2, V = np.maximum(s2[order], 0.0), V[:, order]
    scale = max(float(M[:, 0] @ M[:, 0]), float(s2[0]) if s2.size else 0.0, 1e-300)
    n_rank = int(np.count_nonzero(s2 > 1e-6 * scale))
    keep = min(R.shape[1], max(n_rank + margin, 1))
    if keep == R.shape[1]:
        return M
    return np.column_stack([M[:, 0], R @ V[:, :keep]])


def sparse_or_dense_mean(X) -> np.ndarray:
    """Column means of a dense or sparse matrix as a flat array."""
    return np.asarray(X.mean(axis=0)).ravel() if sp.issparse(X) else X.mean(axis=0)
