"""COREG: co-training regression with two kNN regressors (Zhou & Li 2005).

Zhou, Z.-H. and Li, M. "Semi-supervised regression with co-training", IJCAI 2005, Table 1.
Two kNN regressors ``h_1``, ``h_2`` differ in the order ``p`` of their Minkowski distance
(2 and 5 in the paper).  In each round each ``h_j`` scores every row ``x_u`` of a small
random pool ``U'`` of unlabeled rows by its *confidence*

    delta_u = sum_{x_i in Omega} (y_i - h_j(x_i))^2 - (y_i - h_j'(x_i))^2,

the drop of the squared error on ``Omega`` (the ``k`` labeled neighbours of ``x_u`` in
``L_j``) when ``(x_u, h_j(x_u))`` joins ``L_j`` and ``h_j'`` is the refitted regressor; the
most confident row with ``delta > 0`` is handed, with ``h_j``'s prediction as its target, to
the *other* regressor's labeled set.  Rounds stop after ``max_iter`` or when neither set
grows; the prediction is the mean of the two regressors.

:func:`coreg_confidence` is the confidence of one regressor for a pool, computed exactly
without refitting: adding ``x_u`` changes ``h_j(x_i)`` only when ``x_u`` is closer to
``x_i`` than its ``k``-th neighbour, which it then replaces.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.distance import cdist
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from semisup._logging import get_logger, verbosity
from semisup._validation import check_int, check_semi_supervised_regression, check_X
from semisup.base import SemiSupervisedRegressorMixin

logger = get_logger(__name__)


def _kneighbors(X_ref: np.ndarray, X_query: np.ndarray, k: int, p: float,
                block: int = 1024) -> tuple[np.ndarray, np.ndarray]:
    """Distances and indices of the ``k`` nearest rows of ``X_ref`` (Minkowski order ``p``)
    for each query row, nearest first, ties by index.  Exact, by blocks of queries: the sets
    COREG searches are small, where a direct ``cdist`` beats a search structure."""
    k = min(k, X_ref.shape[0])
    dist = np.empty((X_query.shape[0], k))
    ind = np.empty((X_query.shape[0], k), dtype=np.intp)
    for start in range(0, X_query.shape[0], block):
        D = cdist(X_query[start:start + block], X_ref, metric="minkowski", p=p)
        order = np.argsort(D, axis=1, kind="stable")[:, :k]
        ind[start:start + block] = order
        dist[start:start + block] = np.take_along_axis(D, order, axis=1)
    return dist, ind


def coreg_confidence(X_lab: np.ndarray, y_lab: np.ndarray, X_pool: np.ndarray,
                     n_neighbors: int = 3, p: float = 2) -> tuple[np.ndarray, np.ndarray]:
    """Compute the predictions and COREG confidences of a kNN regressor for a pool of rows.

    The kNN regressor ``h`` (mean target of the ``k`` nearest labeled rows, Minkowski
    distance of order ``p``) on ``(X_lab, y_lab)`` predicts each training row from its
    ``k`` nearest rows *itself included*.  For a pool row ``x_u`` the confidence is
    Zhou & Li's (2005, Table 1) ``delta_u = sum_{i in Omega} (y_i - h(x_i))^2 -
    (y_i - h'(x_i))^2`` with ``Omega`` the ``k`` nearest labeled rows of ``x_u`` and ``h'``
    the regressor on ``L + {(x_u, h(x_u))}``: ``h'(x_i) = h(x_i) + (h(x_u) - y_(k)) / k``
    when ``x_u`` is strictly closer to ``x_i`` than its ``k``-th neighbour (target
    ``y_(k)``), else ``h(x_i)``.

    Parameters
    ----------
    X_lab : ndarray of shape (l, d)
        The labeled rows.
    y_lab : ndarray of shape (l,)
        Their targets.
    X_pool : ndarray of shape (m, d)
        The unlabeled rows to score.
    n_neighbors : int, default=3
        ``k`` (lowered to ``l`` when fewer rows are labeled).
    p : float, default=2
        Order of the Minkowski distance.

    Returns
    -------
    prediction : ndarray of shape (m,)
        ``h(x_u)``.
    delta : ndarray of shape (m,)
        The confidences.

    Examples
    --------
    >>> import numpy as np
    >>> from semisup.meta.coreg import coreg_confidence
    >>> X = np.array([[0.0], [1.0], [3.0]])
    >>> pred, delta = coreg_confidence(X, np.array([0.0, 1.0, 3.0]), np.array([[0.4]]), 2)
    >>> pred.tolist(), np.round(delta, 4).tolist()
    ([0.5], [0.375])
    """
    y_lab = np.asarray(y_lab, dtype=np.float64)
    dist_l, ind_l = _kneighbors(X_lab, X_lab, n_neighbors, p)  # itself among them
    k = ind_l.shape[1]
    h_lab = y_lab[ind_l].mean(axis=1)
    kth_dist, kth_y = dist_l[:, -1], y_lab[ind_l[:, -1]]
    dist_u, omega = _kneighbors(X_lab, X_pool, n_neighbors, p)  # Omega of each pool row
    pred = y_lab[omega].mean(axis=1)
    changed = dist_u < kth_dist[omega]             # x_u enters x_i's neighbourhood
    h_new = h_lab[omega] + changed * (pred[:, None] - kth_y[omega]) / k
    y_om = y_lab[omega]
    delta = ((y_om - h_lab[omega]) ** 2 - (y_om - h_new) ** 2).sum(axis=1)
    return pred, delta


class COREG(SemiSupervisedRegressorMixin, RegressorMixin, BaseEstimator):
    """COREG: semi-supervised regression by co-training two kNN regressors (Zhou & Li 2005).

    Table 1 of the paper: two kNN regressors with Minkowski distances of orders ``p1`` and
    ``p2`` start from the labeled rows; each round, each picks from a pool of
    ``pool_size`` random unlabeled rows the one whose addition (with its own prediction as
    target) most reduces its squared error on that row's ``k`` labeled neighbours
    (:func:`coreg_confidence`), and hands it to the other regressor.  The pool is
    replenished from the unlabeled rows; the rounds stop after ``max_iter`` or when no
    row is confident (``delta > 0``) for either regressor.  Prediction: the mean of the
    two regressors.

    **Unlabeled rows** are the rows whose target is *missing*: NaN (the natural missing
    value of a real target), ``None`` or ``pd.NA``.  ``-1`` is an ordinary target.
    Dense input only (the Minkowski distance of order 5 has no sparse implementation).

    Parameters
    ----------
    n_neighbors : int, default=3
        ``k`` of both kNN regressors (the paper's 3).
    p1, p2 : float, default=2, 5
        Orders of the two Minkowski distances (the paper's 2 and 5).
    pool_size : int, default=100
        Size ``s`` of the pool ``U'`` (the paper's 100).
    max_iter : int, default=100
        Maximum number of rounds ``T`` (the paper's 100).
    random_state : int, RandomState or None
        Seed of the pool draws.
    verbose : int, default=0
        Log progress to the ``semisup`` logger.

    Attributes
    ----------
    transduction_ : ndarray of shape (n_train,)
        The final prediction (mean of the two regressors) at *every* training row, labeled
        rows included (a kNN fit at a labeled row counts the row itself).
    added_rows_ : tuple of two ndarrays of int
        Training rows added to the labeled set of regressor 1 and of regressor 2, in order.
    added_targets_ : tuple of two ndarrays
        Their pseudo-targets (the other regressor's predictions).
    n_iter_ : int
        Rounds run.
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from semisup.meta.coreg import COREG
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-2, 2, size=(200, 2))
    >>> y = np.sin(X[:, 0]) + X[:, 1]
    >>> y_train = y.copy()
    >>> y_train[30:] = np.nan               # 30 labeled rows
    >>> reg = COREG(max_iter=20, random_state=0).fit(X, y_train)
    >>> reg.n_iter_ <= 20, reg.transduction_.shape
    (True, (200,))
    """

    def __init__(self, n_neighbors: int = 3, p1: float = 2, p2: float = 5,
                 pool_size: int = 100, max_iter: int = 100, random_state=None,
                 verbose: int = 0):
        self.n_neighbors = n_neighbors
        self.p1 = p1
        self.p2 = p2
        self.pool_size = pool_size
        self.max_iter = max_iter
        self.random_state = random_state
        self.verbose = verbose

    def _validate_params(self) -> None:
        check_int(self.n_neighbors, "n_neighbors")
        check_int(self.pool_size, "pool_size")
        check_int(self.max_iter, "max_iter", low=0)
        check_int(self.verbose, "verbose", low=0)
        for name in ("p1", "p2"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float, np.number)) \
                    or not value >= 1 or not np.isfinite(value):
                raise ValueError(f"{name} must be a finite Minkowski order >= 1, got "
                                 f"{value!r}")

    def fit(self, X, y):
        """Fit on labeled and unlabeled rows (NaN / None / ``pd.NA`` in ``y``: unlabeled).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training rows, labeled and unlabeled.
        y : array-like of shape (n_samples,)
            Real targets; NaN (or None / ``pd.NA``) marks an unlabeled row.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        data = check_semi_supervised_regression(X, y, accept_sparse=False, estimator=self)
        self._validate_params()
        rng = check_random_state(self.random_state)
        X = data.X
        k = int(self.n_neighbors)
        orders = (float(self.p1), float(self.p2))
        rows = [list(data.labeled), list(data.labeled)]       # L_1, L_2 as row indices
        targets = [list(data.y[data.labeled]), list(data.y[data.labeled])]
        added_rows: list[list[int]] = [[], []]
        added_targets: list[list[float]] = [[], []]
        remaining = rng.permutation(data.unlabeled)          # U, in draw order
        size = min(int(self.pool_size), remaining.size)
        pool, remaining = list(remaining[:size]), remaining[size:]
        n_iter = 0
        with verbosity(self.verbose):
            for n_iter in range(1, int(self.max_iter) + 1):
                picks = []
                for j in (0, 1):
                    if not pool:
                        picks.append(None)
                        continue
                    pred, delta = coreg_confidence(X[rows[j]], np.asarray(targets[j]),
                                                   X[pool], k, orders[j])
                    best = int(np.argmax(delta))
                    if delta[best] > 0:
                        picks.append((pool[best], float(pred[best])))
                        del pool[best]
                    else:
                        picks.append(None)
                if picks[0] is None and picks[1] is None:
                    logger.info("COREG: no confident row in round %d; stopping", n_iter)
                    break
                for j, pick in enumerate(picks):
                    if pick is not None:                  # h_j's pick teaches the other
                        other = 1 - j
                        rows[other].append(pick[0])
                        targets[other].append(pick[1])
                        added_rows[other].append(pick[0])
                        added_targets[other].append(pick[1])
                refill = min(int(self.pool_size) - len(pool), remaining.size)
                pool.extend(remaining[:refill])
                remaining = remaining[refill:]
                logger.debug("COREG round %d: |L1|=%d |L2|=%d", n_iter, len(rows[0]),
                             len(rows[1]))
        self.n_iter_ = n_iter
        self._models = [(X[rows[j]], np.asarray(targets[j]), orders[j]) for j in (0, 1)]
        self.added_rows_ = tuple(np.asarray(r, dtype=np.intp) for r in added_rows)
        self.added_targets_ = tuple(np.asarray(t, dtype=np.float64) for t in added_targets)
        self.transduction_ = self._average(X)
        return self

    def _average(self, X: np.ndarray) -> np.ndarray:
        out = np.zeros(X.shape[0])
        for X_ref, t, p in self._models:
            out += t[_kneighbors(X_ref, X, int(self.n_neighbors), p)[1]].mean(axis=1)
        return 0.5 * out

    def predict(self, X) -> np.ndarray:
        """Mean of the two kNN regressors' predictions.

        Parameters
        ----------
        X : array-like of shape (n, n_features)
            New rows.

        Returns
        -------
        ndarray of shape (n,)
            Predicted targets.
        """
        check_is_fitted(self, "_models")
        X = check_X(X, accept_sparse=False, estimator=self, reset=False)
        return self._average(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = False
        return tags
