"""The models of ``semisup-svmlin`` without scikit-learn.

Importing scikit-learn (through the estimators' base classes) costs more than solving the
problems SVMlin users start with (0.5-1 s on an idle machine for ``sklearn.base`` alone,
against about 0.1 s for TSVM on SVMlin's pcmac example).  The command line therefore calls
the solvers through this thin layer, which does exactly what the estimators'
``_fit_binary`` do for a binary problem with SVMlin's defaults:
``tests/test_cli.py::test_cli_model_matches_estimators`` checks that both give the same
weights for every ``-A``.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from semisup._logging import warn_at_caller
from semisup.losses import HingeTerms
from semisup.regularizers import Ridge
from semisup.solvers.cgls import cgls
from semisup.solvers.design import Design
from semisup.solvers.mfn import MFNResult, l2svm_mfn

_MFN_OPTIONS = dict(tol=1e-6, max_iter=50, max_cg_iter=10_000)


class SVMlinModel:
    """A binary linear model trained as ``semisup-svmlin -A algorithm`` trains it.

    Parameters
    ----------
    algorithm : int
        0 RLS, 1 L2-SVM-MFN, 2 TSVM (multiple switching), 3 deterministic annealing.
    lam, lam_u, positive_fraction : float
        ``-W``, ``-U``, ``-R``.
    max_switches : int
        ``-S``.
    cost_positive, cost_negative : float
        ``-Cp``, ``-Cn`` (``-A 0`` and ``-A 1``).
    verbose : int

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features)
    intercept_ : ndarray of shape (1,)
    intercept_scaling : float
    objective_ : float
    fit_results_ : list
        The solver's result (MFNResult, TSVMResult or DAResult).
    """

    intercept_scaling = 1.0

    def __init__(self, algorithm: int, lam: float = 1.0, lam_u: float = 1.0,
                 positive_fraction: float = 0.5, max_switches: int | None = None,
                 cost_positive: float = 1.0, cost_negative: float = 1.0, verbose: int = 0,
                 max_iter: int = 50, tol: float = 1e-6):
        self.algorithm = algorithm
        self.max_iter = max_iter
        self.tol = tol
        self.lam = lam
        self.lam_u = lam_u
        self.positive_fraction = positive_fraction
        self.max_switches = max_switches
        self.cost_positive = cost_positive
        self.cost_negative = cost_negative
        self.verbose = verbose

    def fit(self, X, y):
        """Fit on CSR ``X`` and ``y`` in {0, 1} with ``-1`` for unlabeled rows."""
        from semisup._validation import check_scale

        X = sp.csr_matrix(X, dtype=np.float64)
        if not np.all(np.isfinite(X.data)):
            raise ValueError("X contains NaN or infinity")
        check_scale(X)
        y = np.asarray(y)
        labeled = np.flatnonzero(y != -1)
        unlabeled = np.flatnonzero(y == -1)
        classes = np.unique(y[labeled])
        if classes.size != 2:
            raise ValueError(f"y contains {classes.size} class among its labeled rows "
                             f"({classes.tolist()}); at least 2 are needed: label rows of "
                             "every class")
        y_pm = np.where(y[labeled] == classes[1], 1.0, -1.0)
        design = Design(X, True, self.intercept_scaling)
        with _threads(design):
            res = self._solve(design, labeled, unlabeled, y_pm)
        coef, b = design.weights_to_coef(res.w)
        self.coef_ = coef[None, :]
        self.intercept_ = np.array([b])
        self.classes_ = classes
        self.objective_ = res.objective
        self.fit_results_ = [res]
        if unlabeled.size:
            self._warn_if_collapsed(self.decision_function(X[unlabeled]) > 0)
        return self

    @staticmethod
    def _warn_if_collapsed(positive: np.ndarray) -> None:
        """The estimators' collapse warning, worded in SVMlin's labels (+1 / -1; 0 is the
        unlabeled marker there, so the class codes 0/1 would mislead)."""
        from semisup._validation import MIN_COLLAPSE_ROWS, CollapseWarning

        if positive.size < MIN_COLLAPSE_ROWS or not (positive.all() or not positive.any()):
            return
        label = "+1" if positive[0] else "-1"
        warn_at_caller(f"every one of the {positive.size} unlabeled examples was labeled "
                       f"{label}: the solution collapsed to one class. The regularization is "
                       "probably too strong for the scale of the data", CollapseWarning)

    def _solve(self, design, labeled, unlabeled, y_pm):
        options = dict(_MFN_OPTIONS, tol=self.tol, max_iter=self.max_iter)
        reg = Ridge(self.lam)
        if self.algorithm in (0, 1):
            A = design.restrict(labeled)
            cost = np.where(y_pm > 0, self.cost_positive, self.cost_negative)
            if self.algorithm == 0:
                res = cgls(A, cost, y_pm, reg, tol=options["tol"],
                           max_iter=options["max_cg_iter"])
                o = A.matvec(res.x)
                objective = reg.value(res.x) + 0.5 * float(cost @ (y_pm - o) ** 2)
                return MFNResult(w=res.x, outputs=o, objective=objective, n_iter=res.n_iter,
                                 n_cg_iter=res.n_iter, converged=res.converged,
                                 history=[objective])
            res = l2svm_mfn(A, HingeTerms(y_pm, cost), reg, verbose=self.verbose,
                            **options)
            if not res.converged:
                from sklearn.exceptions import ConvergenceWarning

                warn_at_caller(f"L2-SVM-MFN stopped after {self.max_iter} Newton iterations "
                               f"before reaching the tolerance {self.tol:g}",
                               ConvergenceWarning)
            return res
        from semisup.solvers.s3vm import deterministic_annealing, transductive_svm

        A = design.restrict(np.concatenate([labeled, unlabeled]))
        common = dict(mfn_options=options, verbose=self.verbose, reg=None)
        if self.algorithm == 2:
            return transductive_svm(A, labeled.size, y_pm, self.lam, self.lam_u,
                                    self.positive_fraction, max_switches=self.max_switches,
                                    **common)
        return deterministic_annealing(A, labeled.size, y_pm, self.lam, self.lam_u,
                                       self.positive_fraction, **common)

    def decision_function(self, X) -> np.ndarray:
        """``X w + b``."""
        return np.asarray(X @ self.coef_[0]).ravel() + self.intercept_[0]


def _threads(design):
    """BLAS limited to one thread on sparse data, as the estimators' ``fit`` does."""
    from semisup.linear._core import solver_threads

    return solver_threads(design)
