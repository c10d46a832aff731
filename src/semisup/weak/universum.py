"""Universum SVM (Weston, Collobert, Sinz, Bottou & Vapnik 2006; thesis digest section 1.6).

Labeled rows pay the hinge loss, universum rows (examples of neither class) the
epsilon-insensitive loss ``max(0, |f(x)| - eps)``, which pulls them onto the decision plane:

``min (1/2)||w||^2 + C sum_labeled H(y_i f(x_i)) + C_U sum_universum U_eps(f(x_u))``.

Two routes:

* ``loss="squared_hinge"`` (linear, dense or sparse, large): both losses squared,
  ``C sum max(0, 1 - y f)^2 + C_U sum max(0, |f| - eps)^2``, minimised by the library's
  modified finite Newton method (:func:`semisup.solvers.mfn.l2svm_mfn`).  The
  epsilon-insensitive loss is two squared hinge terms with margin ``-eps`` and signs
  ``-1``/``+1`` (:class:`semisup.losses.HingeTerms` with ``margin``); as in
  :class:`semisup.linear.L2SVM` the bias is one more regularised weight.
* ``loss="hinge"`` (linear or kernel, small and medium ``n``): the exact hinge /
  epsilon-insensitive problem with a free bias, as a cvxpy QP
  (:func:`semisup.weak._cvx.hinge_universum_qp`); a kernel enters through a factor
  ``K = F F^T`` of the training Gram matrix (empirical kernel map).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted

from semisup._logging import warn_at_caller
from semisup._validation import (
    check_bool,
    check_finite,
    check_int,
    check_positive,
    check_real,
    check_semi_supervised,
    check_X,
    warn_if_collapsed,
)
from semisup.base import SemiSupervisedClassifierMixin
from semisup.kernels import default_gamma, kernel_matrix
from semisup.linear.laplacian import LR_EQUIVALENT_RIDGE
from semisup.losses import HingeTerms
from semisup.regularizers import Ridge
from semisup.solvers.design import Design
from semisup.solvers.mfn import MFNResult, l2svm_mfn
from semisup.transductive._base import OneVsRestMixin
from semisup.weak._cvx import check_solver, hinge_universum_qp


def universum_terms(y: np.ndarray, cost: np.ndarray, n_universum: int, cost_u: float,
                    epsilon: float) -> HingeTerms:
    """Squared-hinge terms of the labeled rows followed by the universum rows.

    Rows ``0..l-1`` are labeled (``y``, ``cost``), rows ``l..l+u-1`` universum.  Each
    universum row carries the two halves of ``max(0, |o| - eps)^2``:
    ``max(0, -eps + o)^2`` (sign ``-1``) and ``max(0, -eps - o)^2`` (sign ``+1``); at most
    one is non-zero because ``eps >= 0``.  Costs are taken as given, i.e. the terms sum to
    ``(1/2) sum c_i l_2(y_i o_i) + (1/2) cost_u sum_u max(0, |o_u| - eps)^2``.
    """
    l = y.shape[0]
    u = int(n_universum)
    if u == 0:
        return HingeTerms(y, cost)
    rows = np.concatenate([np.arange(l), np.arange(l, l + u), np.arange(l, l + u)])
    signs = np.concatenate([y, -np.ones(u), np.ones(u)])
    costs = np.concatenate([cost, np.full(2 * u, float(cost_u))])
    margin = np.concatenate([np.ones(l), np.full(2 * u, -float(epsilon))])
    return HingeTerms(signs, costs, rows=rows, n_rows=l + u, margin=margin)


def squared_universum_objective(w: np.ndarray, outputs: np.ndarray, y: np.ndarray, C: float,
                                outputs_u: np.ndarray, C_u: float, epsilon: float) -> float:
    """``(1/2)||w||^2 + C sum l_2(y o) + C_U sum max(0, |o_u| - eps)^2`` (``w`` with bias)."""
    value = 0.5 * float(w @ w) + C * float(np.sum(np.maximum(0.0, 1.0 - y * outputs) ** 2))
    return value + C_u * float(np.sum(np.maximum(0.0, np.abs(outputs_u) - epsilon) ** 2))


def hinge_universum_objective(w: np.ndarray, outputs: np.ndarray, y: np.ndarray, C: float,
                              outputs_u: np.ndarray, C_u: float, epsilon: float) -> float:
    """``(1/2)||w||^2 + C sum H(y o) + C_U sum max(0, |o_u| - eps)`` (``w`` without bias)."""
    value = 0.5 * float(w @ w) + C * float(np.sum(np.maximum(0.0, 1.0 - y * outputs)))
    return value + C_u * float(np.sum(np.maximum(0.0, np.abs(outputs_u) - epsilon)))


def _vstack(A, B):
    if sp.issparse(A) or sp.issparse(B):
        return sp.vstack([sp.csr_matrix(A), sp.csr_matrix(B)], format="csr")
    return np.vstack([A, B])


class UniversumSVM(OneVsRestMixin, SemiSupervisedClassifierMixin, ClassifierMixin,
                   BaseEstimator):
    """Universum SVM: hinge loss on labeled rows, epsilon-insensitive loss on universum.

    Minimises ``(1/2)||w||^2 + C sum_i H(y_i f(x_i)) + C_universum sum_u U_eps(f(x_u))``
    (Weston et al. 2006; thesis digest section 1.6), with the squared losses through the
    library's finite Newton solver (``loss="squared_hinge"``) or the plain hinge /
    epsilon-insensitive losses as a QP (``loss="hinge"``, linear or kernel).

    Universum rows are given explicitly to :meth:`fit` as ``X_universum``.  Rows of ``X``
    with ``y == -1`` are unlabeled; ``unlabeled="ignore"`` (the default) drops them and
    ``unlabeled="universum"`` adds them to the universum, as the thesis's USVM baseline of
    chapter 7 does with *all* unlabeled points.  With no universum row the estimator is
    the supervised SVM: :class:`semisup.linear.L2SVM` with ``lam = 1 / (2 C)`` for the
    squared route, ``sklearn.svm.SVC(C=C)`` for the hinge route.

    Binary at heart; more than two classes are solved one-vs-rest
    (:class:`semisup.transductive._base.OneVsRestMixin`: every binary problem sees the
    same universum and unlabeled rows; ``decision_function`` has one column per class).

    Parameters
    ----------
    C : float or None, default=None
        Cost of the labeled rows.  ``None`` resolves at fit time to the cost that matches
        the supervised counterpart the estimator reduces to without a universum
        (``C_`` holds it): ``1 / (2 * 4) = 0.125`` for ``loss="squared_hinge"`` and ``1``
        for ``loss="hinge"``.  Squared route: ``(1/2)||w||^2 + C sum_i l_2(y_i f_i)`` is
        ``1 / (2C)`` times ``(lam/2)||w||^2 + (1/2) sum_i l_2(y_i f_i)`` with ``lam = 1 /
        (2C)``, the summed-loss form of :class:`~semisup.linear.L2SVM`, whose
        LogisticRegression(C=1)-matching ridge is ``lam = 4``
        (``semisup.linear.laplacian.LR_EQUIVALENT_RIDGE``: the logistic loss ``log(1 +
        e^-m) = log 2 - m/2 + m^2/8 + ...`` is a quarter of ``(1/2)(2 - m)^2`` near the
        origin; rescaling ``w`` by 2 gives ridge 4 on the squared hinge), hence ``C = 1/8``;
        the loss is summed, so the rule does not depend on the number of labels ``l``.
        Hinge route: the objective is SVC's, whose default ``C = 1`` is the counterpart
        itself.  The former default ``C = 1`` (``lam = 0.5``, 8 times less regularisation)
        and the papers' values stay reachable by passing ``C``
        (``benchmarks/results/defaults_weak_reg.md``).
    C_universum : float, default=1.0
        Cost ``C_U`` of the universum rows.
    epsilon : float, default=0.1
        Width of the insensitive zone (``>= 0``).
    loss : {"squared_hinge", "hinge"}, default="squared_hinge"
        ``"squared_hinge"``: squared hinge and squared epsilon-insensitive losses, linear,
        any size, dense or sparse (a free bias unless ``penalize_intercept``).
        ``"hinge"``: the original losses, free bias, solved by cvxpy (small and medium
        ``n``), linear or kernel.
    kernel : {"linear", "rbf", "poly"}, default="linear"
        Kernel of the ``"hinge"`` route (the squared route is linear only).
    gamma : float or None, default=None
        RBF/poly ``gamma``; ``None`` is the reciprocal mean squared distance.
    degree : int, default=3
        Degree of the polynomial kernel.
    coef0 : float, default=1.0
        Constant term of the polynomial kernel.
    unlabeled : {"ignore", "universum"}, default="ignore"
        What rows with ``y == -1`` are.  The default ignores them because a universum is,
        by Weston et al.'s definition, made of rows of *neither* class, while the unlabeled
        rows of a semi-supervised task belong to the classes: pulling them onto ``f = 0``
        cost 9.0 points against LogisticRegression on average over the 16 SSL-book cells
        of official split 2 (3 of 16 cells within 1 point, against 10 of 16 when ignored;
        ``benchmarks/results/defaults_round3.md``).  Pass ``"universum"`` only when the
        unlabeled rows are known to be irrelevant (the thesis's chapter 7 baseline).
    fit_intercept : bool, default=True
        Fit a bias (a constant feature in the squared route).
    intercept_scaling : float, default=1.0
        Value of the constant feature of the squared route.
    penalize_intercept : bool, default=False
        Squared route: regularise the bias as one more weight (SVMlin's objective) instead
        of leaving it free, as ``LogisticRegression`` and the hinge route do (see
        :class:`semisup.linear.L2SVM`).
    tol : float, default=1e-6
        CGLS tolerance of the squared route.
    max_iter : int, default=50
        Newton iterations of the squared route.
    max_cg_iter : int, default=10000
        CGLS iterations per Newton system of the squared route.
    solver : str or None, default=None
        The cvxpy solver of the hinge route (Clarabel when installed, else SCS/OSQP).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        Linear weights (linear kernel only); one row per class beyond two.
    intercept_ : ndarray of shape (1,) or (n_classes,)
    transduction_ : ndarray of shape (n_samples,)
        Labels of the rows of ``X``: the given ones, and the prediction for ``y == -1``.
    estimators_ : list of UniversumSVM
        The binary estimators (more than two classes only).
    dual_coef_ : ndarray of shape (n_train,)
        Kernel expansion coefficients over ``X_fit_`` (kernel routes only).
    X_fit_ : ndarray
        Training rows of the kernel expansion (labeled then universum; kernel only).
    objective_ : float
        Primal objective at the solution (in the chosen loss).
    n_universum_ : int
        Universum rows used.
    n_iter_ : int
        Newton iterations (squared route); 1 for the QP route.
    C_ : float
        The cost of the labeled rows used (``C``, or its resolved value for ``None``).
    n_features_in_ : int
    fit_result_ : MFNResult or None
        Finite Newton output of the squared route.

    Examples
    --------
    >>> import numpy as np
    >>> from semisup import UniversumSVM
    >>> rng = np.random.default_rng(0)
    >>> X = np.r_[rng.normal(-2, 1, (30, 2)), rng.normal(2, 1, (30, 2))]
    >>> y = np.full(60, -1)
    >>> y[[0, 1, 30, 31]] = [0, 0, 1, 1]          # two labels per class, 56 unlabeled
    >>> X_univ = rng.normal(0, 0.3, (10, 2))        # rows of neither class
    >>> clf = UniversumSVM(C=1.0).fit(X, y, X_universum=X_univ)
    >>> clf.predict([[-2.0, -2.0], [2.0, 2.0]]).tolist()
    [0, 1]
    """

    def __init__(self, C: float | None = None, C_universum: float = 1.0, epsilon: float = 0.1,
                 loss: str = "squared_hinge", kernel: str = "linear", gamma: float | None = None,
                 degree: int = 3, coef0: float = 1.0, unlabeled: str = "ignore",
                 fit_intercept: bool = True, intercept_scaling: float = 1.0,
                 penalize_intercept: bool = False, tol: float = 1e-6,
                 max_iter: int = 50, max_cg_iter: int = 10_000, solver: str | None = None):
        self.C = C
        self.C_universum = C_universum
        self.epsilon = epsilon
        self.loss = loss
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.unlabeled = unlabeled
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.penalize_intercept = penalize_intercept
        self.tol = tol
        self.max_iter = max_iter
        self.max_cg_iter = max_cg_iter
        self.solver = solver

    def __setstate__(self, state) -> None:
        # pickles and model files from before the parameter existed regularised the bias
        super().__setstate__({"penalize_intercept": True, **state})

    def _validate_params(self) -> None:
        if self.C is not None:
            check_positive(self.C, "C")
        check_positive(self.C_universum, "C_universum", allow_zero=True)
        check_positive(self.epsilon, "epsilon", allow_zero=True)
        check_positive(self.intercept_scaling, "intercept_scaling")
        check_positive(self.tol, "tol")
        if self.loss not in ("squared_hinge", "hinge"):
            raise ValueError(f"loss must be 'squared_hinge' or 'hinge', got {self.loss!r}")
        if self.kernel not in ("linear", "rbf", "poly"):
            raise ValueError(f"kernel must be 'linear', 'rbf' or 'poly', got {self.kernel!r}")
        if self.kernel != "linear" and self.loss != "hinge":
            raise ValueError(f"kernel={self.kernel!r} needs loss='hinge' (the squared route is "
                             "linear only)")
        if self.unlabeled not in ("universum", "ignore"):
            raise ValueError(f"unlabeled must be 'universum' or 'ignore', got "
                             f"{self.unlabeled!r}")
        check_int(self.max_iter, "max_iter")
        check_int(self.max_cg_iter, "max_cg_iter")
        check_int(self.degree, "degree")
        check_real(self.gamma, "gamma", positive=True, allow_none=True)
        check_finite(self.coef0, "coef0")
        check_bool(self.fit_intercept, "fit_intercept")
        check_bool(self.penalize_intercept, "penalize_intercept")
        check_solver(self.solver, "solver")

    def fit(self, X, y, X_universum=None):
        """Fit on the labeled rows of ``(X, y)`` and the universum.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Training rows, labeled and unlabeled.
        y : array-like of shape (n_samples,)
            Class labels; ``-1`` for unlabeled rows (see ``unlabeled``).
        X_universum : array-like or sparse matrix of shape (n_universum, n_features), optional
            Rows known to belong to neither class.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        self._validate_params()
        for stale in ("coef_", "dual_coef_", "X_fit_", "gamma_", "transduction_"):
            self.__dict__.pop(stale, None)
        data = check_semi_supervised(X, y, estimator=self)
        if self._fit_one_vs_rest(data, {"X_universum": X_universum}):
            return self
        parts = []
        if X_universum is not None:
            Xu = check_X(X_universum, estimator=self)
            if Xu.shape[1] != data.X.shape[1]:
                raise ValueError(f"X_universum has {Xu.shape[1]} features but X has "
                                 f"{data.X.shape[1]}: give universum rows in the same feature "
                                 "space")
            parts.append(Xu)
        if self.unlabeled == "universum" and data.unlabeled.size:
            parts.append(data.X[data.unlabeled])
        X_l = data.X[data.labeled]
        X_u = parts[0] if len(parts) == 1 else (_vstack(*parts) if parts else X_l[:0])
        y_pm = data.binary_targets(1)
        self.classes_ = data.classes
        self.n_features_in_ = data.X.shape[1]
        self.n_universum_ = int(X_u.shape[0])
        self.fit_result_ = None
        self.n_iter_ = 1
        self.C_ = self._resolve_C()
        if self.loss == "squared_hinge":
            self._fit_squared(X_l, y_pm, X_u)
        else:
            self._fit_hinge(X_l, y_pm, X_u)
        transduction = np.empty(data.X.shape[0], dtype=data.classes.dtype)
        transduction[data.labeled] = data.classes[data.y_index]
        if data.unlabeled.size:
            f_u = self.decision_function(data.X[data.unlabeled])
            transduction[data.unlabeled] = data.classes[(f_u > 0).astype(int)]
            warn_if_collapsed(self, transduction[data.unlabeled], 2, hint=(
                "The labeled rows barely move the hyperplane (raise C, or lower C_universum "
                "so the unlabeled rows pull less towards f = 0), or rescale X"))
        self.transduction_ = transduction
        return self

    def _resolve_C(self) -> float:
        """``C``, or for ``C=None`` the cost matching the supervised counterpart (see ``C``)."""
        if self.C is not None:
            return float(self.C)
        # squared route: C = 1/(2 lam) at L2SVM's LogisticRegression-matching lam = 4;
        # hinge route: SVC's objective, whose default C = 1 is the counterpart
        return 1.0 / (2.0 * LR_EQUIVALENT_RIDGE) if self.loss == "squared_hinge" else 1.0

    def _combine_one_vs_rest(self, estimators, data) -> None:
        first = estimators[0]
        self.C_ = first.C_
        self.n_universum_ = first.n_universum_
        self.n_iter_ = np.array([e.n_iter_ for e in estimators])
        self.objective_ = np.array([e.objective_ for e in estimators])
        self.fit_result_ = [e.fit_result_ for e in estimators]
        self.intercept_ = np.concatenate([e.intercept_ for e in estimators])
        if hasattr(first, "coef_"):
            self.coef_ = np.vstack([e.coef_ for e in estimators])

    def _fit_squared(self, X_l, y_pm, X_u) -> None:
        design = Design(_vstack(X_l, X_u), self.fit_intercept, self.intercept_scaling)
        l = y_pm.shape[0]
        u = X_u.shape[0]
        # (1/2) c l_2 with c = 2C is C l_2: the objective of the class docstring with R = I
        terms = universum_terms(y_pm, np.full(l, 2.0 * self.C_), u, 2.0 * self.C_universum,
                                self.epsilon)
        reg = Ridge.with_bias(1.0, design.n_weights, self.fit_intercept,
                              self.penalize_intercept)
        res: MFNResult = l2svm_mfn(design, terms, reg, tol=self.tol,
                                   max_iter=self.max_iter, max_cg_iter=self.max_cg_iter)
        if not res.converged:
            warn_at_caller(f"UniversumSVM: finite Newton stopped at max_iter={self.max_iter} "
                           f"before reaching tol={self.tol:g}: raise max_iter",
                           ConvergenceWarning)
        coef, b = design.weights_to_coef(res.w)
        self.coef_ = coef[None, :]
        self.intercept_ = np.array([b])
        self.objective_ = float(res.objective)
        self.n_iter_ = int(res.n_iter)
        self.fit_result_ = res

    def _kernel(self, A, B=None):
        return kernel_matrix(A, B, kernel=self.kernel, gamma=self.gamma_, degree=self.degree,
                             coef0=self.coef0)

    def _fit_hinge(self, X_l, y_pm, X_u) -> None:
        l = y_pm.shape[0]
        if self.kernel == "linear":
            w, b, obj = hinge_universum_qp(X_l, y_pm, X_u, self.C_, self.C_universum,
                                           self.epsilon, fit_bias=self.fit_intercept,
                                           solver=self.solver)
            self.coef_ = w[None, :]
            self.intercept_ = np.array([b])
            self.objective_ = obj
            return
        X_all = _vstack(X_l, X_u)
        X_all = X_all.toarray() if sp.issparse(X_all) else X_all
        self.gamma_ = default_gamma(X_all) if self.gamma is None else float(self.gamma)
        K = self._kernel(X_all)
        vals, vecs = np.linalg.eigh(0.5 * (K + K.T))
        keep = vals > 1e-10 * max(vals.max(), 1e-300)
        vecs, vals = vecs[:, keep], vals[keep]
        F = vecs * np.sqrt(vals)              # K = F F^T: the empirical kernel map
        w, b, obj = hinge_universum_qp(F[:l], y_pm, F[l:], self.C_, self.C_universum,
                                       self.epsilon, fit_bias=self.fit_intercept,
                                       solver=self.solver)
        # f(x) = k(x, X_fit) U S^{-1/2} w + b reproduces F w + b on the training rows
        self.dual_coef_ = vecs @ (w / np.sqrt(vals))
        self.X_fit_ = X_all
        self.intercept_ = np.array([b])
        self.objective_ = obj

    def decision_function(self, X) -> np.ndarray:
        """Compute the decision values ``f(x)`` of new rows.

        Positive values predict ``classes_[1]`` (one column per class beyond two).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            New rows.

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_classes)
            Decision values: the score of ``classes_[1]``, or one column per class.
        """
        check_is_fitted(self, "intercept_")
        if self._is_one_vs_rest():
            return self._one_vs_rest_decision(X)
        X = check_X(X, estimator=self, reset=False)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but UniversumSVM is expecting "
                             f"{self.n_features_in_} features as input")
        if hasattr(self, "dual_coef_"):
            Xd = X.toarray() if sp.issparse(X) else X
            return self._kernel(Xd, self.X_fit_) @ self.dual_coef_ + self.intercept_[0]
        return np.asarray(X @ self.coef_[0]).ravel() + self.intercept_[0]

    def predict(self, X) -> np.ndarray:
        """Class labels.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            New rows.

        Returns
        -------
        ndarray of shape (n_samples,)
            Predicted class labels.
        """
        check_is_fitted(self, "intercept_")
        f = self.decision_function(X)
        if f.ndim == 2:
            return self.classes_[np.argmax(f, axis=1)]
        return self.classes_[(f > 0).astype(int)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
