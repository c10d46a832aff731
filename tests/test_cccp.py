"""CCCPS3VM: monotone CCCP, exact balance, convex steps against cvxpy, API and bad input."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.estimator_checks import parametrize_with_checks

from semisup.linear import CCCPS3VM
from semisup.linear.cccp import cccp_objective, cccp_s3vm, ramp_loss
from semisup.losses import transductive_objective
from semisup.text import AuxiliarySVM
from tests.conftest import make_problem


def semi(rng, n=300, d=20, n_lab=20, sparse=True):
    X, y = make_problem(rng, n=n, d=d, sparse=sparse, density=0.3)
    y = (y > 0).astype(int)  # classes 0/1: -1 marks unlabeled rows
    y_semi = np.full(n, -1)
    lab = np.r_[np.flatnonzero(y == 1)[: n_lab // 2], np.flatnonzero(y == 0)[: n_lab // 2]]
    y_semi[lab] = y[lab]
    return X, y, y_semi


@pytest.mark.parametrize("s", [0.0, 0.4, -0.3])
@pytest.mark.parametrize("sparse", [True, False])
def test_objective_non_increasing_and_balance(rng, s, sparse):
    X, y, y_semi = semi(rng, sparse=sparse)
    m = CCCPS3VM(lam=1e-2, lam_u=1.0, s=s, tol=1e-10, fallback="none").fit(X, y_semi)
    res = m.fit_results_[0]
    h = np.asarray(res.history)
    assert res.converged and res.n_iter >= 2
    assert np.all(np.diff(h) <= 1e-9 * abs(h[0]))
    # the balance constraint: mean output over the unlabeled rows is 2r - 1
    r = np.mean(y_semi[y_semi != -1] > 0)
    assert np.mean(m.decision_function(X[y_semi == -1])) == pytest.approx(2 * r - 1, abs=1e-10)
    # the reported objective is J at the returned model
    o = m.decision_function(X)
    lab = y_semi != -1
    assert res.objective == pytest.approx(cccp_objective(
        m.coef_[0], o[lab], np.where(y_semi[lab] > 0, 1.0, -1.0), o[~lab], 1e-2, 1.0, s),
        rel=1e-9)


def test_balance_with_given_fraction(rng):
    X, y, y_semi = semi(rng)
    m = CCCPS3VM(positive_fraction=0.3, fallback="none").fit(X, y_semi)
    assert np.mean(m.decision_function(X[y_semi == -1])) == pytest.approx(-0.4, abs=1e-10)


def test_per_class_fractions(rng):
    """An array of fractions sets each one-vs-rest problem's balance (and equals the float)."""
    X = np.vstack([rng.normal(loc=c, size=(40, 2)) for c in ([0, 4], [4, 0], [-4, -4])])
    y_semi = np.repeat(np.array([0, 1, 2]), 40)
    y_semi[np.r_[3:40, 43:80, 83:120]] = -1
    r = np.array([0.2, 0.5, 0.3])
    m = CCCPS3VM(lam=1e-2, positive_fraction=r, fallback="none").fit(X, y_semi)
    means = m.decision_function(X[y_semi == -1]).mean(axis=0)
    np.testing.assert_allclose(means, 2 * r - 1, atol=1e-10)
    X2, _, y2 = semi(rng)
    a = CCCPS3VM(positive_fraction=[0.7, 0.3], fallback="none").fit(X2, y2)
    b = CCCPS3VM(positive_fraction=0.3, fallback="none").fit(X2, y2)
    np.testing.assert_allclose(a.coef_, b.coef_)
    with pytest.raises(ValueError, match="one fraction per class"):
        CCCPS3VM(positive_fraction=[0.5, 0.5]).fit(X, y_semi)
    with pytest.raises(ValueError, match="positive_fraction"):
        CCCPS3VM(positive_fraction=[0.5, 1.0, 0.2]).fit(X, y_semi)


@pytest.mark.parametrize("name", ["tsvm", "da"])
def test_per_class_fractions_tsvm_da(rng, name):
    """TSVM / DA: each one-vs-rest problem of a per-class fit is the binary fit with that r."""
    from semisup.linear import DeterministicAnnealingSVM, TransductiveSVM

    cls = TransductiveSVM if name == "tsvm" else DeterministicAnnealingSVM
    X = np.vstack([rng.normal(loc=c, size=(40, 2)) for c in ([0, 4], [4, 0], [-4, -4])])
    y_semi = np.repeat(np.array([0, 1, 2]), 40)
    unl = np.r_[3:40, 43:80, 83:120]
    y_semi[unl] = -1
    r = np.array([0.2, 0.5, 0.3])  # far from the labeled prior 1/3
    # the published method: the balance constraint is what is checked
    m = cls(lam=1e-2, lam_u=1.0, positive_fraction=r, fallback="none").fit(X, y_semi)
    for k in range(3):
        yk = np.where(y_semi == -1, -1, (y_semi == k).astype(int))
        ref = cls(lam=1e-2, lam_u=1.0, positive_fraction=float(r[k]),
                  fallback="none").fit(X, yk)
        np.testing.assert_allclose(m.coef_[k], ref.coef_[0], atol=1e-12)
        assert m.intercept_[k] == pytest.approx(ref.intercept_[0], abs=1e-12)
        if name == "tsvm":  # the label constraint: round(r u) unlabeled rows positive
            n_pos = int(np.sum(m.fit_results_[k].labels_u > 0))
            assert abs(n_pos - r[k] * unl.size) <= 1
    prior = cls(lam=1e-2, lam_u=1.0, fallback="none").fit(X, y_semi)
    assert not np.allclose(prior.coef_, m.coef_)  # the array is not ignored
    X2, _, y2 = semi(rng, n=120)
    a = cls(positive_fraction=[0.7, 0.3], fallback="none").fit(X2, y2)
    b = cls(positive_fraction=0.3, fallback="none").fit(X2, y2)
    np.testing.assert_allclose(a.coef_, b.coef_)
    with pytest.raises(ValueError, match="one fraction per class"):
        cls(positive_fraction=[0.5, 0.5]).fit(X, y_semi)
    with pytest.raises(ValueError, match="positive_fraction"):
        cls(positive_fraction=[0.5, 1.0, 0.2]).fit(X, y_semi)
    with pytest.raises(ValueError, match="positive_fraction"):
        cls(positive_fraction=[[0.5, 0.2, 0.3]]).fit(X, y_semi)


def _cvx_step(X_l, y_l, X_u, lam, lam_u, c, active_plus, active_minus):
    """One CCCP convex step in cvxpy: the majoriser at the active copies."""
    cp = pytest.importorskip("cvxpy")
    m = X_u.mean(axis=0) if X_u.shape[0] else X_l.mean(axis=0)
    w = cp.Variable(X_l.shape[1])
    l, u = X_l.shape[0], X_u.shape[0]
    h_l = (X_l - m) @ w + c
    obj = lam / 2 * cp.sum_squares(w) + 0.5 / l * cp.sum(cp.pos(1 - cp.multiply(y_l, h_l)) ** 2)
    if u and (active_plus.any() or active_minus.any()):
        h_u = (X_u - m) @ w + c
        obj += lam_u / (2 * u) * (cp.sum(cp.multiply(active_plus, cp.pos(1 - h_u) ** 2))
                                  + cp.sum(cp.multiply(active_minus, cp.pos(1 + h_u) ** 2)))
    cp.Problem(cp.Minimize(obj)).solve()
    return w.value


@pytest.mark.parametrize("s", [0.0, 0.3])
def test_convex_steps_match_cvxpy(rng, s):
    X, y = make_problem(rng, n=60, d=6)
    X_l, y_l, X_u = X[:10], y[:10], X[10:]
    lam, lam_u, r = 0.05, 2.0, 0.5
    opts = dict(tol=1e-12)
    start = cccp_s3vm(X_l, y_l, X_u, lam, lam_u, r, s=s, max_cccp_iter=0, mfn_options=opts)
    none = np.zeros(X_u.shape[0])
    w0 = _cvx_step(X_l, y_l, X_u, lam, lam_u, 0.0, none, none)
    np.testing.assert_allclose(start.w_centered, w0, atol=1e-5)
    step = cccp_s3vm(X_l, y_l, X_u, lam, lam_u, r, s=s, max_cccp_iter=1, mfn_options=opts)
    o_u = (X_u - X_u.mean(axis=0)) @ start.w_centered
    w1 = _cvx_step(X_l, y_l, X_u, lam, lam_u, 0.0, (o_u >= s).astype(float),
                   (-o_u >= s).astype(float))
    np.testing.assert_allclose(step.w_centered, w1, atol=1e-5)
    assert step.history[1] <= step.history[0] + 1e-12


def test_offset_absorbed_in_scaled_rows(rng):
    """With c != 0 the scaled rows and costs give the same step as cvxpy with the offset."""
    X, y = make_problem(rng, n=50, d=5)
    X_l, y_l, X_u = X[:12], y[:12], X[12:]
    res = cccp_s3vm(X_l, y_l, X_u, 0.1, 1.0, 0.7, max_cccp_iter=0,
                    mfn_options=dict(tol=1e-12))
    none = np.zeros(X_u.shape[0])
    np.testing.assert_allclose(res.w_centered,
                               _cvx_step(X_l, y_l, X_u, 0.1, 1.0, 0.4, none, none), atol=1e-5)


def test_s_zero_is_the_tsvm_objective(rng):
    o_u = rng.normal(scale=1.5, size=200)
    o_l, y_l = rng.normal(size=10), np.sign(rng.normal(size=10))
    w = rng.normal(size=4)
    tsvm = transductive_objective(0.5 * 0.1 * w @ w, o_l, y_l, o_u, 2.0)
    assert cccp_objective(w, o_l, y_l, o_u, 0.1, 2.0, 0.0) == pytest.approx(tsvm + 1.0)
    assert np.all(ramp_loss(o_u, 0.3) <= 0.49 + 1e-15)


def test_dense_equals_sparse_and_pickle(rng):
    X, y, y_semi = semi(rng, sparse=False)
    a = CCCPS3VM(tol=1e-10).fit(X, y_semi)
    b = CCCPS3VM(tol=1e-10).fit(sp.csr_matrix(X), y_semi)
    np.testing.assert_allclose(a.coef_, b.coef_, atol=1e-6)
    c = pickle.loads(pickle.dumps(b))
    np.testing.assert_array_equal(c.predict(X), b.predict(X))
    assert a.transduction_.shape == y.shape and a.score(X, y) > 0.6


def test_multiclass_and_string_labels(rng):
    X = np.vstack([rng.normal(loc=c, size=(40, 2)) for c in ([0, 4], [4, 0], [-4, -4])])
    y = np.repeat(np.array(["a", "b", "c"], dtype=object), 40)
    y_semi = y.copy()
    y_semi[np.r_[3:40, 43:80, 83:120]] = -1
    m = CCCPS3VM(lam=1e-2).fit(X, y_semi)
    assert m.coef_.shape == (3, 2)
    assert m.score(X, y) > 0.9


def test_convergence_warning_and_bad_input(rng):
    X, y, y_semi = semi(rng)
    for bad, match in [(dict(s=1.0), "s must be"), (dict(lam=0.0), "lam"),
                       (dict(positive_fraction=1.5), "positive_fraction"),
                       (dict(max_cccp_iter=0), "max_cccp_iter")]:
        with pytest.raises(ValueError, match=match):
            CCCPS3VM(**bad).fit(X, y_semi)
    with pytest.warns(ConvergenceWarning, match="max_cccp_iter"):
        CCCPS3VM(max_cccp_iter=1, s=0.0, fallback="none").fit(X, y_semi)
    with pytest.warns(UserWarning, match="no unlabeled"):
        m = CCCPS3VM().fit(X, y)
    assert np.mean(m.decision_function(X)) == pytest.approx(2 * np.mean(y > 0) - 1)


_MINUS_ONE = "y == -1 marks unlabeled rows, so the check's class label -1 cannot be a class"


@parametrize_with_checks([CCCPS3VM(), AuxiliarySVM()],
                         expected_failed_checks=lambda est: {
                             "check_classifiers_classes": _MINUS_ONE})
def test_sklearn_compatible(estimator, check):
    check(estimator)
