"""Convex relaxed transductive SVM (CTSVM, Xu et al., NIPS 2007; thesis chapter 3)."""

from __future__ import annotations

import logging
import numbers
import time

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from semisup._logging import warn_at_caller
from semisup._validation import (
    check_bool,
    check_int,
    check_positive,
    check_X,
    warn_degenerate,
    warn_if_collapsed,
)
from semisup.base import SupervisedFallbackMixin
from semisup.solvers.lowrank_sdp import (
    FeatureFactor,
    ctsvm_lowrank,
    pataki_rank,
    sparse_or_dense_mean,
)
from semisup.solvers.svm import fit_precomputed_svm
from semisup.transductive._base import SPECTRAL_RANK, KernelTransductiveBase, centre_kernel
from semisup.transductive._sdp import ctsvm_sdp, ctsvm_vectors

logger = logging.getLogger("semisup.transductive.ctsvm")

SOLVERS = ("auto", "scs", "clarabel", "lowrank", "nystroem", "spectral")
# Largest n of the kernel low-rank route under 'auto': it factors the dense n x n kernel
# (8 n^2 bytes, 3.2 GB at 20,000 rows, and an O(n^3) Cholesky); beyond it 'auto' takes the
# Nystroem-feature route, which never forms an n x n matrix.
DENSE_KERNEL_MAX = 20_000
# Landmarks of n_components='auto' with solver='nystroem'; the spectral route's rank is
# SPECTRAL_RANK (semisup.transductive._base)
NYSTROEM_COMPONENTS = 1000
# tol='auto': the exact, kernel and Nystroem routes solve to 1e-5; the spectral route to 1e-3,
# the rank-m truncation having changed the problem by more (the same accuracy at 1e-3 and
# 1e-5 on four multi-class sets, 1.5-2.3x less CPU; results/ctsvm_multiclass.md)
DEFAULT_TOL = 1e-5
SPECTRAL_TOL = 1e-3
# Tolerance of the low-rank route in the fit of each fold of the guard (fallback="cv")
GUARD_TOL = 1e-2
# Low-rank solver rules (measured on 20NG n = 10,000, issue 16 notes: 229 -> 75 s CPU):
# L-BFGS pairs carried across rounds, Lanczos certificate only where it can decide
# something, spare columns trimmed to the numerical rank + 2, escape columns sized by an
# exact line search.  The penalty stays fixed (doubling it on stalls was slower there).
_LOWRANK_RULES = dict(carry="pairs", certify="lazy", trim=2, escape_scale="search")
# The kernel route (factor p = n) allows the Barvinok-Pataki rank from the start and its
# escapes add 1, 2, 4, ... columns while they repeat: g241c climbs from rank 8 to 23 in 4
# rounds instead of 15 (914 instead of 2,513 evaluations).  On sparse features (p = d,
# 49,607 on 20NG) a block Lanczos costs more than the rounds it saves (92 instead of 69 s
# at 858 instead of 1,059 evaluations): single columns, and the solver's adaptive cap (20,
# raised on a stall), which keeps that fit's path.
# The kernel route also doubles the penalty (10 up to 1e3) when the primal residual stalls:
# at C = 100 the multipliers otherwise crept by ~3 % a round and 5 of 10 Banana fits of Table
# 3.2 (v4) stopped at the 200-round cap with a gap of 2e-5 to 2e-4; with it they converge
# in 13-20 rounds, Iono / Sonar at C = 100 take 11-14 rounds instead of 28-68, g241c and
# Digit1 the same CPU time (benchmarks/results/ctsvm_penalty.md).  The linear-feature route
# keeps the fixed penalty (measured faster on 20NG, above).
_KERNEL_ESCAPES = dict(escape_block="grow", sigma_max=1e3)


def default_epsilon(y_l: np.ndarray, n: int) -> float:
    """Data-driven balance tolerance of eq. 3.5 (the thesis gives no value).

    Without intercept the kernel is centred, so ``sum_i z_i = 0`` and then
    ``c^T z = (n / n_u) mean(z_l)``, with ``mean(z_l)`` close to the labeled class balance
    ``ybar``.  The default admits that value plus one standard error of ``ybar``:
    ``eps = (n / n_u) |ybar| + sqrt((1 - ybar^2) / l)``.
    """
    ybar = float(np.mean(y_l))
    return (n / (n - y_l.size)) * abs(ybar) + prior_standard_error(y_l)


def prior_standard_error(y_l: np.ndarray) -> float:
    """Standard error of the labeled class balance ``ybar = mean(y_l)`` (``+1/-1`` labels).

    ``sqrt((1 - ybar^2) / l)``, floored at ``sqrt(1 / l^2)`` so that one class only still
    admits one row of slack.  The tolerance of ``rounding='prior'``: the unlabeled rows'
    rounded labels must keep the balance of eq. 3.5 with this ``epsilon``.
    """
    l = y_l.size
    ybar = float(np.mean(y_l))
    return float(np.sqrt(max(1.0 - ybar ** 2, 1.0 / l) / l))


def balanced_threshold(scores_u: np.ndarray, ybar_l: float, epsilon: float) -> float:
    """Smallest shift ``t`` whose labels ``sign(scores_u - t)`` keep the balance of eq. 3.5.

    The relaxation constrains ``|c^T w| <= epsilon`` on its continuous predictions, but the
    sign rounding of eq. 3.7 can still put every unlabeled row in one class (small
    ``C``: the relaxed scores shrink towards the centre together).  On labels the
    constraint reads ``|ybar_l - mean(y_u)| <= epsilon``; ``t = 0`` when the signs already
    satisfy it, otherwise ``t`` moves the threshold just far enough (between two sorted
    scores) that the number of positives reaches the nearest admissible count.

    Parameters
    ----------
    scores_u : ndarray of shape (n_unlabeled,)
        Relaxed scores of the unlabeled rows.
    ybar_l : float
        Mean of the labeled rows' ``+1/-1`` labels.
    epsilon : float
        Balance tolerance (``epsilon_`` of the fit).

    Returns
    -------
    float
        The threshold; the rounded labels are ``scores_u > t`` (``>= 0`` when ``t = 0``).
    """
    u = scores_u.size
    k0 = int(np.count_nonzero(scores_u >= 0))
    # |ybar - (2k/u - 1)| <= eps  <=>  u (1 + ybar - eps) / 2 <= k <= u (1 + ybar + eps) / 2
    lo = max(0, int(np.ceil(u * (1.0 + ybar_l - epsilon) / 2.0 - 1e-9)))
    hi = min(u, int(np.floor(u * (1.0 + ybar_l + epsilon) / 2.0 + 1e-9)))
    if lo > hi:                       # tolerance below one row: the nearest count
        lo = hi = int(np.clip(round(u * (1.0 + ybar_l) / 2.0), 0, u))
    if lo <= k0 <= hi:
        return 0.0
    k = min(max(k0, lo), hi)
    s = np.sort(scores_u)[::-1]
    if k == 0:
        return float(s[0]) + 1.0
    if k == u:
        return float(s[-1]) - 1.0
    lo_s, hi_s = float(s[k]), float(s[k - 1])
    t = lo_s + 0.5 * (hi_s - lo_s)
    # adjacent floats: the midpoint rounds onto one of them; s[k] itself keeps the count
    return t if lo_s <= t < hi_s else lo_s


class ConvexTSVM(SupervisedFallbackMixin, KernelTransductiveBase):
    """Convex relaxation of the transductive SVM (CTSVM), eqs. 3.8 and 3.11.

    The relaxation lifts the TSVM's predictions ``w`` (eq. 3.6) to ``(w, W)`` with
    ``[[W, w], [w^T, 1]] >= 0`` and keeps ``y_i w_i >= 1`` (labeled), ``W_ii >= 1``
    (unlabeled, the relaxation of ``w_i^2 >= 1``) and the balance ``|c^T w| <= epsilon``
    (eq. 3.5), with hinge slacks weighted ``C_l`` and ``C_u``; its conic dual is eq. 3.11.
    Two routes solve it:

    * ``solver='scs'`` / ``'clarabel'``: eq. 3.11 as written, through cvxpy (n <= max_exact).
      ``w`` comes from the LMI's dual matrix (``w = -Z[:N, N] / (2 Z_NN)``), not from eq.
      3.7, which is ill-posed when the LMI is tight (as it is at the optimum).
    * ``solver='lowrank'``: a Burer-Monteiro factorisation ``W = w w^T + Q Q^T`` solved by an
      augmented Lagrangian with L-BFGS, certified by the smallest eigenvalue of the dual
      slack (Lanczos) and a primal-dual gap; rank grows when the certificate fails.  Linear
      kernels use the (sparse) features directly and never form an n x n matrix.
    * ``solver='nystroem'``: the low-rank route on Nystroem features ``Phi = K_nm
      K_mm^{-1/2}`` of ``n_components`` random landmarks (RBF / poly kernels), the linear
      route's algorithm on ``Phi``; ``O(n m)`` memory, no ``n x n`` kernel or Cholesky.
    * ``solver='spectral'``: the same algorithm on the ``n_components`` leading eigenvectors
      of the centred kernel, ``Phi = U_m Lambda_m^{1/2}`` (its best rank-``m``
      approximation; the ridge keeps ``Phi Phi^T + ridge I`` definite), computed once and
      shared by the one-vs-rest problems.  Each evaluation costs ``O(n m)`` instead of the
      kernel route's ``O(n^2)``.

    ``'auto'`` takes the low-rank route, and SCS only for the variants that route lacks
    (``fit_intercept=True``, ``slack='squared'``; ``n <= max_exact``); RBF / poly kernels
    beyond ``DENSE_KERNEL_MAX`` = 20,000 rows take the Nystroem route (the dense factor needs
    8 n^2 bytes and an O(n^3) Cholesky).  With more than two classes and more than
    ``SPECTRAL_RANK`` = 300 rows, a non-linear kernel takes the spectral route at rank 300
    (``tol='auto'``: 1e-3): the kernel route costs one n x n problem per class, and the
    guarded default fit timed out (over 60 CPU-s) on each of the 7 multi-class cells of
    issue 26's benchmark of defaults measured with it (2,000 rows: dna, 3 classes;
    satimage, 6; segment, 7; the ten USPS digits); with the spectral route it finishes all
    8 in 9-46 CPU-s a fit (``benchmarks/results/defaults_r3s11_extra.md``).  At 100 labels
    the spectral route took 3.2-7.4x less CPU than the kernel route (dna 10.5 against 33.9
    s, USPS 10.2 against 75.3 s), labeled 98.2-100 % of the unlabeled rows alike and
    scored within 0.6 point of it, where 300 or 500 random Nystroem landmarks lost 4.5 or
    2.4 points on USPS (``benchmarks/results/ctsvm_multiclass.md``).  Measured on
    sklearn digits 3 vs 8 (10 labels, 2 shared cores): the low-rank route fits 60 / 144 /
    357 rows in 0.2 / 0.8 / 1.6 s and SSL-book Digit1 (1,500 rows) in 19 s, while the exact
    SCS route took about 5 minutes per fit at n = 144 (issue 26: 25 minutes for five);
    ``benchmarks/results/defaults_thesis.md``.

    More than two classes are solved one-vs-rest
    (:class:`semisup.transductive._base.OneVsRestMixin`): each class against the rest with
    every unlabeled row unlabeled, its balance ``epsilon`` and offset from that class's
    labeled prior; ``decision_function`` has one column per class, ``estimators_`` holds
    the binary estimators.

    Intercept.  With a free intercept, ``A = P^T K^{-1} P`` is singular along
    ``(1_n, -1)`` and the LMI forces every unlabeled multiplier to zero (the relaxation then
    ignores the unlabeled rows; thesis digest §2.6).  ``fit_intercept=False`` (default)
    centres the kernel instead (``A = (H K H + ridge I)^{-1}``, the Remark II form); the
    thesis's regularised form ``A = P^T (K + ridge I)^{-1} P + intercept_ridge I`` is
    available with ``fit_intercept=True`` (exact routes only).

    Out of sample.  The thesis only transduces.  ``out_of_sample='expansion'`` uses the
    relaxation's own function: the objective is ``(1/2) beta^T K beta`` with
    ``beta = (K + ridge I)^{-1} (z + lambda e)``, so ``f(x) = k_x^T beta - lambda``, which
    reproduces ``z`` on the training rows.  ``out_of_sample='svm'`` trains a kernel SVM (C =
    C_l) on all training rows with their transduced labels.

    Parameters
    ----------
    C_l : float
        Slack weight of the labeled rows (``inf``: hard margin, eq. 3.8).
    C_u : float or None
        Slack weight of the unlabeled rows (``None``: ``C_l``, as in the thesis's experiments).
    epsilon : float or 'auto'
        Balance tolerance of eq. 3.5; ``'auto'``: :func:`default_epsilon`.
    kernel : {'rbf', 'poly', 'linear', 'precomputed'}
        Kernel (``'precomputed'``: ``X`` is the PSD kernel of the training rows).
    gamma : float or None
        RBF/poly width (``None``: the reciprocal mean squared distance).
    degree : int
        Degree of the polynomial kernel.
    coef0 : float
        Constant of the polynomial kernel.
    ridge : float
        Added to the kernel's diagonal, relative to its mean diagonal (K must be invertible).
    fit_intercept : bool
        Free intercept (degenerate without ``intercept_ridge``, see above) or centred kernel.
    intercept_ridge : float
        ``mu`` of ``A + mu I`` with ``fit_intercept=True``; bounds ``sum gamma_u <= mu (n+1)``.
    slack : {'hinge', 'squared'}
        Slack penalty: hinge (the box of eq. 3.11 as written) or squared (the thesis's primal;
        exact routes only).
    solver : {'auto', 'scs', 'clarabel', 'lowrank', 'nystroem', 'spectral'}
        See above (``'auto'``: ``'lowrank'`` unless the variant needs the exact route,
        ``'spectral'`` for a non-linear kernel with more than two classes and more than
        300 rows, ``'nystroem'`` for an RBF / poly kernel on more than 20,000 rows).
    max_exact : int
        Largest n for the exact routes.
    rounding : {'balanced', 'sign', 'prior', 'eigenvector'}
        Labels of the unlabeled rows: ``sign(w_i)`` (eq. 3.7's reading); ``'balanced'``
        (default): ``sign(w_i - t)`` with the smallest threshold ``t``
        (:func:`balanced_threshold`, ``threshold_``) at which the labels keep the balance
        constraint of eq. 3.5 -- the sign rounding itself whenever it does, so it differs
        only where the sign rounding would leave too many rows in one class (a learned
        threshold in place of the missing bias); ``decision_function`` subtracts the same
        ``t``; or the sign of the leading eigenvector of ``W`` aligned with the labeled
        rows.  Default chosen by measurement (low-rank route, defaults otherwise): on
        sklearn digits 3 vs 8 (3 draws of 10 labels), SSL-book Digit1 and g241c (10
        labels) and WebKB Course (600 rows, 20 labels, 3 draws) it equals the sign rounding
        on every fit (92.5-95.1 %, 73.6 / 82.6 %, 49.9 %, 77.4-85.3 %), while a
        widest-gap or lowest-density threshold inside the balance interval lost up to 10
        points (Digit1) and the exact labeled-prior count up to 7 (Course); where the
        signs put every unlabeled row in one class (small ``C``, issue 26's text task) it
        restores the balance instead.  ``'prior'``: the same rule with the tolerance
        :func:`prior_standard_error` of the labeled balance instead of ``epsilon_``, which
        admits almost any split on imbalanced data (``epsilon_`` = 0.7-0.9 on WebKB Course,
        22 % positive, 50 labels): a bias ``-t`` learned under eq. 3.5's balance on the
        labels, for use with ``offset='none'`` (the thesis's model).  Measured before the
        Table 3.2 re-run on 4 development draws (seeds 100-103, not the table's) at ``C``
        = 100 / 1: Course-l 92.8 / 89.7 % against 78.1 / 75.0 % (sign, offset 'none') and
        88.8 / 84.6 % (offset 'prior'); Breast 91.7 / 92.4 % against 94.2 / 95.4 % (sign,
        offset 'none'), where 20 labels estimate the balance coarsely
        (``benchmarks/results/ctsvm_bias_dev.md``).  It is only as good as the labeled
        balance: on Table 3.2's own draws (protocol v5,
        ``benchmarks/results/ctsvm_bias_diagnose.md``) the 9 Course draws whose labels are
        30-40 % positive (truth 20-22 %) transduce 36-48 % positives and score 71-84 %,
        where the best threshold of the same scores gives 92-100 %; the Course-m/-l draws
        with 15-22 % labeled positives score 90.3-94.3 %.  Hence not the default.
    out_of_sample : {'expansion', 'svm'}
        Rule of ``decision_function`` (see above).
    rank : int
        Initial rank of the low-rank route (the optima measured had rank 3-7; starting at
        8 avoids the rank escapes, each of which costs an augmented Lagrangian round).
    max_rank : int or None
        Largest rank after rank escapes.  None: the Barvinok-Pataki bound
        ``r (r + 1) / 2 <= n + 1``, at which a factor can always reach the optimum (g241c's
        optimum has rank 23), for a kernel; 20, doubled up to that bound whenever the
        solver stalls at it with a violated LMI, for linear features (sparse text).
    tol : float or 'auto'
        Solver tolerance.  ``'auto'``: 1e-5, and 1e-3 on the spectral route (whose
        truncation to rank ``n_components`` already moves the optimum by more).
    max_iter : int
        Iteration limit of the exact solver; augmented Lagrangian rounds of the low-rank route.
    offset : {'none', 'prior'} or float
        Fixed offset ``b0`` of the predictions ``z + b0`` (no intercept only): ``'none'`` is
        the thesis's model; ``'prior'`` (default) takes the labeled class balance
        ``mean(y_l)`` (0 for balanced labels).  The
        centred kernel forces ``sum z = 0``, which pulls the unlabeled rows towards a balanced
        split; the offset moves that centre to the labeled prior (for imbalanced data).  The
        constraints stay convex: ``y_i (w_i + b0) >= 1``, ``W_ii + 2 b0 w_i + b0^2 >= 1``.
    refine : {'none', 'tsvm'}
        ``'none'`` (default): the rounded labels.  ``'tsvm'``: refine them by the
        multi-switch TSVM (:func:`semisup.solvers.s3vm.transductive_svm`, ``labels_u0``)
        started from them, on the relaxation's own features (the rows of the Cholesky
        factor of the centred kernel, or ``X`` for the linear kernel) with an intercept and
        the TSVM's default weights ``lam = 1e-3``, ``lam_u = 1``.  ``lam_u`` is not
        annealed: annealing from a small ``lam_u`` lets the supervised fit overwrite the
        start.  Switching keeps the rounded labels' number of positives.  Changes
        ``transduction_`` (and the ``'svm'`` out-of-sample rule, refitted on it);
        ``relaxed_scores_`` stay the relaxation's.
    n_components : int or 'auto'
        Landmarks of ``solver='nystroem'`` (at most ``n``; with ``n`` it solves the kernel
        route's problem exactly), eigenvectors of ``solver='spectral'``.  ``'auto'``: 1,000
        landmarks, 300 eigenvectors.
    random_state : int, RandomState or None
        Initial point of the low-rank route; landmarks of the Nystroem route; folds of
        ``fallback="cv"``.
    fallback : {"cv", "none"}, default="cv"
        ``"cv"``: the guard of :mod:`semisup.safety` -- 3-fold labeled-only
        cross-validation (held-out labeled rows hidden among the unlabeled ones) against
        the supervised counterpart (scikit-learn's ``SVC()``); the semi-supervised fit is
        kept only when it wins the guard's margin test, otherwise the estimator is
        that counterpart fitted on the labeled rows (``fallback_ is True``).  The folds'
        fits on the low-rank route stop at ``tol = 1e-2`` (``GUARD_TOL``; their
        rounded labels matched ``tol = 1e-5``'s on 99.6-100 % of the rows at 2.4-4.6x less
        CPU), so the guard costs about two fits.  ``"none"``: the method as published.
        More than two classes: the guard judges the one-vs-rest fit as a whole (its binary
        estimators are fitted as published).  Measured on the SSL-book sets (8 sets x
        10 / 100 labels; ``benchmarks/results/defaults_fallback_kernel.md``): cells within 1
        point of ``SVC()`` 13 -> 15 of 16 on official split 2 and 12 -> 15 on split 1 (the
        benchmark's), median CPU per fit 3.5 -> 11.5 s (split 1); it also discards real
        gains (coil2, 100 labels, split 2: +12.4 points -> 0).  With the margin test: 16 of
        16 on split 1 (``defaults_fallback_margin.md``).

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
        Class labels (more than two: one-vs-rest, ``estimators_`` holds one binary
        estimator per class and the other attributes are theirs).
    transduction_ : ndarray of shape (n_samples,)
        Labels of the training rows (given or transduced).
    relaxed_scores_ : ndarray of shape (n_samples,)
        ``w`` of eq. 3.6 (first ``n`` entries) on the training rows.
    W_diag_ : ndarray of shape (n_samples,)
        Diagonal of the relaxation's ``W``.
    intercept_ : float
        ``lambda`` (0 without intercept).
    offset_ : float
        The fixed offset ``b0`` (included in ``relaxed_scores_`` and the decision function).
    threshold_ : float
        Threshold ``t`` of the rounding (``rounding='balanced'``; 0 otherwise), subtracted
        by the ``'expansion'`` decision function.
    objective_ : float
        Optimum of the relaxation.
    dual_objective_ : float
        Dual value (low-rank route; equal to ``objective_`` on the exact routes).
    gamma_dual_ : ndarray of shape (n_samples,)
        Multipliers ``gamma`` of eq. 3.11.
    lmi_min_eig_ : float
        Smallest eigenvalue of the (congruent) dual slack; ``>= -tol`` certifies the LMI.
    epsilon_ : float
        Balance tolerance used.
    solver_ : str
        Route used.
    fit_time_ : float
        Seconds in the solver.
    n_iter_ : int
        Outer rounds of the low-rank route, conic solver iterations of the exact routes
        (``-1`` when the solver does not say), or SMO iterations for a fully labeled ``y``.
    fit_results_ : dict
        Solver details (status, iterations, rank, history); with ``refine='tsvm'`` also
        ``'refine'``: the TSVM objective at the rounded labels and after switching, the
        number of switches and of changed labels.
    n_train_ : int
        Number of training rows.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_moons
    >>> from semisup import ConvexTSVM
    >>> X, y_true = make_moons(100, noise=0.05, random_state=0)
    >>> y = np.full(100, -1)
    >>> y[[0, 1, 2, 3]] = y_true[[0, 1, 2, 3]]
    >>> # fallback="none": the relaxation as published (with two labels per class the
    >>> # default guard's folds hold one labeled row per class and cannot vouch for it)
    >>> clf = ConvexTSVM(gamma=10.0, fallback="none").fit(X, y)
    >>> float(np.mean(clf.transduction_ == y_true))
    1.0
    """

    def __init__(self, C_l: float = 1.0, C_u: float | None = None, epsilon="auto",
                 kernel: str = "rbf", gamma: float | None = None, degree: int = 3,
                 coef0: float = 1.0, ridge: float = 1e-2, fit_intercept: bool = False,
                 intercept_ridge: float = 1e-2, slack: str = "hinge", solver: str = "auto",
                 max_exact: int = 300, rounding: str = "balanced",
                 out_of_sample: str = "expansion",
                 rank: int = 8, max_rank: int | None = None, tol="auto",
                 max_iter: int = 100_000, offset="prior", refine: str = "none",
                 n_components="auto", random_state=0, fallback: str = "cv"):
        self.C_l = C_l
        self.C_u = C_u
        self.epsilon = epsilon
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.ridge = ridge
        self.fit_intercept = fit_intercept
        self.intercept_ridge = intercept_ridge
        self.slack = slack
        self.solver = solver
        self.max_exact = max_exact
        self.rounding = rounding
        self.out_of_sample = out_of_sample
        self.rank = rank
        self.max_rank = max_rank
        self.tol = tol
        self.max_iter = max_iter
        self.offset = offset
        self.refine = refine
        self.n_components = n_components
        self.random_state = random_state
        self.fallback = fallback

    # ------------------------------------------------------------------ parameters
    def _check_params(self, n, n_classes: int = 2):
        C_l = self._check_C(self.C_l, "C_l")
        C_u = C_l if self.C_u is None else self._check_C(self.C_u, "C_u")
        if self.solver not in SOLVERS:
            raise ValueError(f"solver must be one of {SOLVERS}, got {self.solver!r}")
        if self.slack not in ("hinge", "squared"):
            raise ValueError(f"slack must be 'hinge' or 'squared', got {self.slack!r}")
        if self.rounding not in ("sign", "balanced", "prior", "eigenvector"):
            raise ValueError("rounding must be 'sign', 'balanced', 'prior' or 'eigenvector', "
                             f"got {self.rounding!r}")
        if self.refine not in ("none", "tsvm"):
            raise ValueError(f"refine must be 'none' or 'tsvm', got {self.refine!r}")
        if self.out_of_sample not in ("expansion", "svm"):
            raise ValueError("out_of_sample must be 'expansion' or 'svm', got "
                             f"{self.out_of_sample!r}")
        check_positive(self.ridge, "ridge", allow_zero=True)
        if not (isinstance(self.tol, str) and self.tol == "auto"):
            check_positive(self.tol, "tol")
        max_exact = check_int(self.max_exact, "max_exact")
        check_int(self.rank, "rank")
        if self.max_rank is not None:
            check_int(self.max_rank, "max_rank")
        check_int(self.max_iter, "max_iter")
        solver = self.solver
        if solver == "auto":
            # the low-rank route is the fast one at every n measured (class docstring)
            exact_only = self.fit_intercept is True or self.slack == "squared"
            solver = "scs" if exact_only and n <= max_exact else "lowrank"
            if (solver == "lowrank" and self.kernel in ("rbf", "poly")
                    and n > DENSE_KERNEL_MAX):
                solver = "nystroem"
            elif (solver == "lowrank" and self.kernel != "linear" and n_classes > 2
                  and n > SPECTRAL_RANK):
                # one n x n problem per class is what the kernel route cannot afford
                solver = "spectral"
        if not (isinstance(self.n_components, str) and self.n_components == "auto"):
            check_int(self.n_components, "n_components")
        if solver == "spectral" and (self.fit_intercept or self.slack == "squared"):
            raise ValueError("solver='spectral' supports fit_intercept=False and "
                             "slack='hinge' only")
        if solver == "nystroem":
            if self.kernel not in ("rbf", "poly"):
                raise ValueError(f"solver='nystroem' needs kernel='rbf' or 'poly', got "
                                 f"{self.kernel!r}; the linear kernel's low-rank route "
                                 "already works on the features")
            if self.fit_intercept or self.slack == "squared":
                raise ValueError("solver='nystroem' supports fit_intercept=False and "
                                 "slack='hinge' only")
            if self.out_of_sample == "svm":
                raise ValueError("out_of_sample='svm' needs the n x n kernel; use "
                                 "out_of_sample='expansion' with solver='nystroem'")
        if solver in ("scs", "clarabel") and n > max_exact:
            raise ValueError(f"n = {n} rows is too large for the exact SDP route "
                             f"(solver={solver!r}, max_exact={max_exact}); use "
                             "solver='lowrank' (the scalable Burer-Monteiro route) or 'auto'")
        if solver == "lowrank" and (self.fit_intercept or self.slack == "squared"):
            raise ValueError("solver='lowrank' supports fit_intercept=False and slack='hinge' "
                             "only; use solver='scs' for the other variants")
        check_bool(self.fit_intercept, "fit_intercept")
        check_positive(self.intercept_ridge, "intercept_ridge")
        if self.slack == "squared" and not (np.isfinite(C_l) and np.isfinite(C_u)):
            raise ValueError("slack='squared' needs finite C_l and C_u")
        return C_l, C_u, solver

    def _guard_fold_params(self, X) -> dict:
        # the low-rank route's rounded labels at tol = 1e-2 agreed with tol = 1e-5 on
        # 99.6-100 % of the unlabeled rows of coil, coil2, g241c and digit1 (100 labels,
        # split 1) at 2.4-4.6x less CPU: coil's six one-vs-rest problems then fit the guard
        # in the 60 s of issue 26 (benchmarks/results/defaults_fallback_logistic.md)
        if self._check_params(X.shape[0])[2] in ("lowrank", "nystroem", "spectral"):
            return {"tol": max(self._tol("lowrank"), GUARD_TOL)}
        return {}

    def _tol(self, solver: str) -> float:
        """The solver tolerance of ``solver`` (``tol='auto'`` resolved)."""
        if isinstance(self.tol, str):
            return SPECTRAL_TOL if solver == "spectral" else DEFAULT_TOL
        return float(self.tol)

    @staticmethod
    def _check_C(value, name):
        if not isinstance(value, numbers.Real) or not value > 0:
            raise ValueError(f"{name} must be a number > 0 (np.inf for a hard margin), got "
                             f"{value!r}")
        return float(value)

    # ------------------------------------------------------------------ fit
    def fit(self, X, y):
        """Solve the relaxation on all rows of ``X``; ``y == -1`` marks the unlabeled ones.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Or the training kernel with ``kernel='precomputed'``.
        y : array-like of shape (n_samples,)
            Labels, ``-1`` for unlabeled rows.

        Returns
        -------
        self : object
            The fitted estimator.

        Warns
        -----
        UserWarning
            When ``y`` has no unlabeled rows: there is nothing to transduce (the balance
            constraint of eq. 3.5 is undefined), and an SVM on the labeled rows' kernel
            (the supervised limit, as ``out_of_sample='svm'``; no offset) is fitted instead.
        """
        return self._fit_guarded(X, y)

    def _fit_plain(self, X, y):
        """The relaxation as published (``fallback="none"``); see :meth:`fit`."""
        data = self._check_common(X, y)
        for name in ("_supervised", "_linear_w", "_svm", "_nystroem"):
            self.__dict__.pop(name, None)    # left by an earlier fit
        spectral = self.__dict__.pop("_spectral", None)   # set by a multi-class parent
        if data.classes.size > 2:
            shared = None
            if self._check_params(data.X.shape[0], data.classes.size)[2] == "spectral":
                # one eigendecomposition for every one-vs-rest problem
                shared = {"_spectral": self._spectral_factor(data.X)}
            if self._fit_one_vs_rest(data, shared=shared):
                return self
        X = data.X
        n = X.shape[0]
        C_l, C_u, solver = self._check_params(n)
        if spectral is not None:
            solver = "spectral"
        self.classes_ = data.classes
        self.n_train_ = n
        labeled, unl = data.labeled, data.unlabeled
        y_l = data.binary_targets()
        if self.epsilon == "auto":
            eps = default_epsilon(y_l, n) if data.unlabeled.size else np.inf
        else:
            eps = check_positive(self.epsilon, "epsilon", allow_zero=True)
        self.epsilon_ = eps
        if isinstance(self.offset, str):
            if self.offset not in ("none", "prior"):
                raise ValueError(f"offset must be 'none', 'prior' or a number, got "
                                 f"{self.offset!r}")
            b0 = 0.0 if self.offset == "none" else float(np.mean(y_l))
        else:
            b0 = float(self.offset)
            if not np.isfinite(b0):
                raise ValueError(f"offset must be finite, got {self.offset!r}")
        if self.fit_intercept:
            if not isinstance(self.offset, str) or self.offset == "none":
                if b0 != 0.0:
                    raise ValueError("offset needs fit_intercept=False (the intercept is "
                                     "then free)")
            b0 = 0.0                 # 'prior' is ignored with a free intercept
        self.offset_ = b0
        if unl.size == 0:
            return self._fit_supervised(X, y_l, C_l, eps, solver)
        C = np.empty(n)
        C[labeled] = C_l
        C[unl] = C_u
        self.gamma_ = self._kernel_params(X)
        self.X_fit_ = X if self.kernel != "precomputed" else None
        self.solver_ = solver
        linear_features = solver == "lowrank" and self.kernel == "linear"
        start = time.perf_counter()
        if solver == "nystroem":
            Phi = self._nystroem_features(X)
            if self.refine == "tsvm":
                self._refine_features = Phi
            self._fit_lowrank_linear(Phi, y_l, labeled, C, eps)
        elif solver == "spectral":
            self._fit_spectral(spectral or self._spectral_factor(X), y_l, labeled, C, eps)
        elif linear_features:
            self._fit_lowrank_linear(X, y_l, labeled, C, eps)
        else:
            K = self._train_kernel(X)
            self._fit_kernel(K, y_l, labeled, C, eps, solver)
        self.fit_time_ = time.perf_counter() - start
        self.relaxed_scores_ = self.relaxed_scores_ + b0
        # rounding
        z = self.relaxed_scores_
        self.threshold_ = 0.0
        if self.rounding == "eigenvector":
            score_u = self._leading_vector(labeled, y_l)[unl]
        else:
            score_u = z[unl]
            if self.rounding in ("balanced", "prior"):
                # 'prior': the learned bias -t keeps the labels within one standard error
                # of the labeled balance (the centred kernel's sum z = 0 otherwise pulls
                # the split towards 50/50; Course, 22 % positive: 77-80 % -> 92-96 %)
                tol_b = eps if self.rounding == "balanced" else prior_standard_error(y_l)
                self.threshold_ = balanced_threshold(score_u, float(np.mean(y_l)), tol_b)
        lab_pm = np.empty(n)
        lab_pm[labeled] = y_l
        if self.threshold_ == 0.0:
            lab_pm[unl] = np.where(score_u >= 0, 1.0, -1.0)
        else:
            lab_pm[unl] = np.where(score_u > self.threshold_, 1.0, -1.0)
        features = self.__dict__.pop("_refine_features", None)
        if self.refine == "tsvm":
            lab_pm[unl] = self._refine_tsvm(X if features is None else features, labeled,
                                            unl, y_l, lab_pm[unl])
        self.transduction_ = self.classes_[(lab_pm > 0).astype(int)]
        warn_if_collapsed(self, self.transduction_[unl], 2, hint=(
            "The relaxed scores shrank towards the offset (C_l / C_u small for the kernel's "
            "scale); raise them, or use rounding='balanced', which keeps the balance "
            "constraint of eq. 3.5 on the labels"))
        self._labels_pm = lab_pm
        if self.out_of_sample == "svm":
            K = self._K_uncentred if hasattr(self, "_K_uncentred") else self._train_kernel(X)
            self._svm = fit_precomputed_svm(K, lab_pm, C_l if np.isfinite(C_l) else 1e6)
        self.__dict__.pop("_K_uncentred", None)
        return self

    def _fit_supervised(self, X, y_l, C_l, eps, solver):
        """Fully labeled ``y``: the SVM of eqs. 2.3-2.5 on the training kernel."""
        self.gamma_ = self._kernel_params(X)
        self.X_fit_ = X if self.kernel != "precomputed" else None
        self.solver_ = solver
        self.epsilon_ = eps
        K = self._train_kernel(X)
        start = time.perf_counter()
        self._svm = fit_precomputed_svm(K, y_l, C_l if np.isfinite(C_l) else 1e6)
        self.fit_time_ = time.perf_counter() - start
        self._centre = None
        self._supervised = True
        self.intercept_ = 0.0
        self.threshold_ = 0.0
        self.relaxed_scores_ = self._svm.decision_function(K)
        self.fit_results_ = dict(status="supervised", n_iter=self._svm.n_iter)
        self.n_iter_ = self._svm.n_iter
        self._labels_pm = y_l.astype(np.float64)
        self.transduction_ = self.classes_[(y_l > 0).astype(int)]
        return self

    def _refine_tsvm(self, F, labeled, unl, y_l, labels_u):
        """Multi-switch TSVM started from the rounded labels (see ``refine``)."""
        from semisup.solvers.design import Design
        from semisup.solvers.s3vm import transductive_svm

        A = Design(F, True, 1.0).restrict(np.concatenate([labeled, unl]))
        res = transductive_svm(A, labeled.size, y_l, 1e-3, 1.0, float(np.mean(labels_u > 0)),
                               lam_u_init=1.0, labels_u0=labels_u)
        # history[0]: the TSVM objective with the rounded labels (lam_u' = lam_u from the start)
        self.fit_results_["refine"] = dict(objective=res.objective,
                                           start_objective=res.history[0]["objective"],
                                           n_switches=res.n_switches,
                                           changed=int(np.sum(res.labels_u != labels_u)))
        return res.labels_u

    def _leading_vector(self, labeled, y_l):
        Zf = np.column_stack([self.relaxed_scores_, self._Q])
        U, s, _ = np.linalg.svd(Zf, full_matrices=False)
        v = U[:, 0]
        if v[labeled] @ y_l < 0:
            v = -v
        return v

    def _fit_kernel(self, K, y_l, labeled, C, eps, solver):
        n = K.shape[0]
        if self.out_of_sample == "svm":
            self._K_uncentred = K
        if self.fit_intercept:
            Kr = K.copy()
            self._centre = None
        else:
            Kr, row_mean, grand = centre_kernel(K)
            self._centre = (row_mean, grand)
        ridge = self.ridge * max(float(np.mean(np.diag(Kr))), 1e-12)
        Kr[np.diag_indices_from(Kr)] += ridge
        try:
            # Kr.T is Kr (symmetric) in Fortran order, so LAPACK factors it in place
            chol = sla.cho_factor(Kr.T, lower=True, overwrite_a=solver == "lowrank")
        except np.linalg.LinAlgError as exc:
            raise ValueError("the kernel plus ridge is not positive definite; raise ridge") \
                from exc
        if solver == "lowrank":
            Lc = chol[0]             # only its lower triangle is ever read (trmm, trsm)
            del Kr
            if self.refine == "tsvm":
                self._refine_features = np.tril(Lc)
            max_rank = pataki_rank(n + 1) if self.max_rank is None else self.max_rank
            res = ctsvm_lowrank(FeatureFactor(dense=Lc, lower=True), y_l, labeled, C, eps,
                                rank=self.rank, max_rank=max_rank, tol=self._tol(solver),
                                max_outer=min(self.max_iter, 200), offset=self.offset_,
                                random_state=self.random_state, **_LOWRANK_RULES,
                                **_KERNEL_ESCAPES)
            self._store_lowrank(res)
            # beta = (K + ridge I)^{-1} z = L^{-T} u
            self._beta = sla.solve_triangular(Lc, res.u, lower=True, trans="T")
            self.intercept_ = 0.0
            return
        if self.refine == "tsvm":
            self._refine_features = np.tril(chol[0])
        Kinv = sla.cho_solve(chol, np.eye(n))
        Kinv = 0.5 * (Kinv + Kinv.T)
        if self.fit_intercept:
            P = np.hstack([np.eye(n), np.ones((n, 1))])
            A = P.T @ Kinv @ P + self.intercept_ridge * np.eye(n + 1)
        else:
            A = Kinv
        a, b, c = ctsvm_vectors(n, labeled, y_l, self.fit_intercept)
        res = ctsvm_sdp(A, a, b, c, C, eps, slack=self.slack, solver=solver, tol=self._tol(solver),
                        max_iter=self.max_iter, offset=self.offset_)
        z = res.w[:n]
        lam = float(res.w[n]) if self.fit_intercept else 0.0
        self.relaxed_scores_ = z
        self.W_diag_ = np.diag(res.W)[:n].copy()
        # a factor of W - w w^T for the eigenvector rounding
        vals, vecs = np.linalg.eigh(res.W[:n, :n] - np.outer(z, z))
        keep = vals > 1e-8 * max(1.0, vals.max())
        self._Q = vecs[:, keep] * np.sqrt(vals[keep])
        self.intercept_ = lam
        self._beta = cho_solve_vec(chol, z + lam)
        self.objective_ = res.objective
        self.dual_objective_ = res.objective
        self.gamma_dual_ = res.gamma
        S = A - np.diag(np.r_[res.gamma, np.zeros(A.shape[0] - n)] * b)
        self.lmi_min_eig_ = float(np.linalg.eigvalsh(S)[0])
        if res.status != "optimal":
            warn_degenerate(self, f"the exact SDP route ({solver}) stopped {res.status!r}: "
                            "the relaxation's scores are inexact", "raise max_iter or tol, or "
                            "use solver='lowrank' (certified by its dual bound)")
        self.n_iter_ = res.n_iter
        self.fit_results_ = dict(status=res.status, solve_time=res.solve_time, alpha=res.alpha,
                                 beta=res.beta, t=res.t, w_37=res.w_37, W=res.W)

    def _solve_features(self, F: FeatureFactor, y_l, labeled, C, eps, solver: str):
        """The low-rank route on an explicit feature factor (linear, Nystroem and spectral
        features alike: the feature routes' rules, no kernel-route escapes); stores it."""
        res = ctsvm_lowrank(F, y_l, labeled, C, eps, rank=self.rank, max_rank=self.max_rank,
                            tol=self._tol(solver), max_outer=min(self.max_iter, 200),
                            offset=self.offset_, random_state=self.random_state,
                            **_LOWRANK_RULES)
        self._store_lowrank(res)
        return res

    def _fit_lowrank_linear(self, X, y_l, labeled, C, eps):
        mean = sparse_or_dense_mean(X)
        # ridge relative to the mean squared norm of the centred rows (the kernel's diagonal)
        if sp.issparse(X):
            sq = np.asarray(X.multiply(X).sum(axis=1)).ravel()
        else:
            sq = np.einsum("ij,ij->i", X, X)
        diag_mean = max(float(sq.mean() - mean @ mean), 1e-12)
        ridge = self.ridge * diag_mean
        res = self._solve_features(FeatureFactor(X=X, mean=mean, ridge=ridge), y_l, labeled,
                                   C, eps, "lowrank")
        self._linear_w = res.u[:X.shape[1]].copy()
        self._linear_mean = mean
        self.intercept_ = 0.0

    def _spectral_factor(self, X) -> dict:
        """Leading eigenpairs of the centred training kernel (``solver='spectral'``).

        ``Phi = U_m Lambda_m^{1/2}`` with ``Phi Phi^T`` the best rank-``m`` approximation of
        ``H K H``; eigenvalues below ``1e-10`` of the largest are dropped.  Independent of
        the labels, so a multi-class fit computes it once for all its binary problems.
        """
        self.gamma_ = self._kernel_params(X)
        K = self._train_kernel(X)
        Kc, row_mean, grand = centre_kernel(K)
        del K
        n = Kc.shape[0]
        m = SPECTRAL_RANK if self.n_components == "auto" else int(self.n_components)
        if m < 1:
            raise ValueError(f"n_components must be >= 1, got {self.n_components!r}")
        m = min(m, n)
        mean_diag = max(float(np.mean(np.diag(Kc))), 1e-12)
        vals, vecs = sla.eigh(Kc, subset_by_index=[n - m, n - 1], overwrite_a=True,
                              check_finite=False)
        keep = vals > 1e-10 * max(float(vals[-1]), 1e-300)
        vals, vecs = vals[keep][::-1], vecs[:, keep][:, ::-1]
        return dict(phi=np.ascontiguousarray(vecs * np.sqrt(vals)), vals=vals,
                    centre=(row_mean, grand), mean_diag=mean_diag)

    def _fit_spectral(self, factor: dict, y_l, labeled, C, eps):
        phi, vals = factor["phi"], factor["vals"]
        m = phi.shape[1]
        # the kernel route's ridge (relative to the centred kernel's mean diagonal)
        F = FeatureFactor(X=phi, mean=np.zeros(m), ridge=self.ridge * factor["mean_diag"])
        res = self._solve_features(F, y_l, labeled, C, eps, "spectral")
        # f(x) = k_c(x)^T beta reproduces Phi w on the training rows:
        # beta = U Lambda^{-1/2} w = Phi Lambda^{-1} w (the Nystroem extension on all rows)
        self._beta = phi @ (res.u[:m] / vals)
        self._centre = factor["centre"]
        self.intercept_ = 0.0
        if self.refine == "tsvm":
            self._refine_features = phi

    def _nystroem_features(self, X) -> np.ndarray:
        """Nystroem features ``Phi`` with ``Phi Phi^T ~ K`` (Williams & Seeger, 2001).

        ``Phi = K_nm K_mm^{-1/2}`` on ``n_components`` rows drawn at random
        (:class:`sklearn.kernel_approximation.Nystroem`, the same kernel and width as the
        exact routes).  The relaxation then runs on the centred features like the linear
        kernel's, in ``O(n m)`` memory instead of the ``n x n`` kernel and its Cholesky.
        """
        from sklearn.kernel_approximation import Nystroem

        m = min(NYSTROEM_COMPONENTS if self.n_components == "auto" else int(self.n_components),
                X.shape[0])
        if m < 1:
            raise ValueError(f"n_components must be >= 1, got {self.n_components!r}")
        self._nystroem = Nystroem(kernel=self.kernel, gamma=self.gamma_, degree=self.degree,
                                  coef0=self.coef0, n_components=m,
                                  random_state=self.random_state).fit(X)
        return np.ascontiguousarray(self._nystroem.transform(X), dtype=np.float64)

    def _store_lowrank(self, res):
        self.relaxed_scores_ = res.z
        self._Q = res.Q
        self.W_diag_ = res.z ** 2 + np.einsum("ij,ij->i", res.Q, res.Q)
        self.objective_ = res.objective
        self.dual_objective_ = res.dual_objective
        self.gamma_dual_ = res.gamma
        self.lmi_min_eig_ = res.min_eig
        self.n_iter_ = res.n_outer
        self.fit_results_ = dict(status="converged" if res.converged else "max_iter",
                                 n_outer=res.n_outer, n_evals=res.n_evals, rank=res.rank,
                                 gap=res.gap, balance=res.balance, history=res.history)
        if not res.converged:
            warn_at_caller(f"ConvexTSVM low-rank route stopped after {res.n_outer} rounds "
                           f"(relative gap {res.gap:.2e}, LMI eigenvalue {res.min_eig:.2e}); "
                           "raise max_iter or tol", ConvergenceWarning)

    # ------------------------------------------------------------------ predict
    @staticmethod
    def _binary_training_scores(estimator, X) -> np.ndarray:
        """The transduced scores of the training rows (what ``transduction_`` rounds)."""
        return estimator.relaxed_scores_ - estimator.threshold_

    def decision_function(self, X) -> np.ndarray:
        """Out-of-sample scores by the rule ``out_of_sample`` (positive: ``classes_[1]``).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Or, with ``kernel='precomputed'``, the kernel against the training rows.

        Returns
        -------
        ndarray of shape (n_samples,), or (n_samples, n_classes) beyond two classes
            Decision values: the score of ``classes_[1]``, or one column per class.
        """
        out = self._fallback_answer(X, "decision_function")
        if out is not None:
            return out
        if self._is_one_vs_rest():
            return self._one_vs_rest_decision(X)
        if self.__dict__.get("_supervised"):
            return self._svm.decision_function(self._test_kernel(X))
        if hasattr(self, "_linear_w") and self.out_of_sample == "expansion":
            Xt = check_X(X, estimator=self, reset=False)
            if "_nystroem" in self.__dict__:
                Xt = self._nystroem.transform(Xt)
            return (np.asarray(Xt @ self._linear_w).ravel() - self._linear_mean @ self._linear_w
                    + self.offset_ - self.threshold_)
        Kt = self._test_kernel(X)
        if self.out_of_sample == "svm":
            return self._svm.decision_function(Kt)
        if self._centre is not None:
            row_mean, grand = self._centre
            Kt = Kt - Kt.mean(axis=1, keepdims=True) - row_mean[None, :] + grand
        return Kt @ self._beta - self.intercept_ + self.offset_ - self.threshold_


def cho_solve_vec(chol, v):
    """``(L L^T)^{-1} v`` from a :func:`scipy.linalg.cho_factor` result."""
    return sla.cho_solve(chol, v)
