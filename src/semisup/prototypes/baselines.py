"""Scalable baselines the PVM paper compares with (Section II-B1 and Section V-C).

* :class:`NystromLabelSpreading`: learning with local and global consistency (LGC, Zhou et
  al.) with the normalised affinity replaced by its Nyström approximation and the
  ``n x n`` inverse by the Woodbury identity (Camps-Valls et al., "NYS-LGC").
* :class:`ClusterLapRLS`: Laplacian RLS (:class:`semisup.manifold.LapRLS`) trained on the
  labeled rows plus the k-means centres of all rows standing in for the unlabeled data
  ("CB-LapRLS").

Exact LGC is :class:`sklearn.semi_supervised.LabelSpreading`.
"""

from __future__ import annotations

import time
import warnings
from typing import NamedTuple

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from semisup._validation import (
    CollapseWarning,
    check_positive,
    check_semi_supervised,
    check_X,
    warn_if_collapsed,
)
from semisup.base import SemiSupervisedClassifierMixin, SupervisedFallbackMixin
from semisup.calibration import ProbabilityMixin
from semisup.kernels import kernel_matrix
from semisup.prototypes.lowrank import LAPLACIANS, NystromLaplacian, prototype_kernel
from semisup.prototypes.pvm import resolve_gamma, resolve_prototypes

_RTOL = 1e-10


def _check_fitted_X(estimator, X):
    check_is_fitted(estimator)
    X = check_X(X, estimator=estimator, reset=False)
    if X.shape[1] != estimator.n_features_in_:
        raise ValueError(f"X has {X.shape[1]} features, but {type(estimator).__name__} is "
                         f"expecting {estimator.n_features_in_} features as input")
    return X


def _transduction(estimator, data, predicted_unlabeled: np.ndarray) -> np.ndarray:
    """Labels of the training rows; warns (once per fit) on a one-class collapse."""
    out = np.empty(data.X.shape[0], dtype=data.classes.dtype)
    out[data.labeled] = data.classes[data.y_index]
    out[data.unlabeled] = predicted_unlabeled
    warn_if_collapsed(estimator, out[data.unlabeled], data.classes.size, hint=(
        "the prototypes do not separate the classes: raise n_prototypes, or lower the "
        "graph weight relative to the labels"))
    return out


# ------------------------------------------------------------------------------------------
# Nyström LGC
# ------------------------------------------------------------------------------------------


class NystromLGCFactor(NamedTuple):
    """``Q ~ G G^T`` and the eigen-decomposition ``G^T G = P diag(mu) P^T``.

    Attributes
    ----------
    GP : ndarray of shape (n, r)
        ``G P``; ``(I - a G G^T)^-1 = I + G P diag(a / (1 - a mu)) (G P)^T``.
    mu : ndarray of shape (r,)
        Eigenvalues of ``G^T G`` (those of ``Q``), clipped at 1, the spectral radius of the
        exact normalised affinity.
    E, W_pinv, d_isqrt
        ``K(X, V)``, ``K(V, V)^+`` and ``D^-1/2`` (for the out-of-sample extension).
    """

    GP: np.ndarray
    mu: np.ndarray
    E: np.ndarray
    W_pinv: np.ndarray
    d_isqrt: np.ndarray


def nystrom_lgc_factor(X, landmarks: np.ndarray, gamma: float) -> NystromLGCFactor:
    """Low-rank factor of LGC's normalised affinity ``D^-1/2 K D^-1/2`` (``O(n m^2)``)."""
    E = prototype_kernel(X, landmarks, gamma)
    W = kernel_matrix(landmarks, kernel="rbf", gamma=gamma)
    lap = NystromLaplacian(E, W, kind="normalized", rtol=_RTOL)
    G = lap.normalized_affinity_factor(_RTOL)
    mu, P = np.linalg.eigh(G.T @ G)
    d_isqrt = 1.0 / np.sqrt(np.maximum(lap.degree, 1e-12 * lap.degree.max()))
    return NystromLGCFactor(G @ P, np.minimum(mu, 1.0), E, lap.W_pinv, d_isqrt)


class _NystromLGCPrediction:
    """Prediction of :class:`NystromLabelSpreading` as published; it follows
    :class:`~semisup.base.SupervisedFallbackMixin` in the bases, so that under a fallback the
    mixin's ``predict`` / ``predict_proba`` (the supervised counterpart's) answer first."""

    def predict_proba(self, X) -> np.ndarray:
        """Class distributions of new points.

        The non-negative part of ``K(x, X) D^-1/2 F`` (one spreading step from the training
        rows), normalised to sum to one.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            New rows.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Class probabilities, columns in the order of ``classes_``.
        """
        X = _check_fitted_X(self, X)
        scores = np.maximum(prototype_kernel(X, self.prototypes_, self.gamma_)
                            @ self._propagator, 0.0)
        norm = scores.sum(axis=1, keepdims=True)
        return np.divide(scores, norm, out=np.full_like(scores, 1.0 / scores.shape[1]),
                         where=norm > 0)

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
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]


class NystromLabelSpreading(SupervisedFallbackMixin, _NystromLGCPrediction,
                            SemiSupervisedClassifierMixin, ClassifierMixin, BaseEstimator):
    """LGC label spreading with a Nyström affinity, in ``O(n m^2)`` time and ``O(n m)`` memory.

    LGC's labels are ``F = (1 - alpha) (I - alpha Q)^-1 Y`` (eq. 8) with the normalised
    affinity ``Q = D^-1/2 K D^-1/2``.  With ``K ~ E W^+ E^T`` (eq. 11), ``Q ~ G G^T`` for an
    ``n x m`` factor ``G``, and the Woodbury identity gives
    ``(I - alpha G G^T)^-1 = I + alpha G (I - alpha G^T G)^-1 G^T``.  Unlike exact LGC the
    affinity keeps its diagonal (``K(x, x) = 1``).

    Parameters
    ----------
    alpha : float, default=0.2
        Propagation weight in (0, 1), as :class:`sklearn.semi_supervised.LabelSpreading`
        (same default; Zhou et al. use 0.99).
    n_prototypes : int or 'auto', default='auto'
        Landmarks ``m`` (PVM's default rule).
    gamma : float, optional
        Gaussian kernel parameter; default as
        :func:`semisup.prototypes.pvm.resolve_gamma` (16 / mean squared distance).
    prototypes : {'random', 'kmeans', 'minibatch'} or array, default='random'
        Landmark choice; the paper's NYS-LGC samples rows at random.
    kmeans_max_iter : int, default=5
        Lloyd iterations of the k-means that places the prototypes.
    random_state : int, RandomState or None
        Seed of the prototype choice and of the guard's folds; an int gives the same fit
        on every call.
    fallback : {"cv", "none"}, default="cv"
        ``"cv"``: the guard of :mod:`semisup.safety` -- 3-fold labeled-only
        cross-validation (held-out labeled rows hidden among the unlabeled ones) against
        the supervised counterpart (scikit-learn's ``SVC()``); the semi-supervised fit is
        kept only when it wins the guard's margin test, otherwise the estimator is
        that counterpart fitted on the labeled rows (``fallback_ is True``).  Costs about
        four fits.  ``"none"``: the method as published.

    Attributes
    ----------
    classes_, prototypes_, gamma_, n_features_in_
    label_distributions_ : ndarray of shape (n_samples, n_classes)
        Row-normalised non-negative part of ``F``.
    transduction_ : ndarray of shape (n_samples,)
    timings_ : dict
    fallback_ : bool
        Whether the guard (``fallback="cv"``) replaced the method by its supervised
        counterpart (then ``supervised_estimator_``, an ``SVC`` fitted on the labeled rows
        with classes ``0 .. n_classes - 1``, answers the predictions).
    cv_scores_ : dict or None
        The guard's held-out accuracies (see :func:`semisup.safety.guard`).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_moons
    >>> from semisup import NystromLabelSpreading
    >>> X, y_true = make_moons(100, noise=0.05, random_state=0)
    >>> y = np.full(100, -1)
    >>> y[[0, 1, 2, 3]] = y_true[[0, 1, 2, 3]]
    >>> clf = NystromLabelSpreading(n_prototypes=30, random_state=0, fallback="none")
    >>> float(np.mean(clf.fit(X, y).predict(X) == y_true))
    0.92

    With two labels per class each of the default guard's two folds trains on one row per
    class, and both models miss every held-out row; the margin scores favour the
    counterpart, so the guard keeps it:

    >>> NystromLabelSpreading(n_prototypes=30, random_state=0).fit(X, y).fallback_
    True
    """

    def __init__(self, alpha: float = 0.2, n_prototypes="auto", gamma: float | None = None,
                 prototypes="random", kmeans_max_iter: int = 5, random_state=None,
                 fallback: str = "cv"):
        self.alpha = alpha
        self.n_prototypes = n_prototypes
        self.gamma = gamma
        self.prototypes = prototypes
        self.kmeans_max_iter = kmeans_max_iter
        self.random_state = random_state
        self.fallback = fallback

    def fit(self, X, y):
        """Spread the labels of the labeled rows (``y != -1``) to all rows.

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
        """LGC with the Nyström affinity as published (``fallback="none"``)."""
        data = check_semi_supervised(X, y, require_unlabeled=True, estimator=self)
        alpha = check_positive(self.alpha, "alpha")
        if not alpha < 1:
            raise ValueError(f"alpha must be in (0, 1), got {self.alpha!r}")
        rng = check_random_state(self.random_state)
        X = data.X
        t0 = time.perf_counter()
        V = resolve_prototypes(self, X, rng)
        gamma = resolve_gamma(self.gamma, X)
        fac = nystrom_lgc_factor(X, V, gamma)
        Y0 = np.zeros((X.shape[0], data.classes.size))
        Y0[data.labeled, data.y_index] = 1.0
        GP, mu = fac.GP, fac.mu
        F = (1.0 - alpha) * (Y0 + GP @ ((alpha / (1.0 - alpha * mu))[:, None] * (GP.T @ Y0)))
        self.timings_ = {"fit": time.perf_counter() - t0}
        dist = np.maximum(F, 0.0)
        norm = dist.sum(axis=1, keepdims=True)
        dist = np.divide(dist, norm, out=np.full_like(dist, 1.0 / dist.shape[1]),
                         where=norm > 0)
        self.classes_ = data.classes
        self.prototypes_ = V
        self.gamma_ = gamma
        self.n_features_in_ = X.shape[1]
        self.label_distributions_ = dist
        # out-of-sample extension: one more spreading step for the new point (Y = 0 there),
        # F(x) ~ K(x, X) D^-1/2 F up to a positive factor, with K(x, X) ~ K(x, V) W^+ E^T:
        # an O(m) product per point
        self._propagator = fac.W_pinv @ np.asarray(fac.E.T @ (fac.d_isqrt[:, None] * F))
        self.transduction_ = _transduction(self, data, data.classes[
            np.argmax(F[data.unlabeled], axis=1)])

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


# ------------------------------------------------------------------------------------------
# cluster-based LapRLS
# ------------------------------------------------------------------------------------------

GRAPHS = ("kernel", "knn")


class _ClusterLapRLSPrediction:
    """Prediction of :class:`ClusterLapRLS` as published; it follows
    :class:`~semisup.base.SupervisedFallbackMixin` in the bases, so that under a fallback the
    mixin's ``predict`` / ``decision_function`` (the supervised counterpart's) answer first."""

    def decision_function(self, X) -> np.ndarray:
        """LapRLS decision values: (n,) for two classes, (n, n_classes) otherwise.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            New rows.

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_classes)
            Decision values: the score of ``classes_[1]``, or one column per class.
        """
        X = _check_fitted_X(self, X)
        return self.laprls_.decision_function(X)

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
        X = _check_fitted_X(self, X)
        return self.classes_[self.laprls_.predict(X)]


class ClusterLapRLS(SupervisedFallbackMixin, _ClusterLapRLSPrediction,
                    SemiSupervisedClassifierMixin, ProbabilityMixin, ClassifierMixin,
                    BaseEstimator):
    """Cluster-based LapRLS ("CB-LapRLS", Section V-C of the PVM paper).

    :class:`semisup.manifold.LapRLS` trained on the ``l`` labeled rows plus ``m`` k-means
    centres of all rows, which stand in for the unlabeled data.  ``O(n d m)`` for k-means
    plus ``O((l + m)^3)`` for LapRLS; the model expands over the ``l + m`` points.

    Parameters
    ----------
    gamma_A : float, default=1e-2
        RKHS-norm weight of LapRLS.
    gamma_I : float, default=1.0
        Graph weight of LapRLS (its graph term is ``gamma_I / (l + m)^2 f^T L f``).
    n_prototypes : int or 'auto', default='auto'
        Number of prototypes ``m`` (PVM's default rule with 'auto').
    gamma : float, optional
        Gaussian kernel parameter (kernel and graph); default as
        :func:`semisup.prototypes.pvm.resolve_gamma` (16 / mean squared distance).
    graph : {'kernel', 'knn'}, default='kernel'
        ``kernel``: the Gaussian kernel matrix of the ``l + m`` points is the adjacency
        (eq. 2 of the PVM paper); ``knn``: LapRLS's ``n_neighbors``-NN heat-kernel graph.
    n_neighbors : int, default=6
        For ``graph='knn'``.
    laplacian : {'unnormalized', 'normalized'}, default='unnormalized'
    prototypes : {'kmeans', 'minibatch', 'random'} or array, default='kmeans'
    kmeans_max_iter : int, default=5
        Lloyd iterations of the k-means that places the prototypes.
    random_state : int, RandomState or None
        Seed of the prototype choice and of the guard's folds; an int gives the same fit
        on every call.
    probability : bool, default=False
        Enable ``predict_proba`` (Platt sigmoids fitted on cross-validated decision values
        of the labeled rows, :mod:`semisup.calibration`; costs 5 extra fits).
    fallback : {"cv", "none"}, default="cv"
        ``"cv"``: the guard of :mod:`semisup.safety` -- 3-fold labeled-only
        cross-validation (held-out labeled rows hidden among the unlabeled ones) against
        the supervised counterpart (scikit-learn's ``SVC()``); the semi-supervised fit is
        kept only when it wins the guard's margin test, otherwise the estimator is
        that counterpart fitted on the labeled rows (``fallback_ is True``).  Costs about
        four fits.  ``"none"``: the method as published.

    Attributes
    ----------
    classes_, prototypes_, gamma_, n_features_in_, transduction_, timings_
    laprls_ : semisup.manifold.LapRLS
        The fitted model over the labeled rows followed by the prototypes.
    fallback_ : bool
        Whether the guard (``fallback="cv"``) replaced the method by its supervised
        counterpart (then ``supervised_estimator_``, an ``SVC`` fitted on the labeled rows
        with classes ``0 .. n_classes - 1``, answers the predictions).
    cv_scores_ : dict or None
        The guard's held-out accuracies (see :func:`semisup.safety.guard`).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_moons
    >>> from semisup import ClusterLapRLS
    >>> X, y_true = make_moons(100, noise=0.05, random_state=0)
    >>> y = np.full(100, -1)
    >>> y[[0, 1, 2, 3]] = y_true[[0, 1, 2, 3]]
    >>> clf = ClusterLapRLS(n_prototypes=30, random_state=0, fallback="none").fit(X, y)
    >>> float(clf.score(X, y_true))
    0.94

    With two labels per class each of the default guard's two folds trains on one row per
    class, and both models miss every held-out row.  The cluster kernel's misses are the
    nearer ones (its margin scores win, ``cv_scores_["gain"]`` 0.42, standard error 0.05),
    but a tie in accuracy goes to the counterpart (:mod:`semisup.safety`), so with four
    labels the guard cannot vouch for the fit above and returns ``SVC()``:

    >>> ClusterLapRLS(n_prototypes=30, random_state=0).fit(X, y).fallback_
    True
    """

    def __init__(self, gamma_A: float = 1e-2, gamma_I: float = 1.0, n_prototypes="auto",
                 gamma: float | None = None, graph: str = "kernel", n_neighbors: int = 6,
                 laplacian: str = "unnormalized", prototypes="kmeans",
                 kmeans_max_iter: int = 5, random_state=None, probability: bool = False,
                 fallback: str = "cv"):
        self.gamma_A = gamma_A
        self.gamma_I = gamma_I
        self.n_prototypes = n_prototypes
        self.gamma = gamma
        self.graph = graph
        self.n_neighbors = n_neighbors
        self.laplacian = laplacian
        self.prototypes = prototypes
        self.kmeans_max_iter = kmeans_max_iter
        self.random_state = random_state
        self.probability = probability
        self.fallback = fallback

    def fit(self, X, y):
        """Fit LapRLS on the labeled rows and the k-means centres of all rows.

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
        """CB-LapRLS as published (``fallback="none"``)."""
        from semisup.manifold import LapRLS

        self._check_probability()
        data = check_semi_supervised(X, y, require_unlabeled=True, estimator=self)
        if self.graph not in GRAPHS:
            raise ValueError(f"graph must be one of {GRAPHS}, got {self.graph!r}")
        if self.laplacian not in LAPLACIANS:
            raise ValueError(f"laplacian must be one of {LAPLACIANS}, got {self.laplacian!r}")
        rng = check_random_state(self.random_state)
        X = data.X
        t0 = time.perf_counter()
        V = resolve_prototypes(self, X, rng)
        gamma = resolve_gamma(self.gamma, X)
        Xl = X[data.labeled]
        Xl = Xl.toarray() if hasattr(Xl, "toarray") else np.asarray(Xl)
        Z = np.vstack([Xl, V])
        # class indices, so that no class label can collide with the unlabeled marker -1
        y_z = np.concatenate([data.y_index, np.full(V.shape[0], -1)])
        graph = kernel_matrix(Z, kernel="rbf", gamma=gamma) if self.graph == "kernel" \
            else "knn"
        model = LapRLS(gamma_A=self.gamma_A, gamma_I=self.gamma_I, kernel="rbf", gamma=gamma,
                       graph=graph, n_neighbors=self.n_neighbors, laplacian=self.laplacian,
                       laplacian_power=1,  # the PVM paper's L (LapRLS defaults to L^2)
                       random_state=rng.randint(np.iinfo(np.int32).max),
                       fallback="none")   # on prototypes: ClusterLapRLS guards itself
        with warnings.catch_warnings():
            # judged once, on the rows' labels below, not on the prototypes'
            warnings.simplefilter("ignore", CollapseWarning)
            model.fit(Z, y_z)
        self.timings_ = {"fit": time.perf_counter() - t0}
        self.classes_ = data.classes
        self.prototypes_ = V
        self.gamma_ = gamma
        self.n_features_in_ = X.shape[1]
        self.laprls_ = model
        self.transduction_ = _transduction(
            self, data, data.classes[model.predict(X[data.unlabeled])] if data.unlabeled.size
            else np.empty(0, dtype=data.classes.dtype))
        self._fit_probability(X, y)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
