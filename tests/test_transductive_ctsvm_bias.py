"""ConvexTSVM (issue 29): the learned bias (rounding='prior'), the adaptive penalty of the
kernel low-rank route and the Nystroem-feature route."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from semisup.transductive import ConvexTSVM
from semisup.transductive import ctsvm as ctsvm_module
from semisup.transductive.ctsvm import balanced_threshold, prior_standard_error


def imbalanced_blobs(n=120, frac_pos=0.25, l=16, seed=0, sep=1.2, d=3):
    """Two Gaussian blobs, ``frac_pos`` positive; ``l`` labels with both classes."""
    rng = np.random.default_rng(seed)
    yt = (rng.random(n) < frac_pos).astype(int)
    X = rng.normal(size=(n, d))
    X[:, 0] += np.where(yt == 1, sep, -sep)
    pos, neg = np.flatnonzero(yt == 1), np.flatnonzero(yt == 0)
    k = max(2, round(l * frac_pos))
    lab = np.r_[rng.choice(pos, k, replace=False), rng.choice(neg, l - k, replace=False)]
    y = np.full(n, -1)
    y[lab] = yt[lab]
    return X, y, yt


def test_prior_standard_error_is_the_binomial_standard_error():
    y_l = np.array([1.0] * 3 + [-1.0] * 9)
    p = 3 / 12                     # ybar = 2p - 1, var(ybar) = 4 p (1 - p) / l
    assert prior_standard_error(y_l) == pytest.approx(np.sqrt(4 * p * (1 - p) / 12))
    # one class only: the floor of one row (1 / l)
    assert prior_standard_error(np.ones(4)) == pytest.approx(0.25)


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_prior_rounding_keeps_the_labeled_balance_within_one_standard_error(kernel):
    """With the thesis's model (no offset) the centred kernel pulls the split towards
    50/50 on 25 % positive data; the learned bias moves it to the labeled balance, the
    relaxed scores are those of the sign rounding, and ``decision_function`` applies the
    same threshold (so cross-validation scores the same rule)."""
    X, y, yt = imbalanced_blobs(kernel == "rbf" and 100 or 120, seed=3)
    unl, lab = y == -1, y != -1
    y_l = np.where(y[lab] == 1, 1.0, -1.0)
    kw = dict(C_l=10.0, kernel=kernel, solver="lowrank", offset="none", tol=1e-6)
    sign = ConvexTSVM(fallback="none", rounding="sign", **kw).fit(X, y)
    prior = ConvexTSVM(fallback="none", rounding="prior", **kw).fit(X, y)
    np.testing.assert_array_equal(prior.relaxed_scores_, sign.relaxed_scores_)
    y_u = np.where(prior.transduction_[unl] == 1, 1.0, -1.0)
    se = prior_standard_error(y_l)
    assert abs(y_l.mean() - y_u.mean()) <= se + 1e-12
    # the threshold is the rule of balanced_threshold with that tolerance
    assert prior.threshold_ == balanced_threshold(sign.relaxed_scores_[unl], y_l.mean(), se)
    np.testing.assert_array_equal(prior.decision_function(X[unl]) > 0,
                                  prior.transduction_[unl] == 1)
    # here the signs break that balance (too many positives) and the bias fixes it
    y_sign = np.where(sign.transduction_[unl] == 1, 1.0, -1.0)
    assert y_sign.mean() > y_l.mean() + se and prior.threshold_ > 0
    if kernel == "linear":        # (not a law: on the RBF draw it costs 1 row in 84)
        assert np.mean(prior.transduction_[unl] == yt[unl]) > np.mean(
            sign.transduction_[unl] == yt[unl])


def test_prior_rounding_errors_and_other_roundings_unchanged():
    X, y, _ = imbalanced_blobs(60, seed=1)
    with pytest.raises(ValueError, match="rounding must be 'sign', 'balanced', 'prior'"):
        ConvexTSVM(fallback="none", rounding="bias").fit(X, y)


def test_kernel_route_adaptive_penalty_converges_where_the_fixed_one_hit_the_cap():
    """At C = 100 the fixed penalty crept by a few percent a round (Banana, Table 3.2 v4:
    5 of 10 fits at the 200-round cap).  The kernel route now doubles it on a stall; the
    fit converges well inside the cap, certified, at the fixed rule's optimum."""
    rng = np.random.default_rng(0)
    n = 200
    t = rng.uniform(0, np.pi, n)
    yt = (rng.random(n) < 0.5).astype(int)
    X = np.c_[np.cos(t) + yt, np.sin(t) * (1 - 2 * yt) + 0.3 * yt] + 0.25 * rng.normal(size=(n, 2))
    y = np.full(n, -1)
    lab = np.r_[np.flatnonzero(yt == 0)[:5], np.flatnonzero(yt == 1)[:5]]
    y[lab] = yt[lab]
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est = ConvexTSVM(fallback="none", C_l=100.0, solver="lowrank", offset="none").fit(X, y)
    assert est.fit_results_["status"] == "converged" and est.n_iter_ < 100
    assert est.lmi_min_eig_ >= -1e-5
    assert est.objective_ - est.dual_objective_ <= 1e-5 * est.objective_
    sigmas = [h["sigma"] for h in est.fit_results_["history"]]
    assert max(sigmas) <= 1e3


@pytest.mark.parametrize("route, few_rank, few_agree", [("nystroem", 30, 0.9),
                                                      ("spectral", 15, 0.95)])
def test_approximate_routes_at_full_rank_match_the_kernel_route(route, few_rank, few_agree):
    """``n_components = n``: ``Phi Phi^T = K`` (Nystroem on every landmark) or ``H K H``
    (every eigenvector) and the same ridge, so the route solves the kernel route's problem:
    same optimum, scores and out-of-sample values (``k_x^T beta`` on training and new
    rows); at a lower rank a close optimum (the approximation only removes kernel mass)."""
    X, y, _ = imbalanced_blobs(90, frac_pos=0.5, seed=2)
    kw = dict(C_l=10.0, gamma=0.3, tol=1e-7, offset="none")
    dense = ConvexTSVM(fallback="none", solver="lowrank", **kw).fit(X, y)
    full = ConvexTSVM(fallback="none", solver=route, n_components=90, **kw).fit(X, y)
    assert full.solver_ == route
    assert abs(full.objective_ - dense.objective_) <= 1e-5 * dense.objective_
    np.testing.assert_allclose(full.relaxed_scores_, dense.relaxed_scores_, atol=1e-4)
    Xt = np.r_[X[:5], X[:7] + 0.05]
    np.testing.assert_allclose(full.decision_function(Xt), dense.decision_function(Xt),
                               atol=1e-4)
    np.testing.assert_array_equal(full.predict(Xt), dense.predict(Xt))
    few = ConvexTSVM(fallback="none", solver=route, n_components=few_rank, **kw).fit(X, y)
    assert few.fit_results_["status"] == "converged"
    assert np.mean(few.transduction_ == dense.transduction_) >= few_agree


def test_auto_takes_the_nystroem_route_beyond_the_dense_ceiling(monkeypatch):
    X, y, _ = imbalanced_blobs(80, frac_pos=0.5, seed=4)
    assert ConvexTSVM(fallback="none", C_l=1.0).fit(X, y).solver_ == "lowrank"
    monkeypatch.setattr(ctsvm_module, "DENSE_KERNEL_MAX", 50)
    est = ConvexTSVM(fallback="none", C_l=1.0, n_components=40).fit(X, y)
    assert est.solver_ == "nystroem" and est._nystroem.components_.shape[0] == 40
    # the linear kernel keeps its feature route (whose fixed penalty needs more than the
    # 200-round cap on this toy: not what is checked here)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        assert ConvexTSVM(fallback="none", C_l=1.0, kernel="linear").fit(X, y).solver_ == "lowrank"


def test_auto_takes_the_spectral_route_beyond_two_classes_with_one_factor(monkeypatch):
    """More than two classes and more than SPECTRAL_RANK rows: every one-vs-rest problem
    uses the one eigendecomposition of the parent; two classes keep the kernel route."""
    rng = np.random.default_rng(3)
    centres = np.array([[0.0, 3.0], [3.0, -2.0], [-3.0, -2.0]])
    X = np.vstack([c + rng.normal(scale=0.8, size=(30, 2)) for c in centres])
    truth = np.repeat([0, 1, 2], 30)
    y = np.full(90, -1)
    y[[0, 1, 30, 31, 60, 61]] = truth[[0, 1, 30, 31, 60, 61]]
    monkeypatch.setattr(ctsvm_module, "SPECTRAL_RANK", 20)
    calls = []
    original = ctsvm_module.ConvexTSVM._spectral_factor

    def counted(self, X):
        calls.append(X.shape)
        return original(self, X)

    monkeypatch.setattr(ctsvm_module.ConvexTSVM, "_spectral_factor", counted)
    est = ConvexTSVM(fallback="none", C_l=10.0).fit(X, y)
    assert len(calls) == 1
    assert [e.solver_ for e in est.estimators_] == ["spectral"] * 3
    assert np.mean(est.transduction_ == truth) >= 0.9
    # the hand-written one-vs-rest at the same rank (each computes the same factor)
    hand = [ConvexTSVM(fallback="none", C_l=10.0, solver="spectral", n_components=20)
            .fit(X, np.where(y == -1, -1, (y == k).astype(int))) for k in range(3)]
    np.testing.assert_allclose(est.decision_function(X[:9]),
                               np.column_stack([h.decision_function(X[:9]) for h in hand]),
                               rtol=1e-6, atol=1e-8)
    binary = np.where(y == 2, -1, y)
    assert ConvexTSVM(fallback="none", C_l=10.0).fit(X, binary).solver_ == "lowrank"
    with pytest.raises(ValueError, match="solver='spectral' supports fit_intercept=False"):
        ConvexTSVM(fallback="none", solver="spectral", fit_intercept=True).fit(X, binary)


def test_nystroem_route_bad_input_errors():
    X, y, _ = imbalanced_blobs(40, frac_pos=0.5, seed=5)
    with pytest.raises(ValueError, match="solver='nystroem' needs kernel='rbf' or 'poly'"):
        ConvexTSVM(fallback="none", solver="nystroem", kernel="linear").fit(X, y)
    with pytest.raises(ValueError, match="out_of_sample='svm' needs the n x n kernel"):
        ConvexTSVM(fallback="none", solver="nystroem", out_of_sample="svm").fit(X, y)
    with pytest.raises(ValueError, match="n_components"):
        ConvexTSVM(fallback="none", solver="nystroem", n_components=0).fit(X, y)


def test_prior_rounding_on_the_exact_route_matches_the_low_rank_route():
    pytest.importorskip("cvxpy")
    X, y, _ = imbalanced_blobs(40, frac_pos=0.3, l=8, seed=6)
    kw = dict(C_l=10.0, gamma=0.5, tol=1e-7, offset="none", rounding="prior")
    exact = ConvexTSVM(fallback="none", solver="clarabel", **kw).fit(X, y)
    low = ConvexTSVM(fallback="none", solver="lowrank", **kw).fit(X, y)
    np.testing.assert_array_equal(exact.transduction_, low.transduction_)
    unl = y == -1
    np.testing.assert_array_equal(exact.decision_function(X[unl]) > 0,
                                  exact.transduction_[unl] == 1)
