"""Label-free class-prior estimation (semisup.prior): Saerens EM and the score mixtures."""

import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize
from scipy.stats import norm
from sklearn.exceptions import ConvergenceWarning

from semisup import L2SVM, ClassPriorEstimator
from semisup.prior import em_prior_adjustment, multinomial_mixture_prior, score_mixture_prior


def _gauss_posteriors(prior, n, means, seed, train_prior=None):
    """Rows drawn with ``prior`` from unit Gaussians at ``means`` (1-D) and their exact
    posteriors under ``train_prior`` (uniform by default): a perfectly calibrated model."""
    rng = np.random.default_rng(seed)
    K = len(means)
    y = rng.choice(K, size=n, p=prior)
    x = rng.normal(size=n) + np.asarray(means)[y]
    p_t = np.full(K, 1 / K) if train_prior is None else np.asarray(train_prior)
    lik = norm.pdf(x[:, None], loc=np.asarray(means)[None, :]) * p_t
    return x, y, lik / lik.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("prior,means", [([0.2, 0.8], [-1.0, 1.0]),
                                         ([0.6, 0.3, 0.1], [-2.0, 0.0, 2.0])])
def test_em_recovers_a_known_prior(prior, means):
    _, y, P = _gauss_posteriors(prior, 20000, means, seed=1)
    est = em_prior_adjustment(P)
    true = np.bincount(y, minlength=len(prior)) / y.size
    assert est.converged
    assert np.max(np.abs(est.prior - true)) < 0.02
    # the unadjusted mean posterior is pulled towards the training prior: EM must beat it
    assert np.max(np.abs(P.mean(axis=0) - true)) > 0.05


def test_em_fixed_point_and_likelihood():
    _, _, P = _gauss_posteriors([0.3, 0.7], 3000, [-1.0, 1.0], seed=2,
                                train_prior=[0.6, 0.4])
    p_t = np.array([0.6, 0.4])
    est = em_prior_adjustment(P, p_t, tol=1e-10)
    # fixed point (eq. 2.10): the prior is the mean of the posteriors it induces
    W = P * (est.prior / p_t)
    W /= W.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(W.mean(axis=0), est.prior, atol=1e-8)
    np.testing.assert_allclose(est.posteriors, W, atol=1e-8)
    # EM never decreases the likelihood, and its limit is the maximum likelihood prior
    assert np.all(np.diff(est.log_likelihood) >= -1e-9)

    def nll(t):
        q = np.array([1 - t[0], t[0]])
        return -np.sum(np.log(P @ (q / p_t)))

    ref = minimize(nll, [0.5], bounds=[(1e-6, 1 - 1e-6)], method="L-BFGS-B", tol=1e-14)
    assert abs(est.prior[1] - ref.x[0]) < 1e-4


def test_em_on_data_drawn_with_the_training_prior_stays_close():
    _, _, P = _gauss_posteriors([0.5, 0.5], 20000, [-1.0, 1.0], seed=3)
    est = em_prior_adjustment(P)
    assert np.max(np.abs(est.prior - 0.5)) < 0.02


def test_score_mixture_corrects_a_shifted_threshold():
    rng = np.random.default_rng(4)
    y = (rng.random(4000) < 0.25).astype(int)
    # a poorly estimated bias: every score moved by +0.8, so thresholding at 0 is biased
    s = rng.normal(scale=0.6, size=y.size) + np.where(y == 1, 1.0, -1.0) + 0.8
    s_l = np.array([-0.9, -1.4, 1.1, 0.7]) + 0.8
    y_l = np.array([0, 0, 1, 1])
    true = y.mean()
    assert abs(np.mean(s > 0) - true) > 0.15  # the naive (predicted-share) estimate
    est = score_mixture_prior(s, s_l, y_l)
    assert est.converged and abs(est.prior[1] - true) < 0.03
    assert np.all(np.diff(est.log_likelihood) >= -1e-8)
    # responsibilities are posteriors: rows sum to 1, the prior is their mean
    np.testing.assert_allclose(est.posteriors.sum(axis=1), 1.0)
    np.testing.assert_allclose(est.posteriors.mean(axis=0), est.prior, atol=1e-5)


def test_score_mixture_fixed_is_maximum_likelihood_of_the_labeled_model():
    rng = np.random.default_rng(5)
    y = (rng.random(3000) < 0.7).astype(int)
    s = rng.normal(size=y.size) + np.where(y == 1, 1.0, -1.0)
    s_l = np.array([-1.5, -0.5, -1.0, 0.5, 1.5, 1.0])
    y_l = np.array([0, 0, 0, 1, 1, 1])
    est = score_mixture_prior(s, s_l, y_l, fit_means=False, tol=1e-10)
    # independent reference: the labeled Gaussian model (means -1 / 1, pooled variance
    # pooled variance 1.0 / 4 dof), prior maximising the likelihood numerically
    var = (0.25 + 0.25 + 0 + 0.25 + 0.25 + 0) / (6 - 2)

    def nll(t):
        f = (1 - t[0]) * norm.pdf(s, -1, np.sqrt(var)) + t[0] * norm.pdf(s, 1, np.sqrt(var))
        return -np.sum(np.log(f))

    ref = minimize(nll, [0.5], bounds=[(1e-6, 1 - 1e-6)], method="L-BFGS-B", tol=1e-14)
    assert abs(est.prior[1] - ref.x[0]) < 1e-3
    assert abs(est.prior[1] - y.mean()) < 0.05


def test_score_mixture_multiclass():
    rng = np.random.default_rng(6)
    prior = np.array([0.5, 0.3, 0.2])
    y = rng.choice(3, size=6000, p=prior)
    centers = 2.0 * np.eye(3) - 1.0  # one-vs-rest scores: +1 own output, -1 the others
    S = centers[y] + rng.normal(scale=0.5, size=(y.size, 3))
    y_l = np.repeat(np.arange(3), 2)
    S_l = centers[y_l] + rng.normal(scale=0.5, size=(6, 3))
    est = score_mixture_prior(S, S_l, y_l)
    assert np.max(np.abs(est.prior - np.bincount(y) / y.size)) < 0.03


def _documents(seed, n=1000, share=0.3, d=200, length=20):
    """Short documents from two overlapping multinomials (70 % shared word distribution)."""
    rng = np.random.default_rng(seed)
    theta = 0.7 * rng.dirichlet(np.full(d, 0.5)) + 0.3 * rng.dirichlet(np.full(d, 0.3),
                                                                           size=2)
    y = (rng.random(n) < share).astype(int)
    X = np.stack([rng.multinomial(length, theta[c]) for c in y]).astype(float)
    lab = np.r_[np.flatnonzero(y == 0)[:2], np.flatnonzero(y == 1)[:2]]
    return X, y, lab, np.setdiff1d(np.arange(n), lab)


def test_multinomial_mixture_recovers_prior_with_two_labels_per_class():
    err = []
    for seed in range(4):
        X, y, lab, u = _documents(seed)
        est = multinomial_mixture_prior(sp.csr_matrix(X[u]), X[lab], y[lab])
        assert est.converged
        assert np.all(np.diff(est.log_likelihood) >= -1e-7)  # EM's objective
        np.testing.assert_allclose(est.posteriors.mean(axis=0), est.prior, atol=1e-5)
        err.append(abs(est.prior[1] - y[u].mean()))
        # dense input, same answer
        dense = multinomial_mixture_prior(X[u], X[lab], y[lab])
        np.testing.assert_allclose(dense.prior, est.prior, atol=1e-10)
    assert np.mean(err) < 0.02 and max(err) < 0.04, err
    yy = np.full(y.size, -1)
    yy[lab] = y[lab]
    model = ClassPriorEstimator(method="multinomial").fit(X, yy)
    np.testing.assert_allclose(model.prior_, est.prior, atol=1e-10)


def _blobs(n=800, share=0.25, seed=0, n_lab=20, sep=3.0):
    rng = np.random.default_rng(seed)
    y_true = (rng.random(n) < share).astype(int)
    X = rng.normal(size=(n, 5)) + sep / np.sqrt(2) * y_true[:, None] * np.r_[1.0, 1, 0, 0, 0]
    y = np.full(n, -1)
    for c in (0, 1):
        y[np.flatnonzero(y_true == c)[:n_lab]] = c
    return X, y, y_true


@pytest.mark.parametrize("method,bound", [("em", 0.06), ("mixture", 0.04),
                                          ("mixture-fixed", 0.06)])
def test_estimator_recovers_prior(method, bound):
    # balanced labeled rows, unlabeled prior 1/4: the mean error over six data sets is
    # bounded, and smaller than that of the SVM's predicted shares (the naive estimate)
    err, naive = [], []
    for seed in range(6):
        X, y, y_true = _blobs(seed=seed)
        est = ClassPriorEstimator(L2SVM(lam=1.0, penalize_intercept=True),
                                  method=method).fit(X, y)
        assert est.prior_.shape == (2,) and abs(est.prior_.sum() - 1) < 1e-9
        err.append(abs(est.prior_[1] - y_true[y == -1].mean()))
        naive.append(abs(est.predicted_prior_[1] - y_true[y == -1].mean()))
    assert np.mean(err) < bound, (method, err)
    assert np.mean(err) < np.mean(naive), (err, naive)


@pytest.mark.parametrize("method", ["em", "mixture", "mixture-fixed"])
def test_estimator_deterministic_sparse_pickle(method):
    X, y, _ = _blobs()
    est = ClassPriorEstimator(method=method).fit(X, y)
    np.testing.assert_array_equal(est.train_prior_, [0.5, 0.5])
    assert est.posteriors_.shape == ((y == -1).sum(), 2)
    np.testing.assert_allclose(est.posteriors_.mean(axis=0), est.prior_, atol=1e-5)
    again = ClassPriorEstimator(method=method).fit(X, y)
    np.testing.assert_array_equal(again.prior_, est.prior_)
    # sparse input gives the same estimate (up to the solver tolerance); it pickles
    sparse = ClassPriorEstimator(method=method).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(sparse.prior_, est.prior_, atol=2e-3)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(est)).prior_, est.prior_)


def test_estimator_string_labels_and_custom_estimator():
    X, y, y_true = _blobs(seed=0)
    ys = np.where(y == -1, "-1", np.where(y == 1, "pos", "neg")).astype(object)
    ys[y == -1] = -1
    est = ClassPriorEstimator(L2SVM(lam=1.0), method="mixture").fit(X, ys)
    assert list(est.classes_) == ["neg", "pos"]
    ref = ClassPriorEstimator(L2SVM(lam=1.0), method="mixture").fit(X, y)
    np.testing.assert_allclose(est.prior_, ref.prior_)


def test_bad_input():
    P = np.array([[0.2, 0.8], [0.5, 0.5]])
    with pytest.raises(ValueError, match="rows sum to 1"):
        em_prior_adjustment(np.array([[0.2, 0.7]]))
    with pytest.raises(ValueError, match="rows sum to 1"):
        em_prior_adjustment(np.array([[-0.2, 1.2]]))
    with pytest.raises(ValueError, match="2-D"):
        em_prior_adjustment(np.array([0.2, 0.8]))
    with pytest.raises(ValueError, match="train_prior"):
        em_prior_adjustment(P, [0.2, 0.3, 0.5])
    with pytest.raises(ValueError, match="train_prior"):
        em_prior_adjustment(P, [0.0, 1.0])
    with pytest.raises(ValueError, match="tol"):
        em_prior_adjustment(P, tol=0)
    with pytest.raises(ValueError, match="max_iter"):
        em_prior_adjustment(P, max_iter=0)
    with pytest.raises(ValueError, match="same number of columns"):
        score_mixture_prior(np.zeros((5, 2)), np.zeros((2, 3)), np.array([0, 1]))
    with pytest.raises(ValueError, match="every class index"):
        score_mixture_prior(np.zeros(5), np.zeros(2), np.array([0, 2]))
    with pytest.raises(ValueError, match="finite"):
        score_mixture_prior(np.array([0.0, np.nan]), np.zeros(2), np.array([0, 1]))
    with pytest.raises(ValueError, match="labeled_y"):
        score_mixture_prior(np.zeros(5), np.zeros(2), np.array([0.0, 1.0]))
    with pytest.raises(ValueError, match="non-negative"):
        multinomial_mixture_prior(-np.ones((3, 2)), np.ones((2, 2)), np.array([0, 1]))
    with pytest.raises(ValueError, match="same number of columns"):
        multinomial_mixture_prior(np.ones((3, 2)), np.ones((2, 3)), np.array([0, 1]))
    with pytest.raises(ValueError, match="alpha"):
        multinomial_mixture_prior(np.ones((3, 2)), np.ones((2, 2)), np.array([0, 1]), alpha=0)
    X, y, _ = _blobs()
    with pytest.raises(ValueError, match="method"):
        ClassPriorEstimator(method="naive").fit(X, y)
    with pytest.warns(UserWarning, match="no unlabeled rows"):   # the labeled prior (issue 27)
        ClassPriorEstimator().fit(X[y != -1], y[y != -1])
    y1 = y.copy()
    y1[np.flatnonzero(y == 1)[1:]] = -1
    with pytest.raises(ValueError, match="at least 2 rows"):
        ClassPriorEstimator().fit(X, y1)
    from sklearn.linear_model import LogisticRegression
    with pytest.raises(ValueError, match="probability parameter"):
        ClassPriorEstimator(LogisticRegression()).fit(X, y)


def test_one_convergence_warning_per_fit():
    X, y, _ = _blobs()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ClassPriorEstimator(method="mixture", max_iter=1).fit(X, y)
    conv = [w for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert len(conv) == 1 and "max_iter" in str(conv[0].message)
    _, _, P = _gauss_posteriors([0.2, 0.8], 500, [-1.0, 1.0], seed=7)
    assert not em_prior_adjustment(P, max_iter=1).converged
