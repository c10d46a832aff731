"""The prototype vector machine (Zhang, Kwok & Parvin, ICML 2009 / TNNLS 2015).

Graph-regularised semi-supervised classification in ``O(n m^2)`` time and ``O(n m)`` memory:
``m`` k-means prototypes both approximate the graph Laplacian (Nyström, eqs. 13-14) and carry
the model, ``f(x) = sum_j f_vj K(x, v_j)`` (eq. 15), so that only the ``m`` prototype labels
``f_v`` are learned.
"""

from __future__ import annotations

import time

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from semisup._logging import get_logger, verbosity
from semisup._validation import (
    check_positive,
    check_semi_supervised,
    check_X,
    warn_degenerate,
    warn_if_collapsed,
)
from semisup.base import SemiSupervisedClassifierMixin, SupervisedFallbackMixin
from semisup.calibration import ProbabilityMixin
from semisup.kernels import default_gamma
from semisup.prototypes.lowrank import LAPLACIANS, check_n_nearest, prototype_kernel, sparsify_rows
from semisup.prototypes.problem import LOSSES, REGULARIZERS, PrototypeGraph, check_graph_scale
from semisup.prototypes.prototypes import METHODS, resolve_n_prototypes, select_prototypes


def resolve_prototypes(estimator, X, random_state) -> np.ndarray:
    """Prototypes from an estimator's ``prototypes``/``n_prototypes``/``kmeans_max_iter``."""
    spec = estimator.prototypes
    if isinstance(spec, str):
        m = resolve_n_prototypes(estimator.n_prototypes, X.shape[0])
        return select_prototypes(X, m, method=spec, max_iter=estimator.kmeans_max_iter,
                                 random_state=random_state)
    V = np.asarray(spec, dtype=np.float64)
    if V.ndim != 2 or V.shape[1] != X.shape[1] or V.shape[0] < 1:
        raise ValueError(f"prototypes given as an array must have shape (m, {X.shape[1]}), "
                         f"got {V.shape}; or pass one of {METHODS}")
    if not np.all(np.isfinite(V)):
        raise ValueError("prototypes contain NaN or infinity")
    return V


#: default Gaussian width of the prototype graph, in units of the reciprocal mean squared
#: distance (:func:`semisup.kernels.default_gamma`)
GAMMA_FACTOR = 16.0


def resolve_gamma(gamma, X) -> float:
    """``gamma``, or by default ``16 / (mean squared distance)``.

    A graph affinity has to be much narrower than the RKHS default ``1 / mean squared
    distance`` (at that width almost every pair is strongly connected).  On the paper's
    benchmark sets the cross-validated width lies within a factor ``2^+-2`` of ``16`` times
    the library default.
    """
    if gamma is None:
        return GAMMA_FACTOR * default_gamma(X)
    return check_positive(gamma, "gamma")


def class_targets(data) -> np.ndarray:
    """``+1/-1`` target matrix of the labeled rows: one column for two classes (the second
    class positive), one one-vs-rest column per class otherwise."""
    n_classes = data.classes.size
    if n_classes == 2:
        return data.binary_targets(1)[:, None]
    return np.where(data.y_index[:, None] == np.arange(n_classes)[None, :], 1.0, -1.0)


logger = get_logger(__name__)


class _PVMPrediction:
    """Prediction of :class:`PrototypeVectorMachine` as published; it follows
    :class:`~semisup.base.SupervisedFallbackMixin` in the bases, so that under a fallback the
    mixin's ``predict`` / ``decision_function`` (the supervised counterpart's) answer first."""

    def _labels(self, scores: np.ndarray) -> np.ndarray:
        if scores.shape[1] == 1:
            return self.classes_[(scores[:, 0] > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]

    def decision_function(self, X) -> np.ndarray:
        """Compute the decision values ``K(x, V) f_v + b`` of new rows.

        Shape (n,) for two classes (positive: ``classes_[1]``), (n, n_classes)
        otherwise.  ``O(m d)`` per point.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            New rows.

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_classes)
            Decision values: the score of ``classes_[1]``, or one column per class.
        """
        check_is_fitted(self)
        X = check_X(X, estimator=self, reset=False)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but {type(self).__name__} is "
                             f"expecting {self.n_features_in_} features as input")
        Ht = prototype_kernel(X, self.prototypes_, self.gamma_)
        if self.n_nearest_prototypes is not None:
            Ht = sparsify_rows(Ht, self.n_nearest_prototypes)
        scores = np.asarray(Ht @ self.prototype_labels_) + self.intercept_
        return scores[:, 0] if scores.shape[1] == 1 else scores

    def predict(self, X) -> np.ndarray:
        """Class labels of ``X``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            New rows.

        Returns
        -------
        ndarray of shape (n_samples,)
            Predicted class labels.
        """
        scores = self.decision_function(X)
        return self._labels(scores[:, None] if scores.ndim == 1 else scores)


class PrototypeVectorMachine(SupervisedFallbackMixin, _PVMPrediction,
                             SemiSupervisedClassifierMixin, ProbabilityMixin, ClassifierMixin,
                             BaseEstimator):
    """Prototype vector machine (PVM) for large-scale graph-based semi-supervised learning.

    The decision function is ``f(x) = sum_j f_vj K(x, v_j) (+ b)`` (eqs. 15-16) over ``m``
    prototypes ``v_j`` (k-means centres of all rows, Section III), with the Gaussian kernel
    ``K(x, v) = exp(-gamma ||x - v||^2)`` (eq. 30).  The prototype labels ``f_v`` minimise

    ``s (H f_v)^T S (H f_v) + C1 loss(H_l f_v, y_l) + C2 R(f_v)``                  (eq. 22)

    where ``H = K(X, V)`` (eq. 17), ``S`` is the Nyström approximation (eq. 13 or 14) of the
    graph Laplacian of the kernel graph, ``s`` the graph scale, and ``R`` either
    ``||H_u f_v||^2`` (predictions on the unlabeled rows, as LGC) or ``f_v^T K_v f_v`` (the
    RKHS norm, ``K_v = K(V, V)``).

    * ``loss='square'``: ``||H_l f_v - y_l||^2``, solved in closed form (eq. 23) for all
      classes at once (one ``+1/-1`` column per class, one ``m x m`` solve).
    * ``loss='hinge'``: ``sum_i max(0, 1 - y_i f(x_i))`` with regulariser
      ``(1/2) f_v^T A f_v``, ``A = s H^T S H + C2 R`` (eq. 24); the ``l``-variable dual (27)
      goes to an SVM solver and ``f_v`` is recovered by eq. (29).  More than two classes:
      one-vs-rest (the class with the largest decision value wins).

    Training costs ``O(n d m)`` for k-means and ``H`` plus ``O(n m^2)`` for ``H^T S H``;
    memory is ``O(n m)``; prediction is ``O(m d)`` per point.

    Parameters
    ----------
    loss : {'square', 'hinge'}, default='square'
    n_prototypes : int or 'auto', default='auto'
        ``m``; ``'auto'`` is the paper's ``0.1 n`` for ``n <= 3000``, else 200.
    C1 : float, default=1.0
        Weight of the loss on the labeled rows (box bound of the hinge dual).
    C2 : float, default=0.0
        Weight of ``R``.  The paper's experiments use ``C2 = 0``.
    regularizer : {'unlabeled', 'rkhs'}, default='unlabeled'
        ``R = ||H_u f_v||^2`` (eq. 22) or ``f_v^T K_v f_v`` (Section IV-A1, footnote 2).
    laplacian : {'normalized', 'unnormalized'}, default='normalized'
        Eq. (14) or eq. (13).
    graph_scale : {'auto', 'none'} or float, default='auto'
        Multiplier ``s`` of the graph term: ``'auto'`` is ``l / sum_i d_i`` (unnormalised) or
        ``l / n`` (normalised), so that ``C1`` weighs the mean labeled loss against an
        average of the graph term and keeps its meaning across ``n``, ``l`` and kernel
        widths; ``'none'`` is eq. (22) as printed (see :meth:`PrototypeGraph.graph_scale`).
    gamma : float, optional
        Gaussian kernel parameter (``beta`` of eq. 30); default ``16 / (mean squared
        distance)``, i.e. 16 times :func:`semisup.kernels.default_gamma` (see
        :func:`resolve_gamma`).  The paper selects it by cross-validation from
        ``2^-5 .. 2^5`` times the reciprocal mean distance.
    n_nearest_prototypes : int, optional
        Sparsify the label-reconstruction matrix ``H``: each row keeps only its ``k`` nearest
        prototypes (after eq. 17), at training and prediction time.  The graph
        approximation keeps the dense ``E = K(X, V)`` (eq. 12).
    prototypes : {'kmeans', 'minibatch', 'random'} or array of shape (m, d), default='kmeans'
        How to choose the prototypes (see
        :func:`semisup.prototypes.prototypes.select_prototypes`), or the prototypes
        themselves (then ``n_prototypes`` is ignored).
    kmeans_max_iter : int, default=5
        Lloyd iterations of k-means (the paper fixes about five).
    fit_intercept : bool, default=False
        Hinge loss only: add an unpenalised bias ``b`` (the standard SVM dual with its
        equality constraint).  ``False`` solves eq. (27) exactly.
    tol : float, default=1e-3
        Tolerance of the hinge-loss dual solver (libsvm's maximal KKT violation; its own
        default).
    random_state : int, RandomState or None
        Seeds k-means and the guard's folds.
    verbose : bool, default=False
        Log the time of each stage (INFO level of the ``semisup.prototypes.pvm`` logger).
    probability : bool, default=False
        Enable ``predict_proba`` (Platt sigmoids fitted on cross-validated decision values
        of the labeled rows, :mod:`semisup.calibration`; costs 5 extra fits).
    fallback : {"cv", "none"}, default="cv"
        ``"cv"``: the guard of :mod:`semisup.safety` -- 3-fold labeled-only
        cross-validation (held-out labeled rows hidden among the unlabeled ones) against
        the supervised counterpart (scikit-learn's ``SVC()``); the semi-supervised fit is
        kept only when it wins the guard's margin test, otherwise the estimator is
        that counterpart fitted on the labeled rows (``fallback_ is True``).  Costs about
        four fits.  ``"none"``: the method as published.  Distributed row blocks skip the
        guard.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    prototypes_ : ndarray of shape (m, d)
    prototype_labels_ : ndarray of shape (m, n_outputs)
        ``f_v`` per output (one column for two classes, one per class otherwise).
    intercept_ : ndarray of shape (n_outputs,)
    gamma_ : float
        Kernel parameter used.
    graph_scale_ : float
        Multiplier ``s`` used.
    n_prototypes_ : int
    transduction_ : ndarray of shape (n_samples,)
        Given labels on labeled rows, predictions ``H_u f_v`` on unlabeled rows.
    n_iter_ : ndarray of shape (n_outputs,)
        SMO iterations of the hinge dual per output (1 for the closed-form square loss).
    timings_ : dict
        Seconds spent in ``prototypes`` (k-means), ``graph`` (``H``, ``K_v``, ``H^T S H``,
        ``H^T H``) and ``solve``.
    n_features_in_ : int
    fallback_ : bool
        Whether the guard (``fallback="cv"``) replaced the method by its supervised
        counterpart (then ``supervised_estimator_``, an ``SVC`` fitted on the labeled rows
        with classes ``0 .. n_classes - 1``, answers the predictions).
    cv_scores_ : dict or None
        The guard's held-out accuracies (see :func:`semisup.safety.guard`).

    Notes
    -----
    With ``C2 = 0`` the ``m x m`` systems can be singular (the graph term does not penalise
    functions that are constant on the graph's components, and nearly collinear kernel
    columns leave directions of ``f_v`` that change no prediction on the data).  They are
    solved by pseudo-inverses on their numerical range (minimum-norm solutions, see
    :mod:`semisup.prototypes.problem`).  For the hinge loss, eq. (28) uses ``A^+``: a
    direction that ``A`` does not penalise at all is left out of ``f_v``; ``fit_intercept``
    adds an explicit free bias instead.

    Examples
    --------
    >>> import numpy as np
    >>> from semisup.prototypes import PrototypeVectorMachine
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(-2, 1, (100, 2)), rng.normal(2, 1, (100, 2))])
    >>> y = np.full(200, -1); y[:5] = 0; y[100:105] = 1
    >>> clf = PrototypeVectorMachine(n_prototypes=20, random_state=0).fit(X, y)
    >>> float(np.mean(clf.transduction_[:100] == 0)) > 0.9
    True
    """

    def __init__(self, loss: str = "square", n_prototypes="auto", C1: float = 1.0,
                 C2: float = 0.0, regularizer: str = "unlabeled",
                 laplacian: str = "normalized", graph_scale="auto",
                 gamma: float | None = None, n_nearest_prototypes: int | None = None,
                 prototypes="kmeans", kmeans_max_iter: int = 5, fit_intercept: bool = False,
                 tol: float = 1e-3, random_state=None, verbose: bool = False,
                 probability: bool = False, fallback: str = "cv"):
        self.loss = loss
        self.n_prototypes = n_prototypes
        self.C1 = C1
        self.C2 = C2
        self.regularizer = regularizer
        self.laplacian = laplacian
        self.graph_scale = graph_scale
        self.gamma = gamma
        self.n_nearest_prototypes = n_nearest_prototypes
        self.prototypes = prototypes
        self.kmeans_max_iter = kmeans_max_iter
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.random_state = random_state
        self.verbose = verbose
        self.probability = probability
        self.fallback = fallback

    # ------------------------------------------------------------------ validation

    def _check_params(self) -> None:
        if self.loss not in LOSSES:
            raise ValueError(f"loss must be one of {LOSSES}, got {self.loss!r}")
        if self.regularizer not in REGULARIZERS:
            raise ValueError(f"regularizer must be one of {REGULARIZERS}, got "
                             f"{self.regularizer!r}")
        if self.laplacian not in LAPLACIANS:
            raise ValueError(f"laplacian must be one of {LAPLACIANS}, got {self.laplacian!r}")
        check_positive(self.C1, "C1")
        check_positive(self.C2, "C2", allow_zero=True)
        check_positive(self.tol, "tol")
        if self.fit_intercept and self.loss != "hinge":
            raise ValueError("fit_intercept=True is only available with loss='hinge' (the "
                             "square loss of eq. 22 has no bias); set fit_intercept=False")
        check_n_nearest(self.n_nearest_prototypes)
        check_graph_scale(self.graph_scale)

    def _log(self, msg: str) -> None:
        logger.info("%s: %s", type(self).__name__, msg)

    # ------------------------------------------------------------------ fitting

    def fit(self, X, y):
        """Fit on labeled and unlabeled rows (``y == -1`` marks unlabeled rows).

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
        return self._fit_guarded(X, y)

    def _fit_plain(self, X, y) -> None:
        """PVM as published (``fallback="none"``; also every fit of distributed row blocks,
        which the guard skips)."""
        self._check_probability()
        if getattr(type(X), "_semisup_distributed", False):  # row blocks on a Dask cluster
            from semisup.distributed._estimators import fit_pvm_distributed

            with verbosity(self.verbose):
                fit_pvm_distributed(self, X, y)
            return
        with verbosity(self.verbose):
            data = self._fit(X, y)
            self._fit_probability(data.X, y)

    def _fit(self, X, y):
        data = check_semi_supervised(X, y, require_unlabeled=True, estimator=self)
        self._check_params()
        rng = check_random_state(self.random_state)
        X = data.X
        timings = {}

        t0 = time.perf_counter()
        V = resolve_prototypes(self, X, rng)
        timings["prototypes"] = time.perf_counter() - t0
        if V.shape[0] < data.classes.size:
            warn_degenerate(self, f"{V.shape[0]} prototype(s) for {data.classes.size} classes: "
                            "the label function is spanned by fewer functions than there are "
                            "classes", "raise n_prototypes (or keep 'auto')")
        self._log(f"{V.shape[0]} prototypes in {timings['prototypes']:.3f} s")

        t0 = time.perf_counter()
        gamma = resolve_gamma(self.gamma, X)
        graph = PrototypeGraph(X, V, gamma, laplacian=self.laplacian,
                               n_nearest_prototypes=self.n_nearest_prototypes)
        timings["graph"] = time.perf_counter() - t0
        self._log(f"H and H^T S H ({X.shape[0]} x {V.shape[0]}) in {timings['graph']:.3f} s")

        t0 = time.perf_counter()
        sol = graph.solve(data.labeled, class_targets(data), loss=self.loss, C1=self.C1,
                          C2=self.C2, regularizer=self.regularizer,
                          graph_scale=self.graph_scale, fit_intercept=self.fit_intercept,
                          tol=self.tol)
        F, b = sol.prototype_labels, sol.intercept
        timings["solve"] = time.perf_counter() - t0
        self._log(f"solve in {timings['solve']:.3f} s")

        transduction = np.empty(X.shape[0], dtype=data.classes.dtype)
        transduction[data.labeled] = data.classes[data.y_index]
        if data.unlabeled.size:
            scores = np.asarray(graph.H[data.unlabeled] @ F) + b
            self.classes_ = data.classes
            transduction[data.unlabeled] = self._labels(scores)
            warn_if_collapsed(self, transduction[data.unlabeled], data.classes.size, hint=(
                "Raise n_prototypes, lower C2 (the graph term) or check the kernel width "
                "gamma"))
        self._set_fitted(data.classes, V, sol, gamma, X.shape[1], timings, transduction)
        return data

    def _set_fitted(self, classes, V, sol, gamma, n_features, timings, transduction) -> None:
        """The fitted attributes (shared with the distributed fit)."""
        self.classes_ = classes
        self.prototypes_ = V
        self.prototype_labels_ = sol.prototype_labels
        self.intercept_ = sol.intercept
        self.gamma_ = gamma
        self.graph_scale_ = sol.graph_scale
        self.n_prototypes_ = V.shape[0]
        self.n_features_in_ = n_features
        self.timings_ = timings
        self.n_iter_ = sol.n_iter
        self.transduction_ = transduction

    # ------------------------------------------------------------------ prediction

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
