"""Universum SVM, USSL (MixtureSSL), STL and SSTL: references, reductions, bad input."""

import itertools
import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from semisup.linear import L2SVM, TransductiveSVM
from semisup.losses import HingeTerms
from semisup.regularizers import Ridge
from semisup.solvers.design import Design
from semisup.solvers.mfn import l2svm_mfn
from semisup.weak import MixtureSSL, UniversumSVM
from semisup.weak._cvx import hinge_universum_qp
from semisup.weak.mixture import (
    FixedMembershipQP,
    problem_objective,
    round_sdp,
    ussl_alternating,
    ussl_sdp,
)
from semisup.weak.universum import universum_terms

cp = pytest.importorskip("cvxpy")


def _binary(rng, n=40, d=5):
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] + 0.4 * rng.normal(size=n) > 0, 1, 0)
    return X, y


def mixture_data(rng, std_irr=0.1, n_lab=5, n_rel=30, n_irr=30, n_test=200):
    """Chapter 7 synthetic set (digest 6.6), class means at (+-0.3, +-0.3)."""
    def cls(c, k):
        return rng.normal(size=(k, 2)) * 0.13 + c
    Xl = np.r_[cls([0.3, 0.3], n_lab), cls([-0.3, -0.3], n_lab)]
    Xu = np.r_[cls([0.3, 0.3], n_rel), cls([-0.3, -0.3], n_rel),
               rng.normal(size=(n_irr, 2)) * std_irr]
    Xt = np.r_[cls([0.3, 0.3], n_test), cls([-0.3, -0.3], n_test)]
    yt = np.r_[np.ones(n_test), np.zeros(n_test)]
    X = np.r_[Xl, Xu]
    y = np.r_[np.ones(n_lab), np.zeros(n_lab), -np.ones(len(Xu))]
    return X, y, Xt, yt


# ---------------------------------------------------------------------------------------
# margin-shifted hinge terms (the epsilon-insensitive loss on the library's solver)


def test_margin_terms_value_and_newton_targets(rng):
    o = rng.normal(size=7) * 2
    eps = 0.3
    terms = universum_terms(np.array([1.0, -1.0]), np.array([2.0, 3.0]), 5, 4.0, eps)
    expected = 0.5 * (2.0 * max(0, 1 - o[0]) ** 2 + 3.0 * max(0, 1 + o[1]) ** 2) \
        + 0.5 * 4.0 * float(np.sum(np.maximum(0, np.abs(o[2:]) - eps) ** 2))
    assert terms.value(o) == pytest.approx(expected)
    active = terms.active(o)
    rows, cost, target = terms.newton_system(active)
    # each active universum row is a least-squares row with target sign(o) * eps
    for r, c, t in zip(rows, cost, target, strict=True):
        if r >= 2:
            assert abs(o[r]) > eps and c == pytest.approx(4.0)
            assert t == pytest.approx(np.sign(o[r]) * eps)


@pytest.mark.parametrize("penalize", [False, True])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("eps", [0.0, 0.25])
def test_squared_universum_matches_cvxpy(rng, sparse, eps, penalize):
    X, y = _binary(rng)
    X = X + 3.0   # off the origin: a free and a penalised bias differ
    Xu = rng.normal(size=(15, 5)) * 0.5 + 3.0
    C, Cu = 2.0, 0.7
    Xf = sp.csr_matrix(X) if sparse else X
    m = UniversumSVM(C=C, C_universum=Cu, epsilon=eps, tol=1e-10,
                     penalize_intercept=penalize).fit(Xf, y, X_universum=Xu)
    w = cp.Variable(6)
    Z = np.hstack([X, np.ones((40, 1))])
    Zu = np.hstack([Xu, np.ones((15, 1))])
    yp = 2.0 * y - 1
    ridge = cp.sum_squares(w) if penalize else cp.sum_squares(w[:5])
    obj = 0.5 * ridge + C * cp.sum_squares(cp.pos(1 - cp.multiply(yp, Z @ w))) \
        + Cu * cp.sum_squares(cp.pos(cp.abs(Zu @ w) - eps))
    problem = cp.Problem(cp.Minimize(obj))
    problem.solve(solver="CLARABEL")
    assert m.objective_ == pytest.approx(problem.value, rel=1e-6)
    np.testing.assert_allclose(m.coef_[0], w.value[:5], atol=1e-4)
    np.testing.assert_allclose(m.intercept_[0], w.value[5], atol=1e-4)
    h = np.asarray(m.fit_result_.history)
    assert np.all(np.diff(h) <= 1e-9 * h[1:])


def test_empty_universum_is_the_supervised_svm(rng):
    X, y = _binary(rng)
    m = UniversumSVM(C=2.0, tol=1e-10).fit(X, y)
    s = L2SVM(lam=1 / 4.0, solver="mfn", tol=1e-10).fit(X, y)
    np.testing.assert_allclose(m.coef_, s.coef_, atol=1e-10)
    np.testing.assert_allclose(m.intercept_, s.intercept_, atol=1e-10)
    from sklearn.svm import SVC

    h = UniversumSVM(C=2.0, loss="hinge").fit(X, y)
    svc = SVC(kernel="linear", C=2.0, tol=1e-8).fit(X, y)
    np.testing.assert_allclose(h.coef_, svc.coef_, atol=1e-4)
    np.testing.assert_allclose(h.intercept_, svc.intercept_, atol=1e-4)
    # an unlabeled row that is ignored changes nothing either
    y2 = np.r_[y, -1]
    X2 = np.r_[X, rng.normal(size=(1, 5))]
    np.testing.assert_allclose(UniversumSVM(C=2.0, tol=1e-10, unlabeled="ignore")
                               .fit(X2, y2).coef_, m.coef_, atol=1e-10)


def test_hinge_universum_objective_and_kernel_route(rng):
    X, y = _binary(rng)
    Xu = rng.normal(size=(15, 5)) * 0.5
    lin = UniversumSVM(C=2.0, C_universum=0.7, epsilon=0.2, loss="hinge").fit(
        X, y, X_universum=Xu)
    # the objective is the hinge / epsilon-insensitive primal at the returned hyperplane
    f, fu = lin.decision_function(X), lin.decision_function(Xu)
    yp = 2.0 * y - 1
    value = 0.5 * float(lin.coef_[0] @ lin.coef_[0]) + 2.0 * np.maximum(0, 1 - yp * f).sum() \
        + 0.7 * np.maximum(0, np.abs(fu) - 0.2).sum()
    assert lin.objective_ == pytest.approx(value, rel=1e-5)
    # the kernel route (empirical kernel map) with a linear kernel is the same classifier
    ker = UniversumSVM(C=2.0, C_universum=0.7, epsilon=0.2, loss="hinge", kernel="poly",
                       degree=1, gamma=1.0, coef0=0.0).fit(X, y, X_universum=Xu)
    assert ker.objective_ == pytest.approx(lin.objective_, rel=1e-5)
    np.testing.assert_allclose(ker.decision_function(X), f, atol=1e-4)
    rbf = UniversumSVM(loss="hinge", kernel="rbf").fit(X, y, X_universum=Xu)
    assert rbf.score(X, y) > 0.8


def test_unlabeled_rows_as_universum(rng):
    X, y = _binary(rng)
    Xu = rng.normal(size=(10, 5))
    a = UniversumSVM(C_universum=0.5, tol=1e-10).fit(X, y, X_universum=Xu)
    b = UniversumSVM(C_universum=0.5, tol=1e-10, unlabeled="universum").fit(
        np.r_[X, Xu], np.r_[y, -np.ones(10)])
    np.testing.assert_allclose(a.coef_, b.coef_, atol=1e-10)
    assert b.n_universum_ == 10
    # the universum pulls the plane through it: outputs on it shrink
    s = UniversumSVM(tol=1e-10).fit(X, y)
    assert np.abs(b.decision_function(Xu)).mean() < np.abs(s.decision_function(Xu)).mean()
    pickle.loads(pickle.dumps(b)).predict(X)


def test_universum_bad_input(rng):
    X, y = _binary(rng)
    with pytest.raises(ValueError, match="X_universum has 3 features"):
        UniversumSVM().fit(X, y, X_universum=np.ones((2, 3)))
    with pytest.raises(ValueError, match="needs loss='hinge'"):
        UniversumSVM(kernel="rbf").fit(X, y)
    # three classes: one-vs-rest (tests/test_multiclass_ovr.py), not refused
    assert UniversumSVM().fit(X, np.arange(40) % 3).decision_function(X).shape == (40, 3)
    with pytest.raises(ValueError, match="epsilon"):
        UniversumSVM(epsilon=-1).fit(X, y)
    with pytest.raises(ValueError, match="unlabeled"):
        UniversumSVM(unlabeled="labels").fit(X, y)


# ---------------------------------------------------------------------------------------
# USSL


def _tiny_mixture(seed):
    rng = np.random.default_rng(seed)
    Xl = np.r_[rng.normal(size=(2, 2)) * 0.3 + [1, 0], rng.normal(size=(2, 2)) * 0.3 - [1, 0]]
    Xu = np.r_[rng.normal(size=(2, 2)) * 0.3 + [1, 0], rng.normal(size=(1, 2)) * 0.3 - [1, 0],
               rng.normal(size=(1, 2)) * 0.1]
    Z = np.hstack([np.r_[Xl, Xu], np.ones((8, 1))])
    return Z, np.array([1.0, 1.0, -1.0, -1.0])


def _mip_by_enumeration(Z, y_l, C_L, C_U, eps, M):
    """Problem II (big-M MIP) by enumerating labels and memberships, one QP each."""
    l = y_l.size
    m = Z.shape[0] - l
    w = cp.Variable(Z.shape[1])
    yu, dd = cp.Parameter(m), cp.Parameter(m)
    xi = cp.Variable(l + m, nonneg=True)
    eta = cp.Variable(m, nonneg=True)
    o = Z @ w
    cons = [cp.multiply(y_l, o[:l]) >= 1 - xi[:l],
            cp.multiply(yu, o[l:]) + xi[l:] + M * (1 - dd) >= 1,
            cp.abs(o[l:]) <= eps + eta + M * dd]
    problem = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w) + C_L * cp.sum(xi[:l])
                                     + C_U * cp.sum(xi[l:]) + C_U * cp.sum(eta)), cons)
    best = np.inf
    for ys in itertools.product([-1.0, 1.0], repeat=m):
        for ds in itertools.product([0.0, 1.0], repeat=m):
            yu.value, dd.value = np.array(ys), np.array(ds)
            problem.solve(solver="CLARABEL")
            best = min(best, problem.value)
    return best


@pytest.mark.parametrize("seed", [1, 2])
def test_sdp_value_bounds_the_mip_from_below(seed):
    Z, y_l = _tiny_mixture(seed)
    C_L, C_U, eps, M = 1.0, 1.0, 0.2, 3.0
    mip = _mip_by_enumeration(Z, y_l, C_L, C_U, eps, M)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sdp = ussl_sdp(Z @ Z.T, y_l, C_L, C_U, eps, M)
        direct = ussl_sdp(Z @ Z.T, y_l, C_L, C_U, eps, M, reduced=False)
    assert sdp.value <= mip + 1e-4 * max(1.0, mip)
    # the reduced LMI (z^- - z^+ folded) is the same SDP as the direct form
    assert sdp.value == pytest.approx(direct.value, rel=1e-4, abs=1e-5)
    # the relaxation contains the supervised problem: it is at least the labeled-only value
    w = cp.Variable(Z.shape[1])
    sup = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w)
                                 + C_L * cp.sum(cp.pos(1 - cp.multiply(y_l, Z[:4] @ w)))))
    sup.solve(solver="CLARABEL")
    assert sdp.value >= sup.value - 1e-4


@pytest.mark.parametrize("reduced", [True, False])
def test_sdp_at_integer_points_is_the_fixed_qp(reduced):
    """With M_y = y y^T and d fixed the LMI's minimum is g(y, d), the QP of Problem II."""
    Z, y_l = _tiny_mixture(1)
    ys, ds = np.array([1.0, 1.0, -1.0, 1.0]), np.array([1.0, 1.0, 1.0, 0.0])
    C_L, C_U, eps, M = 1.0, 1.0, 0.2, 3.0
    w = cp.Variable(3)
    o = Z @ w
    xi = cp.Variable(8, nonneg=True)
    eta = cp.Variable(4, nonneg=True)
    qp = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w) + C_L * cp.sum(xi[:4])
                                + C_U * cp.sum(xi[4:]) + C_U * cp.sum(eta)),
                    [cp.multiply(y_l, o[:4]) >= 1 - xi[:4],
                     cp.multiply(ys, o[4:]) + xi[4:] + M * (1 - ds) >= 1,
                     cp.abs(o[4:]) <= eps + eta + M * ds])
    qp.solve(solver="CLARABEL")
    # the SDP with only one feasible (M_y, d): labels all fixed as "labeled" rows, no
    # unlabeled freedom except d -- emulate by bounding d through C_U-free rows
    yfull = np.r_[y_l, ys]
    original = cp.Problem

    class Pinned(original):
        def __init__(self, objective, constraints):
            var = {v.name(): v for c in constraints for v in c.variables()}
            pin = var["M_y"] == np.outer(yfull, yfull) if "M_y" in var else \
                var["Q_y"] == np.outer(yfull[[0, 4, 5, 6, 7]], yfull[[0, 4, 5, 6, 7]])
            super().__init__(objective, constraints + [pin, var["d"] == ds])
    cp.Problem = Pinned
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sdp = ussl_sdp(Z @ Z.T, y_l, C_L, C_U, eps, M, reduced=reduced)
    finally:
        cp.Problem = original
    assert sdp.value == pytest.approx(qp.value, rel=1e-4)


@pytest.mark.parametrize("seed", [0, 1])
def test_sdp_reduced_form_is_the_direct_form(seed):
    # more features than rows (a full-rank kernel, as USPS/MNIST at n = 130) and a small
    # big-M, where the relaxation is not just the supervised problem; C_I != C_U
    rng = np.random.default_rng(seed)
    Z = np.hstack([rng.normal(size=(8, 10)) * 0.5, np.ones((8, 1))])
    Z[:2, 0] += 1
    Z[2:4, 0] -= 1
    y_l = np.array([1.0, 1.0, -1.0, -1.0])
    args = (Z @ Z.T, y_l, 2.0, 1.0, 0.2, 0.3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        values = {}
        for c_i in (0.1, 3.0):
            red = ussl_sdp(*args, C_I=c_i)
            ipm = ussl_sdp(*args, C_I=c_i, solver="CLARABEL")
            direct = ussl_sdp(*args, C_I=c_i, solver="CLARABEL", reduced=False)
            full_my = ussl_sdp(*args, C_I=c_i, solver="CLARABEL", collapse=False)
            loose = ussl_sdp(*args, C_I=c_i, tol=1e-4)
            # SCS and the interior-point solver agree on the reduced SDP; the direct form
            # (no strictly feasible point) is only solved to ~1e-4 by either solver
            assert red.value == pytest.approx(ipm.value, rel=1e-5)
            assert direct.value == pytest.approx(ipm.value, rel=1e-3)
            assert full_my.value == pytest.approx(ipm.value, rel=1e-4)  # M_y = E Q E^T exact
            assert loose.value == pytest.approx(ipm.value, rel=1e-3)
            np.testing.assert_allclose(red.M_y, ipm.M_y, atol=1e-3)
            np.testing.assert_allclose(red.M_y[:4, :4], np.outer(y_l, y_l), atol=1e-9)
            # SCS needs 100,000 iterations (its cap) on the direct form here, a few hundred
            # on the reduced one
            assert red.n_iter < 10_000
            values[c_i] = red.value
    assert values[3.0] > values[0.1] + 1e-2   # the irrelevant rows' own cost is in play


@pytest.mark.parametrize("seed", [0, 1])
def test_fixed_membership_qp_matches_the_direct_qp(seed):
    # more features than rows (as USPS/MNIST at n = 130): the factored, parametrised QP
    # gives the weights of the direct primal QP in the feature space, for several
    # candidates solved in a row on one instance
    rng = np.random.default_rng(seed)
    l, m, p = 6, 8, 25
    Z = np.hstack([rng.normal(size=(l + m, p)), np.ones((l + m, 1))])
    y_l = np.array([1.0, -1.0] * (l // 2))
    C_L, C_U, C_I, eps = 2.0, 1.0, 3.0, 0.2
    qp = FixedMembershipQP(Z, l, C_L, C_U, C_I, eps)
    for _ in range(3):
        labels_u = rng.choice([-1.0, 1.0], size=m)
        rel = rng.random(m) < 0.6
        w = qp.solve(y_l, labels_u, rel)
        Zu = Z[l:]
        ref, _, ref_obj = hinge_universum_qp(np.vstack([Z[:l], Zu[rel]]),
                                             np.r_[y_l, labels_u[rel]],
                                             Zu[~rel], np.r_[np.full(l, C_L),
                                                             np.full(rel.sum(), C_U)],
                                             C_I, eps, fit_bias=False)
        np.testing.assert_allclose(w, ref, atol=1e-4)
        o = Z @ w
        hinge = np.maximum(0, 1 - np.r_[y_l, labels_u] * o)
        value = 0.5 * w @ w + C_L * hinge[:l].sum() + C_U * hinge[l:][rel].sum() + C_I * \
            np.maximum(0, np.abs(o[l:][~rel]) - eps).sum()
        assert value == pytest.approx(ref_obj, rel=1e-6, abs=1e-7)
    # labeled_only: the supervised hinge SVM
    sup = qp.solve(y_l, np.ones(m), np.zeros(m, dtype=bool), labeled_only=True)
    ref, _, _ = hinge_universum_qp(Z[:l], y_l, None, C_L, 0.0, 0.0, fit_bias=False)
    np.testing.assert_allclose(sup, ref, atol=1e-4)


@pytest.mark.parametrize("seed", [1, 2])
def test_rounding_search_never_worse_than_sign_rounding(seed):
    # tiny problem: Problem I's optimum by enumerating every (labels, memberships) with the
    # fixed QP bounds any rounding from below; the search contains the sign rounding and
    # only descends from its best candidate, so it is never worse than the sign rounding
    Z, y_l = _tiny_mixture(seed)
    C_L, C_U, C_I, eps = 1.0, 1.0, 2.0, 0.2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sdp = ussl_sdp(Z @ Z.T, y_l, C_L, C_U, eps, 3.0, C_I=C_I)
    qp = FixedMembershipQP(Z, 4, C_L, C_U, C_I, eps)
    m = Z.shape[0] - 4

    def value(w):
        o = Z @ w
        return problem_objective(w, o[:4], y_l, o[4:], C_L, C_U, eps, C_I, "hinge")

    # each unlabeled row: +1, -1 or irrelevant (3^m assignments)
    best = min(value(qp.solve(y_l, np.where(np.array(a) < 0, -1.0, 1.0), np.array(a) != 0))
               for a in itertools.product([-1, 0, 1], repeat=m))
    sign = round_sdp(sdp, Z, y_l, C_L, C_U, C_I, eps, mode="sign", refit=qp)
    search = round_sdp(sdp, Z, y_l, C_L, C_U, C_I, eps, n_samples=5, random_state=seed,
                       refit=qp)
    assert sign.n_candidates == 1 and sign.descent == []
    assert sign.objective == pytest.approx(value(sign.w), rel=1e-9)
    assert search.sign_objective == pytest.approx(sign.objective, rel=1e-6)
    assert search.objective == pytest.approx(value(search.w), rel=1e-9)
    assert best - 1e-6 <= search.objective <= sign.objective * (1 + 1e-9)
    assert search.n_candidates > 2
    assert np.all(np.diff(search.descent) < 0)
    # memberships: each row's cheaper option at the returned weights
    o_u = Z[4:] @ search.w
    np.testing.assert_array_equal(search.relevant, C_U * np.maximum(0, 1 - np.abs(o_u))
                                  <= C_I * np.maximum(0, np.abs(o_u) - eps))
    again = round_sdp(sdp, Z, y_l, C_L, C_U, C_I, eps, n_samples=5, random_state=seed,
                      refit=qp)
    np.testing.assert_array_equal(again.w, search.w)
    with pytest.raises(ValueError, match="mode"):
        round_sdp(sdp, Z, y_l, C_L, C_U, C_I, eps, mode="best")


def test_mixture_sdp_rounding_options():
    rng = np.random.default_rng(4)
    X, y, _, _ = mixture_data(rng, std_irr=0.2, n_lab=3, n_rel=5, n_irr=5, n_test=1)
    kw = dict(method="sdp", sdp_max_iter=1000, C_L=10.0, C_U=10.0, C_irrelevant=30.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sign = MixtureSSL(fallback="none", rounding="sign", **kw).fit(X, y)
        search = MixtureSSL(fallback="none", random_state=1, **kw).fit(X, y)
    assert search.objective_ <= sign.objective_ * (1 + 1e-9)
    assert search.rounding_.sign_objective == pytest.approx(sign.objective_, rel=1e-6)
    assert search.objective_ == pytest.approx(search.rounding_.objective, rel=1e-6)
    pickle.loads(pickle.dumps(search))
    with pytest.raises(ValueError, match="rounding"):
        MixtureSSL(fallback="none", method="sdp", rounding="random").fit(X, y)


def _squared_refit_objective(X, y, labels_u, relevant, C_L, C_U, eps):
    """Squared Problem I at the MFN refit with the given labels and memberships fixed."""
    lab = np.flatnonzero(y != -1)
    unl = np.flatnonzero(y == -1)
    y_l = np.where(y[lab] == 1, 1.0, -1.0)
    A = Design(X).restrict(np.r_[lab, unl])
    l, u = lab.size, unl.size
    rows = np.r_[np.arange(l), l + np.arange(u), l + np.arange(u), l + np.arange(u)]
    signs = np.r_[y_l, labels_u, -np.ones(u), np.ones(u)]
    cost = np.r_[np.full(l, 2 * C_L), np.where(relevant, 2 * C_U, 0.0),
                 np.where(relevant, 0.0, 2 * C_U), np.where(relevant, 0.0, 2 * C_U)]
    margin = np.r_[np.ones(l + u), np.full(2 * u, -eps)]
    res = l2svm_mfn(A, HingeTerms(signs, cost, rows=rows, n_rows=l + u, margin=margin),
                    Ridge(1.0), tol=1e-10)
    o = res.outputs
    return problem_objective(res.w, o[:l], y_l, o[l:], C_L, C_U, eps, loss="squared_hinge")


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_alternating_no_worse_than_rounded_sdp(seed):
    rng = np.random.default_rng(seed)
    X, y, _, _ = mixture_data(rng, std_irr=0.2, n_lab=3, n_rel=8, n_irr=8, n_test=1)
    kw = dict(C_L=10.0, C_U=10.0, epsilon=0.2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # SCS needs ~20,000 iterations on seed 0 (2-D data: a rank-3 kernel); the rounding
        # does not need that accuracy, and the relaxation gap dwarfs the solver's error
        sdp = MixtureSSL(fallback="none", method="sdp", sdp_max_iter=3000, **kw).fit(X, y)
    alt = MixtureSSL(fallback="none", polish=True, late_membership=False, **kw).fit(X, y)
    unl = y == -1
    ref = _squared_refit_objective(X, y, sdp.sdp_labels_, sdp.relevant_[unl], 10.0, 10.0, 0.2)
    assert alt.objective_ <= ref * (1 + 1e-6)
    assert sdp.sdp_value_ <= sdp.objective_ + 1e-6 * sdp.objective_


def test_without_irrelevant_option_it_is_the_tsvm(rng):
    X = rng.normal(size=(300, 10))
    yt = np.where(X[:, 0] + 0.2 * rng.normal(size=300) > 0, 1, 0)
    y = np.where(np.arange(300) < 20, yt, -1)
    C_L, C_U = 2.0, 0.05
    m = MixtureSSL(fallback="none", C_L=C_L, C_U=C_U, allow_irrelevant=False).fit(X, y)
    lam = 1 / (2 * 20 * C_L)
    lam_u = 2 * 280 * lam * C_U
    t = TransductiveSVM(lam=lam, lam_u=lam_u, lam_u_init=1e-5 * lam_u, fallback="none").fit(X, y)
    # same schedule and steps; the TSVM carries its CG preconditioner across rounds, so the
    # two agree to the CG tolerance (1e-6), not bit for bit
    np.testing.assert_allclose(m.coef_, t.coef_, rtol=1e-5, atol=1e-8)
    np.testing.assert_array_equal(m.transduction_, t.transduction_)
    assert m.relevant_.all()


def _alternating_problem(seed, std_irr, C):
    """Chapter 7 data as :func:`ussl_alternating` takes it, with ``lam``, ``lam_u`` for
    ``C_L = C_U = C``: ``(A, l, u, y_l, lam, lam_u)``."""
    X, y, _, _ = mixture_data(np.random.default_rng(seed), std_irr=std_irr)
    lab, unl = np.flatnonzero(y != -1), np.flatnonzero(y == -1)
    A = Design(X).restrict(np.r_[lab, unl])
    y_l = np.where(y[lab] == 1, 1.0, -1.0)
    lam = 1 / (2 * lab.size * C)
    return A, lab.size, unl.size, y_l, lam, 2 * unl.size * lam * C


def test_final_phase_single_flips_are_capped():
    # each kept single-row flip starts a new pass; the cap bounds the re-solves of the whole
    # phase (O(u) otherwise), and a cap above what a problem uses changes nothing
    A, l, u, y_l, lam, lam_u = _alternating_problem(3, 0.2, 100.0)
    args = (A, l, y_l, lam, lam_u, lam_u, 0.2, 0.5)

    def trials(res):  # single-flip trial solves of the final phase, kept or not
        return res.n_iter - 1 - sum(1 for h in res.history if h["moved"] != -2)

    free = ussl_alternating(*args, max_local_solves=10**6)
    assert trials(free) > 2
    capped = ussl_alternating(*args, max_local_solves=2)
    assert trials(capped) <= 2 < trials(free)
    same = ussl_alternating(*args, max_local_solves=trials(free))
    np.testing.assert_array_equal(same.w, free.w)


def test_final_phase_only_lowers_problem_one():
    # polish=False stops after the annealing; the final phase starts from that point and
    # every step lowers Problem I, so with it the objective is never higher
    for seed in range(3):
        X, y, _, _ = mixture_data(np.random.default_rng(seed), std_irr=0.2)
        kw = dict(C_L=10.0, C_U=10.0, C_irrelevant=30.0, epsilon=0.2)
        off = MixtureSSL(fallback="none", polish=False, late_membership=False, **kw).fit(X, y)
        on = MixtureSSL(fallback="none", polish=True, late_membership=False, **kw).fit(X, y)
        assert on.objective_ <= off.objective_ * (1 + 1e-9)
        assert not any(h["moved"] < 0 for h in off.fit_result_.history)
    assert any(h["moved"] < 0 for h in on.fit_result_.history)
    with pytest.raises(ValueError, match="polish"):
        MixtureSSL(fallback="none", polish="no").fit(X, y)


def test_fixed_memberships_oracle():
    A, l, u, y_l, lam, lam_u = _alternating_problem(5, 0.2, 10.0)
    args = (A, l, y_l, lam, lam_u, lam_u, 0.2, 0.5)
    truth = np.r_[np.ones(60, bool), np.zeros(30, bool)]
    res = ussl_alternating(*args, fixed_relevant=truth)
    np.testing.assert_array_equal(res.relevant, truth)
    # the balance holds over the relevant rows only
    assert np.mean(res.labels_u[truth] > 0) == 0.5
    # at the returned weights the solver's objective is the one of these memberships
    o = A.matvec(res.w)
    terms = _mixture_terms_reference(y_l, res.labels_u, truth, lam_u, lam_u, 0.2, o)
    assert res.objective == pytest.approx(0.5 * lam * res.w @ res.w + terms, rel=1e-9)
    # all rows fixed relevant: exactly the TSVM's route (no irrelevant option used)
    every = ussl_alternating(*args, fixed_relevant=np.ones(u, bool))
    tsvm = ussl_alternating(A, l, y_l, lam, lam_u, None, 0.2, 0.5)
    np.testing.assert_allclose(every.w, tsvm.w, rtol=1e-6, atol=1e-9)
    np.testing.assert_array_equal(every.labels_u, tsvm.labels_u)


def test_late_membership_follows_the_tsvm_until_the_final_weight():
    A, l, u, y_l, lam, lam_u = _alternating_problem(7, 0.1, 100.0)
    late = ussl_alternating(A, l, y_l, lam, lam_u, lam_u, 0.2, 0.5, polish=False,
                            late_membership=True)
    tsvm = ussl_alternating(A, l, y_l, lam, lam_u, None, 0.2, 0.5)
    # no membership moves before the final weight, so the first solves are the TSVM's
    before = [h for h in late.history if h["lam_u"] < lam_u]
    assert before and all(h["moved"] == 0 for h in before)
    n = len(before)
    np.testing.assert_allclose([h["objective"] for h in before],
                               [h["objective"] for h in tsvm.history[:n]], rtol=1e-6)
    # at the final weight the irrelevant option is used (chapter 7 data: it pays)
    assert not late.relevant.all()
    # at the final weight every move, switch and solve lowers the objective
    final = [h["objective"] for h in late.history if h["lam_u"] == lam_u]
    assert len(final) > 1 and np.all(np.diff(final) <= 1e-9 * abs(final[0]))
    # the estimator's option runs this route (Design(X) carries the constant feature)
    X, y, _, _ = mixture_data(np.random.default_rng(7), std_irr=0.1)
    m = MixtureSSL(fallback="none",
                   C_L=100.0, C_U=100.0, polish=False, late_membership=True).fit(X, y)
    np.testing.assert_allclose(np.r_[m.coef_.ravel(), m.intercept_], late.w, rtol=1e-5,
                               atol=1e-8)
    with pytest.raises(ValueError, match="late_membership"):
        MixtureSSL(fallback="none", late_membership=1.5).fit(X, y)


def _mixture_terms_reference(y_l, labels_u, relevant, lam_u, lam_i, eps, o):
    """``(1/2l) sum_l l_2 + (1/2u) sum_u [lam_u l_2 or lam_i U_eps^2]``, written out."""
    l, u = y_l.size, labels_u.size
    ol, ou = o[:l], o[l:]
    lab = np.sum(np.maximum(0, 1 - y_l * ol) ** 2) / (2 * l)
    rel = lam_u * np.maximum(0, 1 - labels_u * ou) ** 2
    irr = lam_i * np.maximum(0, np.abs(ou) - eps) ** 2
    return lab + np.sum(np.where(relevant, rel, irr)) / (2 * u)


def test_mixture_flags_irrelevant_points_and_beats_tsvm_on_chapter7_data():
    rng = np.random.default_rng(0)
    errs = []
    for _ in range(3):
        X, y, Xt, yt = mixture_data(rng, std_irr=0.1)
        m = MixtureSSL(fallback="none", C_L=100, C_U=100, epsilon=0.2, polish=True,
                       late_membership=False).fit(X, y)
        irr = m.relevant_[70:]
        rel = m.relevant_[10:70]
        assert irr.mean() < 0.5 < rel.mean()
        errs.append(1 - m.score(Xt, yt))
    assert np.mean(errs) < 0.05
    assert m.transduction_.shape == y.shape
    assert np.array_equal(m.transduction_[:10], y[:10])
    pickle.loads(pickle.dumps(m)).predict(Xt)


def test_mixture_bad_input_and_documented_behaviour(rng):
    X, y, _, _ = mixture_data(rng)
    with pytest.raises(ValueError, match="max_sdp_rows"):
        MixtureSSL(fallback="none", method="sdp", max_sdp_rows=50).fit(X, y)
    with pytest.raises(ValueError, match="method"):
        MixtureSSL(fallback="none", method="mip").fit(X, y)
    with pytest.raises(ValueError, match="sdp_tol"):
        MixtureSSL(fallback="none", method="sdp", sdp_tol=0.0).fit(X, y)
    with pytest.raises(ValueError, match="no labeled rows"):
        MixtureSSL(fallback="none").fit(X, -np.ones(len(y)))
    # three classes: one-vs-rest (tests/test_multiclass_ovr.py), not refused
    three = MixtureSSL(fallback="none").fit(X, np.r_[np.arange(10) % 3, -np.ones(len(y) - 10)])
    assert three.decision_function(X).shape == (len(y), 3)
    # an all-irrelevant verdict is allowed, but said: a huge epsilon makes every
    # unlabeled row free as a universum point
    with pytest.warns(UserWarning, match="every unlabeled row irrelevant"):
        m = MixtureSSL(fallback="none", C_L=1e-3, epsilon=100.0).fit(X, y)
    assert not m.relevant_[10:].any()


# ---------------------------------------------------------------------------------------
# STL / SSTL


def _weak_digits(rng, n_unl=120):
    """sklearn's 8x8 digits: 1 vs 7 labeled (2 each), other digits as weakly related rows."""
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    pos = np.flatnonzero(np.isin(y, [1, 7]))
    lab = np.r_[rng.choice(np.flatnonzero(y == 1), 2, replace=False),
                rng.choice(np.flatnonzero(y == 7), 2, replace=False)]
    test = np.setdiff1d(pos, lab)
    unl = rng.choice(np.flatnonzero(~np.isin(y, [1, 7])), n_unl, replace=False)
    Xtr = np.r_[X[lab], X[unl]]
    ytr = np.r_[y[lab], -np.ones(n_unl, dtype=int)]
    return Xtr, ytr, X[test], y[test]


def test_sstl_objective_never_increases_and_matches_its_definition(rng):
    from semisup.weak import SupervisedSelfTaught

    X, y, Xt, yt = _weak_digits(rng)
    m = SupervisedSelfTaught(fallback="none",
                             n_components=12, beta=0.5, supervised_weight=5.0, max_iter=4,
                             n_iter=20, random_state=0).fit(X, y)
    trace = np.asarray(m.fit_results_["objective"])
    assert trace.size == 1 + 4 * m.n_iter_
    assert np.all(np.diff(trace) <= 1e-9 * np.abs(trace[1:]))
    assert trace[-1] < trace[0]
    # the recorded value is F at the returned dictionary, codes and classifier
    Y = np.where(y[y != -1] == 7, 1.0, -1.0)
    codes = m.codes_
    Xall = np.r_[X[y != -1], X[y == -1]]
    F = np.sum((Xall - codes @ m.components_) ** 2) + 0.5 * np.abs(codes).sum() + 5.0 * (
        0.5 * float(np.sum(m.coef_ ** 2)) + np.maximum(
            0, 1 - Y * (codes[:4] @ m.coef_[0] + m.intercept_[0])).sum())
    assert m.objective_ == pytest.approx(F, rel=1e-9)
    assert np.all(np.linalg.norm(m.components_, axis=1) <= 1 + 1e-9)
    assert m.score(Xt, yt) > 0.6
    pickle.loads(pickle.dumps(m)).predict(Xt[:3])


def test_sstl_with_zero_supervised_weight_is_stl(rng):
    from semisup.weak import SelfTaughtClassifier, SupervisedSelfTaught

    X, y, Xt, yt = _weak_digits(rng)
    kw = dict(n_components=10, beta=0.5, C=2.0, n_iter=10, random_state=3)
    a = SupervisedSelfTaught(fallback="none", supervised_weight=0.0, **kw).fit(X, y)
    b = SelfTaughtClassifier(fallback="none", **kw).fit(X, y)
    np.testing.assert_allclose(a.components_, b.components_)
    np.testing.assert_allclose(a.decision_function(Xt), b.decision_function(Xt))
    # and the STL codes solve the documented lasso: ||x - aD||^2 + beta ||a||_1 (alpha=beta/2)
    codes = b.transform(Xt[:3])
    for x, a0 in zip(Xt[:3], codes, strict=True):
        var = cp.Variable(10)
        problem = cp.Problem(cp.Minimize(cp.sum_squares(x - var @ b.components_)
                                         + 0.5 * cp.norm1(var)))
        problem.solve(solver="CLARABEL")
        value = np.sum((x - a0 @ b.components_) ** 2) + 0.5 * np.abs(a0).sum()
        assert value == pytest.approx(problem.value, rel=1e-4, abs=1e-6)


def test_sstl_multiclass_and_extra_unlabeled_rows(rng):
    from sklearn.datasets import load_digits

    from semisup.weak import SupervisedSelfTaught

    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    lab = np.r_[[np.flatnonzero(y == k)[:3] for k in (0, 1, 2)]].ravel()
    extra = X[np.isin(y, [5, 6])][:60]
    m = SupervisedSelfTaught(fallback="none",
                             n_components=8, beta=0.5, supervised_weight=2.0, max_iter=2,
                             n_iter=10, random_state=0).fit(X[lab], y[lab], X_unlabeled=extra)
    assert m.coef_.shape == (3, 8)
    test = np.flatnonzero(np.isin(y, [0, 1, 2]))[50:150]
    assert m.score(X[test], y[test]) > 0.5


def test_sstl_refit_trains_the_svm_on_the_codes_prediction_sees(rng):
    """The returned SVM is the II(a) solution on the plain-lasso codes of the labeled rows,
    i.e. on the same coding as every test row (not on the margin-bent codes of I(b))."""
    from sklearn.svm import SVC

    from semisup.weak import SupervisedSelfTaught

    X, y, Xt, yt = _weak_digits(rng)
    kw = dict(n_components=12, beta=0.5, C=2.0, supervised_weight=5.0, max_iter=3,
              n_iter=20, random_state=0)
    m = SupervisedSelfTaught(fallback="none", **kw).fit(X, y)
    X_l, Y = X[y != -1], np.where(y[y != -1] == 7, 1.0, -1.0)
    plain = m.transform(X_l)
    np.testing.assert_allclose(m.codes_[:4], plain)
    ref = SVC(kernel="linear", C=2.0, tol=1e-6).fit(plain, Y)
    np.testing.assert_allclose(m.decision_function(X_l), ref.decision_function(plain),
                               rtol=1e-6, atol=1e-8)
    # the alternation itself is untouched by the refit
    raw = SupervisedSelfTaught(fallback="none", refit=False, **kw).fit(X, y)
    np.testing.assert_allclose(raw.fit_results_["objective"], m.fit_results_["objective"])
    np.testing.assert_allclose(raw.components_, m.components_)
    assert raw.fit_results_["refit_objective"] is None
    assert raw.objective_ == raw.fit_results_["objective"][-1]
    assert m.objective_ == m.fit_results_["refit_objective"]
    # step I(b) did bend the labeled codes: the bug the refit removes is real here
    assert not np.allclose(raw.codes_[:4], plain)


def test_sstl_labeled_weight_reweights_the_reconstruction(rng):
    from semisup.weak import SupervisedSelfTaught

    X, y, _, _ = _weak_digits(rng)
    kw = dict(n_components=12, beta=0.5, supervised_weight=5.0, max_iter=4, n_iter=20,
              random_state=0, refit=False)
    bal = SupervisedSelfTaught(fallback="none", labeled_weight="balanced", **kw).fit(X, y)
    assert bal.labeled_weight_ == pytest.approx(120 / 4)
    trace = np.asarray(bal.fit_results_["objective"])
    assert np.all(np.diff(trace) <= 1e-9 * np.abs(trace[1:]))
    # F by hand, labeled rows weighted m / l
    Y = np.where(y[y != -1] == 7, 1.0, -1.0)
    Xall = np.r_[X[y != -1], X[y == -1]]
    codes, D = bal.codes_, bal.components_
    rows = np.sum((Xall - codes @ D) ** 2, axis=1) + 0.5 * np.abs(codes).sum(axis=1)
    F = 30.0 * rows[:4].sum() + rows[4:].sum() + 5.0 * (
        0.5 * float(np.sum(bal.coef_ ** 2)) + np.maximum(
            0, 1 - Y * (codes[:4] @ bal.coef_[0] + bal.intercept_[0])).sum())
    assert bal.objective_ == pytest.approx(F, rel=1e-9)
    # the weight does what it is for: the dictionary fits the labeled rows better
    one = SupervisedSelfTaught(fallback="none", labeled_weight=1.0, **kw).fit(X, y)
    assert one.labeled_weight_ == 1.0

    def labeled_error(m):
        a = m.transform(X[y != -1])
        return np.sum((X[y != -1] - a @ m.components_) ** 2)

    assert labeled_error(bal) < labeled_error(one)


def test_selftaught_bad_input(rng):
    from semisup.weak import SelfTaughtClassifier, SupervisedSelfTaught

    X, y, _, _ = _weak_digits(rng, n_unl=20)
    with pytest.raises(ValueError, match="n_components=30 atoms cannot be learned from 20"):
        SelfTaughtClassifier(fallback="none", n_components=30).fit(X, y)
    with pytest.raises(ValueError, match="X_unlabeled has 3 features"):
        SelfTaughtClassifier(fallback="none", n_components=5).fit(X, y, X_unlabeled=np.ones((4, 3)))
    with pytest.raises(ValueError, match="beta"):
        SupervisedSelfTaught(fallback="none", beta=0).fit(X, y)
    with pytest.raises(ValueError, match="supervised_weight"):
        SupervisedSelfTaught(fallback="none", supervised_weight=-1).fit(X, y)
    with pytest.raises(ValueError, match="labeled_weight"):
        SupervisedSelfTaught(fallback="none", n_components=5, labeled_weight="equal").fit(X, y)
    with pytest.raises(ValueError, match="labeled_weight"):
        SupervisedSelfTaught(fallback="none", n_components=5, labeled_weight=0.0).fit(X, y)
    with pytest.raises(ValueError, match="refit"):
        SupervisedSelfTaught(fallback="none", n_components=5, refit="yes").fit(X, y)


# ---------------------------------------------------------------------------------------
# scikit-learn's estimator checks (binary-only estimators)

from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402


@parametrize_with_checks(
    [UniversumSVM(), MixtureSSL()],
    expected_failed_checks=lambda est: {
        "check_classifiers_classes": "y == -1 marks unlabeled rows (the sklearn.semi_supervised "
                                     "convention), so the check's class label -1 cannot be a "
                                     "class"},
)
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        check(estimator)
