"""Laplacian Regularized Least Squares (LapRLS), section 3.1 of Belkin, Niyogi & Sindhwani."""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from semisup._logging import get_logger
from semisup._validation import warn_if_collapsed
from semisup.manifold._base import GuardedManifoldClassifier
from semisup.manifold._rkhs import (
    deformation_columns,
    deformed_gram,
    kernel_graph_params,
    laplacian_objective,
)
from semisup.model_selection import is_auto


def _solve_spd(H: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Solve ``H X = B`` for a symmetric positive definite ``H`` (Cholesky, LU fallback)."""
    try:
        return sla.solve(H, B, assume_a="pos", check_finite=False)
    except (np.linalg.LinAlgError, sla.LinAlgError):  # round-off made it indefinite
        return sla.solve(H, B, check_finite=False)


def laprls_coefficients(G: np.ndarray, Y: np.ndarray, ridge: float,
                        fit_intercept: bool) -> tuple[np.ndarray, np.ndarray]:
    """Coefficients ``c`` (and bias) of kernel ridge regression on the deformed Gram ``G``.

    Minimises ``||Y - G c - 1 b^T||^2 + ridge c^T G c`` column by column, i.e. solves
    ``(G + ridge I) c = Y`` (no bias) or the bordered system
    ``[[G + ridge I, 1], [1^T, 0]] [c; b] = [Y; 0]`` (unpenalised bias).

    Returns
    -------
    c : ndarray of shape (l, n_outputs)
    b : ndarray of shape (n_outputs,)
    """
    l = G.shape[0]
    H = G + ridge * np.eye(l)
    if not fit_intercept:
        return _solve_spd(H, Y), np.zeros(Y.shape[1])
    B = np.zeros((l + 1, l + 1))
    B[:l, :l] = H
    B[:l, l] = B[l, :l] = 1.0
    rhs = np.vstack([Y, np.zeros((1, Y.shape[1]))])
    sol = sla.solve(B, rhs, assume_a="sym", check_finite=False)
    return sol[:l], sol[l]

logger = get_logger(__name__)


class LapRLS(GuardedManifoldClassifier):
    """Laplacian Regularized Least Squares classifier (Belkin, Niyogi & Sindhwani, eq. 8).

    Minimises eq. 6 with the squared loss over ``f(x) = sum_i alpha_i K(x_i, x)`` (+ ``b``
    with ``fit_intercept=True``), ``i`` running over labeled *and* unlabeled rows:

        (1/l) sum_labeled (y_i - f(x_i))^2 + gamma_A ||f||_K^2 + gamma_I s f^T L f,

    whose minimiser is eq. 8, ``alpha = (J K + gamma_A l I + gamma_I l s L K)^-1 Y`` with
    ``s = 1/(l+u)^2`` by default.  Several classes are fitted in one solve with a
    ``+1/-1`` one-vs-rest target matrix ``Y`` (one column per class; one column for two
    classes); prediction takes the arg max (the sign for two classes).

    Solver: with ``r = gamma_I s / gamma_A`` and ``A = I + r L K``, eq. 8 is equivalent to
    ``alpha = A^-1 J^T c`` with ``(G + gamma_A l I) c = Y_l`` and ``G = J K A^-1 J^T`` (see
    :mod:`semisup.manifold._rkhs`): one LU factorisation of the ``n x n`` matrix ``A``
    (``O(n^3)``, ``n = l + u``) and a Cholesky solve of size ``l``.  The dense ``K``
    takes ``8 n^2`` bytes.  ``gamma_I = 0`` gives ``A = I``: kernel ridge regression on the
    labeled rows (zero coefficients on the unlabeled ones), as noted after eq. 8.

    Default graph: 6-NN, heat weights, the normalised Laplacian ``I - D^-1/2 W D^-1/2``
    (``laplacian='normalized'``).  Over the SSL-book sets (14 set/label-size pairs, official
    splits) it beat the paper's unnormalised ``L`` in 83 of 112 untuned fits (22 losses,
    +1.9 points) and ranked above it with ``gamma_I`` chosen by labeled-only CV
    (``benchmarks/results/graph_defaults.md``).  Its square (``laplacian_power=2``) scored
    higher still on those sets but fails on two moons with one label per moon at the
    default weights, so it is not the default.  ``laplacian='unnormalized'`` is the paper's
    setting; every graph parameter can be chosen by ``GridSearchCV`` with
    :class:`semisup.model_selection.LabeledStratifiedKFold`.

    Parameters
    ----------
    gamma_A : float, default=1e-4
        Weight of the ambient RKHS norm ``||f||_K^2`` (``> 0``).
    gamma_I : float or "auto", default="auto"
        Weight of the intrinsic (graph) norm ``s f^T L f`` (``>= 0``).  ``"auto"`` chooses
        it by transductive CV over the labeled rows (stratified, ``k = min(5, smallest
        class)`` folds, repeated when the classes are tiny; ties go to the larger value)
        among eight values: those that put the mean eigenvalue of ``gamma_I s L K`` at
        ``10^k gamma_A``, ``k = 4..-2`` (:func:`semisup.linear.laplacian.gamma_I_grid`), and
        0 (kernel ridge regression on the labeled rows), so the fit falls back to the
        supervised kernel machine when the graph does not help.  The kernel and graph are
        built once, and each value scores every fold from one factorisation, so the
        selection costs about five to eight fits; the result is refitted (``gamma_I_``,
        ``cv_results_``).  With a class of one labeled row: 1e4, with a warning.  It is the
        default because a fixed weight hurts where the data have no cluster structure: on
        official split 2 of the SSL-book sets (10 and 100 labels) the old default 1e4
        reached ``SVC() - 1`` point on 11 of 16 cells (g241c, g241d at 100 labels: 52.6 %,
        56.7 %), ``"auto"`` on 15 (74.9 %, 74.9 %; mean gain over SVC +12.0 points against
        +7.8; median fit 3.4 s against 0.6 s; ``benchmarks/results/defaults_graph.md``).
        With the default ``graph_scale='n2'`` the graph term shrinks like ``1/(l+u)^2``, so
        useful values grow with ``n``: what matters is ``r = gamma_I s / gamma_A`` (1e4
        gives ``r = 1e8 / n^2``: 2,500 at n = 200, 44 at n = 1,500).  The paper's
        experiments quote ``gamma_I l / (l+u)^2``, e.g. 0.045 with ``gamma_A l = 0.005``
        (USPS): pass a number to reproduce them.
    fit_intercept : bool, default=False
        Add an unpenalised bias ``b`` (left out of the graph term).  Eq. 8 has none.
{kernel_graph_params}
    random_state : int, optional
        Seed of the approximate neighbour search and of the folds of ``gamma_I="auto"``.
    verbose : int, default=0
        Log progress to the ``semisup`` logger (1: INFO, 2: DEBUG).
    probability : bool, default=False
        Enable ``predict_proba`` (Platt sigmoids fitted on cross-validated decision values
        of the labeled rows, :mod:`semisup.calibration`; costs 5 extra fits).
    fallback : {"cv", "none"}, default="cv"
        ``"cv"``: the guard of :mod:`semisup.safety` -- 3-fold labeled-only
        cross-validation (held-out labeled rows hidden among the unlabeled ones; with
        ``gamma_I="auto"`` each fold chooses its own value) against the supervised
        counterpart (scikit-learn's ``SVC()``); the semi-supervised fit is kept only when
        it wins the guard's margin test, otherwise the estimator is that counterpart fitted
        on the labeled rows (``fallback_ is True``).  Costs about four fits.  ``"none"``:
        the method as published.  Skipped (the method as published) with
        ``kernel='precomputed'`` or a given ``graph`` matrix.  Its default since the held-out
        sets of the benchmark of defaults (10 small UCI and 6 IDA sets at 10 and 100 labels,
        ``benchmarks/results/defaults_r3s7_uci.md``): without it LapRLS was within a point
        of ``SVC()`` on 16 of 32 cells (heart, 10 labels: -14.2 points; german: -6.9).

    Attributes
    ----------
    classes_ : ndarray
        Class labels.
    alpha_ : ndarray of shape (n_train, n_outputs)
        Expansion coefficients over the training rows (eq. 7).
    intercept_ : ndarray of shape (n_outputs,)
        Bias (zeros without ``fit_intercept``).
    transduction_ : ndarray of shape (n_train,)
        Given labels on labeled rows, predicted labels on unlabeled rows.
    training_scores_ : ndarray
        ``f`` at the training rows.
    objective_ : float or ndarray of shape (n_outputs,)
        Value of the objective above at the solution (one per output column).
    gamma_ : float or None
        Kernel width used.
    X_fit_ : ndarray or sparse matrix
        Training rows (kept for the out-of-sample extension; ``None`` when precomputed).
    gamma_I_ : float
        With ``gamma_I="auto"``: the value chosen (and refitted).
    cv_results_ : dict
        With ``gamma_I="auto"``: ``param_gamma_I``, ``split<k>_test_score``,
        ``mean_test_score``, ``std_test_score``, ``rank_test_score`` (held-out accuracy).
    fallback_ : bool
        Whether the guard (``fallback="cv"``) replaced the method by its supervised
        counterpart (then ``supervised_estimator_``, an ``SVC`` fitted on the labeled rows
        with classes ``0 .. n_classes - 1``, answers the predictions, and the attributes
        above are absent).
    cv_scores_ : dict or None
        The guard's result (see :func:`semisup.safety.guard`).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_moons
    >>> from semisup.manifold import LapRLS
    >>> X, y_true = make_moons(200, noise=0.1, random_state=1)
    >>> y = np.full(200, -1)
    >>> y[[0, 3]] = y_true[[0, 3]]          # one label per moon
    >>> clf = LapRLS(gamma_A=1e-3, gamma_I=1e4, gamma=10.0).fit(X, y)
    >>> float(clf.score(X, y_true))
    1.0
    """

    def __init__(self, gamma_A: float = 1e-4, gamma_I: float | str = "auto",
                 fit_intercept: bool = False,
                 kernel: str = "rbf", gamma: float | None = None, degree: int = 3,
                 coef0: float = 1.0, graph="knn", n_neighbors: int = 6,
                 graph_weight: str = "heat", t: float | None = None,
                 graph_metric: str = "euclidean", graph_method: str = "auto",
                 laplacian: str = "normalized", laplacian_power: int = 1,
                 graph_scale: str = "n2", random_state: int | None = None, verbose: int = 0,
                 probability: bool = False, fallback: str = "cv"):
        self.fit_intercept = fit_intercept
        self._set_kernel_graph_params(
            gamma_A=gamma_A, gamma_I=gamma_I, kernel=kernel, gamma=gamma, degree=degree,
            coef0=coef0, graph=graph, n_neighbors=n_neighbors, graph_weight=graph_weight, t=t,
            graph_metric=graph_metric, graph_method=graph_method, laplacian=laplacian,
            laplacian_power=laplacian_power, graph_scale=graph_scale, random_state=random_state)
        self.verbose = verbose
        self.probability = probability
        self.fallback = fallback

    def _fit(self, X, y) -> LapRLS:
        data, K, L, scale = self._setup(X, y)
        lab = data.labeled
        l = lab.size
        gamma_I_s = float(self.gamma_I) * scale
        ratio = gamma_I_s / float(self.gamma_A)
        logger.info("LapRLS n=%d l=%d ratio gamma_I s / gamma_A=%.4g", K.shape[0], l, ratio)
        Z = deformation_columns(K, L, ratio, lab)
        G = deformed_gram(K, Z, lab)
        Y = np.column_stack(self._binary_targets(data))
        c, b = laprls_coefficients(G, Y, float(self.gamma_A) * l, bool(self.fit_intercept))
        alpha = Z @ c
        K_alpha = K @ alpha
        self._store(data, alpha, b, K_alpha)
        warn_if_collapsed(self, self.transduction_[data.unlabeled], data.classes.size, hint=(
            "The labeled rows of one class barely constrain the fit (few labels, or classes "
            "of very different sizes): lower gamma_I relative to gamma_A, or label more rows "
            "of the smaller class"))
        obj = np.array([laplacian_objective(K_alpha[lab, j] + b[j], Y[:, j], alpha[:, j],
                                            K_alpha[:, j], L, float(self.gamma_A), gamma_I_s,
                                            "squared") for j in range(Y.shape[1])])
        self.objective_ = float(obj[0]) if obj.size == 1 else obj
        return self

    def _held_out_scores(self, X, y, folds) -> list[np.ndarray]:
        """Transductive cross-validation of eq. 8 at the cost of one fit.

        A fold keeps the labels of the labeled rows ``train`` and hides those of ``test``
        (they stay in ``X`` as unlabeled rows). ``A = I + r L K`` does not depend on which
        rows are labeled, so ``Z`` and ``G`` of the full fit hold every fold's: a fold's
        coefficients are ``(G[tr, tr] + gamma_A |tr| I) c = Y[tr]`` and its outputs
        ``K Z[:, tr] c``, the same as refitting with ``y[labeled[test]] = -1``.  With
        ``gamma_I="auto"`` each fold first chooses its own value, as its refit would
        (:meth:`_auto_held_out_scores`: nested CV, about one automatic fit per fold).

        Parameters
        ----------
        X, y : as for :meth:`fit`
        folds : list of (train, test)
            Positions into the labeled rows of ``y`` (in row order); every class keeps
            a labeled row in each ``train``.

        Returns
        -------
        list of ndarray
            Per fold, the ``training_scores_`` of that refit: shape ``(n,)`` for two
            classes, else ``(n, n_classes)``.
        """
        if is_auto(self.gamma_I):
            return self._auto_held_out_scores(X, y, folds)
        data, K, L, scale = self._setup(X, y)
        lab = data.labeled
        ratio = float(self.gamma_I) * scale / float(self.gamma_A)
        Z = deformation_columns(K, L, ratio, lab)
        G = deformed_gram(K, Z, lab)
        Y = np.column_stack(self._binary_targets(data))
        out = []
        for train, _ in folds:
            train = np.asarray(train)
            c, b = laprls_coefficients(G[np.ix_(train, train)], Y[train],
                                       float(self.gamma_A) * train.size,
                                       bool(self.fit_intercept))
            scores = K @ (Z[:, train] @ c) + b
            out.append(scores[:, 0] if scores.shape[1] == 1 else scores)
        return out


LapRLS.__doc__ = LapRLS.__doc__.replace("{kernel_graph_params}",
                                      kernel_graph_params("normalized"))
