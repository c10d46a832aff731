"""Semi-supervised learning from a mixture of relevant and irrelevant unlabeled data (USSL).

Thesis chapter 7 (digest section 6).  Each unlabeled point pays the smaller of its hinge
loss as a ``+1/-1`` point (relevant) and its epsilon-insensitive loss as a universum point
(irrelevant) -- Problem I:

``min_{w, y_U} (1/2)||w||^2 + C_L sum_l H(y_i f_i) + C_U sum_u min(H(y_j f_j), U_eps(f_j))``

with ``f = w^T x`` (the bias is a regularised weight on a constant feature: the thesis's
dual has no bias, digest 6.4 item 2).  Two routes:

* :func:`ussl_sdp` -- the thesis's route: the big-M mixed-integer program (Problem II),
  dualised for fixed labels and memberships and relaxed to an SDP (Problem V), with the
  digest's corrections: the epsilon term restored in the dual, the bias as a constant
  feature, ``d_j = 1`` meaning *relevant* (the semantics the big-M constraints give), and
  a stated rounding (``y_j = sign(y_1 M_y[1, j])``, ``d_j > 1/2``) followed by a refit of
  the hinge Universum QP with the labels and memberships fixed.  ``O(n^2)`` variables:
  ``n <= ~150``.
* :func:`ussl_alternating` -- the scalable route: the squared losses, minimised by
  alternating a linear solve (the library's finite Newton method with the universum's
  margin-shifted terms) with the per-point choice of membership and the TSVM's balanced
  label switching, under the TSVM's annealing of the unlabeled weight.  Every step lowers
  the objective at the current weight; without the irrelevant option the iterates are
  exactly those of :func:`semisup.linear.tsvm.transductive_svm`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model._base import LinearClassifierMixin
from sklearn.utils.validation import check_is_fitted

from semisup._logging import warn_at_caller
from semisup._validation import (
    check_bool,
    check_int,
    check_positive,
    check_semi_supervised,
    warn_degenerate,
    warn_if_collapsed,
)
from semisup.base import SemiSupervisedClassifierMixin, SupervisedFallbackMixin
from semisup.linear._base import check_positive_fraction, class_fractions
from semisup.linear.tsvm import initial_labels, switch_labels
from semisup.losses import HingeTerms
from semisup.regularizers import Ridge
from semisup.solvers._kernels import narrow_data_threads
from semisup.solvers.design import Design
from semisup.solvers.mfn import l2svm_mfn
from semisup.transductive._base import OneVsRestMixin
from semisup.weak._cvx import check_solver, import_cvxpy, solve

logger = logging.getLogger("semisup.weak.mixture")


def problem_objective(w: np.ndarray, outputs_l: np.ndarray, y_l: np.ndarray,
                      outputs_u: np.ndarray, C_L: float, C_U: float, epsilon: float,
                      C_I: float | None = None, loss: str = "hinge") -> float:
    """Problem I at ``w``: each unlabeled point takes its cheaper option.

    ``(1/2)||w||^2 + C_L sum_l h(y_i f_i) + sum_u min(C_U h(|f_j|), C_I u(f_j))`` with
    ``h(t) = max(0, 1 - t)`` and ``u(t) = max(0, |t| - eps)`` (``loss="hinge"``, thesis eq.
    7.1-7.3), or their squares (``loss="squared_hinge"``, the scalable route).  The best
    label of a relevant point is ``sign(f_j)``, hence ``h(|f_j|)``.  ``C_I`` defaults to
    ``C_U``; ``w`` includes the bias weight.
    """
    C_I = C_U if C_I is None else C_I
    power = 1 if loss == "hinge" else 2
    hl = np.maximum(0.0, 1.0 - y_l * outputs_l) ** power
    hu = np.maximum(0.0, 1.0 - np.abs(outputs_u)) ** power
    uu = np.maximum(0.0, np.abs(outputs_u) - epsilon) ** power
    return 0.5 * float(w @ w) + C_L * float(hl.sum()) + float(
        np.minimum(C_U * hu, C_I * uu).sum())


# ----------------------------------------------------------------------------------------
# SDP route (thesis Problems II-V with the digest's corrections)


@dataclass
class SDPResult:
    """Outcome of :func:`ussl_sdp`.

    Attributes
    ----------
    value : float
        Optimal value of the relaxation: a lower bound of the MIP (Problem II) optimum in
        the primal's scaling ``(1/2)||w||^2 + ...``.
    M_y : ndarray of shape (n, n)
        The relaxed label matrix ``y y^T``.
    d : ndarray of shape (m,)
        Relaxed memberships in ``[0, 1]``; ``1`` is relevant.
    labels_u : ndarray of shape (m,)
        Rounded labels ``sign(y_1 M_y[1, j])`` of the unlabeled points.
    relevant : ndarray of bool of shape (m,)
        Rounded memberships ``d_j > 1/2``.
    status : str
        cvxpy status.
    compile_time, solve_time : float
        Seconds cvxpy spent building the solver's problem, and the solver's own time.
    n_iter : int or None
        Solver iterations, when the solver reports them.
    """

    value: float
    M_y: np.ndarray
    d: np.ndarray
    labels_u: np.ndarray
    relevant: np.ndarray
    status: str
    compile_time: float = float("nan")
    solve_time: float = float("nan")
    n_iter: int | None = None


def ussl_sdp(K: np.ndarray, y_l: np.ndarray, C_L: float, C_U: float, epsilon: float,
             big_M: float, C_I: float | None = None, solver: str | None = None,
             tol: float = 1e-6, max_iter: int | None = None,
             reduced: bool = True, collapse: bool | None = None,
             options: dict | None = None) -> SDPResult:
    """The SDP relaxation of USSL (Problem V), with the epsilon and bias fixes.

    For labels ``y`` and memberships ``d`` fixed, Problem II's dual (the thesis's
    Problem III, in the ``1/2`` scaling, with the epsilon term it drops) is

    ``g(y, d) = max_{alpha >= 0, B alpha <= c} a^T alpha - (1/2) alpha^T P alpha``,
    ``alpha = (lambda; z^-; z^+)``, ``a = (1_l; 1 - M(1 - d); -(eps + M d); -(eps + M d))``,
    ``P = [[K o yy^T, D_y K_U, -D_y K_U], [K_U^T D_y, K_UU, -K_UU], [., -K_UU, K_UU]]``.

    Dualising the inner QP (multipliers ``nu >= 0``, ``delta >= 0``) and a Schur
    complement give ``g(y, d) = min t`` subject to
    ``[[P, a + nu - B^T delta], [., 2(t - delta^T c)]] >> 0``, which is linear in ``y y^T``
    and ``d``.  Relaxing ``y y^T`` to ``M_y >> 0`` with ``diag(M_y) = 1`` and the labeled
    block fixed, ``D_y`` to ``diag(y_1 M_y[1, :])``, and ``d`` to ``[0, 1]`` gives an SDP
    whose value bounds ``min_{y, d} g(y, d)`` -- the MIP optimum -- from below.

    ``reduced=True`` (default) solves the same SDP with a smaller matrix inequality:
    ``P = T^T P' T`` with ``T = [[I, 0, 0], [0, I, -I]]`` (``z^-`` and ``z^+`` enter the
    quadratic only through ``z^- - z^+``), so the LMI forces the column to be ``T^T v``
    and is equivalent to ``[[P', v], [., 2(t - delta^T c)]] >> 0`` with
    ``P' = [[K o M_y, D_y K_U], [K_U^T D_y, K_UU]]``, ``v = (v_lambda; s)``,
    ``v_lambda >= a_lambda - delta_lambda`` (``nu_lambda`` eliminated) and
    ``|s| <= eps + M d + delta_z`` (``nu^-, nu^+ >= 0`` eliminated).  The LMI shrinks from
    ``n + 2m + 1`` to ``n + m + 1`` rows and loses the ``m``-dimensional null space the
    direct form always has (so it has no strictly feasible point, which slows every
    solver).  Likewise ``M_y >> 0`` with its rank-one labeled block fixed is
    ``M_y = E Q E^T``, ``Q >> 0`` of order ``m + 1`` with ``diag(Q) = 1`` (each labeled row
    of ``M_y`` is ``y_i y_1`` times the first).  ``reduced=False`` is the direct form, kept
    as the cross-check.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Kernel over the labeled rows (first ``l``) and the unlabeled rows; include the
        bias as a constant in the kernel (``K + s^2``).
    y_l : ndarray of shape (l,)
        ``+1/-1`` labels.
    C_L, C_U, epsilon, big_M : float
        Costs, insensitivity width and the big-M constant of Problem II.
    C_I : float, optional
        Cost of the epsilon-insensitive slacks (eq. 7.8's ``C_iU``); ``C_U`` by default.
    solver : str, optional
        cvxpy solver; ``None``: SCS (an interior-point solver's dense Newton system over
        the LMI's ``N (N + 1) / 2`` entries needs gigabytes at ``n = 130``).
    tol : float, default=1e-6
        Solver accuracy: SCS's ``eps_abs = eps_rel``, Clarabel's gap tolerances.
    max_iter : int or None, default=None
        Cap on the solver's iterations (``None``: SCS's 100,000).  A capped SCS run ends
        ``optimal_inaccurate``; its value is then no certified bound.
    reduced : bool, default=True
        Solve the equivalent smaller LMI (above).
    collapse : bool or None, default=None
        Write ``M_y = E Q E^T`` (above); ``None``: as ``reduced``.
    options : dict or None, default=None
        The solver's own options, passed through cvxpy (e.g. SCS's ``scale``,
        ``adaptive_scale``, ``time_limit_secs``); they override ``tol`` and ``max_iter``.

    Returns
    -------
    SDPResult
    """
    cp = import_cvxpy()
    K = np.asarray(K, dtype=np.float64)
    n = K.shape[0]
    l = y_l.shape[0]
    m = n - l
    U = slice(l, n)
    C_I = C_U if C_I is None else C_I
    d = cp.Variable(m, name="d")
    t = cp.Variable(name="t")
    if reduced if collapse is None else collapse:
        # M_y >> 0 with the rank-one labeled block y_l y_l^T fixed means every labeled row of
        # M_y is y_i y_1 times the first one: M_y = E Q E^T with Q >> 0 over (first labeled
        # row, unlabeled rows), diag(Q) = 1.  Smaller cone, and Q has interior points.
        Q = cp.Variable((m + 1, m + 1), PSD=True, name="Q_y")
        idx = np.concatenate([np.zeros(l, dtype=int), np.arange(1, m + 1)])
        sign = np.concatenate([y_l * y_l[0], np.ones(m)])
        My = cp.multiply(np.outer(sign, sign), Q[idx, :][:, idx])
        constraints = [cp.diag(Q) == 1, d >= 0, d <= 1]
    else:
        My = cp.Variable((n, n), PSD=True, name="M_y")
        constraints = [cp.diag(My) == 1, My[:l, :l] == np.outer(y_l, y_l), d >= 0, d <= 1]
    y_vec = y_l[0] * My[0, :]                                   # y_j = y_1 M_y[1, j]
    DyKU = cp.multiply(cp.reshape(y_vec, (n, 1), order="F"), K[:, U])
    KUU = K[U, U]
    a_lam = cp.hstack([np.ones(l), 1.0 - big_M * (1.0 - d)])
    c_lam = np.concatenate([np.full(l, C_L), np.full(m, C_U)])
    if reduced:
        delta_lam = cp.Variable(n, nonneg=True)
        delta_z = cp.Variable(m, nonneg=True)
        v_lam = cp.Variable(n)
        s = cp.Variable(m)
        P = cp.bmat([[cp.multiply(K, My), DyKU], [DyKU.T, KUU]])
        col = cp.hstack([v_lam, s])
        corner = 2 * (t - delta_lam @ c_lam - C_I * cp.sum(delta_z))
        constraints += [v_lam >= a_lam - delta_lam, cp.abs(s) <= epsilon + big_M * d + delta_z]
    else:
        nu = cp.Variable(n + 2 * m, nonneg=True)
        delta = cp.Variable(n + m, nonneg=True)
        P = cp.bmat([[cp.multiply(K, My), DyKU, -DyKU],
                     [DyKU.T, KUU, -KUU],
                     [-DyKU.T, -KUU, KUU]])
        a = cp.hstack([a_lam, -(epsilon + big_M * d), -(epsilon + big_M * d)])
        c = np.concatenate([c_lam, np.full(m, C_I)])
        col = a + nu - cp.hstack([delta[:n], delta[n:], delta[n:]])
        corner = 2 * (t - delta @ c)
    N = P.shape[0] + 1
    lmi = cp.bmat([[P, cp.reshape(col, (N - 1, 1), order="F")],
                   [cp.reshape(col, (1, N - 1), order="F"), cp.reshape(corner, (1, 1), order="F")]])
    constraints.append(lmi >> 0)
    problem = cp.Problem(cp.Minimize(t), constraints)
    solve(cp, problem, solver, psd=True, tol=tol, max_iter=max_iter, **(options or {}))
    M_y = np.asarray(My.value, dtype=np.float64)
    d_val = np.clip(np.asarray(d.value), 0.0, 1.0)
    labels_u = np.where(y_l[0] * M_y[0, l:] >= 0, 1.0, -1.0)
    stats = problem.solver_stats
    return SDPResult(value=float(problem.value), M_y=M_y, d=d_val, labels_u=labels_u,
                     relevant=d_val > 0.5, status=problem.status,
                     compile_time=float(getattr(problem, "compilation_time", None) or np.nan),
                     solve_time=float(stats.solve_time or np.nan), n_iter=stats.num_iters)


# ----------------------------------------------------------------------------------------
# Scalable route


@dataclass
class MixtureResult:
    """Outcome of :func:`ussl_alternating`.

    Attributes
    ----------
    w : ndarray
        Weights (bias last).
    labels_u : ndarray
        Temporary ``+1/-1`` labels of the unlabeled rows.
    relevant : ndarray of bool
        Membership of the unlabeled rows.
    objective : float
        Objective in the TSVM scaling at the final weights, labels and memberships:
        ``(lam/2)||w||^2 + (1/2l) sum_l l_2 + (1/2u) sum_u [lam_u l_2 or lam_i U_eps^2]``.
    n_iter : int
        Linear solves.
    n_switches, n_moves : int
        Label pairs switched and membership changes, in total.
    history : list of dict
        One entry per solve: ``lam_u`` in force, objective, switches and moves before it.
    """

    w: np.ndarray
    labels_u: np.ndarray
    relevant: np.ndarray
    objective: float
    n_iter: int
    n_switches: int
    n_moves: int
    history: list = field(default_factory=list)


def _mixture_terms(y_l, labels_u, relevant, lam_u_cur, lam_i_cur, epsilon, with_irrelevant):
    l, u = y_l.shape[0], labels_u.shape[0]
    hinge_cost = np.where(relevant, lam_u_cur / u, 0.0)
    if not with_irrelevant:
        return HingeTerms(np.concatenate([y_l, labels_u]),
                          np.concatenate([np.full(l, 1.0 / l), hinge_cost]))
    # rows 0..l+u-1; each unlabeled row has a hinge term and the two eps-insensitive halves,
    # of which only the ones of its current membership carry a cost
    unl = np.arange(l, l + u)
    rows = np.concatenate([np.arange(l), unl, unl, unl])
    signs = np.concatenate([y_l, labels_u, -np.ones(u), np.ones(u)])
    eps_cost = np.where(relevant, 0.0, lam_i_cur / u)
    costs = np.concatenate([np.full(l, 1.0 / l), hinge_cost, eps_cost, eps_cost])
    margin = np.concatenate([np.ones(l + u), np.full(2 * u, -epsilon)])
    return HingeTerms(signs, costs, rows=rows, n_rows=l + u, margin=margin)


def ussl_alternating(A, n_labeled: int, y_l: np.ndarray, lam: float, lam_u: float,
                     lam_i: float | None, epsilon: float, positive_fraction: float,
                     max_switches: int | None = None, lam_u_init: float = 1e-5,
                     lam_u_growth: float = 1.5, mfn_options: dict | None = None,
                     max_rounds: int = 10_000, polish: bool = True,
                     local_moves: int = 20, max_local_solves: int = 100,
                     fixed_relevant: np.ndarray | None = None,
                     late_membership: bool = False) -> MixtureResult:
    """USSL with squared losses by alternating minimisation (the scalable route).

    Minimises over ``w``, the labels ``y'`` and the memberships of the unlabeled rows

    ``(lam/2)||w||^2 + (1/2l) sum_l l_2(y_i o_i)
    + (1/2u) sum_u [relevant: lam_u l_2(y'_j o_j); irrelevant: lam_i max(0, |o_j| - eps)^2]``

    with the TSVM's schedule (Sindhwani & Keerthi 2006, section 3.1): start from the
    supervised L2-SVM, label the unlabeled rows by thresholding at the positive fraction
    ``r``, raise the unlabeled weights from ``lam_u_init`` to ``lam_u`` (``lam_i`` in
    proportion) by ``lam_u_growth``; at each weight repeat (i) the finite Newton solve
    with labels and memberships fixed, (ii) each unlabeled row moves to its cheaper
    membership at the current outputs, (iii) balanced switching of label pairs among the
    relevant rows -- until nothing changes.  Each of (i)-(iii) lowers the objective.
    With ``polish`` a last phase drops the balance constraint (Problem I has none): every
    unlabeled row takes its best label and membership at the current outputs, then the
    weights are re-solved, until nothing changes; then up to ``local_moves`` rows whose two
    options cost nearly the same are flipped one at a time (each with a warm-started
    re-solve), a flip kept when Problem I drops.  Both only lower Problem I.

    Parameters
    ----------
    A : Design
        Rows: the ``n_labeled`` labeled rows first, then the unlabeled rows.
    n_labeled : int
    y_l : ndarray
        ``+1/-1`` labels.
    lam, lam_u : float
        As :func:`semisup.linear.tsvm.transductive_svm`.
    lam_i : float or None
        Weight of the irrelevant (epsilon-insensitive) option; ``None`` removes the option,
        and the route is then the TSVM.
    epsilon : float
    positive_fraction : float
        ``r`` of the temporary labels (over all unlabeled rows).
    max_switches, lam_u_init, lam_u_growth, mfn_options, max_rounds :
        As :func:`semisup.linear.tsvm.transductive_svm`.
    polish : bool
        Run the final unbalanced phase (only with the irrelevant option).
    local_moves : int
        Single-row membership flips tried per pass of the final phase.
    max_local_solves : int
        Cap on the single-flip re-solves of the whole final phase.  Each kept flip starts a
        new pass, so without a cap their number grows with the unlabeled rows (MNIST 5 vs 8:
        72 trial solves at 900 unlabeled rows) and the phase would cost ``O(u)`` solves.
    fixed_relevant : ndarray of bool or None
        Memberships held fixed throughout (no moves, no final phase): the oracle that knows
        which unlabeled rows are relevant -- a TSVM on those plus a universum on the rest.
    late_membership : bool
        Every row stays relevant during the annealing (the iterates are the TSVM's); the
        memberships move only at the final weight, starting from the TSVM's solution.

    Returns
    -------
    MixtureResult
    """
    opts = dict(mfn_options or {})
    l = n_labeled
    u = A.n_rows - l
    reg = Ridge(lam)
    sup = l2svm_mfn(A.restrict(np.arange(l)), HingeTerms(y_l, np.full(l, 1.0 / l)), reg, **opts)
    w = sup.w
    o = A.matvec(w)
    if u == 0:
        return MixtureResult(w=w, labels_u=np.empty(0), relevant=np.empty(0, dtype=bool),
                             objective=sup.objective, n_iter=1, n_switches=0, n_moves=0)
    with_irr = lam_i is not None
    labels_u = initial_labels(o[l:], positive_fraction)
    relevant = np.ones(u, dtype=bool)
    if fixed_relevant is not None:
        relevant = np.asarray(fixed_relevant, dtype=bool).copy()
        if relevant.any():      # the balance over the relevant rows only
            labels_u[relevant] = initial_labels(o[l:][relevant], positive_fraction)
    lam_cur = min(lam_u_init, lam_u)
    history: list = []
    n_fits, n_switches, n_moves = 1, 0, 0
    switched = moved = 0
    res = None
    while True:
        lam_i_cur = lam_i * lam_cur / lam_u if with_irr else 0.0
        for _ in range(max_rounds):
            terms = _mixture_terms(y_l, labels_u, relevant, lam_cur, lam_i_cur, epsilon,
                                   with_irr)
            res = l2svm_mfn(A, terms, reg, w0=w, outputs0=o, **opts)
            w, o = res.w, res.outputs
            n_fits += 1
            history.append({"lam_u": lam_cur, "objective": res.objective,
                            "switched": switched, "moved": moved})
            moved = 0
            if with_irr and fixed_relevant is None and (
                    not late_membership or lam_cur >= lam_u):
                ou = o[l:]
                rel_cost = lam_cur * np.maximum(0.0, 1.0 - labels_u * ou) ** 2
                irr_cost = lam_i_cur * np.maximum(0.0, np.abs(ou) - epsilon) ** 2
                move = np.where(relevant, irr_cost < rel_cost, rel_cost < irr_cost)
                moved = int(np.count_nonzero(move))
                relevant ^= move
                n_moves += moved
            idx = np.flatnonzero(relevant)
            sub = labels_u[idx]
            switched = switch_labels(o[l:][idx], sub, max_switches)
            labels_u[idx] = sub
            n_switches += switched
            logger.debug("USSL lam_u'=%.3g objective=%.8g switched=%d moved=%d", lam_cur,
                         res.objective, switched, moved)
            if switched == 0 and moved == 0:
                break
        else:
            warn_at_caller(f"USSL: labels and memberships did not settle within {max_rounds} "
                           f"rounds at lam_u'={lam_cur:.3g}", ConvergenceWarning)
        if lam_cur >= lam_u:
            break
        lam_cur = min(lam_cur * lam_u_growth, lam_u)
    if with_irr and polish and fixed_relevant is None:
        # Problem I has no balance constraint: finish by descent on it.  Block steps: each
        # row takes its best label and membership at the current outputs, then a re-solve.
        # Single moves: the rows whose two options cost nearly the same are tried one at a
        # time (flip, re-solve, keep if Problem I drops), which escapes the block steps'
        # fixed points cheaply.
        def label_free(w_, o_):
            ou_ = o_[l:]
            return reg.value(w_) + 0.5 / l * float(
                np.sum(np.maximum(0.0, 1.0 - y_l * o_[:l]) ** 2)) + 0.5 / u * float(np.sum(
                    np.minimum(lam_u * np.maximum(0.0, 1.0 - np.abs(ou_)) ** 2,
                               lam_i * np.maximum(0.0, np.abs(ou_) - epsilon) ** 2)))

        def resolve(labels, rel, w_, o_):
            terms_ = _mixture_terms(y_l, labels, rel, lam_u, lam_i, epsilon, True)
            return l2svm_mfn(A, terms_, reg, w0=w_, outputs0=o_, **opts)

        tried: set = set()
        for _ in range(max_rounds):
            while True:
                ou = o[l:]
                rel_cost = lam_u * np.maximum(0.0, 1.0 - np.abs(ou)) ** 2
                irr_cost = lam_i * np.maximum(0.0, np.abs(ou) - epsilon) ** 2
                new_relevant = np.where(relevant, rel_cost <= irr_cost, rel_cost < irr_cost)
                new_labels = np.where(new_relevant, np.where(ou >= 0, 1.0, -1.0), labels_u)
                if np.array_equal(new_labels, labels_u) and \
                        np.array_equal(new_relevant, relevant):
                    break
                n_moves += int(np.count_nonzero(new_relevant != relevant))
                labels_u, relevant = new_labels, new_relevant
                res = resolve(labels_u, relevant, w, o)
                w, o = res.w, res.outputs
                n_fits += 1
                history.append({"lam_u": lam_u, "objective": res.objective, "switched": 0,
                                "moved": -1})
            f_cur = label_free(w, o)
            ou = o[l:]
            gap = np.abs(lam_u * np.maximum(0.0, 1.0 - np.abs(ou)) ** 2
                         - lam_i * np.maximum(0.0, np.abs(ou) - epsilon) ** 2)
            improved = False
            for j in np.argsort(gap, kind="stable")[:local_moves]:
                if (int(j), bool(relevant[j])) in tried:
                    continue
                if len(tried) >= max_local_solves:
                    break
                tried.add((int(j), bool(relevant[j])))
                rel = relevant.copy()
                rel[j] = not rel[j]
                labels = labels_u.copy()
                labels[j] = 1.0 if ou[j] >= 0 else -1.0
                trial = resolve(labels, rel, w, o)
                n_fits += 1
                if label_free(trial.w, trial.outputs) < f_cur * (1 - 1e-9):
                    labels_u, relevant, w, o = labels, rel, trial.w, trial.outputs
                    n_moves += 1
                    history.append({"lam_u": lam_u, "objective": trial.objective,
                                    "switched": 0, "moved": -2})
                    improved = True
                    break
            if not improved:
                break
    final = _mixture_terms(y_l, labels_u, relevant, lam_u, lam_i or 0.0, epsilon, with_irr)
    objective = reg.value(w) + final.value(o)
    return MixtureResult(w=w, labels_u=labels_u, relevant=relevant, objective=objective,
                         n_iter=n_fits, n_switches=n_switches, n_moves=n_moves,
                         history=history)


# ----------------------------------------------------------------------------------------
# Estimator


class MixtureSSL(SupervisedFallbackMixin, OneVsRestMixin, SemiSupervisedClassifierMixin,
                 LinearClassifierMixin, ClassifierMixin, BaseEstimator):
    """Linear USSL: semi-supervised SVM whose unlabeled rows mix relevant and irrelevant points.

    Each unlabeled row is judged either relevant (a ``+1/-1`` point with the hinge loss, as
    in a TSVM) or irrelevant (a universum point with the epsilon-insensitive loss, as in
    :class:`UniversumSVM`), whichever costs less (thesis chapter 7, Problem I; digest
    section 6).  ``fit(X, y)`` takes ``y == -1`` for every unlabeled row; nobody says which
    of them are relevant.  More than two classes are solved one-vs-rest
    (:class:`semisup.transductive._base.OneVsRestMixin`; each binary problem's positive
    fraction is its class's labeled prior, or ``positive_fraction[k]``).

    Settings.  The defaults (``polish=False, late_membership=True``) are chosen for
    accuracy: every unlabeled row stays relevant while the unlabeled weight is annealed (the
    TSVM's iterates), and only at the final weight may a row become irrelevant.  Letting
    rows turn irrelevant from the start pulls most of them onto ``f = 0`` while ``f`` is
    still small (the failure of a universum made of class rows): on official split 2 of
    the SSL-book sets the old defaults lost 6.7 points to LogisticRegression on g241c with
    10 labels where these gain 19.7, and reach LogisticRegression minus 1 point on 11 of
    16 cells, mean +3.5 points (``benchmarks/results/defaults_round3.md``); on the
    thesis's MNIST 5 vs 8 task they beat TSVM and Universum SVM on 6 of 8 sets against 2
    of 8, 4x cheaper (USPS 6 of 8 against 7 of 8;
    ``benchmarks/results/weak_protocol_v3.md``).  ``polish=True, late_membership=False``
    minimises Problem I as far as the route can (the final phase makes its objective no
    worse than the SDP route's rounding).

    Parameters
    ----------
    C_L : float, default=1.0
        Cost of the labeled rows.  The alternating route's ``(1/2)||w||^2 + C_L sum_i
        l_2(y_i f_i)`` is :class:`~semisup.linear.L2SVM`'s summed form at ``lam = 1 / (2
        C_L)``, so LogisticRegression(C=1)'s second-order match (``lam = 4``) is ``C_L =
        1/8``.  Measured on official splits 2-5 of the SSL-book sets it did not raise the
        cells within a point of LogisticRegression (39 of 64 with ``C_U = 1/8``, 41 with
        ``C_U = 1``, against 41 at ``C_L = C_U = 1``), so the default stays 1
        (``benchmarks/results/defaults_weak_reg.md``).
    C_U : float, default=1.0
        Cost of the unlabeled rows treated as relevant.
    C_irrelevant : float or None, default=None
        Cost of the unlabeled rows treated as irrelevant (``C_iU`` of eq. 7.8); ``None``
        is ``C_U`` as in Problem I.
    epsilon : float, default=0.2
        Width of the insensitive zone of irrelevant rows (the thesis's 0.2).
    method : {"alternating", "sdp"}, default="alternating"
        ``"alternating"``: squared losses, finite Newton solves, scales to 10^5+ rows
        (:func:`ussl_alternating`).  ``"sdp"``: the thesis's SDP relaxation with hinge
        losses (:func:`ussl_sdp`), rounded and refitted; dense, ``n <= max_sdp_rows``.
    allow_irrelevant : bool, default=True
        ``False`` removes the irrelevant option: the alternating route is then exactly
        :class:`semisup.linear.TransductiveSVM` (with ``lam = 1/(2 l C_L)``,
        ``lam_u = 2 u lam C_U``, ``lam_u_init = anneal_start * lam_u``).
    positive_fraction : float, array of shape (n_classes,) or None, default=None
        Fraction of positive temporary labels; ``None``: the labeled rows' prior; an array:
        one fraction per class (in the order of ``classes_``) for its one-vs-rest problem.
    max_switches : int or None, default=None
        Label pairs switched per round (alternating route).
    anneal_start : float, default=1e-5
        The unlabeled weights start at this fraction of their final value.
    anneal_growth : float, default=1.5
        Factor by which the unlabeled weights grow from one annealing step to the next.
    polish : bool, default=False
        Alternating route: finish with the unbalanced descent on Problem I
        (:func:`ussl_alternating`'s final phase: every row takes its best label and
        membership, then single-row flips; it lowers Problem I).  ``False`` stops at the
        end of the annealing, whose label changes are the TSVM's balanced pair switches;
        about 4x cheaper on MNIST 5 vs 8 (``benchmarks/results/weak_protocol_v2.md``).
    late_membership : bool, default=True
        Alternating route: keep every unlabeled row relevant during the annealing (the
        iterates are the TSVM's) and move the memberships only at the final weight,
        starting from the TSVM's solution (``benchmarks/results/weak_protocol_v3.md``).
    big_M : float or None, default=None
        Big-M of Problem II (SDP route); ``None``: ``1 + eps + max |f|`` over the unlabeled
        rows for the supervised hinge solution, at least 2 (digest 6.4 item 4).
    max_sdp_rows : int, default=200
        Refuse the SDP route above this many rows.
    sdp_solver : str or None, default=None
        The cvxpy solver of the SDP relaxation; ``None``: SCS (first-order; an interior-point
        solver such as Clarabel is exact but its dense Newton system over the matrix
        inequality needs gigabytes beyond ~60 rows).  The rounding's refits use Clarabel.
    sdp_tol : float, default=1e-6
        Accuracy of the SDP solver (SCS's ``eps_abs = eps_rel``, Clarabel's gap
        tolerances).  Keep it tight when ``sdp_value_`` is used as a bound; to bound the
        time use ``sdp_max_iter``.
    sdp_max_iter : int or None, default=None
        Cap on the SDP solver's iterations (``None``: SCS's 100,000).  A capped run ends
        ``optimal_inaccurate``: a heuristic start for the rounding, not a certified bound.
        At the thesis's size (n = 130) SCS's adaptive scale falls to ~4e-5 and its primal
        residual stalls near 2e-2; with ``sdp_options={"adaptive_scale": False,
        "scale": 1.0}`` and ``sdp_tol=1e-4`` the fits of Tables 7.1 / 7.2 with
        ``C_U = 1`` converged (status ``optimal``) in 1,150-8,725 iterations (36-210 CPU-s);
        with ``C_U >= 10`` one fit converged (7,700 iterations) and six had not after
        8,800-10,200 iterations (240 s) (``benchmarks/results/weak_sdpconv.md``).
    sdp_options : dict or None, default=None
        The SDP solver's own options, passed through cvxpy (:func:`ussl_sdp`'s
        ``options``; e.g. SCS's ``scale``, ``adaptive_scale``, ``time_limit_secs``).
    n_roundings : int, default=10
        Random-hyperplane roundings of the SDP's label matrix (each with a random membership
        threshold) tried besides the deterministic ones (:func:`round_sdp`).
    rounding : {"search", "sign"}, default="search"
        How the SDP solution becomes labels and memberships (the thesis leaves it open):
        ``"sign"``: ``sign(y_1 M_y[1, j])`` and ``d_j > 1/2``, one refit; ``"search"``: the
        best refit over the sign, eigenvector and random-hyperplane candidates, then a
        descent on Problem I (:func:`round_sdp`); never worse than ``"sign"``.
    random_state : int or None, default=None
        Seed of the random roundings and of the folds of ``fallback="cv"`` (``None``: 0, so
        fits repeat).
    fit_intercept : bool, default=True
        Constant feature whose (regularised) weight is the bias.
    intercept_scaling : float, default=1.0
        Value of the constant feature.
    tol : float, default=1e-6
        CGLS tolerance (alternating route).
    max_iter : int, default=50
        Newton iterations per solve (alternating route).
    max_cg_iter : int, default=10000
        CGLS iterations per Newton system (alternating route).
    fallback : {"cv", "none"}, default="cv"
        ``"cv"``: the guard of :mod:`semisup.safety` -- 3-fold labeled-only
        cross-validation (held-out labeled rows hidden among the unlabeled ones) against
        the supervised counterpart (scikit-learn's ``LogisticRegression()``, the model a
        user fits without the unlabeled rows, as for the linear SVMlin family); the
        semi-supervised fit is kept only when it
        wins the guard's margin test, otherwise the estimator is that counterpart
        fitted on the labeled rows (``fallback_ is True``).  Costs about four fits.
        ``"none"``: the method as published.  More than two classes: the guard judges the
        one-vs-rest fit as a whole (its binary estimators are fitted as published).
        Measured on the SSL-book sets (8 sets x 10 / 100 labels;
        ``benchmarks/results/defaults_fallback_logistic.md``): cells within 1 point of
        ``LogisticRegression()`` 11 -> 15, 11 -> 15 and 10 -> 15 of 16 on official splits
        2, 3 and 1 (the benchmark's; ``defaults_fallback_margin.md``), median CPU per fit
        0.5 -> 1.6 s (split 1); the guard also discards real gains (text, 10 labels, split
        2: +28.6 points -> 0).

    Attributes
    ----------
    fallback_ : bool
        Whether the guard replaced the fit by its supervised counterpart
        (``supervised_estimator_``, which then answers ``predict`` and
        ``decision_function``; of the estimator's own fitted attributes only ``classes_``
        and ``transduction_`` are then set).
    cv_scores_ : dict or None
        The guard's result (:func:`semisup.safety.guard`); ``None`` when no fold existed.
    classes_ : ndarray of shape (n_classes,)
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
    intercept_ : ndarray of shape (1,) or (n_classes,)
    relevant_ : ndarray of bool of shape (n_samples,)
        Whether each training row was judged relevant (labeled rows: ``True``; beyond two
        classes: in the binary problem of the class it was assigned).
    estimators_ : list of MixtureSSL
        The binary estimators (more than two classes only).
    transduction_ : ndarray of shape (n_samples,)
        Labels of the training rows: the given labels, and the classifier's prediction
        for every unlabeled row (relevant or not; read ``relevant_`` alongside).
    objective_ : float
        Problem I at the solution (:func:`problem_objective`): hinge losses for the SDP
        route, squared ones for the alternating route.
    sdp_value_ : float
        Value of the SDP relaxation (SDP route only): a lower bound of Problem I's optimum.
    sdp_labels_ : ndarray
        Rounded labels of the unlabeled rows (SDP route only).
    big_M_ : float
        Big-M used (SDP route only).
    rounding_ : Rounding
        The rounding's outcome (SDP route only): chosen candidate, its objective, and the
        plain sign rounding's refit and objective for comparison.
    n_features_in_ : int
    n_iter_ : int
        Linear solves of the alternating route; 1 for the SDP route.
    fit_result_ : MixtureResult or SDPResult

    Examples
    --------
    >>> import numpy as np
    >>> from semisup import MixtureSSL
    >>> rng = np.random.default_rng(0)
    >>> X = np.r_[rng.normal(-2, 1, (30, 2)), rng.normal(2, 1, (30, 2))]
    >>> y = np.full(60, -1)
    >>> y[[0, 1, 30, 31]] = [0, 0, 1, 1]          # two labels per class, 56 unlabeled
    >>> clf = MixtureSSL(random_state=0).fit(X, y)
    >>> clf.predict([[-2.0, -2.0], [2.0, 2.0]]).tolist()
    [0, 1]
    """

    def __init__(self, C_L: float = 1.0, C_U: float = 1.0, C_irrelevant: float | None = None,
                 epsilon: float = 0.2, method: str = "alternating", allow_irrelevant: bool = True,
                 positive_fraction: float | None = None, max_switches: int | None = None,
                 anneal_start: float = 1e-5, anneal_growth: float = 1.5,
                 polish: bool = False, late_membership: bool = True,
                 big_M: float | None = None, max_sdp_rows: int = 200,
                 sdp_solver: str | None = None, sdp_tol: float = 1e-6,
                 sdp_max_iter: int | None = None, sdp_options: dict | None = None,
                 n_roundings: int = 10,
                 rounding: str = "search", random_state=None,
                 fit_intercept: bool = True,
                 intercept_scaling: float = 1.0, tol: float = 1e-6, max_iter: int = 50,
                 max_cg_iter: int = 10_000, fallback: str = "cv"):
        self.C_L = C_L
        self.C_U = C_U
        self.C_irrelevant = C_irrelevant
        self.epsilon = epsilon
        self.method = method
        self.allow_irrelevant = allow_irrelevant
        self.positive_fraction = positive_fraction
        self.max_switches = max_switches
        self.anneal_start = anneal_start
        self.anneal_growth = anneal_growth
        self.polish = polish
        self.late_membership = late_membership
        self.big_M = big_M
        self.max_sdp_rows = max_sdp_rows
        self.sdp_solver = sdp_solver
        self.sdp_tol = sdp_tol
        self.sdp_max_iter = sdp_max_iter
        self.sdp_options = sdp_options
        self.n_roundings = n_roundings
        self.rounding = rounding
        self.random_state = random_state
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.tol = tol
        self.max_iter = max_iter
        self.max_cg_iter = max_cg_iter
        self.fallback = fallback

    def _validate_params(self) -> None:
        check_positive(self.C_L, "C_L")
        check_positive(self.C_U, "C_U")
        if self.C_irrelevant is not None:
            check_positive(self.C_irrelevant, "C_irrelevant")
        check_positive(self.epsilon, "epsilon", allow_zero=True)
        check_positive(self.intercept_scaling, "intercept_scaling")
        check_positive(self.tol, "tol")
        if self.method not in ("alternating", "sdp"):
            raise ValueError(f"method must be 'alternating' or 'sdp', got {self.method!r}")
        check_positive_fraction(self.positive_fraction)
        if not 0 < self.anneal_start <= 1:
            raise ValueError(f"anneal_start must be in (0, 1], got {self.anneal_start!r}")
        if not self.anneal_growth > 1:
            raise ValueError(f"anneal_growth must be > 1, got {self.anneal_growth!r}")
        if self.big_M is not None:
            check_positive(self.big_M, "big_M")
        check_bool(self.allow_irrelevant, "allow_irrelevant")
        check_bool(self.polish, "polish")
        check_bool(self.late_membership, "late_membership")
        check_bool(self.fit_intercept, "fit_intercept")
        check_int(self.max_iter, "max_iter")
        check_int(self.max_cg_iter, "max_cg_iter")
        check_int(self.max_sdp_rows, "max_sdp_rows")
        check_int(self.n_roundings, "n_roundings")
        if self.rounding not in ("search", "sign"):
            raise ValueError(f"rounding must be 'search' or 'sign', got {self.rounding!r}")
        check_solver(self.sdp_solver, "sdp_solver")
        check_positive(self.sdp_tol, "sdp_tol")
        if self.sdp_max_iter is not None:
            check_int(self.sdp_max_iter, "sdp_max_iter")
        if self.sdp_options is not None and not isinstance(self.sdp_options, dict):
            raise ValueError("sdp_options must be None or a dict of the SDP solver's options "
                             f"(e.g. {{'scale': 1.0}}), got {self.sdp_options!r}")
        if self.method == "sdp" and not self.allow_irrelevant:
            raise ValueError("allow_irrelevant=False is the TSVM: use method='alternating'")

    def fit(self, X, y):
        """Fit on ``(X, y)``; rows with ``y == -1`` are the unlabeled mixture.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Training rows, labeled and unlabeled.
        y : array-like of shape (n_samples,)
            Class labels, ``-1`` for unlabeled rows.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        # the guard's logistic regressions (benchmarks/results/bench_meta_threads.md)
        with narrow_data_threads(X):
            return self._fit_guarded(X, y)

    _guard_keeps_singletons = True      # a linear counterpart (semisup.safety)

    def _supervised_counterpart(self):
        from sklearn.linear_model import LogisticRegression

        return LogisticRegression()

    def _fit_plain(self, X, y):
        """Problem I as published (``fallback="none"``); see :meth:`fit`."""
        self._validate_params()
        data = check_semi_supervised(X, y, require_unlabeled=True, estimator=self)
        if self._fit_one_vs_rest(data):
            return self
        y_l = data.binary_targets(1)
        order = np.concatenate([data.labeled, data.unlabeled])
        l, u = data.labeled.size, data.unlabeled.size
        C_I = self.C_U if self.C_irrelevant is None else self.C_irrelevant
        if self.method == "sdp":
            w, rel_u, loss = self._fit_sdp(data, order, y_l, C_I)
        else:
            w, rel_u, loss = self._fit_alternating(data, order, y_l, C_I)
        design = Design(data.X, self.fit_intercept, self.intercept_scaling)
        coef, b = design.weights_to_coef(w)
        self.classes_ = data.classes
        self.coef_ = coef[None, :]
        self.intercept_ = np.array([b])
        self.n_features_in_ = data.X.shape[1]
        o = design.matvec(w)
        self.objective_ = problem_objective(w, o[data.labeled], y_l, o[data.unlabeled],
                                            self.C_L, self.C_U, self.epsilon, C_I, loss)
        relevant = np.ones(l + u, dtype=bool)
        relevant[data.unlabeled] = rel_u
        self.relevant_ = relevant
        if u and not rel_u.any():
            warn_degenerate(self, "judged every unlabeled row irrelevant: the classifier is a "
                            "Universum SVM on them", "lower C_irrelevant or epsilon if the "
                            "unlabeled rows are known to hold relevant points")
        transduction = self.classes_[(o > 0).astype(int)]
        transduction[data.labeled] = data.classes[data.y_index]
        self.transduction_ = transduction
        warn_if_collapsed(self, transduction[data.unlabeled], 2, hint=(
            "Raise C_L, or set positive_fraction to the expected share of classes_[1]"))
        return self

    def _combine_one_vs_rest(self, estimators, data) -> None:
        self.coef_ = np.vstack([e.coef_ for e in estimators])
        self.intercept_ = np.concatenate([e.intercept_ for e in estimators])
        self.n_features_in_ = data.X.shape[1]
        self.objective_ = np.array([e.objective_ for e in estimators])
        self.n_iter_ = np.array([e.n_iter_ for e in estimators])
        self.fit_result_ = [e.fit_result_ for e in estimators]
        # membership of each row in the problem of the class it was assigned
        winner = np.searchsorted(self.classes_, self.transduction_)
        relevant = np.column_stack([e.relevant_ for e in estimators])
        self.relevant_ = relevant[np.arange(winner.size), winner]

    def _fit_alternating(self, data, order, y_l, C_I):
        l, u = data.labeled.size, data.unlabeled.size
        A = Design(data.X, self.fit_intercept, self.intercept_scaling).restrict(order)
        lam = 1.0 / (2.0 * l * self.C_L)
        lam_u = 2.0 * max(u, 1) * lam * self.C_U
        lam_i = 2.0 * max(u, 1) * lam * C_I if self.allow_irrelevant else None
        r = self.positive_fraction
        if r is not None and np.ndim(r) > 0:
            r = float(class_fractions(r, data.classes)[0])
        if r is None:
            r = min(max(float(np.mean(y_l > 0)), 1e-3), 1 - 1e-3)
        res = ussl_alternating(A, l, y_l, lam, lam_u, lam_i, float(self.epsilon), r,
                               max_switches=self.max_switches,
                               lam_u_init=self.anneal_start * lam_u,
                               lam_u_growth=self.anneal_growth, polish=self.polish,
                               late_membership=self.late_membership,
                               mfn_options=dict(tol=self.tol, max_iter=self.max_iter,
                                                max_cg_iter=self.max_cg_iter))
        self.fit_result_ = res
        self.n_iter_ = int(res.n_iter)
        return res.w, res.relevant.copy(), "squared_hinge"

    def _fit_sdp(self, data, order, y_l, C_I):
        n = order.size
        l = data.labeled.size
        if n > self.max_sdp_rows:
            raise ValueError(f"method='sdp' has O(n^2) variables and is limited to "
                             f"max_sdp_rows={self.max_sdp_rows} rows, got {n}: use "
                             "method='alternating' (or raise max_sdp_rows)")
        X = data.X[order]
        X = X.toarray() if sp.issparse(X) else np.asarray(X)
        if self.fit_intercept:
            X = np.hstack([X, np.full((n, 1), self.intercept_scaling)])
        K = X @ X.T
        # the refits (and the supervised fit for big-M) use Clarabel/OSQP, not the SDP's SCS
        qp = FixedMembershipQP(X, l, self.C_L, self.C_U, C_I, float(self.epsilon))
        big_M = self.big_M
        if big_M is None:
            w0 = qp.solve(y_l, np.ones(n - l), np.zeros(n - l, dtype=bool), labeled_only=True)
            big_M = max(2.0, 1.0 + self.epsilon + float(np.abs(X[l:] @ w0).max(initial=0.0)))
        self.big_M_ = float(big_M)
        sdp = ussl_sdp(K, y_l, self.C_L, self.C_U, float(self.epsilon), float(big_M),
                       C_I=C_I, solver=self.sdp_solver, tol=float(self.sdp_tol),
                       max_iter=self.sdp_max_iter, options=self.sdp_options)
        self.sdp_value_ = sdp.value
        self.fit_result_ = sdp
        if sdp.status != "optimal":
            warn_degenerate(self, f"the SDP relaxation stopped {sdp.status!r}, so its value is "
                            "no certified bound and its rounding starts from an inexact "
                            "point", "raise sdp_max_iter or sdp_tol, or use "
                            "method='alternating'")
        self.n_iter_ = 1
        rnd = round_sdp(sdp, X, y_l, self.C_L, self.C_U, C_I, float(self.epsilon),
                        n_samples=self.n_roundings, random_state=self.random_state,
                        refit=qp, mode=self.rounding)
        self.rounding_ = rnd
        self.sdp_labels_ = rnd.labels_u
        return rnd.w, rnd.relevant, "hinge"

    def decision_function(self, X):
        """``w^T x + b``; positive values predict ``classes_[1]``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            New rows.

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_classes)
            Decision values: the score of ``classes_[1]``, or one column per class.
        """
        out = self._fallback_answer(X, "decision_function")
        if out is not None:
            return out
        check_is_fitted(self)
        return super().decision_function(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


@dataclass
class Rounding:
    """Outcome of :func:`round_sdp`.

    Attributes
    ----------
    w : ndarray
        Refitted weights of the chosen candidate (after the descent, with ``mode="search"``).
    labels_u : ndarray
        Its labels of the unlabeled rows.
    relevant : ndarray of bool
        Memberships at ``w``: each unlabeled row's cheaper option.
    objective : float
        Problem I (hinge) at ``w``.
    source : str
        Which candidate won (``"sign"``, ``"eigenvector"``, ``"hyperplane k"``, with the
        membership rule after a ``/``), and ``"+descent"`` when the descent improved it.
    sign_w : ndarray
        Refit of the plain sign rounding (``sign(y_1 M_y[1, :])``, ``d > 1/2``).
    sign_objective : float
        Problem I at ``sign_w``; ``objective <= sign_objective`` always.
    n_candidates : int
        Refits of distinct candidates (descent steps not counted).
    descent : list of float
        Problem I after each descent step (non-increasing).
    """

    w: np.ndarray
    labels_u: np.ndarray
    relevant: np.ndarray
    objective: float
    source: str
    sign_w: np.ndarray
    sign_objective: float
    n_candidates: int
    descent: list = field(default_factory=list)


def round_sdp(sdp: SDPResult, Z: np.ndarray, y_l: np.ndarray, C_L: float, C_U: float,
              C_I: float, epsilon: float, n_samples: int = 10, random_state=None,
              solver: str | None = None, refit: FixedMembershipQP | None = None,
              mode: str = "search", max_descent: int = 50) -> Rounding:
    """Round the SDP solution to labels and memberships, and refit (digest 6.4 item 5).

    The thesis leaves the rounding open.  ``mode="sign"`` is the plain rounding: labels
    ``sign(y_1 M_y[1, j])``, memberships ``d_j > 1/2``, one refit of Problem II with them
    fixed (:class:`FixedMembershipQP`).  ``mode="search"`` keeps, among these candidates,
    the one whose refit has the lowest Problem I value (:func:`problem_objective`, hinge):

    * labels: the sign rounding, the signs of the leading eigenvector of ``M_y``, and
      ``n_samples`` random-hyperplane roundings of a factor ``V`` of ``M_y = V V^T``
      (Goemans & Williamson: ``sign(V g)``, ``g ~ N(0, I)``), each oriented by the first
      labeled row (the labeled rows of ``V`` are ``+-`` one vector, so the labeled signs
      come out right);
    * memberships: ``d_j > 1/2``, ``d_j >= median(d)``, and with each hyperplane ``k`` a
      random threshold ``d_j > theta_k``, ``theta_k ~ U(0, 1)`` (randomized rounding: row
      ``j`` is relevant with probability ``d_j``);

    then descends from the winner: at the refit ``w`` each unlabeled row takes its best
    label ``sign(f_j)`` and cheaper membership (which makes Problem II's value at ``w``
    equal to Problem I's), and Problem II is refitted with them fixed, until nothing changes
    (each step lowers Problem I).  The sign rounding is one of the candidates, so the
    result is never worse than it (``objective <= sign_objective``).  Deterministic given
    ``random_state``.

    ``refit`` reuses a :class:`FixedMembershipQP` built on ``Z`` (one is built otherwise).

    Returns
    -------
    Rounding
    """
    if mode not in ("search", "sign"):
        raise ValueError(f"mode must be 'search' or 'sign', got {mode!r}")
    l = y_l.shape[0]
    M_y = 0.5 * (sdp.M_y + sdp.M_y.T)
    d = sdp.d
    qp = FixedMembershipQP(Z, l, C_L, C_U, C_I, epsilon, solver) if refit is None else refit

    def orient(v):
        lab = np.where(v >= 0, 1.0, -1.0)
        return (lab if lab[0] == y_l[0] else -lab)[l:]

    def evaluate(lab_u, rel):
        w = qp.solve(y_l, lab_u, rel)
        o = Z @ w
        return problem_objective(w, o[:l], y_l, o[l:], C_L, C_U, epsilon, C_I, "hinge"), w

    candidates = [("sign", orient(y_l[0] * M_y[0, :]), [("d>1/2", d > 0.5)])]
    if mode == "search":
        vals, vecs = np.linalg.eigh(M_y)
        V = vecs * np.sqrt(np.clip(vals, 0.0, None))
        rng = np.random.default_rng(0 if random_state is None else random_state)
        fixed = [("d>1/2", d > 0.5), ("d>=median", d >= np.median(d) if d.size else d > 0.5)]
        candidates[0] = ("sign", candidates[0][1], fixed)
        candidates.append(("eigenvector", orient(vecs[:, -1]), fixed))
        for k in range(int(n_samples)):
            g = rng.normal(size=V.shape[1])
            theta = rng.uniform()
            candidates.append((f"hyperplane {k}", orient(V @ g),
                               fixed + [(f"d>{theta:.2f}", d > theta)]))
    seen: dict = {}
    best = sign = None
    for name, lab_u, members in candidates:
        for rule, rel in members:
            key = (lab_u.tobytes(), rel.tobytes())
            if key in seen:
                continue
            value, w = evaluate(lab_u, rel)
            seen[key] = value
            if sign is None:
                sign = (value, w)
            if best is None or value < best[0]:
                best = (value, w, lab_u, f"{name}/{rule}")
    value, w, lab_u, source = best
    trace: list = []
    if mode == "search":
        for _ in range(int(max_descent)):
            o_u = Z[l:] @ w
            rel = C_U * np.maximum(0.0, 1.0 - np.abs(o_u)) <= \
                C_I * np.maximum(0.0, np.abs(o_u) - epsilon)
            new_lab = np.where(o_u >= 0, 1.0, -1.0)
            new_value, new_w = evaluate(new_lab, rel)
            if not new_value < value * (1 - 1e-9):
                break
            value, w, lab_u = new_value, new_w, new_lab
            trace.append(value)
        if trace:
            source += "+descent"
    o_u = Z[l:] @ w
    relevant = C_U * np.maximum(0.0, 1.0 - np.abs(o_u)) <= \
        C_I * np.maximum(0.0, np.abs(o_u) - epsilon)
    return Rounding(w=w, labels_u=lab_u, relevant=relevant, objective=float(value),
                    source=source, sign_w=sign[1], sign_objective=float(sign[0]),
                    n_candidates=len(seen), descent=trace)


class FixedMembershipQP:
    """Problem II's convex QP with labels and memberships fixed, built once per data set.

    A hinge Universum SVM without a free bias (``Z`` carries the constant feature): the
    labeled rows and the relevant unlabeled rows (with their labels) pay the hinge loss,
    the irrelevant ones the epsilon-insensitive loss (digest 6.4 item 5).  The rounding
    solves it for a dozen or two (labels, memberships) candidates, so it is written once
    with cvxpy parameters (labels and per-row costs; the slack form keeps it DPP, and
    cvxpy compiles it once) and over a factor of ``Z Z^T``: with ``Z = U S V^T`` (thin SVD,
    rank ``r <= n``) the weights are ``w = V v`` and the problem in ``v`` has ``r``
    unknowns (``r <= n = 130`` against the 257 or 785 features of USPS and MNIST).

    Parameters
    ----------
    Z : ndarray of shape (n, p)
        The ``l`` labeled rows first, then the unlabeled ones.
    n_labeled : int
    C_L, C_U, C_I, epsilon : float
        Costs of the labeled, relevant and irrelevant rows; insensitivity width.
    solver : str or None
        cvxpy solver (``None``: Clarabel, else OSQP or SCS).
    """

    def __init__(self, Z: np.ndarray, n_labeled: int, C_L: float, C_U: float, C_I: float,
                 epsilon: float, solver: str | None = None):
        cp = import_cvxpy()
        Z = np.asarray(Z, dtype=np.float64)
        n = Z.shape[0]
        l = n_labeled
        left, sing, right_t = np.linalg.svd(Z, full_matrices=False)
        keep = sing > sing.max(initial=0.0) * max(Z.shape) * np.finfo(float).eps
        F = left[:, keep] * sing[keep]
        self._V = right_t[keep].T
        self._l, self._costs, self._solver, self._cp = l, (C_L, C_U, C_I), solver, cp
        v = cp.Variable(F.shape[1])
        self._v = v
        self._y = cp.Parameter(n)
        self._c_hinge = cp.Parameter(n, nonneg=True)
        self._c_eps = cp.Parameter(n - l, nonneg=True)
        xi = cp.Variable(n, nonneg=True)
        eta = cp.Variable(n - l, nonneg=True)
        o = F @ v
        self._problem = cp.Problem(
            cp.Minimize(0.5 * cp.sum_squares(v) + self._c_hinge @ xi + self._c_eps @ eta),
            [xi >= 1 - cp.multiply(self._y, o), eta >= o[l:] - epsilon,
             eta >= -o[l:] - epsilon])

    def solve(self, y_l: np.ndarray, labels_u: np.ndarray, relevant: np.ndarray,
              labeled_only: bool = False) -> np.ndarray:
        """Weights ``w`` for these labels and memberships (``labeled_only``: every unlabeled
        row costs nothing, the supervised hinge SVM)."""
        C_L, C_U, C_I = self._costs
        scale = 0.0 if labeled_only else 1.0
        self._y.value = np.concatenate([y_l, labels_u]).astype(np.float64)
        self._c_hinge.value = np.concatenate([np.full(self._l, C_L),
                                              scale * np.where(relevant, C_U, 0.0)])
        self._c_eps.value = scale * np.where(relevant, 0.0, C_I)
        solve(self._cp, self._problem, self._solver)
        return self._V @ np.asarray(self._v.value, dtype=np.float64)


def refit_fixed(Z: np.ndarray, y_l: np.ndarray, labels_u: np.ndarray, relevant: np.ndarray,
                C_L: float, C_U: float, C_I: float, epsilon: float,
                solver: str | None = None) -> np.ndarray:
    """One solve of :class:`FixedMembershipQP` (the rounding's refit)."""
    qp = FixedMembershipQP(Z, y_l.shape[0], C_L, C_U, C_I, epsilon, solver)
    return qp.solve(y_l, labels_u, relevant)
