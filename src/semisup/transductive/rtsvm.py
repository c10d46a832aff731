"""SDP-relaxed transductive SVM (RTSVM, eq. 3.2; De Bie & Cristianini, Xu & Schuurmans)."""

from __future__ import annotations

import time

import numpy as np
import scipy.linalg as sla
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted

from semisup._logging import warn_at_caller
from semisup._validation import (
    check_choice,
    check_int,
    check_positive,
    warn_degenerate,
    warn_if_collapsed,
)
from semisup.base import SupervisedFallbackMixin
from semisup.linear.s4vm import claimed_scores
from semisup.solvers.lowrank_rtsvm import rtsvm_lowrank
from semisup.solvers.lowrank_sdp import FeatureFactor
from semisup.solvers.svm import fit_precomputed_svm
from semisup.transductive._base import SPECTRAL_RANK, KernelTransductiveBase
from semisup.transductive._sdp import rtsvm_sdp

#: Eigenvalues of the kernel below this fraction of the largest are dropped from its factor.
#: The kernel moves by at most that much in spectral norm, so ``t`` moves by at most
#: ``n C^2`` times it (``|a^T (M o E) a| <= ||a||^2 ||E||`` for ``M`` of unit diagonal):
#: ``4e-4`` at 2,000 rows, ``C = 1`` and a kernel bounded by 1, far below the tolerance.
EIGEN_FLOOR = 1e-10
#: ``stop='labels'``: rounds over which the transduction must stay the same.  Measured with
#: ``benchmarks/rtsvm_settle.py`` (``results/rtsvm_settle.md``).
SETTLE_ROUNDS = 5
#: ``fallback="cv"``: unlabeled rows in each fold fit of the guard (all labeled rows are
#: kept).  The relaxation costs 10-30 s at 1,500 rows, so three full-size folds put the
#: guard past a minute; on 21 development cells (8 UCI / IDA and 5 SSL-book sets, split or
#: seed 3) the guard decided the same at 250 rows as with every row, the whole fit taking
#: a median 9.7x less CPU (``benchmarks/results/rtsvm_guard.md``).
GUARD_MAX_UNLABELED = 250


def kernel_factor(K: np.ndarray, rank: int | None = None) -> FeatureFactor:
    """A factor ``F`` with ``F F^T = K`` (to :data:`EIGEN_FLOOR`) for the low-rank route.

    The eigenvectors scaled by the roots of the eigenvalues kept when fewer than half of them
    remain (smooth kernels on few features: 79 of 2,000 on IDA banana, 471 of 768 on pima,
    each product then costs ``n p`` instead of ``n^2``); otherwise the Cholesky factor
    (products through BLAS ``trmm``, half the work of a dense square factor), of ``K`` plus a
    jitter of ``1e-10`` times its mean diagonal for duplicate rows.  With ``rank``: the
    ``rank`` leading eigenpairs only, ``F F^T`` the best rank-``rank`` approximation of ``K``
    (the factor of more than two classes, see :class:`SDPRelaxedTSVM`).
    """
    n = K.shape[0]
    truncated = rank is not None and rank < n
    w, U = sla.eigh(K, subset_by_index=[n - rank, n - 1] if truncated else None,
                    check_finite=False)
    keep = w > EIGEN_FLOOR * max(float(w[-1]), 1e-300)
    if truncated or np.count_nonzero(keep) < n // 2:
        return FeatureFactor(dense=np.ascontiguousarray(U[:, keep] * np.sqrt(w[keep])))
    del U
    Kj = K.copy()
    Kj[np.diag_indices_from(Kj)] += 1e-10 * max(float(np.mean(np.diag(K))), 1e-300)
    try:
        L = sla.cholesky(Kj, lower=True, overwrite_a=True, check_finite=False)
    except np.linalg.LinAlgError as exc:
        raise ValueError("the kernel is not positive semi-definite enough to factor; use a "
                         "valid kernel or add a multiple of the identity") from exc
    return FeatureFactor(dense=L, lower=True)


class SDPRelaxedTSVM(SupervisedFallbackMixin, KernelTransductiveBase):
    """The SDP relaxation of the TSVM (RTSVM), eq. 3.2: the CTSVM baseline.

    ``y y^T`` is relaxed to a PSD matrix ``M`` with unit diagonal and the labeled block
    fixed; the bias is dropped (``lambda = 0``).  As a conic program the cone holds
    ``O(n^2)`` variables and costs grow as ``O(n^6.5)`` (24 s at ``n = 50``); the default
    route solves the same problem in factored form, ``M = R R^T`` with a few columns
    (:func:`semisup.solvers.lowrank_rtsvm.rtsvm_lowrank`: ``t`` is then twice a bias-free
    SVM on the features ``f_i (x) r_i``), certified by a dual bound, with no ``n x n`` cone.
    Labels are read off ``M`` by each row's agreement with the labeled ones (the anchor
    rounding of the thesis digest, section 6.4): ``y_hat_j = sign(sum_{i in L} y_i M_ij)``.
    The labeled block of ``M`` is fixed, so every labeled row of ``R`` is ``y_i r_0`` and the
    score is the cosine ``r_j . r_0``.  It equals the leading eigenvector's signs when the
    relaxation is tight (``M = v v^T``); when it is not, the leading eigenvector can follow
    another direction of ``M`` than the labels: on the SSL book's g241d at 100 labels (split
    1, eigen ratio 0.70) it labeled 50.6 % of the unlabeled rows right, this rounding 77.6 %
    (``SVC()`` 75.6 %).  Out of sample, a bias-free SVM on all training rows with their transduced
    labels gives the decision function.  More than two classes: one-vs-rest
    (:class:`semisup.transductive._base.OneVsRestMixin`), one relaxation per class on one
    kernel and factor -- above ``SPECTRAL_RANK`` = 300 rows the factor of the kernel's 300
    leading eigenpairs, its best rank-300 approximation: on coil, dna, satimage and segment
    (10 labels) and coil (100) it labeled 96.2-100 % of the unlabeled rows as the full
    factor, within a point of its accuracy, at 2.3-5.9x less CPU (coil at 10 labels: 18
    against 108 CPU-s; ``benchmarks/results/rtsvm_multiclass.md``) --, combined by the
    claims rule (:meth:`_combine_one_vs_rest`): a row
    goes to the class whose relaxation alone claims it, else to the supervised SVMs' choice
    among the claiming classes (all when none does); new rows the same way, with the final
    SVMs' signs as the claims.

    Parameters
    ----------
    C : float
        Slack weight.
    balance : float, 'auto' or None
        Adds ``e^T M e <= (balance n)^2`` (the relaxed class balance ``|sum y| <= balance n``);
        ``'auto'``: the labeled balance ``|mean(y_l)|`` plus ``1 / sqrt(l)``; ``None``: eq. 3.2
        as printed (no balance; it then admits one-class labelings).
    kernel : {'rbf', 'poly', 'linear', 'precomputed'}
        Kernel.
    gamma : float or None
        RBF/poly width (``None``: reciprocal mean squared distance).
    degree : int
        Polynomial degree.
    coef0 : float
        Polynomial constant.
    solver : {'auto', 'lowrank', 'scs', 'clarabel'}
        ``'lowrank'`` (``'auto'``, the default): the factored problem by augmented
        Lagrangian and L-BFGS, stopped when its objective is within ``tol`` (relative) of its
        certified dual bound; it reaches the conic solvers' optimum (within ``1e-4``
        relative of Clarabel on six problems of 24 rows, RBF and linear kernels, with and
        without the balance: ``tests/test_transductive.py``); times against the conic
        program in ``benchmarks/results/bench_rtsvm_routes.md``.  ``'clarabel'`` /
        ``'scs'``: the conic program of eq. 3.2, on request (Clarabel measured 0.9 / 5.2 /
        23.9 s at n = 30 / 40 / 50 on sklearn digits 3 vs 8, 6 labels, 2 cores; SCS often
        stops at its iteration limit with a few digits only, reported as a
        :class:`~semisup._validation.DegenerateFitWarning`).
    max_n : int
        Largest number of rows the conic solvers accept (50 keeps a binary fit within 60 s
        on 2 cores; about 80 s at n = 60).  Not applied to the low-rank route nor to a
        fully labeled ``y`` (``M`` is then fixed: no SDP).
    tol : float
        The low-rank route's relative primal-dual gap and balance violation
        (``objective_`` is certified within ``tol`` of ``dual_objective_``); the conic
        solvers' own tolerance (pass ``1e-6`` or less with them for several digits).
    max_iter : int
        Conic solver iteration limit; the low-rank route makes at most ``min(max_iter,
        300)`` augmented Lagrangian rounds.
    stop : {'labels', 'gap'}
        When the low-rank route stops.  ``'gap'``: when its objective is certified within
        ``tol`` of its dual bound.  ``'labels'`` (default): also when the transduction (the
        anchor rounding of the current ``M``) has not changed over :data:`SETTLE_ROUNDS`
        rounds with the balance within ``tol``; ``status_`` is then ``'labels_settled'`` and
        ``objective_`` is not certified (``dual_objective_`` is the best bound found, maybe
        ``-inf``).  On 2,000 rows the certificate needs Lanczos runs that often do not
        converge, and the labels settle long before the gap closes: dna, 10 labels, one
        class against the rest, the same labels after 8 rounds (26 CPU-s) as after 40
        (129 CPU-s, gap still open); on the SSL book's binary sets at 10 labels 0.78-1.02x
        the time of ``'gap'``, at most 3 rows labeled otherwise
        (``benchmarks/results/rtsvm_settle.md``).
    rank : int
        Columns of ``R`` the low-rank route starts with (more are added while its
        certificate finds a descent direction and ``R`` has full column rank).
    random_state : int, RandomState or None
        Start of the low-rank route (``None``: a fixed seed), and the guard's folds and
        row sample.
    fallback : {"cv", "none"}, default="cv"
        ``"cv"``: the guard of :mod:`semisup.safety` -- 3-fold labeled-only
        cross-validation (held-out labeled rows hidden among the unlabeled ones) against
        the supervised counterpart (scikit-learn's ``SVC()``); the relaxation is kept only
        when it wins the guard's margin test, otherwise the estimator is that counterpart
        fitted on the labeled rows (``fallback_ is True``).  The fold fits use the labeled
        rows and :data:`GUARD_MAX_UNLABELED` unlabeled rows drawn once.  ``"none"``: the
        relaxation as published.  More than two classes: the guard judges the one-vs-rest
        fit as a whole.  The default since the benchmark of defaults: without it the
        relaxation was within a point of ``SVC()`` on 28 of 48 SSL-book, UCI and IDA cells
        (german, 100 labels: -6.8 points; ionosphere: -13.5;
        ``benchmarks/results/defaults_r3s15_pooled.md``), with it on 46 of 48, each fit
        within a minute (``defaults_r3s16_pooled.md``).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels (more than two: one-vs-rest, ``estimators_`` holds one binary
        estimator per class and the other attributes are theirs).
    transduction_ : ndarray of shape (n_samples,)
        Labels of the training rows.
    fallback_ : bool
        Whether the guard replaced the fit by its supervised counterpart
        (``supervised_estimator_``, which then answers ``predict`` and
        ``decision_function``; of the estimator's own fitted attributes only ``classes_``
        and ``transduction_`` are then set).
    cv_scores_ : dict or None
        The guard's cross-validation (:func:`semisup.safety.guard`); ``None`` without the
        guard or without a fold.
    status_ : str
        The conic solver's status (``'optimal'``, or ``'optimal_inaccurate'`` with a
        warning); the low-rank route's ``'optimal'`` (gap within ``tol``),
        ``'labels_settled'`` (``stop='labels'``: the transduction stayed the same over
        :data:`SETTLE_ROUNDS` rounds, the value not certified) or ``'max_iter'`` (with a
        :class:`~sklearn.exceptions.ConvergenceWarning`).
    label_matrix_ : ndarray of shape (n_samples, n_samples) or None
        The relaxed ``M`` (conic routes; ``None`` on the low-rank route, whose ``M`` is
        ``label_factor_ @ label_factor_.T``).
    label_factor_ : ndarray of shape (n_samples, rank) or None
        The low-rank route's unit-row factor ``R`` (``None`` on the conic routes).
    dual_objective_ : float
        The low-rank route's certified lower bound on eq. 3.2 (``objective_`` on the
        conic routes).
    relaxed_scores_ : ndarray of shape (n_samples,)
        The anchor scores ``M[:, L] y_L / l`` (in ``[-1, 1]``) that ``transduction_``
        rounds.
    objective_ : float
        Optimal ``t`` of eq. 3.2.
    eigen_ratio_ : float
        ``lambda_1 / trace(M)`` (1 when ``M`` has rank one).
    fit_time_ : float
        Seconds in the solver.
    solver_ : str
        Conic solver used.
    n_iter_ : int
        Conic solver iterations (``-1`` when the solver does not say), augmented Lagrangian
        rounds of the low-rank route, SMO iterations of the SVM for a fully labeled ``y``.
    n_train_ : int
        Number of training rows.
    supervised_dual_coef_ : ndarray of shape (n_classes, n_labeled)
        More than two classes: the supervised SVMs' expansion coefficients over
        ``supervised_rows_`` (the estimator's kernel, one SVM per class, with an intercept,
        on the labeled rows).
    supervised_intercept_ : ndarray of shape (n_classes,)
        Their intercepts.
    supervised_rows_ : ndarray of int
        The labeled training rows they expand over.

    Examples
    --------
    >>> import numpy as np
    >>> from semisup import SDPRelaxedTSVM
    >>> rng = np.random.default_rng(0)
    >>> X = np.r_[rng.normal(-2, 1, (10, 2)), rng.normal(2, 1, (10, 2))]
    >>> y = np.full(20, -1)
    >>> y[[0, 10]] = [0, 1]
    >>> clf = SDPRelaxedTSVM(kernel="linear").fit(X, y)
    >>> clf.transduction_.tolist() == [0] * 10 + [1] * 10
    True
    """

    _guard_max_unlabeled = GUARD_MAX_UNLABELED

    def __init__(self, C: float = 1.0, balance="auto", kernel: str = "rbf",
                 gamma: float | None = None, degree: int = 3, coef0: float = 1.0,
                 solver: str = "auto", max_n: int = 50, tol: float = 1e-3,
                 max_iter: int = 20_000, stop: str = "labels", rank: int = 4,
                 random_state=None, fallback: str = "cv"):
        self.C = C
        self.balance = balance
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.solver = solver
        self.max_n = max_n
        self.tol = tol
        self.max_iter = max_iter
        self.stop = stop
        self.rank = rank
        self.random_state = random_state
        self.fallback = fallback

    def fit(self, X, y):
        """Solve eq. 3.2 on all rows; ``y == -1`` marks the unlabeled ones.

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
            When ``y`` has no unlabeled rows: there is nothing to transduce, and the
            relaxation is solved over the labeled rows alone (its supervised limit).
        """
        return self._fit_guarded(X, y)

    def _fit_plain(self, X, y):
        """The relaxation as published (``fallback="none"``); see :meth:`fit`."""
        data = self._check_common(X, y)
        check_choice(self.stop, "stop", ("labels", "gap"))
        shared = self.__dict__.pop("_shared_kernel", None)    # set by a multi-class parent
        if data.classes.size > 2:
            self.gamma_ = self._kernel_params(data.X)
            K = self._train_kernel(data.X)
            # one kernel and one factor for every one-vs-rest problem, truncated to its
            # leading eigenpairs: k relaxations on the full factor timed out on coil
            F = (self._factor(data.X, K, rank=SPECTRAL_RANK)
                 if self.solver in ("auto", "lowrank") else None)
            self._claims_kernel = K                  # for _combine_one_vs_rest
            try:
                self._fit_one_vs_rest(data, shared={"_shared_kernel": (self.gamma_, K, F)})
            finally:
                self.__dict__.pop("_claims_kernel", None)
            self.n_train_ = data.X.shape[0]
            self.X_fit_ = data.X if self.kernel != "precomputed" else None
            return self
        X = data.X
        n = X.shape[0]
        C = check_positive(self.C, "C")
        max_n = check_int(self.max_n, "max_n")
        check_positive(self.tol, "tol")
        check_int(self.max_iter, "max_iter")
        check_int(self.rank, "rank", low=2)
        if self.solver not in ("auto", "lowrank", "scs", "clarabel"):
            raise ValueError("solver must be 'auto', 'lowrank', 'scs' or 'clarabel', got "
                             f"{self.solver!r}")
        solver = "lowrank" if self.solver == "auto" else self.solver
        if solver != "lowrank" and n > max_n and data.unlabeled.size:
            raise ValueError(f"n = {n} rows is too large for the conic solver {solver!r} of "
                             f"the RTSVM SDP (O(n^2) variables in the cone, max_n={max_n}: "
                             "about 24 s at n = 50 and 80 s at n = 60 on 2 cores); use "
                             "solver='lowrank' (the default), or raise max_n")
        y_l = data.binary_targets()
        self.solver_ = solver
        if self.balance == "auto":
            balance = abs(float(np.mean(y_l))) + 1.0 / np.sqrt(y_l.size)
        elif self.balance is None:
            balance = None
        else:
            balance = check_positive(self.balance, "balance")
        self.classes_ = data.classes
        self.n_train_ = n
        F = None
        if shared is not None:
            self.gamma_, K, F = shared
        else:
            self.gamma_ = self._kernel_params(X)
            K = self._train_kernel(X)
        self.X_fit_ = X if self.kernel != "precomputed" else None
        self.label_matrix_ = self.label_factor_ = None
        if data.unlabeled.size == 0:
            return self._fit_labeled(K, y_l, C)
        start = time.perf_counter()
        if solver == "lowrank":
            v = self._solve_lowrank(F if F is not None else self._factor(X, K), data.labeled,
                                    y_l, C, balance)
        else:
            v = self._solve_conic(K, data.labeled, y_l, C, balance, solver)
        self.fit_time_ = time.perf_counter() - start
        self.relaxed_scores_ = v
        pm = np.where(v >= 0, 1.0, -1.0)
        pm[data.labeled] = y_l
        self.transduction_ = self.classes_[(pm > 0).astype(int)]
        warn_if_collapsed(self, self.transduction_[data.unlabeled], 2, hint=(
            "Without a balance constraint the relaxation admits one-class labelings: keep "
            "balance='auto' or give a balance"))
        self._svm = fit_precomputed_svm(K, pm, C, fit_intercept=False)
        return self

    def _solve_conic(self, K, labeled, y_l, C, balance, solver) -> np.ndarray:
        """Eq. 3.2 as a conic program; returns the anchor scores ``M[:, L] y_L / l``."""
        res = rtsvm_sdp(K, labeled, y_l, C, balance, solver=solver, tol=self.tol,
                        max_iter=self.max_iter)
        self.status_ = res.status
        self.n_iter_ = res.n_iter
        if res.status != "optimal":
            warn_degenerate(self, f"the SDP solver ({solver}) stopped {res.status!r}: the label "
                            "matrix is inexact", "raise max_iter or tol, or use "
                            "solver='lowrank' (certified by its dual bound)")
        self.label_matrix_ = res.M
        self.objective_ = self.dual_objective_ = res.objective
        self.eigen_ratio_ = float(np.linalg.eigvalsh(res.M)[-1] / max(np.trace(res.M), 1e-12))
        return res.M[:, labeled] @ y_l / y_l.size

    def _factor(self, X, K, rank: int | None = None) -> FeatureFactor:
        """The low-rank route's factor of the kernel (``X`` itself for the linear one), of
        rank at most ``rank``."""
        if self.kernel == "linear":
            return FeatureFactor(X=X, mean=np.zeros(X.shape[1]))
        return kernel_factor(K, rank)

    def _solve_lowrank(self, F, labeled, y_l, C, balance) -> np.ndarray:
        """Eq. 3.2 in factored form (:func:`rtsvm_lowrank`); returns the anchor scores
        ``R R_L^T y_L / l``."""
        res = rtsvm_lowrank(F, labeled, y_l, C, balance, rank=self.rank,
                            tol=self.tol, max_outer=min(self.max_iter, 300),
                            settle_rounds=SETTLE_ROUNDS if self.stop == "labels" else None,
                            random_state=0 if self.random_state is None
                            else self.random_state)
        self.status_ = ("optimal" if res.converged else "labels_settled" if res.settled
                        else "max_iter")
        self.n_iter_ = res.n_outer
        self.objective_ = res.objective
        self.dual_objective_ = res.dual_objective
        self.label_factor_ = res.R
        if not (res.converged or res.settled):
            warn_at_caller(f"{type(self).__name__}: the low-rank route stopped after "
                           f"{res.n_outer} rounds with a relative gap of {res.gap:.2g} to its "
                           "dual bound (tol "
                           f"{self.tol:g}): raise max_iter or tol", ConvergenceWarning)
        sv = np.linalg.svd(res.R, compute_uv=False)
        self.eigen_ratio_ = float(sv[0] ** 2 / res.R.shape[0])
        return res.R @ (y_l @ res.R[labeled] / y_l.size)

    def _fit_labeled(self, K, y_l, C):
        """Fully labeled ``y``: every entry of ``M`` is fixed (``M = y y^T``), so eq. 3.2 is
        the bias-free SVM's dual (``t`` = twice its optimum) and no SDP is solved."""
        start = time.perf_counter()
        self._svm = fit_precomputed_svm(K, y_l, C, fit_intercept=False)
        self.fit_time_ = time.perf_counter() - start
        self.status_ = "optimal"
        self.n_iter_ = self._svm.n_iter
        self.label_matrix_ = np.outer(y_l, y_l)
        self.objective_ = self.dual_objective_ = 2.0 * self._svm.objective
        self.eigen_ratio_ = 1.0
        self.relaxed_scores_ = y_l.astype(np.float64)      # M[:, L] y_L / l with M = y y^T
        self.transduction_ = self.classes_[(y_l > 0).astype(int)]
        return self

    @staticmethod
    def _binary_training_scores(estimator, X) -> np.ndarray:
        """The transduced scores of the training rows (what ``transduction_`` rounds)."""
        return estimator.relaxed_scores_

    def _combine_one_vs_rest(self, estimators: list, data) -> None:
        """The claims rule beyond two classes (:func:`semisup.linear.s4vm.claimed_scores`).

        Each relaxation's anchor scores rank the rows against their own labeled rows only,
        and with a couple of labels a class most relaxations put every unlabeled row in
        "rest": their arg max across classes was noise (coil, 2 labels per class: 19.6 % of
        the unlabeled rows right against 30.5 % for ``SVC()``).  A row now goes to the class
        whose relaxation alone claims it, else to the supervised SVMs' choice (the same
        kernel, with an intercept, on the labeled rows, one per class) among the claiming
        classes, or among all when none claims it.
        """
        K = self._claims_kernel
        lab = data.labeled
        C = check_positive(self.C, "C")
        coef = np.zeros((len(estimators), lab.size))
        intercept = np.zeros(len(estimators))
        for k in range(len(estimators)):
            y_k = np.where(data.y_index == k, 1.0, -1.0)
            svm = fit_precomputed_svm(K[np.ix_(lab, lab)], y_k, C)
            coef[k], intercept[k] = svm.coef, svm.bias
        self.supervised_dual_coef_, self.supervised_intercept_ = coef, intercept
        self.supervised_rows_ = lab.copy()
        claims = np.column_stack([e.transduction_ == e.classes_[1] for e in estimators])
        scores = claimed_scores(K[:, lab] @ coef.T + intercept, claims)
        self.transduction_[data.unlabeled] = self.classes_[
            scores[data.unlabeled].argmax(axis=1)]

    def decision_function(self, X) -> np.ndarray:
        """Score new rows by a bias-free SVM trained on the transduced labels (class notes).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Or, with ``kernel='precomputed'``, the kernel against the training rows.

        Returns
        -------
        ndarray of shape (n_samples,), or (n_samples, n_classes) beyond two classes
            Decision values: the score of ``classes_[1]``, or one column per class.
        """
        check_is_fitted(self, "classes_")
        out = self._fallback_answer(X, "decision_function")
        if out is not None:
            return out
        if self._is_one_vs_rest():
            if not hasattr(self, "supervised_rows_"):   # fitted before the claims rule
                return self._one_vs_rest_decision(X)
            # one test kernel for the final SVMs of every class and the supervised ones
            K = self._test_kernel(X)
            final = np.column_stack([e._svm.decision_function(K) for e in self.estimators_])
            return claimed_scores(K[:, self.supervised_rows_] @ self.supervised_dual_coef_.T
                                  + self.supervised_intercept_, final > 0)
        return self._svm.decision_function(self._test_kernel(X))
