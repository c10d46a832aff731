r"""Low-rank (Burer-Monteiro) solver for the RTSVM relaxation, eq. 3.2 of the thesis.

Eq. 3.2 minimises, over label matrices ``M`` in

.. math::

    \mathcal{E} = \{M \succeq 0,\ \mathrm{diag}(M) = 1,\ M_{LL} = y_l y_l^\top,\
    e^\top M e \le (b n)^2\},

the value ``omega(M o K) = max_{0 <= a <= C} 2 a^T e - a^T (M o K) a`` (its LMI in
``nu, delta`` is this value's conic form; Lanckriet et al. 2004).  With ``K = F F^T`` and
``M = R R^T`` (unit rows ``r_i``; the labeled rows ``r_i = y_i e_1``, which is what
``M_LL = y_l y_l^T`` allows up to a rotation), ``M o K`` is the Gram matrix of
``z_i = f_i (x) r_i``, and ``omega`` is twice the primal of a bias-free hinge SVM:

.. math::

    t^* = \min_{W, R}\ \|W\|_F^2 + 2C \sum_i \max(0,\ 1 - f_i^\top W r_i),
    \qquad W \in \mathbb{R}^{p \times r}.

No ``n x n`` cone and no ``n^2`` variables: the unknowns are ``W`` and the unlabeled rows of
``R``.  The hinge terms go through an augmented Lagrangian (their Moreau envelopes, whose
multipliers ``2 alpha_i`` stay in ``[0, 2C]``: ``alpha`` is the SVM dual), the balance
``||R^T e||^2 <= (b n)^2`` through a second one, and each inner problem is smooth and solved
by L-BFGS over ``W`` and unnormalised rows ``v_i`` (``r_i = v_i / ||v_i||``).

Certificate.  By weak duality ``t* >= 2 alpha^T e - h(alpha)`` with ``h(alpha) = max_{M in E}
<M, A>``, ``A = D_alpha K D_alpha``.  The labeled rows are one direction, so ``M = P Mr P^T``
with ``Mr`` of order ``u + 1`` (row 0 the labeled direction, ``P`` mapping it to ``y_l``) and
``E`` becomes ``{Mr >= 0, diag(Mr) = 1, e_r^T Mr e_r <= (b n)^2}``, ``e_r = P^T e``: Slater's
condition holds there (with the labeled block fixed it does not, and the bound stayed at half
the optimum on 20 rows).  Then ``h(alpha) <= sum z_i + (u + 1) max(0, -lambda_min(S)) +
rho (b n)^2`` for ``S = Diag(z) - B``, ``B = P^T A P - rho e_r e_r^T``, any ``z`` and ``rho >=
0``; the low-rank point gives ``z_i = (B Rr)_i . r_i`` and the balance multiplier ``rho``,
and ``lambda_min`` comes from Lanczos on the operator (never formed; a dense factorisation
up to a few hundred rows), so the bound is valid at every round.  When the gap stops
closing, the eigenvector of a negative ``lambda_min`` becomes a new column of ``R`` (rank
escape; a rank-deficient local minimum is global: Journee, Bach, Absil & Sepulchre 2010).
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass, field

import numpy as np
from scipy.sparse.linalg import ArpackError, LinearOperator, eigsh

from semisup.solvers.lowrank_sdp import FeatureFactor, _huber, lbfgs

logger = logging.getLogger("semisup.solvers.lowrank_rtsvm")

#: Augmented Lagrangian penalty of the hinge terms: start, growth per round, cap (a cap of 10
#: against 1e3: 10 rounds to a gap of 1e-4 instead of none in 60 on a 300-row Digit1 subset,
#: whose multipliers the larger penalty left noisy).
SIGMA = (1.0, 1.5, 10.0)
#: Rounds without a 10 % smaller gap before a rank escape (with escapes at every stall of the
#: primal, the 768-row pima fit grew to 49 columns and stalled at a gap of 3e-3; without, it
#: converged in 45 rounds at 4 columns).
STALL_ROUNDS = 5
#: L-BFGS correction pairs (30 against 10: 10-30 % fewer evaluations on 500-row subsets of
#: Digit1, g241c and USPS).
MEMORY = 30
#: Largest slack factored densely when Lanczos does not converge (above, the round has no
#: bound unless it is the last).
DENSE_CERTIFICATE = 800
#: Certificate attempts while the primal settles: every this many rounds, doubled after each
#: attempt whose Lanczos run did not converge (up to :data:`BOUND_EVERY_MAX`), reset by one
#: that did.  A failed run costs its full iteration limit: on 2,000 rows of dna (binary, 10
#: labels) 12-16 s against 1.6 s for a round, every third round, and no bound.
BOUND_EVERY = 3
BOUND_EVERY_MAX = 24
#: Slacks up to this size are always factored densely (ARPACK needs ncv < size, and a
#: dense factorisation of a few hundred rows costs less than a Lanczos run).
SMALL_CERTIFICATE = 200


@dataclass
class RTSVMLowRankResult:
    """Solution of eq. 3.2 by the low-rank route.

    Attributes
    ----------
    R : ndarray of shape (n, r)
        Unit rows; the label matrix is ``M = R R^T``.
    W : ndarray of shape (p, r)
        Weights of the SVM on the features ``f_i (x) r_i``.
    alpha : ndarray of shape (n,)
        SVM dual variables in ``[0, C]`` (the hinge multipliers halved).
    objective : float
        ``||W||^2 + 2C sum hinge``: eq. 3.2's ``t`` at ``M = R R^T``.
    dual_objective : float
        Certified lower bound on the optimum (module notes).
    balance : float
        ``||R^T e|| / n`` (``<= b`` when the balance holds).
    min_eig : float
        Smallest eigenvalue of the dual slack ``S`` before the shift.
    n_outer, n_evals : int
    converged : bool
        Relative gap within ``tol`` and the balance within ``tol``.
    settled : bool
        Stopped because the anchor labels ``sign(r_0 . r_j)`` of the unlabeled rows stayed the
        same over ``settle_rounds`` rounds with the balance within ``tol`` (``converged`` may
        then be ``False``: the value is not certified).
    history : list of dict
    """

    R: np.ndarray
    W: np.ndarray
    alpha: np.ndarray
    objective: float
    dual_objective: float
    balance: float
    min_eig: float
    n_outer: int
    n_evals: int
    converged: bool
    settled: bool = False
    history: list = field(default_factory=list)

    @property
    def gap(self) -> float:
        """Relative primal-dual gap."""
        return (self.objective - self.dual_objective) / max(1.0, abs(self.objective))

    @property
    def rank(self) -> int:
        """Numerical rank of ``R`` (columns of ``M = R R^T`` that matter)."""
        s = np.linalg.svd(self.R, compute_uv=False)
        return int(np.count_nonzero(s > 1e-3 * s[0]))


class _Problem:
    """Augmented Lagrangian of the factored eq. 3.2 for fixed multipliers (module notes).

    The unknown rows are ``(u + 1)``: row 0 is the labeled rows' common direction (``r_i =
    y_i r_0`` for ``i`` in ``L``), the others the unlabeled rows.  In these reduced
    coordinates ``M = P Mr P^T`` (``P`` maps row 0 to ``y_l`` on ``L``) and the only
    constraints left are a unit diagonal and the balance, so Slater's condition holds and
    the certificate's dual is attained (with the ``L`` block fixed it is not).
    """

    def __init__(self, F: FeatureFactor, labeled, y_l, C: float, balance):
        n = F.n
        self.F, self.n, self.p = F, n, F.p
        self.labeled = np.asarray(labeled)
        is_l = np.zeros(n, dtype=bool)
        is_l[self.labeled] = True
        self.unl = np.flatnonzero(~is_l)
        self.y_l = np.asarray(y_l, dtype=np.float64)
        self.C2 = np.full(n, 2.0 * C)
        self.C = C
        self.balance = balance
        self.e_red = np.r_[self.y_l.sum(), np.ones(self.unl.size)]      # P^T e
        self.evals = 0

    def unpack(self, x, r):
        p = self.p
        return x[:p * r].reshape(p, r), x[p * r:].reshape(self.unl.size + 1, r)

    def expand(self, Vr):
        """``P Vr``: rows of all ``n`` points from the reduced rows."""
        out = np.empty((self.n, Vr.shape[1]))
        out[self.labeled] = self.y_l[:, None] * Vr[0][None, :]
        out[self.unl] = Vr[1:]
        return out

    def reduce(self, G):
        """``P^T G``."""
        return np.vstack([self.y_l @ G[self.labeled], G[self.unl]])

    def rows(self, V):
        norms = np.sqrt(np.einsum("ij,ij->i", V, V))
        Rr = V / norms[:, None]
        return self.expand(Rr), Rr, norms

    def balance_violation(self, Rr) -> float:
        """``||R^T e||^2 / n^2 - b^2`` (``<= 0``: the balance holds)."""
        s = self.e_red @ Rr
        return float(s @ s) / self.n ** 2 - self.balance ** 2

    def value_grad(self, x, r, gam, sigma, mu, sig_b):
        self.evals += 1
        W, V = self.unpack(x, r)
        R, Rr, norms = self.rows(V)
        FW = self.F.matvec(W)
        m = np.einsum("ij,ij->i", FW, R)
        val, slope = _huber(1.0 - m, gam, self.C2, sigma)
        val += float(np.einsum("ij,ij->", W, W))
        gW = 2.0 * W - self.F.rmatvec(slope[:, None] * R)
        gR = self.reduce(-slope[:, None] * FW)
        if self.balance is not None:
            s = self.e_red @ Rr
            c = float(s @ s) / self.n ** 2 - self.balance ** 2
            rho = max(0.0, mu + sig_b * c)
            val += (rho * rho - mu * mu) / (2.0 * sig_b)
            gR += (2.0 * rho / self.n ** 2) * np.outer(self.e_red, s)
        radial = np.einsum("ij,ij->i", gR, Rr)
        gV = (gR - radial[:, None] * Rr) / norms[:, None]
        return val, np.concatenate([gW.ravel(), gV.ravel()])

    def supervised_start(self):
        """The bias-free SVM on the labeled rows alone: its weights in factor space (the
        first column of ``W``) and its scores of every row."""
        from semisup.solvers.svm import fit_precomputed_svm

        sel = np.zeros((self.n, self.labeled.size))
        sel[self.labeled, np.arange(self.labeled.size)] = 1.0
        FL = self.F.rmatvec(sel)
        svm = fit_precomputed_svm(FL.T @ FL, self.y_l, self.C, fit_intercept=False)
        w = FL @ svm.coef
        return w, self.F.matvec(w[:, None])[:, 0]

    def primal(self, W, R) -> tuple[float, np.ndarray]:
        """Eq. 3.2's ``t`` at ``M = R R^T`` for this ``W`` (exact hinge), and the margins."""
        m = np.einsum("ij,ij->i", self.F.matvec(W), R)
        return float(np.einsum("ij,ij->", W, W)
                     + 2.0 * self.C * np.maximum(0.0, 1.0 - m).sum()), m

    def certificate(self, Rr, alpha, rho, force: bool = False):
        """Lower bound on eq. 3.2 at ``(alpha, rho)``, the slack's smallest eigenvalue and its
        eigenvector (module notes), in the reduced coordinates.  ``rho`` multiplies
        ``e^T M e``."""
        F, e = self.F, self.e_red
        size = Rr.shape[0]

        def B(V):                       # P^T (D_a K D_a) P V - rho e e^T V
            Vf = alpha[:, None] * self.expand(V)
            out = self.reduce(alpha[:, None] * F.matvec(F.rmatvec(Vf)))
            out -= rho * np.outer(e, e @ V)
            return out

        z = np.einsum("ij,ij->i", B(Rr), Rr)

        def slack(v):
            v = np.asarray(v, dtype=np.float64).reshape(size, -1)
            return z[:, None] * v - B(v)

        if size <= SMALL_CERTIFICATE:                     # cheaper than Lanczos
            vals, vecs = np.linalg.eigh(slack(np.eye(size)))
        else:
            op = LinearOperator((size, size), matvec=slack, matmat=slack, dtype=np.float64)
            v0 = getattr(self, "_v0", None)
            if v0 is None or v0.size != size or not np.all(np.isfinite(v0)) or not v0.any():
                v0 = None
            try:
                vals, vecs = eigsh(op, k=1, which="SA", tol=1e-6, ncv=min(size - 1, 64),
                                   maxiter=100, v0=v0)
                self._v0 = vecs[:, 0]
            except ArpackError:
                # clustered eigenvalues near zero (S R = 0 at the optimum): factor S itself
                # when that is cheap or asked for, else no bound this round
                if size > DENSE_CERTIFICATE and not force:
                    return -np.inf, 0.0, None
                vals, vecs = np.linalg.eigh(slack(np.eye(size)))
        lam = float(vals[0])
        h_ub = (z.sum() + max(0.0, -lam) * size
                + (rho * (self.balance * self.n) ** 2 if self.balance is not None else 0.0))
        return 2.0 * float(alpha.sum()) - h_ub, lam, vecs[:, 0]


def _full_rank(Rr) -> bool:
    """No column of ``Rr`` is redundant: a rank-deficient local minimum is already global
    (Journee et al. 2010), so only a full-rank one calls for a new column."""
    s = np.linalg.svd(Rr, compute_uv=False)
    return bool(s[-1] > 1e-3 * s[0])


def rtsvm_lowrank(F: FeatureFactor, *args, **kwargs) -> RTSVMLowRankResult:
    """:func:`_rtsvm_lowrank` under one BLAS thread.

    Every evaluation multiplies by a thin block (``r`` columns), where a BLAS thread team
    costs more than it brings: 1.7 s against 4.7 s for the 270-row heart fit on a loaded
    2-core machine (as for :func:`semisup.solvers.lowrank_sdp.ctsvm_lowrank`).
    """
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        return _rtsvm_lowrank(F, *args, **kwargs)


def _rtsvm_lowrank(F: FeatureFactor, labeled: np.ndarray, y_l: np.ndarray, C: float,
                   balance: float | None, *, rank: int = 4, max_rank: int | None = None,
                   tol: float = 1e-3, max_outer: int = 200, max_inner: int = 300,
                   settle_rounds: int | None = None,
                   random_state=None) -> RTSVMLowRankResult:
    """Solve eq. 3.2 by the low-rank route (module notes), certified by its dual bound.

    Parameters
    ----------
    F : FeatureFactor
        A factor of the kernel, ``K = F F^T``.
    labeled : ndarray of int
        Labeled rows.
    y_l : ndarray of shape (l,)
        Their labels in ``{-1, +1}``.
    C : float
        Slack weight.
    balance : float or None
        ``||sum_i r_i|| <= balance n`` (the relaxed ``|sum y| <= balance n``); ``None``: none.
    rank : int
        Columns of ``R`` to start with (at least 2).
    max_rank : int or None
        Most columns reached by rank escapes (``None``: the unlabeled rows plus one).
    tol : float
        Relative primal-dual gap, and balance violation, to stop at.
    max_outer : int
        Augmented Lagrangian rounds.
    max_inner : int
        L-BFGS iterations per round.
    settle_rounds : int or None
        Also stop once the anchor labels ``sign(r_0 . r_j)`` of the unlabeled rows (the
        estimator's transduction) have not changed over this many rounds and the balance holds
        within ``tol``; after a certificate whose Lanczos run failed, no bound is computed
        while they stay put (it could only prompt a rank escape).  ``None``: stop on the
        certified gap only.
    random_state : int, RandomState or None
        Start of the unlabeled rows.

    Returns
    -------
    RTSVMLowRankResult
    """
    rng = np.random.RandomState(random_state) if not isinstance(
        random_state, np.random.RandomState) else random_state
    prob = _Problem(F, labeled, y_l, float(C), balance)
    n, p, u = F.n, F.p, prob.unl.size
    r = max(2, int(rank))
    max_rank = u + 1 if max_rank is None else max(r, int(max_rank))
    W = np.zeros((p, r))
    V = rng.normal(size=(u + 1, r))
    V[0] = 0.0
    V[0, 0] = 1.0
    # start from the supervised SVM: its weights, and the unlabeled rows leaning to its
    # side (evaluations 3866 -> 3643, 4771 -> 3771, 2206 -> 2160 on 500-row subsets of
    # Digit1, g241c and USPS)
    W[:, 0], scores = prob.supervised_start()
    V[1:, 0] += np.sign(scores[prob.unl]) * np.sqrt(r)
    gam = np.zeros(n)
    mu, sigma, sig_b = 0.0, SIGMA[0], 10.0
    history: list = []
    state: dict = {}
    best_dual, last_primal, violation = -np.inf, np.inf, 0.0
    bounded_gap, last_bound = np.inf, -np.inf      # the gap at the last round with a bound
    bound_every = BOUND_EVERY
    signs, unchanged = None, 0
    converged = settled = False
    primal, alpha, lam = np.inf, np.zeros(n), 0.0
    for k in range(1, max_outer + 1):
        x = np.concatenate([W.ravel(), V.ravel()])
        fun = functools.partial(prob.value_grad, r=r, gam=gam, sigma=sigma, mu=mu, sig_b=sig_b)
        x_new, it = lbfgs(fun, x, max_iter=max_inner, gtol=1e-10, ftol=1e-13, state=state,
                          memory=MEMORY)
        if it <= 1:
            # no step accepted: the carried curvature pairs no longer fit (rows renormalised
            # since; a radial move of v_i changes nothing), so start the recursion afresh
            state = {}
            x_new, _ = lbfgs(fun, x, max_iter=max_inner, gtol=1e-10, ftol=1e-13, state=state,
                             memory=MEMORY)
        x = x_new
        W, V = prob.unpack(x, r)
        R, Rr, _ = prob.rows(V)
        W, V = W.copy(), Rr
        primal, m = prob.primal(W, R)
        gam = np.clip(gam + sigma * (1.0 - m), 0.0, prob.C2)
        alpha = 0.5 * gam
        if balance is not None:
            violation = prob.balance_violation(Rr)
            mu = max(0.0, mu + sig_b * violation)
        new_signs = Rr[1:] @ Rr[0] >= 0.0
        unchanged = unchanged + 1 if signs is not None and np.array_equal(new_signs,
                                                                          signs) else 0
        signs = new_signs
        steady = abs(last_primal - primal) <= 10.0 * tol * max(1.0, abs(primal))
        settled = (settle_rounds is not None and unchanged >= settle_rounds
                   and violation <= tol)
        # the bound costs a Lanczos run (hundreds of products): while it is far from tol,
        # take it every few steady rounds only; in settle mode, once a run has failed, not
        # while the labels stay put (where the bound works it often ends the fit first:
        # g241d, 10 labels, 23 rounds against 32 without it)
        due = k - last_bound >= bound_every or bounded_gap < 3 * tol
        waiting = settle_rounds is not None and unchanged > 0 and bound_every > BOUND_EVERY
        if k == max_outer or (steady and due and not settled and not waiting):
            last_bound = k
            dual, lam, v = prob.certificate(Rr, alpha, mu / n ** 2, force=k == max_outer)
            bound_every = (BOUND_EVERY if np.isfinite(dual)
                           else min(2 * bound_every, BOUND_EVERY_MAX))
        else:                            # the bound is loose while the primal still moves
            dual, lam, v = -np.inf, 0.0, None
        best_dual = max(best_dual, dual)
        gap = (primal - best_dual) / max(1.0, abs(primal))
        if np.isfinite(dual):
            bounded_gap = gap
        history.append(dict(round=k, rank=r, primal=primal, dual=dual, gap=gap,
                            violation=violation, min_eig=lam, sigma=sigma, evals=prob.evals,
                            unchanged=unchanged))
        logger.debug("round %d: rank %d primal %.8g dual %.8g gap %.2e violation %.2e "
                     "min_eig %.2e", k, r, primal, dual, gap, violation, lam)
        if gap <= tol and violation <= tol:
            converged = True
            break
        if settled:
            break
        # a rank escape only once the gap has stopped closing (no 10 % gain over
        # STALL_ROUNDS rounds): while it closes, a negative slack eigenvalue reflects
        # inexact multipliers more than a missing column, and a new column resets L-BFGS
        stuck = (len(history) > STALL_ROUNDS
                 and gap >= 0.9 * history[-1 - STALL_ROUNDS]["gap"])
        if (stuck and v is not None and lam < 0 and r < max_rank and _full_rank(Rr)
                and -lam * (u + 1) > tol * max(1.0, abs(primal))):
            # the slack's negative direction becomes a new column (rank escape)
            V = np.column_stack([V, 0.3 * v / np.abs(v).max()])
            W = np.column_stack([W, np.zeros(p)])
            r += 1
            state = {}
        elif balance is not None and violation > 0.25 * tol and sig_b < 1e6:
            sig_b *= 4.0
        sigma = min(sigma * SIGMA[1], SIGMA[2])
        last_primal = primal
    R, _, _ = prob.rows(V)
    return RTSVMLowRankResult(R=R, W=W, alpha=alpha, objective=primal,
                              dual_objective=best_dual,
                              balance=float(np.linalg.norm(R.sum(axis=0))) / n,
                              min_eig=lam, n_outer=len(history), n_evals=prob.evals,
                              converged=converged, settled=settled, history=history)
