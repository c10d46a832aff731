"""Semi-supervised regression: LapRLSRegressor, LinearLapRLSRegressor and COREG."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.kernel_ridge import KernelRidge
from sklearn.metrics import r2_score
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.neighbors import KNeighborsRegressor
from sklearn.utils.estimator_checks import parametrize_with_checks

from semisup.linear.regression import LinearLapRLSRegressor
from semisup.manifold.regression import LapRLSRegressor
from semisup.meta.coreg import COREG, coreg_confidence


def _problem(seed=0, n=40, d=3, n_labeled=8):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y_true = np.sin(X[:, 0]) + 0.5 * X[:, 1] + 0.1 * rng.normal(size=n)
    y = np.full(n, np.nan)
    lab = rng.choice(n, n_labeled, replace=False)
    y[lab] = y_true[lab]
    return X, y, y_true, np.sort(lab)


def _random_graph(rng, n, density=0.2):
    W = sp.random(n, n, density=density, random_state=int(rng.integers(1 << 30))).toarray()
    W = np.maximum(W, W.T)
    np.fill_diagonal(W, 0.0)
    return W


# ----------------------------------------------------------------------------- LapRLS


def test_laprls_regressor_matches_eq8_dense_solve():
    X, y, _, lab = _problem()
    n, l = X.shape[0], lab.size
    W = _random_graph(np.random.default_rng(1), n)
    gamma_A, gamma_I, g = 1e-2, 5.0, 0.3
    reg = LapRLSRegressor(gamma_A=gamma_A, gamma_I=gamma_I, gamma=g, graph=sp.csr_matrix(W),
                          laplacian="unnormalized", fit_intercept=False).fit(X, y)
    # eq. 8 written out with numpy: alpha = (J K + gamma_A l I + gamma_I l / n^2 L K)^-1 Y
    K = rbf_kernel(X, gamma=g)
    L = np.diag(W.sum(axis=1)) - W
    J = np.diag(~np.isnan(y)).astype(float)
    Y = np.nan_to_num(y)
    alpha = np.linalg.solve(J @ K + gamma_A * l * np.eye(n) + gamma_I * l / n ** 2 * L @ K, Y)
    np.testing.assert_allclose(reg.alpha_, alpha, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(reg.transduction_, K @ alpha, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(reg.predict(X[:5] + 0.1), rbf_kernel(X[:5] + 0.1, X, gamma=g)
                               @ alpha, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("gamma_A", [1e-3, 0.1])
def test_laprls_regressor_without_graph_is_kernel_ridge(gamma_A):
    X, y, _, lab = _problem(seed=2)
    reg = LapRLSRegressor(gamma_A=gamma_A, gamma_I=0.0, gamma=0.5, fit_intercept=False)
    reg.fit(X, y)
    kr = KernelRidge(alpha=gamma_A * lab.size, kernel="rbf", gamma=0.5).fit(X[lab], y[lab])
    np.testing.assert_allclose(reg.predict(X), kr.predict(X), rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(reg.alpha_[lab], kr.dual_coef_, rtol=1e-7, atol=1e-10)
    assert np.all(reg.alpha_[np.isnan(y)] == 0)


@settings(max_examples=15, deadline=None)
@given(shift=st.floats(-100, 100), seed=st.integers(0, 50))
def test_laprls_regressor_intercept_is_translation_equivariant(shift, seed):
    # the bias is unpenalised and outside the graph term: shifting y shifts f alone
    X, y, _, _ = _problem(seed=seed, n=25)
    a = LapRLSRegressor(gamma_A=1e-2, gamma_I=10.0, gamma=0.5).fit(X, y)
    b = LapRLSRegressor(gamma_A=1e-2, gamma_I=10.0, gamma=0.5).fit(X, y + shift)
    np.testing.assert_allclose(b.alpha_, a.alpha_, atol=1e-7 * (1 + abs(shift)))
    np.testing.assert_allclose(b.intercept_, a.intercept_ + shift, atol=1e-6 * (1 + abs(shift)))


def test_laprls_regressor_sparse_equals_dense_and_pickles():
    X, y, _, _ = _problem(seed=3)
    X[np.abs(X) < 0.3] = 0.0
    dense = LapRLSRegressor(gamma_A=1e-3, gamma_I=100.0).fit(X, y)
    sparse = LapRLSRegressor(gamma_A=1e-3, gamma_I=100.0).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(sparse.transduction_, dense.transduction_, rtol=1e-8, atol=1e-10)
    again = pickle.loads(pickle.dumps(dense))
    np.testing.assert_allclose(again.predict(X), dense.predict(X), rtol=1e-12, atol=1e-12)


def test_laprls_regressor_graph_uses_unlabeled_rows():
    # two separated arcs, one labeled row each: the graph carries each target along its arc
    t = np.linspace(0, 1, 40)
    X = np.vstack([np.column_stack([t, np.zeros(40)]), np.column_stack([t, 3 + 0 * t])])
    y_true = np.r_[np.zeros(40), np.full(40, 10.0)]
    y = np.full(80, np.nan)
    y[[0, 79]] = y_true[[0, 79]]
    with pytest.warns(UserWarning, match="connected components"):
        graph = LapRLSRegressor(gamma_A=1e-3, gamma_I=1e5, gamma=50.0).fit(X, y)
    with pytest.warns(UserWarning, match="connected components"):
        ridge = LapRLSRegressor(gamma_A=1e-3, gamma_I=0.0, gamma=50.0).fit(X, y)
    err_graph = np.abs(graph.transduction_ - y_true).mean()
    err_ridge = np.abs(ridge.transduction_ - y_true).mean()
    assert err_graph < 0.05 * err_ridge


# ----------------------------------------------------------------------------- linear


@pytest.mark.parametrize("solver", ["direct", "cg"])
@pytest.mark.parametrize("sparse", [False, True])
def test_linear_laprls_regressor_matches_closed_form(solver, sparse):
    X, y, _, lab = _problem(seed=4, n=50, d=5, n_labeled=10)
    y = y + 20.0
    rng = np.random.default_rng(5)
    W = _random_graph(rng, 50)
    gamma_A, gamma_I = 0.05, 2.0
    Xin = sp.csr_matrix(X) if sparse else X
    reg = LinearLapRLSRegressor(gamma_A=gamma_A, gamma_I=gamma_I, graph=sp.csr_matrix(W),
                                solver=solver, tol=1e-12).fit(Xin, y)
    # eq. 3 with the bias column and the labeled-mean centring written out
    n, l = X.shape[0], lab.size
    Xa = np.hstack([X, np.ones((n, 1))])
    L = np.diag(W.sum(axis=1)) - W
    H = Xa[lab].T @ Xa[lab] + l * gamma_A * np.eye(6) + l * gamma_I / n ** 2 * Xa.T @ L @ Xa
    m = y[lab].mean()
    w = np.linalg.solve(H, Xa[lab].T @ (y[lab] - m))
    np.testing.assert_allclose(reg.coef_, w[:5], rtol=1e-6, atol=1e-8)
    assert reg.intercept_ == pytest.approx(w[5] + m, rel=1e-8)
    np.testing.assert_allclose(reg.transduction_, Xa @ w + m, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(reg.predict(Xin), Xa @ w + m, rtol=1e-6, atol=1e-8)


def test_linear_laprls_regressor_without_graph_is_ridge_on_centred_targets():
    from sklearn.linear_model import Ridge

    X, y, _, lab = _problem(seed=6, n=30, d=4, n_labeled=12)
    reg = LinearLapRLSRegressor(gamma_A=0.1, gamma_I=0.0, fit_intercept=False).fit(X, y)
    ref = Ridge(alpha=0.1 * lab.size, fit_intercept=False).fit(X[lab], y[lab])
    np.testing.assert_allclose(reg.coef_, ref.coef_, rtol=1e-8)


# ----------------------------------------------------------------------------- COREG


def test_coreg_confidence_by_hand():
    # k = 2 on the line: labeled 0, 1, 3 (targets = positions), pool row 0.4.
    # h(0) = h(1) = 0.5 (each point and its nearest other), h(0.4) = 0.5, Omega = {0, 1};
    # 0.4 enters both neighbourhoods, replacing the 2nd neighbour (1 for 0, 0 for 1):
    # h'(0) = (0 + 0.5)/2 = 0.25, h'(1) = (1 + 0.5)/2 = 0.75, so
    # delta = [(0 - .5)^2 - (0 - .25)^2] + [(1 - .5)^2 - (1 - .75)^2] = 0.375.
    X = np.array([[0.0], [1.0], [3.0]])
    pred, delta = coreg_confidence(X, np.array([0.0, 1.0, 3.0]), np.array([[0.4], [2.6]]), 2)
    assert pred[0] == pytest.approx(0.5)
    assert delta[0] == pytest.approx(0.375)
    # 2.6: neighbours 3 and 1 (h = 2); it enters only 3's neighbourhood (3's 2nd is 1 at
    # distance 2): h'(3) = (3 + 2)/2 = 2.5, error 1 -> 0.25; h(1) unchanged: delta = 0.75
    assert pred[1] == pytest.approx(2.0)
    assert delta[1] == pytest.approx(0.75)


@pytest.mark.parametrize("p", [2, 5])
def test_coreg_confidence_matches_refitted_sklearn_knn(p):
    rng = np.random.default_rng(p)
    X_lab, y_lab = rng.normal(size=(15, 3)), rng.normal(size=15)
    pool = rng.normal(size=(10, 3))
    k = 3
    pred, delta = coreg_confidence(X_lab, y_lab, pool, k, p)
    h = KNeighborsRegressor(n_neighbors=k, p=p).fit(X_lab, y_lab)
    np.testing.assert_allclose(pred, h.predict(pool))
    for u in range(pool.shape[0]):
        omega = h.kneighbors(pool[[u]], return_distance=False)[0]
        h2 = KNeighborsRegressor(n_neighbors=k, p=p).fit(np.vstack([X_lab, pool[[u]]]),
                                                         np.r_[y_lab, pred[u]])
        ref = np.sum((y_lab[omega] - h.predict(X_lab[omega])) ** 2
                     - (y_lab[omega] - h2.predict(X_lab[omega])) ** 2)
        assert delta[u] == pytest.approx(ref, abs=1e-12)


def test_coreg_without_rounds_averages_two_knn_regressors():
    X, y, _, lab = _problem(seed=7, n=60, n_labeled=20)
    reg = COREG(max_iter=0).fit(X, y)
    ref = 0.5 * (KNeighborsRegressor(3, p=2).fit(X[lab], y[lab]).predict(X)
                 + KNeighborsRegressor(3, p=5).fit(X[lab], y[lab]).predict(X))
    np.testing.assert_allclose(reg.predict(X), ref)
    assert reg.n_iter_ == 0 and reg.added_rows_[0].size == 0


def test_coreg_adds_unlabeled_rows_with_the_other_regressors_targets():
    X, y, y_true, lab = _problem(seed=8, n=150, n_labeled=15)
    reg = COREG(max_iter=10, pool_size=30, random_state=0).fit(X, y)
    unl = set(np.flatnonzero(np.isnan(y)).tolist())
    added = np.r_[reg.added_rows_[0], reg.added_rows_[1]]
    assert added.size > 0 and set(added.tolist()) <= unl
    assert all(len(set(r.tolist())) == r.size for r in reg.added_rows_)
    assert 1 <= reg.n_iter_ <= 10
    again = COREG(max_iter=10, pool_size=30, random_state=0).fit(X, y)
    np.testing.assert_array_equal(again.predict(X), reg.predict(X))
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(reg)).predict(X), reg.predict(X))


def test_coreg_rejects_sparse_input():
    X, y, _, _ = _problem()
    with pytest.raises(TypeError, match="[Ss]parse"):
        COREG().fit(sp.csr_matrix(X), y)


# ----------------------------------------------------------------------------- conventions

ESTIMATORS = [
    lambda: LapRLSRegressor(gamma_A=1e-2, gamma_I=1.0),
    lambda: LinearLapRLSRegressor(),
    lambda: COREG(max_iter=5, random_state=0),
]


@pytest.mark.parametrize("make", ESTIMATORS)
def test_missing_targets_mark_unlabeled_and_minus_one_is_a_target(make):
    import pandas as pd

    X, y, _, lab = _problem(seed=9, n=40, n_labeled=10)
    y[lab[0]] = -1.0                           # an ordinary target value
    as_none = np.array([None if np.isnan(v) else v for v in y], dtype=object)
    as_na = pd.array([pd.NA if np.isnan(v) else v for v in y], dtype="Float64")
    ref = make().fit(X, y).transduction_
    for y_alt in (as_none, as_na, pd.Series(y)):
        np.testing.assert_allclose(make().fit(X, y_alt).transduction_, ref)
    # -1 really is a target: changing it changes the fit
    y2 = y.copy()
    y2[lab[0]] = 5.0
    assert not np.allclose(make().fit(X, y2).transduction_, ref)


@pytest.mark.parametrize("make", ESTIMATORS)
def test_score_is_r2_on_rows_with_known_targets(make):
    X, y, y_true, lab = _problem(seed=10, n=40, n_labeled=10)
    est = make().fit(X, y)
    y_eval = y_true.copy()
    y_eval[:15] = np.nan
    assert est.score(X, y_eval) == pytest.approx(r2_score(y_true[15:], est.predict(X[15:])))
    assert est.score(X, y_true) == pytest.approx(r2_score(y_true, est.predict(X)))
    with pytest.raises(ValueError, match="no rows with a known target"):
        est.score(X, np.full(X.shape[0], np.nan))


@pytest.mark.parametrize("make", ESTIMATORS)
def test_bad_targets_and_inputs_raise_clear_errors(make):
    X, y, _, _ = _problem(seed=11)
    with pytest.raises(ValueError, match="no labeled rows"):
        make().fit(X, np.full(X.shape[0], np.nan))
    with pytest.raises(ValueError, match="real numbers"):
        make().fit(X, np.array(["a"] * X.shape[0]))
    with pytest.raises(ValueError, match="real numbers"):
        make().fit(X, np.array(["a"] + [None] * (X.shape[0] - 1), dtype=object))
    with pytest.raises(ValueError, match="infinity"):
        make().fit(X, np.where(np.isnan(y), np.inf, y))
    X_bad = X.copy()
    X_bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        make().fit(X_bad, y)


def test_bad_parameters_name_the_argument():
    X, y, _, _ = _problem()
    with pytest.raises(ValueError, match="gamma_A"):
        LapRLSRegressor(gamma_A=0.0).fit(X, y)
    with pytest.raises(ValueError, match="gamma_I"):
        LinearLapRLSRegressor(gamma_I=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="solver"):
        LinearLapRLSRegressor(solver="qr").fit(X, y)
    with pytest.raises(ValueError, match="p2"):
        COREG(p2=0.5).fit(X, y)
    with pytest.raises(ValueError, match="pool_size"):
        COREG(pool_size=0).fit(X, y)


def test_no_unlabeled_rows_warns():
    X, _, y_true, _ = _problem()
    with pytest.warns(UserWarning, match="no unlabeled rows"):
        LapRLSRegressor().fit(X, y_true)


# scikit-learn's checks never pass NaN targets: every fit is the supervised limit
EXPECTED_FAILED = {}


@parametrize_with_checks([LapRLSRegressor(), LinearLapRLSRegressor(), COREG(max_iter=3)],
                         expected_failed_checks=lambda est: EXPECTED_FAILED.get(
                             type(est).__name__, {}))
def test_sklearn_checks(estimator, check):
    import warnings

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="y has no unlabeled rows")
        check(estimator)
