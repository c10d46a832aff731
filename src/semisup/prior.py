"""Label-free estimates of the class prior of unlabeled rows (prior shift).

A classifier trained on a labeled set with class prior ``p_t`` is applied to unlabeled
rows whose class prior ``p`` is unknown and may differ (a balanced handful of labeled
documents, an imbalanced collection to classify).  Several semi-supervised learners need
``p`` as their balance constraint (``positive_fraction`` of
:class:`~semisup.TransductiveSVM`, :class:`~semisup.DeterministicAnnealingSVM`,
:class:`~semisup.CCCPS3VM`), and the share of the labeled classifier's predictions is a
biased estimate of it.  This module estimates ``p`` from the unlabeled rows alone:

* :func:`em_prior_adjustment`: the EM of Saerens, Latinne & Decaestecker (2002, "Adjusting
  the outputs of a classifier to new a priori probabilities: a simple procedure", Neural
  Computation 14, eqs. 2.9-2.10) on calibrated posteriors ``p_t(c | x)``;
* :func:`score_mixture_prior`: a Gaussian mixture with one component per class and a
  shared covariance, fitted by EM to the decision values of the unlabeled rows, the
  components anchored by the out-of-fold decision values of the labeled rows.  With
  ``fit_means=False`` the class-conditional score densities stay those estimated on the
  labeled rows and only the prior moves: Saerens's EM with Gaussian score models.  With
  ``fit_means=True`` (default) the means and the covariance are re-estimated too, which
  needs no calibration by the few labeled rows: a decision threshold shifted by a poor
  bias moves the component means with it;
* :func:`multinomial_mixture_prior`: the semi-supervised multinomial mixture of Nigam et
  al. (2000) on the (non-negative) features themselves, its mixture weights over the
  unlabeled rows being the estimate;
* :class:`ClassPriorEstimator`: any of them, around any semisup classifier with a
  ``probability`` parameter (the Platt sigmoid of :mod:`semisup.calibration` for ``"em"``,
  out-of-fold decision values of the labeled rows for the mixtures).
"""

from __future__ import annotations

import numbers
from typing import NamedTuple

import numpy as np
from sklearn.base import BaseEstimator, clone

from semisup._logging import convergence_check, get_logger, report_unconverged, warn_at_caller
from semisup._validation import check_choice, check_int, check_real, check_semi_supervised

logger = get_logger("prior")

#: added to the diagonal of the shared covariance, relative to its mean variance: keeps the
#: Gaussian densities finite when the scores of a few rows coincide
COV_RIDGE = 1e-6


class PriorEstimate(NamedTuple):
    """Result of :func:`em_prior_adjustment` and :func:`score_mixture_prior`.

    Attributes
    ----------
    prior : ndarray of shape (n_classes,)
        Estimated class prior of the unlabeled rows.
    posteriors : ndarray of shape (n_unlabeled, n_classes)
        Class posteriors of the unlabeled rows under ``prior``.
    n_iter : int
        EM iterations run.
    converged : bool
        Whether the largest change of the prior fell below ``tol``.
    log_likelihood : ndarray of shape (n_iter + 1,)
        Log-likelihood of the unlabeled rows after each iteration (the first entry at the
        starting point); EM never decreases it.
    """

    prior: np.ndarray
    posteriors: np.ndarray
    n_iter: int
    converged: bool
    log_likelihood: np.ndarray


def _check_prior(prior, n_classes: int, name: str) -> np.ndarray:
    p = np.asarray(prior, dtype=np.float64)
    if p.shape != (n_classes,) or not np.all(np.isfinite(p)) or np.any(p <= 0) \
            or abs(p.sum() - 1.0) > 1e-6:
        raise ValueError(f"{name} must be {n_classes} positive numbers summing to 1 (one per "
                         f"column of the posteriors), got {prior!r}")
    return p / p.sum()


def _check_tol_iter(tol, max_iter) -> tuple[float, int]:
    return check_real(tol, "tol", positive=True), check_int(max_iter, "max_iter")


def em_prior_adjustment(proba, train_prior=None, *, tol: float = 1e-6,
                        max_iter: int = 1000) -> PriorEstimate:
    """Estimate the class prior of new rows from calibrated posteriors (Saerens et al., 2002).

    With ``p_t(c | x_i)`` the posteriors of a classifier calibrated on data of prior
    ``p_t(c)``, and ``p^(0) = p_t``, iterate (eqs. 2.9-2.10 of Saerens, Latinne &
    Decaestecker, 2002)::

        p^(s)(c | x_i) = [p^(s)(c) / p_t(c)] p_t(c | x_i) / sum_k [p^(s)(k) / p_t(k)] p_t(k | x_i)
        p^(s+1)(c)     = (1/N) sum_i p^(s)(c | x_i)

    This is EM for the mixture weights with the class-conditional densities held fixed;
    it converges to a maximum of the likelihood
    ``sum_i log sum_c [p(c) / p_t(c)] p_t(c | x_i)`` and its limit is a fixed point: the
    prior equals the mean of the posteriors it induces.

    Parameters
    ----------
    proba : array-like of shape (n_samples, n_classes)
        Calibrated posteriors of the rows whose prior is wanted; rows sum to 1.
    train_prior : array-like of shape (n_classes,), optional
        The prior the posteriors were calibrated under (the labeled class shares); default
        uniform.
    tol : float, default=1e-6
        Stop when no class share changes by more than ``tol``.
    max_iter : int, default=1000
        Maximum number of EM iterations.

    Returns
    -------
    PriorEstimate
        ``prior``, ``posteriors`` (adjusted), ``n_iter``, ``converged``,
        ``log_likelihood`` (relative to the training prior, 0 at the start).

    Raises
    ------
    ValueError
        When ``proba`` is not a finite non-negative 2-D array with rows summing to 1, or
        ``train_prior`` does not match it.
    """
    P = np.asarray(proba, dtype=np.float64)
    if P.ndim != 2 or P.shape[0] == 0 or P.shape[1] < 2:
        raise ValueError(f"proba must be a 2-D array of shape (n_samples >= 1, n_classes >= 2),"
                         f" got shape {P.shape}")
    if not np.all(np.isfinite(P)) or np.any(P < 0) \
            or np.max(np.abs(P.sum(axis=1) - 1.0)) > 1e-6:
        raise ValueError("proba must hold finite non-negative posteriors whose rows sum to 1 "
                         "(e.g. predict_proba of a calibrated classifier)")
    K = P.shape[1]
    p_t = np.full(K, 1.0 / K) if train_prior is None else _check_prior(train_prior, K,
                                                                       "train_prior")
    tol, max_iter = _check_tol_iter(tol, max_iter)
    p = p_t.copy()
    ll = [0.0]
    converged = False
    for _ in range(max_iter):
        W = P * (p / p_t)
        norm = W.sum(axis=1, keepdims=True)
        W = W / norm
        p_new = W.mean(axis=0)
        ll.append(float(np.sum(np.log(P @ (p_new / p_t)))))
        change = float(np.max(np.abs(p_new - p)))
        p = p_new
        if change < tol:
            converged = True
            break
    n_iter = len(ll) - 1
    W = P * (p / p_t)
    W /= W.sum(axis=1, keepdims=True)
    if not converged:
        report_unconverged("prior_em", f"largest prior change {change:.2e} > tol {tol:g}")
    logger.debug("EM prior adjustment: %d iterations, prior %s", n_iter, np.round(p, 4))
    return PriorEstimate(p, W, n_iter, converged, np.asarray(ll))


def _as_scores(s, name: str) -> np.ndarray:
    s = np.asarray(s, dtype=np.float64)
    if s.ndim == 1:
        s = s[:, None]
    if s.ndim != 2 or not np.all(np.isfinite(s)):
        raise ValueError(f"{name} must be a finite 1-D (two classes) or 2-D (one column per "
                         f"one-vs-rest output) array of decision values, got shape {s.shape}")
    return s


def _log_gauss(S: np.ndarray, means: np.ndarray, cov: np.ndarray) -> np.ndarray:
    """``log N(s_i; mu_c, cov)`` for every row and class, shape (n, n_classes)."""
    L = np.linalg.cholesky(cov)
    d = S.shape[1]
    out = np.empty((S.shape[0], means.shape[0]))
    logdet = 2.0 * np.sum(np.log(np.diag(L)))
    for c, mu in enumerate(means):
        z = np.linalg.solve(L, (S - mu).T)
        out[:, c] = -0.5 * (np.sum(z * z, axis=0) + logdet + d * np.log(2 * np.pi))
    return out


def _ridge(cov: np.ndarray, scale: float) -> np.ndarray:
    return cov + COV_RIDGE * max(scale, 1e-12) * np.eye(cov.shape[0])


def score_mixture_prior(scores, labeled_scores, labeled_y, *, n_classes: int | None = None,
                        fit_means: bool = True, tol: float = 1e-6,
                        max_iter: int = 1000) -> PriorEstimate:
    """Class prior of unlabeled rows from a shared-covariance Gaussian mixture on their scores.

    Each class ``c`` has a Gaussian score density ``N(mu_c, Sigma)`` with one covariance
    shared by the classes (the one-vs-rest decision values of ``K > 2`` classes are a
    ``K``-vector; two classes have one score).  The labeled rows give the starting point:
    ``mu_c`` the mean of their (out-of-fold) scores in class ``c``, ``Sigma`` their pooled
    within-class covariance (the unlabeled scores' covariance when every labeled class
    has a single row), the prior the labeled class shares.  EM then maximises the
    likelihood of the unlabeled scores:

    * ``fit_means=False``: only the prior moves, the score densities stay those of the
      labeled rows.  This is exactly :func:`em_prior_adjustment` applied to the
      posteriors of that Gaussian model (Saerens et al., 2002).
    * ``fit_means=True``: a semi-supervised Gaussian mixture (labeled rows with their
      known class, unlabeled rows with their responsibilities) re-estimates ``mu_c`` and
      ``Sigma`` as well; the prior is re-estimated on the unlabeled rows only.  The few
      labeled rows then only name the components, so a decision threshold moved by a
      poorly estimated bias (which biases the predicted class shares) does not bias the
      estimate.

    Parameters
    ----------
    scores : array-like of shape (n_unlabeled,) or (n_unlabeled, n_outputs)
        Decision values of the rows whose prior is wanted.
    labeled_scores : array-like of shape (n_labeled,) or (n_labeled, n_outputs)
        Decision values of the labeled rows, out of fold (each from a fit that did not
        see its label: in-sample values of a separable fit all sit on the margin).
    labeled_y : array-like of int, shape (n_labeled,)
        Class index (``0 .. n_classes - 1``) of each labeled row.
    n_classes : int, optional
        Number of classes; default ``max(labeled_y) + 1`` (at least 2).
    fit_means : bool, default=True
        Re-estimate the means and the shared covariance on the unlabeled scores.
    tol : float, default=1e-6
        Stop when no class share changes by more than ``tol``.
    max_iter : int, default=1000
        Maximum number of EM iterations.

    Returns
    -------
    PriorEstimate
        The estimated prior, the unlabeled rows' posteriors and the EM trace.

    Raises
    ------
    ValueError
        When the score arrays disagree in width, contain NaN/inf, or a class has no
        labeled row.
    """
    S = _as_scores(scores, "scores")
    S_l = _as_scores(labeled_scores, "labeled_scores")
    y = np.asarray(labeled_y)
    if y.shape != (S_l.shape[0],) or y.dtype.kind not in "iu":
        raise ValueError(f"labeled_y must hold one integer class index per labeled score "
                         f"({S_l.shape[0]}), got shape {y.shape} of dtype {y.dtype}")
    if S.shape[1] != S_l.shape[1] or S.shape[0] == 0:
        raise ValueError(f"scores ({S.shape}) and labeled_scores ({S_l.shape}) must have the "
                         "same number of columns, and scores at least one row")
    K = int(y.max()) + 1 if n_classes is None else check_int(n_classes, "n_classes", 2)
    K = max(K, 2)
    counts = np.bincount(y, minlength=K) if y.size and y.min() >= 0 else np.zeros(0)
    if counts.size != K or np.any(counts == 0):
        raise ValueError(f"labeled_y must contain every class index 0..{K - 1} at least once "
                         f"(counts {counts.tolist()}): each component is anchored by its "
                         "labeled rows")
    if not isinstance(fit_means, (bool, np.bool_)):
        raise ValueError(f"fit_means must be True or False, got {fit_means!r}")
    tol, max_iter = _check_tol_iter(tol, max_iter)
    n, d = S.shape
    means = np.stack([S_l[y == c].mean(axis=0) for c in range(K)])
    scale = float(np.mean(np.var(S, axis=0))) or 1.0
    resid = S_l - means[y]
    if S_l.shape[0] > K:
        cov = resid.T @ resid / (S_l.shape[0] - K)
    elif n > 1:
        cov = np.cov(S, rowvar=False).reshape(d, d)
    else:
        cov = np.eye(d)
    cov = _ridge(cov, scale)
    p_t = counts / counts.sum()
    if not fit_means:
        logp = _log_gauss(S, means, cov) + np.log(p_t)
        logp -= logp.max(axis=1, keepdims=True)
        P = np.exp(logp)
        return em_prior_adjustment(P / P.sum(axis=1, keepdims=True), p_t, tol=tol,
                                   max_iter=max_iter)
    onehot = np.eye(K)[y]
    p = p_t.copy()
    ll, converged = [], False

    def e_step(p, means, cov):
        logp = _log_gauss(S, means, cov) + np.log(np.maximum(p, 1e-300))
        top = logp.max(axis=1, keepdims=True)
        R = np.exp(logp - top)
        tot = R.sum(axis=1, keepdims=True)
        return R / tot, float(np.sum(np.log(tot) + top))

    R, value = e_step(p, means, cov)
    ll.append(value)
    for _ in range(max_iter):
        p_new = R.mean(axis=0)
        W = np.vstack([R, onehot])           # labeled rows keep their class
        Z = np.vstack([S, S_l])
        mass = W.sum(axis=0)
        means = (W.T @ Z) / mass[:, None]
        cov = np.zeros((d, d))
        for c in range(K):
            D = Z - means[c]
            cov += (D * W[:, c:c + 1]).T @ D
        cov = _ridge(cov / Z.shape[0], scale)
        change = float(np.max(np.abs(p_new - p)))
        p = p_new
        R, value = e_step(p, means, cov)
        ll.append(value)
        if change < tol:
            converged = True
            break
    n_iter = len(ll) - 1
    if not converged:
        report_unconverged("prior_mixture", f"largest prior change {change:.2e} > tol {tol:g}")
    logger.debug("score mixture: %d iterations, prior %s, means %s", n_iter, np.round(p, 4),
                 np.round(means, 3).tolist())
    return PriorEstimate(p, R, n_iter, converged, np.asarray(ll))


def multinomial_mixture_prior(X, X_labeled, labeled_y, *, n_classes: int | None = None,
                              alpha: float = 1.0, tol: float = 1e-6,
                              max_iter: int = 1000) -> PriorEstimate:
    """Class prior of unlabeled rows from a semi-supervised multinomial mixture on the features.

    The text model of Nigam, McCallum, Thrun & Mitchell (2000, "Text classification from
    labeled and unlabeled documents using EM", Machine Learning 39, eqs. 1-5 and 7-8): each
    class has a multinomial over the features, ``theta_c``; a row ``x`` (term counts or
    any non-negative term weights) has the log-likelihood ``x . log theta_c`` under class
    ``c``.  EM over the unlabeled rows (responsibilities) and the labeled rows (their
    known class) re-estimates ``theta_c`` with Laplace smoothing ``alpha`` and the mixture
    weights from the unlabeled rows only: those weights are the prior estimate (the EM is
    :func:`semisup.text.naive_bayes.multinomial_em`, shared with
    :class:`~semisup.text.naive_bayes.SemiSupervisedNB`).  Unlike
    the score-based estimators it uses every feature, not one projection learned from a
    few labeled rows.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_unlabeled, n_features)
        Non-negative features of the rows whose prior is wanted.
    X_labeled : array-like or sparse matrix of shape (n_labeled, n_features)
        Non-negative features of the labeled rows.
    labeled_y : array-like of int, shape (n_labeled,)
        Class index (``0 .. n_classes - 1``) of each labeled row.
    n_classes : int, optional
        Number of classes; default ``max(labeled_y) + 1`` (at least 2).
    alpha : float, default=1.0
        Laplace (Dirichlet) smoothing of the class multinomials (Nigam et al.'s eq. 7 has 1).
    tol : float, default=1e-6
        Stop when no class share changes by more than ``tol``.
    max_iter : int, default=1000
        Maximum number of EM iterations.

    Returns
    -------
    PriorEstimate
        ``log_likelihood`` is EM's objective (the log-posterior of ``theta`` and the
        prior up to a constant), which never decreases.

    Raises
    ------
    ValueError
        When a feature is negative or not finite, the widths disagree, or a class has no
        labeled row.
    """
    import scipy.sparse as sp

    def as_matrix(A, name):
        A = sp.csr_matrix(A, dtype=np.float64) if sp.issparse(A) else \
            np.asarray(A, dtype=np.float64)
        data = A.data if sp.issparse(A) else A
        if A.ndim != 2 or not np.all(np.isfinite(data)) or np.any(data < 0):
            raise ValueError(f"{name} must be a 2-D array of finite non-negative features "
                             f"(term counts or weights), got shape {A.shape}")
        return A

    Xu, Xl = as_matrix(X, "X"), as_matrix(X_labeled, "X_labeled")
    y = np.asarray(labeled_y)
    if Xu.shape[1] != Xl.shape[1] or Xu.shape[0] == 0:
        raise ValueError(f"X ({Xu.shape}) and X_labeled ({Xl.shape}) must have the same number"
                         " of columns, and X at least one row")
    if y.shape != (Xl.shape[0],) or y.dtype.kind not in "iu":
        raise ValueError(f"labeled_y must hold one integer class index per labeled row "
                         f"({Xl.shape[0]}), got shape {y.shape} of dtype {y.dtype}")
    K = max(int(y.max()) + 1 if n_classes is None else check_int(n_classes, "n_classes", 2), 2)
    counts = np.bincount(y, minlength=K) if y.size and y.min() >= 0 else np.zeros(0)
    if counts.size != K or np.any(counts == 0):
        raise ValueError(f"labeled_y must contain every class index 0..{K - 1} at least once "
                         f"(counts {counts.tolist()})")
    alpha = check_real(alpha, "alpha", positive=True)
    tol, max_iter = _check_tol_iter(tol, max_iter)
    # the one multinomial EM of the library (semisup.text.naive_bayes), its mixture weights
    # taken from the unlabeled rows alone: they are the estimate of their prior
    from semisup.text.naive_bayes import multinomial_em

    res = multinomial_em(Xl, y, Xu, np.arange(K), alpha=alpha, weights_from="unlabeled",
                         stop="weights", tol=tol, max_iter=max_iter, solver="prior_mixture")
    p, R = np.exp(res.log_weights), res.resp_unlabeled
    logger.debug("multinomial mixture: %d iterations, prior %s", res.n_iter, np.round(p, 4))
    return PriorEstimate(p, R, res.n_iter, res.converged, res.objective)


class ClassPriorEstimator(BaseEstimator):
    """Estimate the class prior of the unlabeled rows of ``(X, y)`` without their labels.

    ``fit(X, y)`` trains ``estimator`` on the labeled rows and estimates the class shares
    of the rows marked ``-1`` (e.g. the documents to classify) from its outputs on them:

    * ``method="em"``: Platt-calibrated posteriors (``probability=True``, the sigmoid
      fitted on out-of-fold decision values of the labeled rows, :mod:`semisup.calibration`)
      adjusted by the EM of Saerens, Latinne & Decaestecker (2002), eqs. 2.9-2.10
      (:func:`em_prior_adjustment`);
    * ``method="mixture"``: a shared-covariance Gaussian mixture on the decision values of
      the unlabeled rows, anchored by the labeled rows' out-of-fold decision values, means
      and covariance re-estimated (:func:`score_mixture_prior`);
    * ``method="mixture-fixed"``: the same with the labeled rows' Gaussian score model
      kept, only the prior estimated (Saerens's EM with Gaussian class-conditional score
      densities);
    * ``method="multinomial"``: a semi-supervised multinomial mixture on the features
      themselves (Nigam et al., 2000; :func:`multinomial_mixture_prior`); ``X`` must be
      non-negative (term counts or weights).  ``estimator`` only gives
      ``predicted_prior_``.

    The result feeds the balance of a transductive learner: ``prior_[1]`` as
    ``positive_fraction`` for two classes, ``prior_`` for more (one-vs-rest).

    Parameters
    ----------
    estimator : classifier, optional
        A semisup classifier with a ``probability`` parameter and ``decision_function``
        (default :class:`~semisup.L2SVM` with SVMlin's regularised bias,
        ``penalize_intercept=True``: a free bias follows the labeled rows' class shares,
        which the prior is estimated against; the mean error over the six blob sets of
        ``tests/test_prior.py`` rose from under 0.06 to 0.063); it is cloned, never
        modified.  Rows marked
        ``-1`` are passed to it, so a semi-supervised estimator may use them.
    method : {"em", "mixture", "mixture-fixed", "multinomial"}, default="em"
        Estimator of the prior (see above).
    n_folds : int, default=5
        Folds of the out-of-fold decision values of the mixtures (fewer when a labeled
        class is smaller; every class needs 2 labeled rows).  ``"em"`` uses the
        estimator's own ``probability=True`` calibration (:mod:`semisup.calibration`).
    tol : float, default=1e-6
        EM stops when no class share changes by more than ``tol``.
    max_iter : int, default=1000
        Maximum number of EM iterations.
    random_state : int or None, default=None
        Seed of the fold assignment (``None``: 0, so that results are reproducible).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Sorted class labels.
    prior_ : ndarray of shape (n_classes,)
        Estimated class shares of the unlabeled rows, in the order of ``classes_``.
    train_prior_ : ndarray of shape (n_classes,)
        Class shares of the labeled rows.
    predicted_prior_ : ndarray of shape (n_classes,)
        Class shares of the fitted estimator's predictions on the unlabeled rows (the
        naive estimate, for comparison).
    posteriors_ : ndarray of shape (n_unlabeled, n_classes)
        Posteriors of the unlabeled rows under ``prior_``.
    n_iter_ : int
        EM iterations run.
    log_likelihood_ : ndarray
        Log-likelihood of the unlabeled rows after each EM iteration.
    estimator_ : classifier
        The fitted clone of ``estimator``.

    Examples
    --------
    >>> import numpy as np
    >>> from semisup.prior import ClassPriorEstimator
    >>> rng = np.random.default_rng(0)
    >>> y_true = (rng.random(600) < 0.25).astype(int)
    >>> X = rng.normal(size=(600, 2)) + 2.0 * y_true[:, None]
    >>> y = np.full(600, -1)
    >>> for c in (0, 1):
    ...     y[np.flatnonzero(y_true == c)[:10]] = c
    >>> est = ClassPriorEstimator(method="mixture").fit(X, y)
    >>> bool(abs(est.prior_[1] - y_true[y == -1].mean()) < 0.05)
    True
    """

    def __init__(self, estimator=None, method: str = "em", n_folds: int = 5,
                 tol: float = 1e-6, max_iter: int = 1000, random_state=None):
        self.estimator = estimator
        self.method = method
        self.n_folds = n_folds
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state

    def _base(self):
        if self.estimator is None:
            from semisup.linear.svm import L2SVM

            return L2SVM(penalize_intercept=True)
        for attr in ("fit", "decision_function", "get_params"):
            if not hasattr(self.estimator, attr):
                raise ValueError(f"estimator must be a semisup classifier with fit, "
                                 f"decision_function and a probability parameter, got "
                                 f"{self.estimator!r} (no {attr})")
        if "probability" not in self.estimator.get_params():
            raise ValueError(f"estimator must have a probability parameter (Platt scaling on "
                             f"out-of-fold decision values), got {type(self.estimator).__name__}"
                             "; use a semisup classifier such as L2SVM")
        return clone(self.estimator)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True         # the default L2SVM and the mixtures take CSR
        return tags

    def fit(self, X, y) -> ClassPriorEstimator:
        """Estimate the class shares of the rows with ``y == -1``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Training rows, labeled and unlabeled.
        y : array-like of shape (n_samples,)
            Class labels, ``-1`` for the rows whose prior is estimated (at least one).

        Returns
        -------
        self : object
            The fitted estimator.
        """
        from semisup.calibration import out_of_fold_decisions

        method = check_choice(self.method, "method",
                              ("em", "mixture", "mixture-fixed", "multinomial"))
        n_folds = check_int(self.n_folds, "n_folds", 2)
        check_real(self.tol, "tol", positive=True)
        check_int(self.max_iter, "max_iter")
        if self.random_state is not None and not isinstance(self.random_state,
                                                            numbers.Integral):
            raise ValueError(f"random_state must be an int or None, got {self.random_state!r}")
        data = check_semi_supervised(X, y, estimator=self)
        if data.unlabeled.size == 0:
            warn_at_caller("y has no unlabeled rows (-1): there is no prior to estimate, and "
                           "prior_ is the labeled rows' class shares; mark the rows whose "
                           "class prior is wanted with -1", UserWarning)
        counts = np.bincount(data.y_index, minlength=data.classes.size)
        if counts.min() < 2:
            raise ValueError(f"every labeled class needs at least 2 rows for out-of-fold "
                             f"decision values, got counts {counts.tolist()} for classes "
                             f"{data.classes.tolist()}")
        y = np.asarray(y)
        Xu = data.X[data.unlabeled]
        self.classes_ = data.classes
        self.train_prior_ = counts / counts.sum()
        seed = 0 if self.random_state is None else int(self.random_state)
        with convergence_check(self, {"prior_em": "max_iter", "prior_mixture": "max_iter"}):
            if data.unlabeled.size == 0:
                # nothing to adjust: the estimate is the starting point of every method
                model = self._base().set_params(probability=False)
                if "random_state" in model.get_params():
                    model.set_params(random_state=seed)
                model.fit(data.X, y)
                k = data.classes.size
                est = PriorEstimate(self.train_prior_.copy(), np.empty((0, k)), 0, True,
                                    np.empty(0))
            elif method == "em":
                model = self._base().set_params(probability=True)
                if "random_state" in model.get_params():
                    model.set_params(random_state=seed)
                model.fit(data.X, y)
                est = em_prior_adjustment(model.predict_proba(Xu), self.train_prior_,
                                          tol=self.tol, max_iter=self.max_iter)
            elif method == "multinomial":
                model = self._base().set_params(probability=False).fit(data.X, y)
                est = multinomial_mixture_prior(Xu, data.X[data.labeled], data.y_index,
                                                n_classes=data.classes.size, tol=self.tol,
                                                max_iter=self.max_iter)
            else:
                model = self._base().set_params(probability=False).fit(data.X, y)
                labeled, dec = out_of_fold_decisions(model, data.X, y, n_folds=n_folds,
                                                     random_state=seed)
                est = score_mixture_prior(model.decision_function(Xu), dec,
                                          data.y_index, n_classes=data.classes.size,
                                          fit_means=method == "mixture", tol=self.tol,
                                          max_iter=self.max_iter)
        self.estimator_ = model
        if Xu.shape[0]:
            pred = model.predict(Xu)
            self.predicted_prior_ = np.array([np.mean(pred == c) for c in self.classes_])
        else:
            self.predicted_prior_ = self.train_prior_.copy()
        self.prior_ = est.prior
        self.posteriors_ = est.posteriors
        self.n_iter_ = est.n_iter
        self.log_likelihood_ = est.log_likelihood
        return self
