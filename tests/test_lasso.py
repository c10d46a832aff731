"""The batched lasso and hinge-lasso codes against independent references."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from sklearn.linear_model import Lasso

from semisup.solvers.lasso import hinge_lasso_codes, lasso_codes, well_conditioned

cp = pytest.importorskip("cvxpy")


def _problem(seed, n, d, p, scale=1.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * scale
    D = rng.normal(size=(p, d))
    D /= np.linalg.norm(D, axis=1, keepdims=True)
    return rng, X, D


def _lasso_value(X, D, A, beta, linear=None):
    value = np.sum((X - A @ D) ** 2, axis=1) + beta * np.abs(A).sum(axis=1)
    return value if linear is None else value - np.sum(linear * A, axis=1)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 12), d=st.integers(2, 12),
       p=st.integers(1, 8), beta=st.floats(0.01, 5.0))
def test_lasso_codes_match_scikit_learns_lasso(seed, n, d, p, beta):
    _, X, D = _problem(seed, n, d, min(p, d))
    assume(well_conditioned(D))   # the route's domain (hinge_lasso_codes refuses the rest)
    A, unconverged = lasso_codes(X, D, beta)
    assert unconverged == 0
    # scikit-learn's Lasso minimises (1/(2 d)) ||x - D^T a||^2 + alpha ||a||_1
    ref = np.vstack([Lasso(alpha=beta / (2 * d), fit_intercept=False, tol=1e-14,
                           max_iter=100_000).fit(D.T, x).coef_ for x in X])
    np.testing.assert_allclose(_lasso_value(X, D, A, beta), _lasso_value(X, D, ref, beta),
                               rtol=1e-7, atol=1e-8)


def test_lasso_codes_with_a_linear_term_match_cvxpy():
    rng, X, D = _problem(1, 6, 9, 5)
    V = rng.normal(size=(6, 5))
    A, _ = lasso_codes(X, D, 0.4, linear=V)
    Z = cp.Variable((6, 5))
    cp.Problem(cp.Minimize(cp.sum_squares(X - Z @ D) + 0.4 * cp.sum(cp.abs(Z))
                           - cp.sum(cp.multiply(V, Z)))).solve(solver="CLARABEL")
    assert _lasso_value(X, D, A, 0.4, V).sum() <= _lasso_value(X, D, Z.value, 0.4, V).sum() \
        + 1e-6


def test_lasso_codes_warm_start_and_zero_atoms():
    _, X, D = _problem(2, 5, 6, 4)
    D[2] = 0.0
    cold, _ = lasso_codes(X, D, 0.3)
    warm, _ = lasso_codes(X, D, 0.3, init=cold + 0.5)
    assert np.all(cold[:, 2] == 0) and np.all(warm[:, 2] == 0)
    np.testing.assert_allclose(warm, cold, atol=1e-7)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 10), d=st.integers(2, 10),
       p=st.integers(1, 10), beta=st.floats(0.01, 3.0), mu=st.floats(0.0, 20.0),
       c=st.floats(-2.0, 2.0))
def test_hinge_lasso_codes_reach_cvxpys_optimum(seed, n, d, p, beta, mu, c):
    p = min(p, d)
    rng, X, D = _problem(seed, n, d, p)
    y = rng.choice([-1.0, 1.0], size=n)
    w = rng.normal(size=p)
    if not well_conditioned(D):
        with pytest.raises(ValueError, match="well-conditioned"):
            hinge_lasso_codes(X, D, beta, y, w, c, mu)
        return
    A, _ = hinge_lasso_codes(X, D, beta, y, w, c, mu)

    def value(codes):
        return float(_lasso_value(X, D, codes, beta).sum()
                     + mu * np.maximum(0.0, 1.0 - y * (codes @ w + c)).sum())

    Z = cp.Variable((n, p))
    problem = cp.Problem(cp.Minimize(
        cp.sum_squares(X - Z @ D) + beta * cp.sum(cp.abs(Z))
        + mu * cp.sum(cp.pos(1 - cp.multiply(y, Z @ w + c)))))
    problem.solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10)
    assert value(A) <= value(Z.value) + 1e-6 * (1.0 + abs(problem.value))


def test_hinge_lasso_codes_cases_of_the_dual_variable():
    """Margin already >= 1 without the hinge: the plain lasso; a root inside: margin 1."""
    _, X, D = _problem(3, 40, 8, 6)
    w = np.ones(6)
    plain, _ = lasso_codes(X, D, 0.5)
    margins = plain @ w
    y = np.where(margins >= 0, 1.0, -1.0)          # every row on its side of the classifier
    c = 0.0
    A, _ = hinge_lasso_codes(X, D, 0.5, y, w, c, mu=1.0)
    outside = y * (plain @ w + c) >= 1.0
    np.testing.assert_allclose(A[outside], plain[outside], atol=1e-8)
    moved = y * (A @ w + c)
    inside = ~outside & (moved > 1.0 - 1e-6) & (moved < 1.0 + 1e-6)
    assert inside.any()                             # some rows end exactly on the margin


def test_hinge_lasso_codes_refuse_a_rank_deficient_dictionary():
    """More atoms than features: the lasso with the hinge's reward can be unbounded (seed 0,
    d = 2, p = 3, beta = 1, mu = 2 diverges at alpha = 0.75), so the dual route refuses."""
    rng, X, D = _problem(0, 1, 2, 3)
    assert not well_conditioned(D) and well_conditioned(D[:2])
    with pytest.raises(ValueError, match="well-conditioned"):
        hinge_lasso_codes(X, D, 1.0, np.ones(1), rng.normal(size=3), 0.0, 2.0)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(1, 30), st.integers(2, 12), st.integers(1, 12),
       st.floats(0.01, 2.0))
def test_encode_routes_solve_the_same_lasso(seed, n, d, p, beta):
    """SSTL/STL's ``encode``: the compiled route on a well-conditioned dictionary and
    scikit-learn's ``sparse_encode`` (its route for overcomplete ones) reach the same optimum."""
    from sklearn.decomposition import sparse_encode

    from semisup.weak.selftaught import encode

    rng = np.random.default_rng(seed)
    D = rng.normal(size=(p, d))
    D /= np.linalg.norm(D, axis=1, keepdims=True)
    X = rng.normal(size=(n, d))
    ours = encode(X, D, beta)
    ref = sparse_encode(X, D, algorithm="lasso_cd", alpha=beta / 2.0, max_iter=100_000)

    def objective(A):
        return ((X - A @ D) ** 2).sum(axis=1) + beta * np.abs(A).sum(axis=1)

    if well_conditioned(D):
        # never worse than scikit-learn's tolerance-limited descent, and the same codes (the
        # lasso is strictly convex)
        assert np.all(objective(ours) <= objective(ref) + 1e-8 * (1 + objective(ref)))
        np.testing.assert_allclose(ours, ref, atol=1e-4)
    else:
        # scikit-learn's route, at the library's iteration limit (how far scikit-learn's own
        # descent gets on an overcomplete dictionary is not this test's business)
        from semisup.solvers.lasso import MAX_SWEEPS

        same = sparse_encode(X, D, algorithm="lasso_cd", alpha=beta / 2.0,
                             max_iter=MAX_SWEEPS)
        np.testing.assert_allclose(ours, same, rtol=0, atol=1e-12)
