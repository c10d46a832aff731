"""Supervised linear classifiers of SVMlin: L2-SVM-MFN (``-A 1``) and RLS (``-A 0``)."""

from __future__ import annotations

import numpy as np
from sklearn.utils import check_random_state

from semisup._logging import report_unconverged
from semisup._validation import check_positive
from semisup.linear._base import LinearSemiSupervisedClassifier
from semisup.losses import HingeTerms
from semisup.regularizers import Ridge
from semisup.solvers.cgls import cgls
from semisup.solvers.dcd import l2svm_dual_cd
from semisup.solvers.mfn import MFNResult, l2svm_mfn

# "auto" keeps the primal finite Newton method when rows outnumber features by more than
# this: its CG systems are then small and well conditioned (SecStr one-hot, 265 rows per
# feature: MFN 5x faster than dual CD), while dual coordinate descent wins on text and on
# MNIST (76 rows per feature: 1.6x faster).  See benchmarks/bench_supervised_vs_liblinear.py.
_PRIMAL_ROWS_PER_FEATURE = 100


def _example_costs(estimator, data, y_pm, sample_weight) -> np.ndarray:
    """Per-example costs ``c_i``: sample weight times the class cost (``-Cp`` / ``-Cn``)."""
    cost = np.ones(data.labeled.size)
    if sample_weight is not None:
        cost *= sample_weight[data.labeled]
    cost *= np.where(y_pm > 0, estimator.cost_positive, estimator.cost_negative)
    return cost


class _SupervisedLinear(LinearSemiSupervisedClassifier):
    _semi_supervised = False
    _float32 = True

    def __init__(self, lam: float = 1.0, cost_positive: float = 1.0, cost_negative: float = 1.0,
                 fit_intercept: bool = True, intercept_scaling: float = 1.0, tol: float = 1e-6,
                 max_iter: int = 50, max_cg_iter: int = 10_000, verbose: int = 0,
                 probability: bool = False):
        self.lam = lam
        self.cost_positive = cost_positive
        self.cost_negative = cost_negative
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.tol = tol
        self.max_iter = max_iter
        self.max_cg_iter = max_cg_iter
        self.verbose = verbose
        self.probability = probability

    def _validate_params(self) -> None:
        check_positive(self.lam, "lam")
        check_positive(self.cost_positive, "cost_positive")
        check_positive(self.cost_negative, "cost_negative")

    def fit(self, X, y, sample_weight=None):
        """Fit on the labeled rows of ``(X, y)``; rows with ``y == -1`` are ignored.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Class labels; ``-1`` rows are skipped.
        sample_weight : array-like of shape (n_samples,), optional
            Per-example costs ``c_i`` of eq. 2.

        Returns
        -------
        self
        """
        return self._fit(X, y, sample_weight)


class L2SVM(_SupervisedLinear):
    """Linear L2-SVM trained by the modified finite Newton method or by dual coordinate descent.

    Minimises ``(lam/2)||w||^2 + (1/2) sum_i c_i max(0, 1 - y_i w^T x_i)^2`` (eq. 2 of
    Sindhwani & Keerthi, 2006) over the labeled rows, the bias being one more regularised
    weight as in SVMlin.  Costs ``c_i`` are ``sample_weight`` times ``cost_positive`` or
    ``cost_negative`` (SVMlin's ``-Cp``/``-Cn``).  With ``solver="mfn"`` this is SVMlin's
    ``-A 1`` (L2-SVM-MFN).

    Parameters
    ----------
    lam : float, default=1.0
        Regularisation ``lambda`` (SVMlin ``-W``).
    cost_positive, cost_negative : float, default=1.0
        Class costs.
    fit_intercept : bool, default=True
        Append a constant feature ``intercept_scaling`` whose weight is the bias.
    intercept_scaling : float, default=1.0
    tol : float, default=1e-6
        ``"mfn"``: CGLS relative residual tolerance; ``"dcd"``: relative duality gap,
        i.e. a certified bound on ``(f(w) - min f) / f(w)``.
    max_iter : int, optional
        Newton iterations (``"mfn"``, default 50) or epochs (``"dcd"``, default 10000).
    max_cg_iter : int, default=10000
        CGLS iterations per Newton system.
    solver : {"auto", "mfn", "dcd"}, default="auto"
        ``"mfn"``: the modified finite Newton method (:func:`~semisup.solvers.mfn.l2svm_mfn`).
        ``"dcd"``: dual coordinate descent (:func:`~semisup.solvers.dcd.l2svm_dual_cd`),
        sparse input only.  ``"auto"``: ``"dcd"`` for sparse input with fewer than 100
        labeled rows per feature, ``"mfn"`` otherwise.
    random_state : int, RandomState or None, default=None
        Coordinate order of ``"dcd"``; ``None`` means a fixed seed, so fits repeat.
    verbose : int, default=0
        Log progress to the ``semisup`` logger (1: INFO, 2: DEBUG, one line per Newton
        iteration or duality-gap check).
    probability : bool, default=False
        Enable ``predict_proba`` / ``predict_log_proba``: ``fit`` also fits a Platt
        sigmoid to decision values of the labeled rows cross-validated with
        :class:`semisup.model_selection.LabeledStratifiedKFold` (5 extra fits; see
        :mod:`semisup.calibration`).

    Attributes
    ----------
    coef_, intercept_, classes_ : as in scikit-learn linear classifiers.
    objective_ : float or ndarray
        Final objective (one per class for one-vs-rest).
    n_iter_ : ndarray
        Newton iterations (``"mfn"``) or epochs (``"dcd"``) per binary problem.
    fit_results_ : list of MFNResult or DCDResult
        Full solver output, including objective histories and CG iteration counts
        (``"mfn"``) or epochs and the duality gap (``"dcd"``).
    solver_ : str
        The solver used.
    """

    _defaultable = ("max_iter",)

    def __init__(self, lam: float = 1.0, cost_positive: float = 1.0, cost_negative: float = 1.0,
                 fit_intercept: bool = True, intercept_scaling: float = 1.0, tol: float = 1e-6,
                 max_iter: int | None = None, max_cg_iter: int = 10_000, solver: str = "auto",
                 random_state=None, verbose: int = 0,
                 probability: bool = False):
        super().__init__(lam=lam, cost_positive=cost_positive, cost_negative=cost_negative,
                         fit_intercept=fit_intercept, intercept_scaling=intercept_scaling,
                         tol=tol, max_iter=max_iter, max_cg_iter=max_cg_iter, verbose=verbose,
                         probability=probability)
        self.solver = solver
        self.random_state = random_state

    def _validate_params(self) -> None:
        super()._validate_params()
        if self.solver not in ("auto", "mfn", "dcd"):
            raise ValueError(f"solver must be 'auto', 'mfn' or 'dcd', got {self.solver!r}")

    def _prepare(self, design, data):
        solver = self.solver
        if solver == "auto":
            solver = "dcd" if design.sparse and \
                data.labeled.size < _PRIMAL_ROWS_PER_FEATURE * design.n_weights else "mfn"
        if solver == "dcd" and not design.sparse:
            raise ValueError("solver='dcd' needs sparse X: pass scipy.sparse.csr_matrix(X) or "
                             "use solver='mfn'")
        self.solver_ = solver
        return np.random.default_rng(check_random_state(self.random_state).randint(2**31 - 1)
                                     if self.random_state is not None else 0)

    def _fit_binary(self, design, data, y_pm, positive_fraction, sample_weight, context=None,
                    seed=None):
        A = design.restrict(data.labeled)
        terms = HingeTerms(y_pm, _example_costs(self, data, y_pm, sample_weight))
        if self.solver_ == "dcd":
            max_iter = self.max_iter or 10_000
            res = l2svm_dual_cd(A, terms, self.lam, tol=self.tol, max_epochs=max_iter,
                                random_state=int(context.integers(2**31 - 1)),
                                verbose=self.verbose)
        else:
            max_iter = self.max_iter or 50
            res = l2svm_mfn(A, terms, Ridge(self.lam), tol=self.tol, max_iter=max_iter,
                            max_cg_iter=self.max_cg_iter, verbose=self.verbose)
        if not res.converged and self.solver_ == "dcd":  # MFN reports for itself
            report_unconverged("dcd", f"{max_iter} epochs, tol={self.tol:g}")
        return res


class RLSClassifier(_SupervisedLinear):
    """Regularised least-squares classifier solved by CGLS (SVMlin's ``-A 0``).

    Minimises ``(lam/2)||w||^2 + (1/2) sum_i c_i (y_i - w^T x_i)^2`` over the labeled rows
    with targets ``+1/-1`` (eq. 4 of Sindhwani & Keerthi, 2006, solved by CGLS, section 2.1).

    Parameters
    ----------
    lam : float, default=1.0
        Regularisation ``lambda`` (SVMlin ``-W``).
    cost_positive, cost_negative : float, default=1.0
        Class costs ``c_i`` (times ``sample_weight``).
    fit_intercept : bool, default=True
        Append a constant feature ``intercept_scaling`` whose weight is the bias.
    intercept_scaling : float, default=1.0
        Value of the constant feature.
    tol : float, default=1e-6
        CGLS relative residual tolerance.
    max_iter : int, optional
        Unused: one CGLS solve is the whole fit (kept for a uniform interface).
    max_cg_iter : int, default=10000
        CGLS iterations.
    verbose : int, default=0
        Log progress to the ``semisup`` logger (1: INFO, 2: DEBUG).
    probability : bool, default=False
        Enable ``predict_proba`` / ``predict_log_proba`` (as :class:`L2SVM`).

    Attributes
    ----------
    coef_, intercept_, classes_ : as in scikit-learn linear classifiers.
    objective_ : float or ndarray
        Final objective (one per class for one-vs-rest).
    n_iter_ : ndarray
        CGLS iterations per binary problem.
    fit_results_ : list of MFNResult
        Solver output per binary problem.
    """

    def _fit_binary(self, design, data, y_pm, positive_fraction, sample_weight, context=None,
                    seed=None):
        A = design.restrict(data.labeled)
        cost = _example_costs(self, data, y_pm, sample_weight)
        reg = Ridge(self.lam)
        res = cgls(A, cost, y_pm, reg, tol=self.tol, max_iter=self.max_cg_iter)
        if not res.converged:
            report_unconverged("cgls", f"max_cg_iter={self.max_cg_iter}")
        o = A.matvec(res.x)
        objective = reg.value(res.x) + 0.5 * float(cost @ (y_pm - o) ** 2)
        return MFNResult(w=res.x, outputs=o, objective=objective, n_iter=res.n_iter,
                         n_cg_iter=res.n_iter, converged=res.converged, history=[objective])
