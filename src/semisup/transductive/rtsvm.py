"""SDP-relaxed transductive SVM (RTSVM, eq. 3.2; De Bie & Cristianini, Xu & Schuurmans)."""

from __future__ import annotations

import time

import numpy as np
from sklearn.utils.validation import check_is_fitted

from semisup._validation import check_int, check_positive, warn_degenerate, warn_if_collapsed
from semisup.solvers.svm import fit_precomputed_svm
from semisup.transductive._base import KernelTransductiveBase
from semisup.transductive._sdp import rtsvm_sdp


class SDPRelaxedTSVM(KernelTransductiveBase):
    """The O(n^2)-cone SDP relaxation of the TSVM (RTSVM), eq. 3.2: the CTSVM baseline.

    ``y y^T`` is relaxed to a PSD matrix ``M`` with unit diagonal and the labeled block
    fixed; the bias is dropped (``lambda = 0``).  Its cost grows as O(n^6.5), so it is
    limited to ``n <= max_n`` rows; larger problems are refused with a message naming
    :class:`ConvexTSVM`, whose low-rank route fits the same relaxation's successor on
    thousands of rows.  Labels are read off ``M`` by its leading
    eigenvector ``v`` (``M ~ v v^T`` when the relaxation is tight), signed so that
    ``sum_{i in L} y_i v_i > 0``: ``y_hat_i = sign(v_i)``.  Out of sample, a bias-free SVM
    on all training rows with their transduced labels gives the decision function.  More
    than two classes: one-vs-rest (:class:`semisup.transductive._base.OneVsRestMixin`), one
    SDP per class.

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
    solver : {'auto', 'scs', 'clarabel'}
        Conic solver; ``'auto'``: Clarabel for ``n <= 50`` (accurate, and measured no slower
        than SCS there: 0.9 / 5.2 / 23.9 s against 1.8 / 11.1 / 23.8 s at n = 30 / 40 / 50 on
        sklearn digits 3 vs 8, 6 labels, 2 cores; its memory grows fast with the ``n^2``
        cone variables), SCS above (on this problem SCS often stops at its iteration limit
        with a few digits only, reported as a :class:`~semisup._validation.DegenerateFitWarning`).
    max_n : int
        Largest number of rows accepted.  The default 50 keeps a binary fit within 60 s on
        2 cores (24 s at n = 50, about 80 s at n = 60); more than two classes cost one fit
        per class.  Not applied to a fully labeled ``y`` (``M`` is then fixed: no SDP).
    tol : float
        Solver tolerance.
    max_iter : int
        Solver iteration limit.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels (more than two: one-vs-rest, ``estimators_`` holds one binary
        estimator per class and the other attributes are theirs).
    transduction_ : ndarray of shape (n_samples,)
        Labels of the training rows.
    status_ : str
        The conic solver's status (``'optimal'``, or ``'optimal_inaccurate'`` with a
        warning).
    label_matrix_ : ndarray of shape (n_samples, n_samples)
        The relaxed ``M``.
    relaxed_scores_ : ndarray of shape (n_samples,)
        ``sqrt(lambda_1) v`` (leading eigenpair of ``M``).
    objective_ : float
        Optimal ``t`` of eq. 3.2.
    eigen_ratio_ : float
        ``lambda_1 / trace(M)`` (1 when ``M`` has rank one).
    fit_time_ : float
        Seconds in the solver.
    solver_ : str
        Conic solver used.
    n_iter_ : int
        Conic solver iterations (``-1`` when the solver does not say; SMO iterations of
        the SVM for a fully labeled ``y``).
    n_train_ : int
        Number of training rows.

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

    def __init__(self, C: float = 1.0, balance="auto", kernel: str = "rbf",
                 gamma: float | None = None, degree: int = 3, coef0: float = 1.0,
                 solver: str = "auto", max_n: int = 50, tol: float = 1e-4,
                 max_iter: int = 20_000):
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
        data = self._check_common(X, y)
        if self._fit_one_vs_rest(data):
            return self
        X = data.X
        n = X.shape[0]
        C = check_positive(self.C, "C")
        max_n = check_int(self.max_n, "max_n")
        check_positive(self.tol, "tol")
        check_int(self.max_iter, "max_iter")
        if n > max_n and data.unlabeled.size:
            raise ValueError(f"n = {n} rows is too large for the RTSVM SDP (O(n^2) variables in "
                             f"the cone, max_n={max_n}: about 24 s at n = 50 and 80 s at "
                             "n = 60 on 2 cores); use ConvexTSVM (its default low-rank route "
                             "scales to thousands of rows), or raise max_n")
        y_l = data.binary_targets()
        if self.solver not in ("auto", "scs", "clarabel"):
            raise ValueError(f"solver must be 'auto', 'scs' or 'clarabel', got {self.solver!r}")
        solver = self.solver if self.solver != "auto" else ("clarabel" if n <= 50 else "scs")
        self.solver_ = solver
        if self.balance == "auto":
            balance = abs(float(np.mean(y_l))) + 1.0 / np.sqrt(y_l.size)
        elif self.balance is None:
            balance = None
        else:
            balance = check_positive(self.balance, "balance")
        self.classes_ = data.classes
        self.n_train_ = n
        self.gamma_ = self._kernel_params(X)
        self.X_fit_ = X if self.kernel != "precomputed" else None
        K = self._train_kernel(X)
        if data.unlabeled.size == 0:
            return self._fit_labeled(K, y_l, C)
        start = time.perf_counter()
        res = rtsvm_sdp(K, data.labeled, y_l, C, balance, solver=solver, tol=self.tol,
                        max_iter=self.max_iter)
        self.fit_time_ = time.perf_counter() - start
        self.status_ = res.status
        self.n_iter_ = res.n_iter
        if res.status != "optimal":
            warn_degenerate(self, f"the SDP solver ({solver}) stopped {res.status!r}: the label "
                            "matrix is inexact", "raise max_iter or tol, or use ConvexTSVM "
                            "(its low-rank route is certified and scales to thousands of rows)")
        vals, vecs = np.linalg.eigh(res.M)
        v = vecs[:, -1]
        if v[data.labeled] @ y_l < 0:
            v = -v
        self.label_matrix_ = res.M
        self.objective_ = res.objective
        self.eigen_ratio_ = float(vals[-1] / max(np.trace(res.M), 1e-12))
        self.relaxed_scores_ = np.sqrt(max(vals[-1], 0.0)) * v
        pm = np.where(v >= 0, 1.0, -1.0)
        pm[data.labeled] = y_l
        self.transduction_ = self.classes_[(pm > 0).astype(int)]
        warn_if_collapsed(self, self.transduction_[data.unlabeled], 2, hint=(
            "Without a balance constraint the relaxation admits one-class labelings: keep "
            "balance='auto' or give a balance"))
        self._svm = fit_precomputed_svm(K, pm, C, fit_intercept=False)
        return self

    def _fit_labeled(self, K, y_l, C):
        """Fully labeled ``y``: every entry of ``M`` is fixed (``M = y y^T``), so eq. 3.2 is
        the bias-free SVM's dual (``t`` = twice its optimum) and no SDP is solved."""
        start = time.perf_counter()
        self._svm = fit_precomputed_svm(K, y_l, C, fit_intercept=False)
        self.fit_time_ = time.perf_counter() - start
        self.status_ = "optimal"
        self.n_iter_ = self._svm.n_iter
        self.label_matrix_ = np.outer(y_l, y_l)
        self.objective_ = 2.0 * self._svm.objective
        self.eigen_ratio_ = 1.0
        self.relaxed_scores_ = y_l.astype(np.float64)      # sqrt(n) * (y / sqrt(n))
        self.transduction_ = self.classes_[(y_l > 0).astype(int)]
        return self

    @staticmethod
    def _binary_training_scores(estimator, X) -> np.ndarray:
        """The transduced scores of the training rows (what ``transduction_`` rounds)."""
        return estimator.relaxed_scores_

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
        if self._is_one_vs_rest():
            return self._one_vs_rest_decision(X)
        return self._svm.decision_function(self._test_kernel(X))
