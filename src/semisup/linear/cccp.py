"""Ramp-loss S3VM trained by the concave-convex procedure (CCCP).

Collobert, Sinz, Weston & Bottou (2006), "Large scale transductive SVMs" (JMLR 7), the
"Semi-SVM" of chapter 8 of the thesis (eq. 8.3 and its ramp form, digest section 7.3).
Every unlabeled point ``x_j`` appears twice, with labels ``+1`` and ``-1``, each copy with a
bounded (ramp) loss, and the outputs on the unlabeled points obey the balance constraint

    (1/u) sum_j h(x_j) = c = 2 r - 1        (Collobert et al., eq. 7; ``r`` the positive fraction)

In the squared-hinge family of this library the objective is

    J(w) = (lam/2) ||w||^2 + (1/2l) sum_i l_2(y_i h(x_i))
           + (lam_u/2u) sum_j [ ramp_s(h(x_j)) + ramp_s(-h(x_j)) ],

with ``l_2(t) = max(0, 1 - t)^2`` and the clipped squared hinge ``ramp_s(t) = min((1 - s)^2,
l_2(t))``, bounded like Collobert's ``R_s = H_1 - H_s``.  With ``s = 0`` the two copies add up
to ``max(0, 1 - |h|)^2 + 1``: the symmetric loss of :class:`~semisup.linear.TransductiveSVM`,
so both methods minimise the same objective by different algorithms (CCCP vs label
switching); ``0 < s < 1`` flattens the loss near the boundary as Collobert's ``s < 0`` does
for the hinge.

CCCP: ``ramp_s = l_2 - max(0, l_2 - (1 - s)^2)`` is a difference of convex functions.  At the
current ``w`` each copy is bounded above by a convex function that touches it there:
``l_2`` itself when ``+-h(x_j) >= s``, the constant ``(1 - s)^2`` otherwise.  Minimising this
majoriser (a weighted L2-SVM in which the copies on the flat part of the ramp have zero cost,
the analogue of Collobert's ``beta`` shifting the dual box) cannot increase ``J``; the outer
loop stops when the set of active copies repeats.  Each convex step is solved by
:func:`semisup.solvers.mfn.l2svm_mfn` (the modified finite Newton method with CGLS).

The balance constraint is kept exactly by eliminating the bias: with ``m`` the mean of the
unlabeled rows, ``h(x) = w^T (x - m) + c`` satisfies it for every ``w``.  The centred rows are
never formed (:class:`_CenteredRows` applies ``x - m`` implicitly, so sparse input stays
sparse), and the fixed offset ``c`` is absorbed into each term by scaling its row by
``1 / (1 - y c)`` and its cost by ``(1 - y c)^2``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from semisup._logging import get_logger, report_unconverged
from semisup._validation import check_positive
from semisup.linear._base import LinearSemiSupervisedClassifier, check_positive_fraction
from semisup.losses import HingeTerms, squared_hinge
from semisup.regularizers import Ridge
from semisup.solvers.design import Design
from semisup.solvers.mfn import l2svm_mfn

logger = get_logger(__name__)


class _CenteredRows:
    """Operator ``diag(r) (Z - 1 m^T)`` over rows of ``Z`` for the library's solvers.

    Implements what :func:`~semisup.solvers.mfn.l2svm_mfn`, CGLS and the Jacobi
    preconditioner use: ``shape``, ``matvec``, ``rmatvec``, ``restrict``,
    ``weighted_column_sq`` and ``row_sq_norms``.
    """

    def __init__(self, design: Design, scale: np.ndarray, mean: np.ndarray):
        self.design = design
        self.scale = np.asarray(scale, dtype=np.float64)
        self.mean = np.asarray(mean, dtype=np.float64)
        self.sparse = design.sparse
        self.n_rows = design.n_rows
        self.n_weights = design.n_weights

    @property
    def shape(self) -> tuple[int, int]:
        return (self.n_rows, self.n_weights)

    def restrict(self, subset) -> _CenteredRows:
        subset = np.asarray(subset, dtype=np.int64)
        return _CenteredRows(self.design.restrict(subset), self.scale[subset], self.mean)

    def matvec(self, w: np.ndarray) -> np.ndarray:
        out = self.design.matvec(w)
        out -= float(self.mean @ w)
        out *= self.scale
        return out

    def rmatvec(self, q: np.ndarray) -> np.ndarray:
        rq = self.scale * q
        out = self.design.rmatvec(rq)
        out -= rq.sum() * self.mean
        return out

    def weighted_column_sq(self, c: np.ndarray) -> np.ndarray:
        cr = c * self.scale ** 2
        return (self.design.weighted_column_sq(cr) - 2.0 * self.mean * self.design.rmatvec(cr)
                + self.mean ** 2 * cr.sum())

    def row_sq_norms(self) -> np.ndarray:
        zm = self.design.matvec(self.mean)
        return self.scale ** 2 * (self.design.row_sq_norms() - 2.0 * zm
                                  + float(self.mean @ self.mean))


def ramp_loss(t: np.ndarray, s: float) -> np.ndarray:
    """Clipped squared hinge ``min((1 - s)^2, max(0, 1 - t)^2)``."""
    return np.minimum((1.0 - s) ** 2, squared_hinge(t))


def cccp_objective(w: np.ndarray, outputs_l: np.ndarray, y_l: np.ndarray,
                   outputs_u: np.ndarray, lam: float, lam_u: float, s: float) -> float:
    """``J(w)`` of the module docstring, from the outputs ``h(x)`` of the labeled/unlabeled rows."""
    obj = 0.5 * lam * float(w @ w) + 0.5 * float(np.mean(squared_hinge(y_l * outputs_l)))
    if outputs_u.size:
        obj += 0.5 * lam_u * float(np.mean(ramp_loss(outputs_u, s) + ramp_loss(-outputs_u, s)))
    return obj


@dataclass
class CCCPResult:
    """Outcome of :func:`cccp_s3vm`.

    Attributes
    ----------
    w : ndarray
        ``[coef, b]``: weights of ``x`` and the bias of ``h(x) = coef^T x + b``.
    w_centered : ndarray
        Weights of ``x - m`` (the variables of the convex steps).
    offset : float
        ``c``, the mean output over the unlabeled rows.
    mean : ndarray
        ``m``, the mean unlabeled row.
    objective : float
        Final ``J(w)``.
    n_iter : int
        Convex steps: the supervised start (when ``w0`` is not given) and the CCCP steps.
    converged : bool
        Whether the active copies repeated before ``max_cccp_iter``.
    n_newton_iter, n_cg_iter : int
        Newton and CGLS iterations summed over the convex steps.
    history : list of float
        ``J`` after the start and after every CCCP step (non-increasing).
    """

    w: np.ndarray
    w_centered: np.ndarray
    offset: float
    mean: np.ndarray
    objective: float
    n_iter: int
    converged: bool
    n_newton_iter: int = 0
    n_cg_iter: int = 0
    history: list = field(default_factory=list)


def _stack(X_l, X_u):
    if sp.issparse(X_l):
        # float32 stays float32 (Design keeps it on its compiled path)
        return sp.vstack([X_l, X_u, X_u], format="csr")
    # dense: Design works in float64, so stack straight into float64 (no float32 copy)
    return np.concatenate([X_l, X_u, X_u], dtype=np.float64)


def cccp_s3vm(X_l, y_l: np.ndarray, X_u, lam: float, lam_u: float, positive_fraction: float,
              s: float = 0.0, max_cccp_iter: int = 50, mfn_options: dict | None = None,
              w0: np.ndarray | None = None, verbose: int = 0) -> CCCPResult:
    """Minimise ``J`` of the module docstring by CCCP with MFN convex steps.

    Parameters
    ----------
    X_l : ndarray or csr_matrix of shape (l, d)
        Labeled rows.
    y_l : ndarray of shape (l,)
        Their ``+1/-1`` labels.
    X_u : ndarray or csr_matrix of shape (u, d)
        Unlabeled rows (``u >= 1``); all rows are used for centring when empty.
    lam, lam_u : float
        ``lambda`` and the weight of the unlabeled loss.
    positive_fraction : float
        ``r`` in (0, 1); the balance constraint sets the mean unlabeled output to ``2r - 1``.
    s : float, default=0.0
        Ramp parameter, ``-1 < s < 1``: copies with ``+-h(x_j) < s`` lie on the flat part.
    max_cccp_iter : int, default=50
        Limit on CCCP iterations.
    mfn_options : dict, optional
        Passed to :func:`semisup.solvers.mfn.l2svm_mfn` (``precondition`` is ``"jacobi"``).
    w0 : ndarray, optional
        Starting weights (of ``x - m``); the supervised solution by default.
    verbose : int, default=0
        Progress to stderr.

    Returns
    -------
    CCCPResult
    """
    opts = dict(mfn_options or {})
    opts["precondition"] = "jacobi"
    y_l = np.asarray(y_l, dtype=np.float64)
    l, u = X_l.shape[0], X_u.shape[0]
    c = 2.0 * positive_fraction - 1.0
    X_c = X_u if u else X_l
    mean = np.asarray(X_c.mean(axis=0, dtype=np.float64)).ravel()  # float32 X: sum in float64
    Z = Design(_stack(X_l, X_u), fit_intercept=False)
    y = np.concatenate([y_l, np.ones(u), -np.ones(u)])
    # row scale 1/(1 - y c) and cost factor (1 - y c)^2 absorb the fixed offset c
    shift = 1.0 - y * c
    A = _CenteredRows(Z, 1.0 / shift, mean)
    base_cost = np.concatenate([np.full(l, 1.0 / l), np.full(2 * u, lam_u / max(u, 1))])
    base_cost *= shift ** 2
    reg = Ridge(lam)

    def outputs(w):
        op = A.matvec(w)
        real = op * shift + c  # h(x) of every row (the unlabeled rows twice)
        return op, real[:l], real[l:l + u]

    def objective(w, o_l, o_u):
        return cccp_objective(w, o_l, y_l, o_u, lam, lam_u, s)

    n_newton = n_cg = 0
    if w0 is None:
        cost = base_cost.copy()
        cost[l:] = 0.0
        res = l2svm_mfn(A, HingeTerms(y, cost), reg, **opts)
        w, n_newton, n_cg = res.w, res.n_iter, res.n_cg_iter
    else:
        w = np.array(w0, dtype=np.float64, copy=True)
    op, o_l, o_u = outputs(w)
    history = [objective(w, o_l, o_u)]
    pattern = None
    converged = False
    it = 0
    while u and it < max_cccp_iter:
        new_pattern = np.concatenate([o_u >= s, -o_u >= s])
        if pattern is not None and np.array_equal(new_pattern, pattern):
            converged = True
            break
        pattern = new_pattern
        cost = base_cost.copy()
        cost[l:] *= pattern
        res = l2svm_mfn(A, HingeTerms(y, cost), reg, w0=w, outputs0=op, **opts)
        w = res.w
        it += 1
        n_newton += res.n_iter
        n_cg += res.n_cg_iter
        op, o_l, o_u = outputs(w)
        history.append(objective(w, o_l, o_u))
        logger.debug("CCCP it=%d J=%.10g active copies=%d/%d", it, history[-1],
                     int(pattern.sum()), 2 * u)
    if u == 0:
        converged = True
    # h(x) = w^T (x - m) + c = w^T x + (c - w^T m)
    return CCCPResult(w=np.append(w, c - float(w @ mean)), w_centered=w, offset=c,
                      mean=mean, objective=history[-1],
                      n_iter=it + int(w0 is None),
                      converged=converged, n_newton_iter=n_newton, n_cg_iter=n_cg,
                      history=history)


class CCCPS3VM(LinearSemiSupervisedClassifier):
    """Linear ramp-loss S3VM trained by CCCP (Collobert et al. 2006; the thesis's Semi-SVM).

    Minimises ``(lam/2)||w||^2 + (1/2l) sum_i l_2(y_i h(x_i)) + (lam_u/2u) sum_j
    [ramp_s(h(x_j)) + ramp_s(-h(x_j))]`` subject to the balance constraint ``mean_j h(x_j)
    = 2 r - 1`` over the unlabeled rows (see :mod:`semisup.linear.cccp`).  Each CCCP step is a
    weighted L2-SVM solved by the modified finite Newton method on the implicitly centred
    data, so sparse input stays sparse.  The bias is set by the balance constraint and not
    regularised.  More than two classes: one-vs-rest.  Without unlabeled rows the balance is
    imposed on the labeled rows.

    Parameters
    ----------
    lam : float, default=1e-3
        ``lambda``.  Times ``l``, ``(lam/2)||w||^2 + (1/2l) sum_i l_2(y_i h_i)`` is
        :class:`~semisup.linear.L2SVM`'s summed form at ridge ``l lam``, so
        LogisticRegression(C=1)'s second-order match (ridge 4) is ``lam = 4 / l``.
        Measured on official splits 2-5 of the SSL-book sets it raised the cells within a
        point of LogisticRegression from 33 to 38 of 64 but lowered the mean gain from
        -0.01 to -0.39 points, so the default stays ``1e-3``
        (``benchmarks/results/defaults_weak_reg.md``).
    lam_u : float, default=1.0
        Weight of the unlabeled loss (as ``lam_u`` of :class:`TransductiveSVM`).
    positive_fraction : float, array-like or None, default=None
        ``r``; ``None`` takes the positive fraction of the labeled rows.  An array gives one
        fraction per class (in the order of ``classes_``; the fraction of class ``k`` is the
        ``r`` of its one-vs-rest problem, e.g. class shares estimated from weakly labeled
        retrieved documents); with two classes the entry of ``classes_[1]`` is used.
    s : float, default=0.0
        Ramp parameter in (-1, 1); ``0`` gives the TSVM loss, larger values flatten it near
        the boundary.
    max_cccp_iter : int, default=50
        Limit on CCCP iterations (a ``ConvergenceWarning`` when reached).
    tol : float, default=1e-6
        CGLS tolerance of the convex steps.
    max_iter : int, default=50
        Newton iterations per convex step.
    max_cg_iter : int, default=10000
        CGLS iterations per Newton system.
    fallback : {"cv", "none"}, default="cv"
        ``"cv"``: the guard of :mod:`semisup.safety` -- 3-fold labeled-only
        cross-validation (held-out labeled rows hidden among the unlabeled ones) against
        the supervised counterpart (scikit-learn's ``LogisticRegression()`` objective: ``C = 1``,
        unpenalised intercept, multinomial beyond two classes); the semi-supervised fit is kept
        only when it wins the guard's margin test, otherwise the estimator is
        that counterpart fitted on the labeled rows (``fallback_ is True``).  Costs about
        four fits.  ``"none"``: the method as published.
    verbose : int, default=0
        Progress to stderr.

    Attributes
    ----------
    coef_, intercept_, classes_ : fitted hyperplane(s).
    transduction_ : ndarray
        Labels of the training rows (given for labeled rows, predicted for unlabeled).
    objective_ : float or ndarray
        Final CCCP objective ``J``.
    n_iter_ : ndarray
        Convex steps per binary problem (the supervised start included).
    fit_results_ : list of CCCPResult
        Objective histories, Newton and CG iteration counts.
    fallback_ : bool
        Whether the guard (``fallback="cv"``) replaced the semi-supervised fit by its
        supervised counterpart: ``coef_`` and ``intercept_`` are then the logistic
        regression's on the labeled rows, and ``objective_``, ``n_iter_`` and
        ``fit_results_`` those of :func:`semisup.solvers.logistic.logistic_regression`.
    cv_scores_ : dict or None
        The guard's result (see :func:`semisup.safety.guard`): mean held-out accuracies
        ``semi_supervised`` and ``supervised``, ``n_folds``, ``split_scores``, the margin
        scores' ``gain`` and ``gain_se``, and ``keep``; ``None`` with ``fallback="none"`` or
        when the guard cannot run (no unlabeled row, or a class with one labeled row and
        fewer than two classes with two: :func:`semisup.safety.guard_folds`).

    Examples
    --------
    >>> import numpy as np
    >>> from semisup import CCCPS3VM
    >>> rng = np.random.default_rng(0)
    >>> X = np.r_[rng.normal(-2, 1, (30, 2)), rng.normal(2, 1, (30, 2))]
    >>> y = np.full(60, -1)
    >>> y[[0, 1, 30, 31]] = [0, 0, 1, 1]          # two labels per class, 56 unlabeled
    >>> clf = CCCPS3VM(lam=1e-2).fit(X, y)
    >>> float(np.mean(clf.transduction_ == np.repeat([0, 1], 30)))
    1.0
    >>> clf.predict([[-2.0, -2.0], [2.0, 2.0]]).tolist()
    [0, 1]
    """

    _float32 = True   # sparse float32 stays float32 in the stacked Design
    _convergence_parameters = {**LinearSemiSupervisedClassifier._convergence_parameters,
                               "cccp": "max_cccp_iter"}

    # the bias is fixed by the balance constraint; the base class keeps it as a weight
    fit_intercept = True
    intercept_scaling = 1.0

    def __init__(self, lam: float = 1e-3, lam_u: float = 1.0,
                 positive_fraction: float | np.ndarray | None = None, s: float = 0.0,
                 max_cccp_iter: int = 50, tol: float = 1e-6, max_iter: int = 50,
                 max_cg_iter: int = 10_000, fallback: str = "cv", verbose: int = 0):
        self.lam = lam
        self.lam_u = lam_u
        self.positive_fraction = positive_fraction
        self.s = s
        self.max_cccp_iter = max_cccp_iter
        self.tol = tol
        self.max_iter = max_iter
        self.max_cg_iter = max_cg_iter
        self.fallback = fallback
        self.verbose = verbose

    def _validate_params(self) -> None:
        check_positive(self.lam, "lam")
        check_positive(self.lam_u, "lam_u", allow_zero=True)
        check_positive_fraction(self.positive_fraction)
        if not isinstance(self.s, (int, float, np.floating)) or not -1.0 < self.s < 1.0:
            raise ValueError(f"s must be a number in (-1, 1) (ramp parameter), got {self.s!r}")
        if not isinstance(self.max_cccp_iter, (int, np.integer)) or self.max_cccp_iter < 1:
            raise ValueError(f"max_cccp_iter must be a positive integer, got "
                             f"{self.max_cccp_iter!r}")

    def _fit_binary(self, design, data, y_pm, prior, sample_weight, context=None, seed=None):
        if sample_weight is not None:
            raise ValueError("CCCPS3VM does not take sample_weight")
        # prior: the labeled prior, or this problem's entry of a per-class positive_fraction
        if self.positive_fraction is not None and np.ndim(self.positive_fraction) == 0:
            r = float(self.positive_fraction)
        else:
            r = min(max(prior, 1e-3), 1 - 1e-3)
        X = data.X
        res = cccp_s3vm(X[data.labeled], y_pm, X[data.unlabeled], self.lam, self.lam_u, r,
                        s=float(self.s), max_cccp_iter=self.max_cccp_iter,
                        mfn_options=dict(tol=self.tol, max_iter=self.max_iter,
                                         max_cg_iter=self.max_cg_iter),
                        verbose=self.verbose)
        if not res.converged:
            report_unconverged("cccp", "the active copies did not settle")
        return res
