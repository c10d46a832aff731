"""Laplacian Support Vector Machines (LapSVM): the dual route of Belkin, Niyogi & Sindhwani
(eqs. 9-11) and the primal route of Melacci & Belkin (JMLR 2011)."""

from __future__ import annotations

import math

import numpy as np

from semisup._logging import convergence_check, get_logger, report_unconverged
from semisup._validation import warn_if_collapsed
from semisup.manifold._base import GuardedManifoldClassifier
from semisup.manifold._rkhs import (
    _check_choice,
    _check_int,
    _check_real,
    deformation_columns,
    deformed_gram,
    kernel_graph_params,
    laplacian_objective,
)
from semisup.model_selection import is_auto
from semisup.solvers.pcg import squared_hinge_pcg
from semisup.solvers.qp import svm_dual

LOSSES = ("hinge", "squared_hinge")
SOLVERS = ("auto", "dual", "primal")

logger = get_logger(__name__)


class LaplacianPrimalProblem:
    """The primal LapSVM objective in the form (**) of :mod:`semisup.solvers.pcg`.

    Variables ``x = (alpha, b)``; image ``T x = K alpha`` (the ``O(n^2)`` product);
    outputs ``o = (K alpha)_labeled + b``; ``R = 2 blockdiag(gamma_A K + gamma_I s K L K, 0)``
    and costs ``c_i = 2/l``, so that ``F = (1/l) sum max(0, 1 - y_i o_i)^2
    + gamma_A alpha^T K alpha + gamma_I s (K alpha)^T L (K alpha)``: eq. 6 with the squared
    hinge.  Preconditioner ``M = blockdiag(K, 1)`` (Melacci & Belkin): the gradient in
    ``alpha`` is ``K`` times a vector that costs no kernel product, and ``M^-1`` removes
    that factor.
    """

    def __init__(self, K: np.ndarray, L, labeled: np.ndarray, y: np.ndarray, gamma_A: float,
                 gamma_I_scaled: float):
        self.K = K
        self.L = L
        self.labeled = labeled
        self.y = np.asarray(y, dtype=np.float64)
        self.cost = np.full(labeled.size, 2.0 / labeled.size)
        self.two_gA = 2.0 * gamma_A
        self.two_gI = 2.0 * gamma_I_scaled

    def image(self, v: np.ndarray) -> np.ndarray:
        return self.K @ v[:-1]

    def outputs(self, v: np.ndarray, Tv: np.ndarray) -> np.ndarray:
        return Tv[self.labeled] + v[-1]

    def reg(self, u, Tu, v, Tv) -> float:
        value = self.two_gA * float(u[:-1] @ Tv)
        if self.two_gI:
            value += self.two_gI * float(Tu @ (self.L @ Tv))
        return value

    def precond_gradient(self, x, Tx, loss_grad) -> np.ndarray:
        h = np.empty_like(x)
        h[:-1] = self.two_gA * x[:-1]
        if self.two_gI:
            h[:-1] += self.two_gI * (self.L @ Tx)
        h[:-1][self.labeled] += loss_grad
        h[-1] = loss_grad.sum()
        return h

    def metric(self, u, v, Tv) -> float:
        return float(u[:-1] @ Tv) + float(u[-1] * v[-1])


class LapSVM(GuardedManifoldClassifier):
    """Laplacian Support Vector Machine (Belkin, Niyogi & Sindhwani, section 3.2).

    Minimises eq. 6 over ``f(x) = sum_i alpha_i K(x_i, x) + b`` (``i`` over labeled and
    unlabeled rows, ``b`` unpenalised and left out of the graph term as in eq. 10):

        (1/l) sum_labeled V(y_i f(x_i)) + gamma_A ||f||_K^2 + gamma_I s f^T L f,

    with ``V`` the hinge ``max(0, 1 - z)`` (the paper) or the squared hinge
    ``max(0, 1 - z)^2`` (Melacci & Belkin's primal LapSVM).  More than two classes are
    fitted one-vs-rest.

    Parameters
    ----------
    gamma_A : float, default=1e-4
        Weight of the ambient RKHS norm (``> 0``).
    gamma_I : float or "auto", default="auto"
        Weight of the intrinsic norm ``s f^T L f`` (``>= 0``); ``gamma_I = 0`` is a
        standard SVM with ``C = 1 / (2 gamma_A l)`` in scikit-learn's scaling.  See
        :class:`LapRLS` for the scale (``s = 1/(l+u)^2``) and for ``"auto"``: the same
        labeled-only CV over the same eight values (0 included), each value's folds solved
        from one factorisation (the dual of eq. 10 on the fold's rows of the deformed Gram
        matrix; the primal solver has the same minimiser, so its folds are scored this way
        too).  With the hinge loss a graph weight ``gamma_I s`` that is large compared with
        the kernel's scale makes most ``beta_i`` hit ``1/l``: ``f`` barely varies over the
        unlabeled rows and its sign is the sign of ``b``, one class for every row (g241c,
        100 labels, split 2, ``gamma_I = 1e4`` with the unnormalised Laplacian: 55 % of the
        ``beta_i`` at the bound, 100 % of the rows positive, 49.6 % accuracy).  LapRLS,
        without a bias, does not collapse that way.  ``"auto"`` with the normalised
        Laplacian (the defaults) reached ``SVC() - 1`` point on 15 of 16 SSL-book cells of
        split 2 against 10 for the old defaults (1e4, unnormalised; mean gain over SVC +11.6
        points against +4.6; median fit 3.8 s against 0.7 s;
        ``benchmarks/results/defaults_graph.md``).
    loss : {'hinge', 'squared_hinge'}, default='hinge'
    solver : {'auto', 'dual', 'primal'}, default='auto'
    tol : float, default=1e-5
        Dual: libsvm's KKT tolerance.  Primal: relative norm of the preconditioned
        gradient at which PCG stops.
    max_iter : int, optional
        Primal: PCG iteration limit (default 5000; each iteration costs one ``n x n``
        kernel product).  Dual: SMO iteration limit (default none).
    early_stopping : float, optional
        Primal only: stop when at most this fraction of the unlabeled rows changed
        predicted label since the previous check (Melacci & Belkin's stability
        criterion; our thresholding).  ``None`` runs to ``tol``.
    check_every : int, optional
        Primal early stopping: iterations between checks (default ``ceil(sqrt(n))``).
{kernel_graph_params}
    random_state : int, optional
        Seed of the approximate neighbour search and of the guard's folds.
    verbose : int, default=0
        Log progress to the ``semisup`` logger (1: INFO; 2: DEBUG, one line per PCG
        iteration).
    probability : bool, default=False
        Enable ``predict_proba`` (Platt sigmoids fitted on cross-validated decision values
        of the labeled rows, :mod:`semisup.calibration`; costs 5 extra fits).
    fallback : {"cv", "none"}, default="cv"
        ``"cv"``: the guard of :mod:`semisup.safety` -- 3-fold labeled-only
        cross-validation (held-out labeled rows hidden among the unlabeled ones) against
        the supervised counterpart (scikit-learn's ``SVC()``); the semi-supervised fit is
        kept only when it wins the guard's margin test, otherwise the estimator is
        that counterpart fitted on the labeled rows (``fallback_ is True``).  Costs about
        four fits.  ``"none"``: the method as published.  Skipped (the method as
        published) with ``kernel='precomputed'`` or a given ``graph`` matrix.

    Attributes
    ----------
    classes_ : ndarray
    alpha_ : ndarray of shape (n_train, n_outputs)
        Expansion coefficients (eq. 7).
    intercept_ : ndarray of shape (n_outputs,)
    transduction_ : ndarray of shape (n_train,)
    training_scores_ : ndarray
    objective_ : float or ndarray
        Primal objective (eq. 6 with the chosen loss) at the solution, per output.
    dual_objective_ : float or ndarray
        Dual solver only: the QP objective (equal to ``objective_`` at the optimum).
    dual_coef_ : ndarray of shape (n_outputs, n_labeled)
        Dual solver only: ``beta`` of eq. 9 (in ``[0, 1/l]`` for the hinge).
    n_iter_ : ndarray of int
        SMO or PCG iterations per output.
    solver_ : str
        The solver used.
    stopped_early_ : ndarray of bool
        Primal solver only: whether early stopping ended each run.
    gamma_ : float or None
    X_fit_ : ndarray or sparse matrix
    fallback_ : bool
        Whether the guard (``fallback="cv"``) replaced the method by its supervised
        counterpart (then ``supervised_estimator_``, an ``SVC`` fitted on the labeled rows
        with classes ``0 .. n_classes - 1``, answers the predictions).
    cv_scores_ : dict or None
        The guard's held-out accuracies (see :func:`semisup.safety.guard`).

    Notes
    -----
    ``'dual'`` (eqs. 9-11).  The QP over ``l`` dual variables ``beta``:
    ``max sum beta - 1/2 beta^T Q beta`` s.t. ``sum y_i beta_i = 0``, ``0 <= beta_i <= 1/l``
    with ``Q = Y J K (2 gamma_A I + 2 gamma_I s L K)^-1 J^T Y`` (eq. 10), then
    ``alpha = (2 gamma_A I + 2 gamma_I s L K)^-1 J^T Y beta`` (eq. 11).  Derivation: the
    Lagrangian of the slack form gives ``sum beta y = 0`` from ``b``, ``beta_i + zeta_i =
    1/l`` from ``xi_i`` (hence the box ``[0, 1/l]``), and eq. 11 from ``alpha``.  This is
    exactly the dual of a standard SVM with the kernel ``G = J K (2 gamma_A I + 2 gamma_I
    s L K)^-1 J^T`` and ``C = 1/l`` (libsvm's dual, which has the same equality
    constraint and box), so it is solved by :func:`semisup.solvers.qp.svm_dual`
    (``sklearn.svm.SVC(kernel='precomputed', C=1/l)``); ``b`` is libsvm's bias.  The
    matrix ``(I + r L K)^-1 J^T`` (``r = gamma_I s / gamma_A``) is one ``O(n^3)`` LU
    solve shared by all classes.  With the squared hinge the same derivation gives
    ``xi_i = l beta_i / 2``: the QP has ``Q + (l/2) I`` and no upper bound (libsvm is
    given ``C = 4 / sqrt(l)``, which no ``beta_i`` can reach since the objective at zero
    is 1, so ``xi_i <= sqrt(l)``).

    ``'primal'`` (Melacci & Belkin 2011; squared hinge only).  Non-linear conjugate
    gradients over ``(alpha, b)`` preconditioned by ``blockdiag(K, 1)`` with exact line
    search (:func:`semisup.solvers.pcg.squared_hinge_pcg`): one ``n x n`` kernel
    product per iteration, no ``O(n^3)`` factorisation, optional early stopping when the
    predicted labels of the unlabeled rows stop changing.

    ``'auto'``: ``'dual'`` for the hinge, ``'primal'`` for the squared hinge.  On the same
    loss both solvers reach the same minimiser (tested); the hinge and the squared hinge
    are different problems.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_moons
    >>> from semisup import LapSVM
    >>> X, y_true = make_moons(100, noise=0.05, random_state=0)
    >>> y = np.full(100, -1)
    >>> y[[0, 1, 2, 3]] = y_true[[0, 1, 2, 3]]
    >>> clf = LapSVM(gamma_A=1e-3, gamma_I=1e4, gamma=10.0).fit(X, y)
    >>> float(clf.score(X, y_true))
    1.0
    """

    def __init__(self, gamma_A: float = 1e-4, gamma_I: float | str = "auto", loss: str = "hinge",
                 solver: str = "auto", tol: float = 1e-5, max_iter: int | None = None,
                 early_stopping: float | None = None, check_every: int | None = None,
                 kernel: str = "rbf", gamma: float | None = None, degree: int = 3,
                 coef0: float = 1.0, graph="knn", n_neighbors: int = 6,
                 graph_weight: str = "heat", t: float | None = None,
                 graph_metric: str = "euclidean", graph_method: str = "auto",
                 laplacian: str = "normalized", laplacian_power: int = 1,
                 graph_scale: str = "n2", random_state: int | None = None, verbose: int = 0,
                 probability: bool = False, fallback: str = "cv"):
        self.loss = loss
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.early_stopping = early_stopping
        self.check_every = check_every
        self._set_kernel_graph_params(
            gamma_A=gamma_A, gamma_I=gamma_I, kernel=kernel, gamma=gamma, degree=degree,
            coef0=coef0, graph=graph, n_neighbors=n_neighbors, graph_weight=graph_weight, t=t,
            graph_metric=graph_metric, graph_method=graph_method, laplacian=laplacian,
            laplacian_power=laplacian_power, graph_scale=graph_scale, random_state=random_state)
        self.verbose = verbose
        self.probability = probability
        self.fallback = fallback

    def fit(self, X, y):
        # one convergence warning for the guard's fold fits and the final fit together
        with convergence_check(self, {"pcg": "max_iter", "smo": "max_iter"}):
            return super().fit(X, y)

    fit.__doc__ = GuardedManifoldClassifier.fit.__doc__

    def _resolve_solver(self) -> str:
        _check_choice(self.loss, "loss", LOSSES)
        _check_choice(self.solver, "solver", SOLVERS)
        _check_real(self.tol, "tol", positive=True)
        if self.max_iter is not None:
            _check_int(self.max_iter, "max_iter")
        if self.check_every is not None:
            _check_int(self.check_every, "check_every")
        if self.early_stopping is not None and not (
                isinstance(self.early_stopping, float | int) and 0 <= self.early_stopping < 1):
            raise ValueError(f"early_stopping must be None or a fraction in [0, 1), got "
                             f"{self.early_stopping!r}")
        solver = self.solver
        if solver == "auto":
            solver = "dual" if self.loss == "hinge" else "primal"
        if solver == "primal" and self.loss == "hinge":
            raise ValueError("solver='primal' minimises the squared hinge loss (Melacci & "
                             "Belkin): use loss='squared_hinge', or solver='dual' for the "
                             "hinge loss")
        if solver == "dual" and self.early_stopping is not None:
            raise ValueError("early_stopping applies to solver='primal' only")
        return solver

    def _fit(self, X, y) -> LapSVM:
        solver = self._resolve_solver()
        data, K, L, scale = self._setup(X, y)
        gamma_A = float(self.gamma_A)
        gamma_I_s = float(self.gamma_I) * scale
        targets = self._binary_targets(data)
        if solver == "dual":
            alpha, b, K_alpha = self._fit_dual(data, K, L, gamma_A, gamma_I_s, targets)
        else:
            alpha, b, K_alpha = self._fit_primal(data, K, L, gamma_A, gamma_I_s, targets)
        self.solver_ = solver
        self._store(data, alpha, b, K_alpha)
        warn_if_collapsed(self, self.transduction_[data.unlabeled], data.classes.size, hint=(
            "The labeled rows of one class barely constrain the fit (few labels, or classes "
            "of very different sizes): lower gamma_I relative to gamma_A, or label more rows "
            "of the smaller class"))
        lab = data.labeled
        obj = np.array([laplacian_objective(K_alpha[lab, j] + b[j], yk, alpha[:, j],
                                            K_alpha[:, j], L, gamma_A, gamma_I_s, self.loss)
                        for j, yk in enumerate(targets)])
        self.objective_ = float(obj[0]) if obj.size == 1 else obj
        return self

    def _fit_dual(self, data, K, L, gamma_A, gamma_I_s, targets):
        lab = data.labeled
        Z = deformation_columns(K, L, gamma_I_s / gamma_A, lab)   # (I + r L K)^-1 J^T
        # eq. 10 without the Y's: G = J K (2 gamma_A I + 2 gamma_I s L K)^-1 J^T
        G = deformed_gram(K, Z, lab) / (2.0 * gamma_A)
        alpha, b, beta, duals, iters = self._dual_solve(G, Z, targets, gamma_A, log=True)
        self.dual_coef_ = beta
        self.dual_objective_ = duals[0] if len(duals) == 1 else np.array(duals)
        self.n_iter_ = np.array(iters)
        self.stopped_early_ = np.zeros(len(targets), dtype=bool)
        return alpha, b, K @ alpha

    def _dual_solve(self, G, Z, targets, gamma_A, log=False, max_iter=None):
        """The QP of eq. 10 on the labeled Gram ``G`` (``/ 2 gamma_A`` applied), one per
        target; ``alpha`` by eq. 11.  Returns ``alpha, b, beta, dual objectives, iterations``.
        ``max_iter``: SMO limit (default: the ``max_iter`` parameter, -1 for none)."""
        l = G.shape[0]
        if self.loss == "hinge":
            C = 1.0 / l
        else:
            G = G.copy()
            G[np.diag_indices(l)] += 0.5 * l
            C = 4.0 / math.sqrt(l)
        if max_iter is None:
            max_iter = -1 if self.max_iter is None else int(self.max_iter)
        betas, biases, duals, iters = [], [], [], []
        for k, yk in enumerate(targets):
            res = svm_dual(G, yk, C, tol=float(self.tol), max_iter=max_iter)
            if self.loss == "squared_hinge" and res.at_bound:
                raise RuntimeError("internal error: the squared-hinge dual hit its bound")
            if log:
                logger.info("LapSVM dual output %d: %d SMO iterations, objective %.10g", k,
                            res.n_iter, res.objective)
            betas.append(res.beta)
            biases.append(res.bias)
            duals.append(res.objective)
            iters.append(res.n_iter)
        beta = np.vstack(betas)                                  # (n_outputs, l)
        Yb = (beta * np.vstack(targets)).T                       # (l, n_outputs): Y beta
        alpha = Z @ Yb / (2.0 * gamma_A)                         # eq. 11
        return alpha, np.array(biases), beta, duals, iters

    def _held_out_scores(self, X, y, folds) -> list[np.ndarray]:
        """Transductive cross-validation at the cost of one factorisation.

        As for :meth:`LapRLS._held_out_scores`: ``A = I + r L K`` does not depend on which
        rows are labeled, so the deformed Gram ``G`` and the columns ``Z`` of the full fit
        hold every fold's; a fold solves the dual of eq. 10 on ``G[tr, tr]`` with the box
        of its own ``l = |tr|`` (eq. 11 gives its ``alpha``), the same problem as a refit
        with ``y[labeled[test]] = -1``.  The primal solver minimises the same objective, so
        its folds are scored by this dual route too.

        Parameters
        ----------
        X, y : as for :meth:`fit`
        folds : list of (train, test)
            Positions into the labeled rows of ``y`` (in row order); every class keeps
            a labeled row in each ``train``.

        Returns
        -------
        list of ndarray
            Per fold, ``f`` at every training row: shape ``(n,)`` for two classes, else
            ``(n, n_classes)``.
        """
        if is_auto(self.gamma_I):
            return self._auto_held_out_scores(X, y, folds)
        # the primal solver's max_iter counts PCG iterations, not SMO ones
        max_iter = -1 if self._resolve_solver() == "primal" else None
        data, K, L, scale = self._setup(X, y)
        gamma_A = float(self.gamma_A)
        Z = deformation_columns(K, L, float(self.gamma_I) * scale / gamma_A, data.labeled)
        G = deformed_gram(K, Z, data.labeled) / (2.0 * gamma_A)
        targets = self._binary_targets(data)
        out = []
        for train, _ in folds:
            train = np.asarray(train)
            alpha, b, *_ = self._dual_solve(G[np.ix_(train, train)], Z[:, train],
                                            [t[train] for t in targets], gamma_A,
                                            max_iter=max_iter)
            scores = K @ alpha + b
            out.append(scores[:, 0] if scores.shape[1] == 1 else scores)
        return out

    def _fit_primal(self, data, K, L, gamma_A, gamma_I_s, targets):
        n = K.shape[0]
        lab, unl = data.labeled, data.unlabeled
        max_iter = 5000 if self.max_iter is None else int(self.max_iter)
        every = self.check_every or math.ceil(math.sqrt(n))
        alphas, biases, K_alphas, iters, stopped = [], [], [], [], []
        for k, yk in enumerate(targets):
            problem = LaplacianPrimalProblem(K, L, lab, yk, gamma_A, gamma_I_s)
            callback = None
            if self.early_stopping is not None and unl.size:
                callback = _StabilityCheck(unl, every, float(self.early_stopping))
            res = squared_hinge_pcg(problem, np.zeros(n + 1), tol=float(self.tol),
                                    max_iter=max_iter, callback=callback,
                                    verbose=int(self.verbose))
            logger.info("LapSVM primal output %d: %d PCG iterations, objective %.10g, "
                        "converged=%s, stopped early=%s", k, res.n_iter, res.objective,
                        res.converged, res.stopped_early)
            if not (res.converged or res.stopped_early):
                report_unconverged("pcg", f"max_iter={max_iter}, relative gradient norm "
                                          f"{res.grad_norm:.2e} > tol={self.tol:g}; or use "
                                          "early_stopping")
            alphas.append(res.x[:-1])
            biases.append(res.x[-1])
            K_alphas.append(res.Tx)
            iters.append(res.n_iter)
            stopped.append(res.stopped_early)
        self.n_iter_ = np.array(iters)
        self.stopped_early_ = np.array(stopped)
        return np.column_stack(alphas), np.array(biases), np.column_stack(K_alphas)


class _StabilityCheck:
    """Early stopping: the fraction of unlabeled rows whose predicted sign changed since the
    previous check (every ``every`` iterations) is at most ``threshold``."""

    def __init__(self, unlabeled: np.ndarray, every: int, threshold: float):
        self.unlabeled = unlabeled
        self.every = every
        self.threshold = threshold
        self.previous = None

    def __call__(self, it: int, x: np.ndarray, Tx: np.ndarray) -> bool:
        if it % self.every:
            return False
        signs = Tx[self.unlabeled] + x[-1] > 0
        stop = self.previous is not None and \
            np.mean(signs != self.previous) <= self.threshold
        self.previous = signs
        return bool(stop)


LapSVM.__doc__ = LapSVM.__doc__.replace("{kernel_graph_params}",
                                      kernel_graph_params("normalized"))
