"""Convex relaxed TSVM (CTSVM), its SDP baseline (RTSVM) and rho-TSVM (thesis ch. 3, 5)."""

import itertools
import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning

cp = pytest.importorskip("cvxpy")

from semisup._validation import CollapseWarning  # noqa: E402
from semisup.kernels import kernel_matrix  # noqa: E402
from semisup.solvers.svm import fit_precomputed_svm  # noqa: E402
from semisup.transductive import ConvexTSVM, RhoTSVM, SDPRelaxedTSVM  # noqa: E402
from semisup.transductive._base import centre_kernel  # noqa: E402
from semisup.transductive.ctsvm import balanced_threshold  # noqa: E402
from semisup.transductive.rho import box_qp  # noqa: E402


def blobs(n=40, l_per_class=2, sep=2.0, seed=0, d=2):
    rng = np.random.default_rng(seed)
    yt = np.repeat([0, 1], n // 2)
    X = rng.normal(size=(n, d))
    X[:, 0] += np.where(yt == 1, sep, -sep)
    y = np.full(n, -1)
    lab = np.r_[np.flatnonzero(yt == 0)[:l_per_class], np.flatnonzero(yt == 1)[:l_per_class]]
    y[lab] = yt[lab]
    return X, y, yt


def c_vector(y):
    lab, unl = y != -1, y == -1
    c = np.zeros(y.size)
    c[lab] = 1.0 / lab.sum()
    c[unl] = -1.0 / unl.sum()
    return c


# ---------------------------------------------------------------- exactness by enumeration
def test_ctsvm_hard_margin_lower_bounds_enumerated_tsvm():
    """n = 10: the relaxation (eq. 3.8) never exceeds the exact TSVM optimum of eq. 3.6."""
    X, y, yt = blobs(n=10, l_per_class=2, sep=1.5, seed=3)
    gamma, ridge = 0.5, 1e-2
    est = ConvexTSVM(fallback="none",
                     C_l=np.inf, kernel="rbf", gamma=gamma, ridge=ridge, epsilon=0.6,
                     solver="clarabel", tol=1e-8).fit(X, y)
    Kc, _, _ = centre_kernel(kernel_matrix(X, kernel="rbf", gamma=gamma))
    Kc += ridge * np.mean(np.diag(Kc)) * np.eye(10)
    A = np.linalg.inv(Kc)
    A = 0.5 * (A + A.T)
    lab, unl = np.flatnonzero(y != -1), np.flatnonzero(y == -1)
    y_l = np.where(y[lab] == 1, 1.0, -1.0)
    c = c_vector(y)
    best = np.inf
    n_feasible = 0
    for signs in itertools.product((-1.0, 1.0), repeat=unl.size):
        w = cp.Variable(10)
        cons = [cp.multiply(y_l, w[lab]) >= 1, cp.multiply(np.array(signs), w[unl]) >= 1,
                cp.abs(c @ w) <= 0.6]
        prob = cp.Problem(cp.Minimize(cp.quad_form(w, cp.psd_wrap(A))), cons)
        prob.solve(solver="CLARABEL")
        if prob.status == "optimal":
            n_feasible += 1
            best = min(best, prob.value)
    assert n_feasible > 0
    assert est.objective_ <= best * (1 + 1e-6)
    # the relaxation is loose but not vacuous (ratio reported in the issue note)
    assert est.objective_ >= 0.1 * best


@pytest.mark.parametrize("solver", ["clarabel", "lowrank"])
def test_rtsvm_lower_bounds_enumerated_labelings(solver):
    """n = 10: RTSVM optimum (eq. 3.2) <= the bias-free SVM value of every balanced labeling."""
    X, y, yt = blobs(n=10, l_per_class=2, sep=1.5, seed=1)
    C, gamma, bal = 1.0, 0.5, 0.4
    est = SDPRelaxedTSVM(C=C, gamma=gamma, balance=bal, solver=solver, stop="gap",
                         fallback="none", tol=1e-8 if solver == "clarabel" else 1e-5).fit(X, y)
    K = kernel_matrix(X, kernel="rbf", gamma=gamma)
    lab, unl = np.flatnonzero(y != -1), np.flatnonzero(y == -1)
    best = np.inf
    for signs in itertools.product((-1.0, 1.0), repeat=unl.size):
        lbl = np.empty(10)
        lbl[lab] = np.where(y[lab] == 1, 1.0, -1.0)
        lbl[unl] = signs
        if lbl.sum() ** 2 > (bal * 10) ** 2:
            continue
        Q = 2 * K * np.outer(lbl, lbl)                 # thesis scaling: 2 a^T e - a^T YKY a
        beta = box_qp(Q, 2 * np.ones(10), C)
        best = min(best, 2 * beta.sum() - beta @ (K * np.outer(lbl, lbl)) @ beta)
    assert est.objective_ <= best + 1e-3 * abs(best)
    assert est.dual_objective_ <= est.objective_ + 1e-9
    assert est.transduction_.shape == (10,)
    if solver == "clarabel":
        np.testing.assert_allclose(np.diag(est.label_matrix_), 1.0, atol=1e-3)
    else:
        assert est.label_matrix_ is None
        np.testing.assert_allclose(np.linalg.norm(est.label_factor_, axis=1), 1.0)


@pytest.mark.parametrize("seed, kernel, balance, C", [
    (0, "rbf", 0.1, 1.0), (1, "rbf", 0.6, 3.0), (2, "rbf", None, 1.0),
    (0, "linear", 0.1, 1.0), (1, "linear", 0.6, 3.0), (3, "linear", None, 1.0)])
def test_rtsvm_lowrank_reaches_the_conic_optimum(seed, kernel, balance, C):
    """The factored route (M = R R^T) against Clarabel on eq. 3.2 itself, 24 rows with an
    imbalanced truth: the same optimum, a dual bound that never exceeds it, unit rows, the
    labeled rows one direction signed by their labels, and the balance kept."""
    from semisup.solvers.lowrank_rtsvm import rtsvm_lowrank
    from semisup.solvers.lowrank_sdp import FeatureFactor
    from semisup.transductive._sdp import rtsvm_sdp

    rng = np.random.default_rng(seed)
    n = 24
    yt = (rng.random(n) < 0.3).astype(int)
    X = rng.normal(size=(n, 3))
    X[:, 0] += np.where(yt == 1, 1.0, -1.0)
    lab = np.r_[np.flatnonzero(yt == 0)[:3], np.flatnonzero(yt == 1)[:1]]
    y_l = np.where(yt[lab] == 1, 1.0, -1.0)
    K = kernel_matrix(X, kernel=kernel, gamma=0.3)
    exact = rtsvm_sdp(K, lab, y_l, C, balance, solver="clarabel", tol=1e-9).objective
    F = (FeatureFactor(dense=np.linalg.cholesky(K + 1e-10 * np.eye(n)), lower=True)
         if kernel == "rbf" else FeatureFactor(X=X, mean=np.zeros(3)))
    res = rtsvm_lowrank(F, lab, y_l, C, balance, tol=1e-5, random_state=seed)
    assert res.converged and res.gap <= 1e-5
    np.testing.assert_allclose(res.objective, exact, rtol=1e-4)
    duals = [h["dual"] for h in res.history if np.isfinite(h["dual"])]
    assert duals and max(duals) <= exact * (1 + 1e-4)
    np.testing.assert_allclose(np.linalg.norm(res.R, axis=1), 1.0)
    np.testing.assert_allclose(res.R[lab], y_l[:, None] * res.R[lab[0]] * y_l[0], atol=1e-12)
    if balance is not None:
        assert res.balance <= balance + 1e-4


@pytest.mark.parametrize("solver", ["clarabel", "lowrank"])
def test_rtsvm_labels_are_the_anchor_rounding_of_M(solver):
    """transduction_ = sign(M[:, L] y_L) on both routes (M from the cone, or R R^T), and the
    labeled rows keep their labels."""
    X, y, _ = blobs(n=24, l_per_class=2, sep=2.5, seed=5)
    est = SDPRelaxedTSVM(gamma=0.5, solver=solver, fallback="none",
                         tol=1e-7 if solver == "clarabel" else 1e-5).fit(X, y)
    M = est.label_matrix_ if solver == "clarabel" else est.label_factor_ @ est.label_factor_.T
    lab = np.flatnonzero(y != -1)
    y_l = np.where(y[lab] == est.classes_[1], 1.0, -1.0)
    np.testing.assert_allclose(est.relaxed_scores_, M[:, lab] @ y_l / lab.size, atol=1e-10)
    expect = est.classes_[(M[:, lab] @ y_l >= 0).astype(int)]
    np.testing.assert_array_equal(est.transduction_, expect)
    np.testing.assert_array_equal(est.transduction_[lab], y[lab])


def test_rtsvm_stops_when_its_labels_settle():
    """stop='labels': the low-rank route stops once the anchor labels of the unlabeled rows
    have stayed the same over SETTLE_ROUNDS rounds (status 'labels_settled', no warning),
    with the same transduction as the certified run here; the solver's history shows the
    run of unchanged rounds, and its bound (when any) still never exceeds its objective."""
    from semisup.solvers.lowrank_rtsvm import rtsvm_lowrank
    from semisup.solvers.lowrank_sdp import FeatureFactor
    from semisup.transductive.rtsvm import SETTLE_ROUNDS

    X, y, _ = blobs(n=60, l_per_class=2, sep=2.0, seed=3)
    K = kernel_matrix(X, kernel="rbf", gamma=0.5)
    lab = np.flatnonzero(y != -1)
    y_l = np.where(y[lab] == 1, 1.0, -1.0)
    F = FeatureFactor(dense=np.linalg.cholesky(K + 1e-10 * np.eye(60)), lower=True)
    res = rtsvm_lowrank(F, lab, y_l, 1.0, 0.5, tol=1e-9, settle_rounds=3, random_state=0)
    assert res.settled and not res.converged
    assert [h["unchanged"] for h in res.history[-4:]] == [0, 1, 2, 3]
    assert res.dual_objective <= res.objective
    gap = rtsvm_lowrank(F, lab, y_l, 1.0, 0.5, tol=1e-9, random_state=0)
    assert not gap.settled and len(gap.history) > len(res.history)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = SDPRelaxedTSVM(gamma=0.5, balance=0.5, tol=1e-9, fallback="none").fit(X, y)
    assert est.status_ == "labels_settled" and est.n_iter_ >= SETTLE_ROUNDS + 1
    ref = SDPRelaxedTSVM(gamma=0.5, balance=0.5, stop="gap", fallback="none").fit(X, y)
    assert ref.status_ == "optimal"
    np.testing.assert_array_equal(est.transduction_, ref.transduction_)


def test_rtsvm_kernel_factor_of_a_given_rank_is_the_best_approximation():
    """kernel_factor(K, rank): the leading eigenpairs, so ||K - F F^T||_2 is the first
    eigenvalue left out; without rank the factor reproduces K."""
    from semisup.transductive.rtsvm import kernel_factor

    X, _, _ = blobs(n=40, seed=6)
    K = kernel_matrix(X, kernel="rbf", gamma=0.5)
    w = np.linalg.eigvalsh(K)[::-1]
    F = kernel_factor(K, rank=5)
    assert F.dense.shape == (40, 5)
    np.testing.assert_allclose(np.linalg.norm(K - F.dense @ F.dense.T, 2), w[5], rtol=1e-8)
    full = kernel_factor(K)
    G = full.matvec(np.eye(full.p))
    np.testing.assert_allclose(G @ G.T, K, atol=1e-8)


def test_rtsvm_multiclass_factor_is_truncated_above_spectral_rank(monkeypatch):
    """Beyond two classes and SPECTRAL_RANK rows the one-vs-rest relaxations share the
    factor of the kernel's leading eigenpairs (here the rank is lowered to 12 on 45 rows):
    every binary problem sees that factor, and an easy problem is transduced as with the
    full factor."""
    import semisup.transductive.rtsvm as rt

    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(c, 0.4, size=(15, 2)) for c in ((0, 0), (4, 0), (0, 4))])
    truth = np.repeat([0, 1, 2], 15)
    y = np.full(45, -1)
    y[[0, 1, 15, 16, 30, 31]] = truth[[0, 1, 15, 16, 30, 31]]
    full = SDPRelaxedTSVM(gamma=0.5, fallback="none").fit(X, y)
    ranks = []
    original = rt.kernel_factor

    def recording(K, rank=None):
        F = original(K, rank)
        ranks.append(F.p)
        return F

    monkeypatch.setattr(rt, "kernel_factor", recording)
    monkeypatch.setattr(rt, "SPECTRAL_RANK", 12)
    cut = SDPRelaxedTSVM(gamma=0.5, fallback="none").fit(X, y)
    assert ranks == [12]                     # one factor, shared by the three problems
    np.testing.assert_array_equal(cut.transduction_, full.transduction_)
    np.testing.assert_array_equal(cut.transduction_, truth)


def test_rtsvm_lowrank_warns_when_stopped_early():
    X, y, _ = blobs(n=30, seed=4)
    with pytest.warns(ConvergenceWarning, match="raise max_iter"):
        est = SDPRelaxedTSVM(max_iter=1, fallback="none").fit(X, y)
    assert est.status_ == "max_iter"
    assert est.dual_objective_ <= est.objective_


# ---------------------------------------------------------------- constraints and routes
@pytest.mark.parametrize("solver", ["scs", "lowrank"])
def test_recovered_w_satisfies_eq_3_6(solver):
    X, y, _ = blobs(n=30, seed=2)
    est = ConvexTSVM(fallback="none",
                     C_l=np.inf, gamma=0.5, solver=solver, epsilon=0.5, tol=1e-6).fit(X, y)
    z = est.relaxed_scores_
    lab, unl = y != -1, y == -1
    y_l = np.where(y[lab] == 1, 1.0, -1.0)
    assert np.all(y_l * z[lab] >= 1 - 1e-3)
    assert np.all(est.W_diag_[unl] >= 1 - 1e-3)
    assert abs(c_vector(y) @ z) <= 0.5 + 1e-3
    assert est.lmi_min_eig_ >= -1e-4


def test_exact_and_lowrank_routes_agree():
    X, y, yt = blobs(n=40, seed=0)
    kw = dict(C_l=10.0, gamma=0.5, tol=1e-7)
    exact = ConvexTSVM(fallback="none", solver="clarabel", **kw).fit(X, y)
    low = ConvexTSVM(fallback="none", solver="lowrank", **kw).fit(X, y)
    assert abs(exact.objective_ - low.objective_) <= 1e-4 * exact.objective_
    np.testing.assert_array_equal(exact.transduction_, low.transduction_)
    np.testing.assert_allclose(exact.relaxed_scores_, low.relaxed_scores_, atol=1e-2)
    # the certificate: the LMI holds and the primal-dual gap closes
    assert low.lmi_min_eig_ >= -1e-5
    assert low.objective_ - low.dual_objective_ <= 1e-5 * low.objective_
    # the relaxation uses the unlabeled rows (the intercept degeneracy is avoided)
    assert low.gamma_dual_[y == -1].sum() > 1e-2
    scs = ConvexTSVM(fallback="none", solver="scs", **kw).fit(X, y)
    assert abs(scs.objective_ - exact.objective_) <= 2e-3 * exact.objective_


def test_linear_features_route_matches_exact_on_sparse_input():
    rng = np.random.default_rng(5)
    n, d = 36, 50
    X = sp.random(n, d, density=0.3, random_state=5, format="csr")
    w_true = rng.normal(size=d)
    yt = (X @ w_true > np.median(X @ w_true)).astype(int)
    y = np.full(n, -1)
    lab = np.r_[np.flatnonzero(yt == 0)[:3], np.flatnonzero(yt == 1)[:3]]
    y[lab] = yt[lab]
    kw = dict(C_l=5.0, kernel="linear", tol=1e-7)
    exact = ConvexTSVM(fallback="none", solver="clarabel", **kw).fit(X.toarray(), y)
    low = ConvexTSVM(fallback="none", solver="lowrank", **kw).fit(X, y)
    assert abs(exact.objective_ - low.objective_) <= 1e-4 * exact.objective_
    np.testing.assert_array_equal(exact.transduction_, low.transduction_)
    # out of sample: the linear expansion equals the kernel expansion of the exact route
    np.testing.assert_allclose(low.decision_function(X), exact.decision_function(X.toarray()),
                               atol=2e-2)


def test_intercept_variant_and_squared_slack_run_and_use_the_ridge():
    X, y, _ = blobs(n=24, seed=4)
    free = ConvexTSVM(fallback="none",
                      C_l=10.0, gamma=0.5, fit_intercept=True, intercept_ridge=1e-8,
                      solver="clarabel").fit(X, y)
    # the degeneracy of digest §2.6: with (almost) no ridge on A the unlabeled multipliers vanish
    assert free.gamma_dual_[y == -1].sum() <= 1e-3
    ridged = ConvexTSVM(fallback="none",
                        C_l=10.0, gamma=0.5, fit_intercept=True, intercept_ridge=1e-2,
                        solver="clarabel").fit(X, y)
    assert ridged.gamma_dual_[y == -1].sum() <= 1e-2 * 25 + 1e-4    # bound mu (n + 1)
    sq = ConvexTSVM(fallback="none",
                    C_l=10.0, gamma=0.5, slack="squared", solver="clarabel").fit(X, y)
    assert np.isfinite(sq.objective_) and sq.transduction_.shape == (24,)


def test_out_of_sample_rules():
    X, y, yt = blobs(n=60, seed=6)
    Xt, _, yt_test = blobs(n=60, seed=7, l_per_class=0)
    est = ConvexTSVM(fallback="none", C_l=10.0, gamma=0.5, solver="lowrank").fit(X, y)
    # the expansion reproduces the relaxed scores: (K_c + r I) beta = z
    ridge = est.ridge * np.mean(np.diag(centre_kernel(kernel_matrix(X, gamma=est.gamma_))[0]))
    np.testing.assert_allclose(est.decision_function(X) + ridge * est._beta,
                               est.relaxed_scores_, atol=1e-6)
    assert np.mean(est.predict(Xt) == yt_test) >= 0.9
    svm = ConvexTSVM(fallback="none",
                     C_l=10.0, gamma=0.5, solver="lowrank", out_of_sample="svm").fit(X, y)
    assert np.mean(svm.predict(X) == svm.transduction_) >= 0.95
    assert np.mean(svm.predict(Xt) == yt_test) >= 0.9
    assert np.mean(est.transduction_[y == -1] == yt[y == -1]) >= 0.9


def test_eigenvector_rounding_and_pickle():
    X, y, yt = blobs(n=40, seed=8)
    est = ConvexTSVM(fallback="none",
                     C_l=10.0, gamma=0.5, solver="lowrank", rounding="eigenvector").fit(X, y)
    np.testing.assert_array_equal(est.transduction_[y != -1], y[y != -1])
    assert np.mean(est.transduction_ == yt) >= 0.9
    clone = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(clone.predict(X), est.predict(X))


@settings(max_examples=200, deadline=None)
# subnormal scores are left out: between 0 and the smallest subnormal no threshold other
# than 0 exists, and t = 0 means "the sign rounding" here
@given(st.lists(st.floats(-5, 5, allow_nan=False, allow_subnormal=False), min_size=1,
                max_size=40, unique=True),
       st.floats(-0.9, 0.9), st.floats(0.0, 1.5))
def test_balanced_threshold_keeps_the_balance_with_the_fewest_changes(scores, ybar, eps):
    """The rounded labels satisfy eq. 3.5's balance whenever some count of positives can,
    with the admissible count nearest the sign rounding's (t = 0 when that one is)."""
    s = np.array(scores)
    u = s.size
    t = balanced_threshold(s, ybar, eps)
    k0 = int(np.sum(s >= 0))
    admissible = [k for k in range(u + 1) if abs(ybar - (2 * k / u - 1)) <= eps + 1e-9]
    if k0 in admissible:
        assert t == 0.0
        return
    k = int(np.sum(s >= 0)) if t == 0.0 else int(np.sum(s > t))
    if admissible:
        assert k in admissible
        assert k == min(admissible, key=lambda j: abs(j - k0))
    else:                         # no count fits: the one nearest the labeled balance
        assert abs(k - u * (1 + ybar) / 2) <= 0.5 + 1e-9


def test_balanced_rounding_restores_the_balance_the_signs_break():
    """A large negative offset puts every relaxed score below 0: the sign rounding returns
    one class, the balanced rounding the nearest admissible split, and the decision
    function moves its threshold with it."""
    X, y, yt = blobs(n=60, seed=11, d=3)
    unl = y == -1
    with pytest.warns(CollapseWarning, match="rounding='balanced'"):
        sign = ConvexTSVM(fallback="none", C_l=1.0, kernel="linear", solver="lowrank", offset=-20.0,
                          rounding="sign").fit(X, y)
    assert np.all(sign.transduction_[unl] == 0) and sign.threshold_ == 0.0
    # no unlabeled multiplier is active there (the low-rank certificate once failed in
    # ARPACK on the zero operator; SCS gives the same optimum, 34.43298, in minutes)
    assert sign.fit_results_["status"] == "converged" and sign.lmi_min_eig_ >= -1e-6
    assert abs(sign.objective_ - sign.dual_objective_) <= 1e-4 * sign.objective_
    with warnings.catch_warnings():
        warnings.simplefilter("error", CollapseWarning)
        bal = ConvexTSVM(fallback="none", C_l=1.0, kernel="linear", solver="lowrank", offset=-20.0,
                         rounding="balanced").fit(X, y)
    np.testing.assert_array_equal(bal.relaxed_scores_, sign.relaxed_scores_)
    y_u = np.where(bal.transduction_[unl] == 1, 1.0, -1.0)
    assert abs(0.0 - y_u.mean()) <= bal.epsilon_ + 1e-12
    assert bal.threshold_ < 0
    np.testing.assert_array_equal(bal.decision_function(X[unl]) > 0, bal.transduction_[unl] == 1)
    # the fewest rows that restore the balance (epsilon_ = 0.5: a quarter of them), taken
    # from the top of the relaxed scores, which still rank the classes
    assert np.sum(bal.transduction_[unl] == 1) == np.ceil(0.25 * unl.sum())
    assert np.all(yt[unl][bal.transduction_[unl] == 1] == 1)
    # on a fit whose signs keep the balance it is the sign rounding itself
    plain = ConvexTSVM(fallback="none",
                       C_l=1.0, kernel="linear", solver="lowrank", rounding="sign").fit(X, y)
    same = ConvexTSVM(fallback="none",
                      C_l=1.0, kernel="linear", solver="lowrank", rounding="balanced").fit(X, y)
    assert same.threshold_ == 0.0
    np.testing.assert_array_equal(same.transduction_, plain.transduction_)
    np.testing.assert_array_equal(same.decision_function(X), plain.decision_function(X))


def test_precomputed_kernel_matches_rbf():
    X, y, _ = blobs(n=30, seed=9)
    K = kernel_matrix(X, kernel="rbf", gamma=0.5)
    a = ConvexTSVM(fallback="none", C_l=10.0, gamma=0.5, solver="lowrank").fit(X, y)
    b = ConvexTSVM(fallback="none", C_l=10.0, kernel="precomputed", solver="lowrank").fit(K, y)
    assert abs(a.objective_ - b.objective_) <= 1e-6 * a.objective_
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(K), atol=1e-6)


# ---------------------------------------------------------------- rho-TSVM
def test_rho_zero_equals_supervised_svm():
    X, y, _ = blobs(n=50, seed=10, l_per_class=4, sep=1.0)
    est = RhoTSVM(rho=0.0, C=5.0, gamma=0.5, ridge=0.0).fit(X, y)
    K = kernel_matrix(X, kernel="rbf", gamma=0.5)
    lab = np.flatnonzero(y != -1)
    svm = fit_precomputed_svm(K[np.ix_(lab, lab)], np.where(y[lab] == 1, 1.0, -1.0), 5.0,
                              fit_intercept=False, tol=1e-10)
    np.testing.assert_allclose(est.decision_function(X), svm.decision_function(K[:, lab]),
                               atol=1e-6)
    np.testing.assert_allclose(est.scores_, svm.decision_function(K[:, lab]), atol=1e-6)


def test_rho_cccp_decreases_objective_and_large_rho_kernel_is_psd():
    X, y, yt = blobs(n=60, seed=11, l_per_class=3, sep=1.0)
    small = RhoTSVM(rho=0.8, C=10.0, gamma=0.5, route="cccp", fallback="none").fit(X, y)
    path = np.array(small.objective_path_)
    assert path.size >= 2 and np.all(np.diff(path) <= 1e-8 * path[0])
    large = RhoTSVM(rho=10.0, C=10.0, gamma=0.5, fallback="none").fit(X, y)
    assert large.route_ == "kernel"
    assert np.linalg.eigvalsh(large.tsvm_kernel_)[0] >= -1e-8 * np.abs(large.tsvm_kernel_).max()
    assert large.transduction_.shape == (60,)


# ---------------------------------------------------------------- bad input
def test_bad_input_errors(monkeypatch):
    X, y, _ = blobs(n=20)
    one_class = np.where(y == 1, -1, y)
    with pytest.raises(ValueError, match="class"):
        ConvexTSVM(fallback="none").fit(X, one_class)
    with pytest.warns(UserWarning, match="no unlabeled"):     # the supervised limit (issue 27)
        ConvexTSVM(fallback="none").fit(X, np.where(y == -1, 0, y))
    K = kernel_matrix(X, gamma=0.5)
    K[0, 1] = K[1, 0] = 5.0
    with pytest.raises(ValueError, match="positive semi-definite"):
        ConvexTSVM(fallback="none", kernel="precomputed").fit(K, y)
    with pytest.raises(ValueError, match="lowrank"):
        ConvexTSVM(fallback="none", solver="scs", max_exact=10).fit(X, y)
    with pytest.raises(ValueError, match="lowrank"):
        SDPRelaxedTSVM(solver="clarabel", max_n=10).fit(X, y)
    with pytest.raises(ValueError, match="C_l"):
        ConvexTSVM(fallback="none", C_l=-1).fit(X, y)
    # a third class is solved one-vs-rest (tests/test_multiclass_ovr.py), not refused
    three = ConvexTSVM(fallback="none").fit(X, np.where(np.arange(20) == 3, 2, y))
    assert three.decision_function(X).shape == (20, 3)
    monkeypatch.setattr(cp, "installed_solvers", lambda: ["SCS"])
    with pytest.raises(ImportError, match="pip install"):
        ConvexTSVM(fallback="none", solver="clarabel").fit(X, y)


def test_box_qp_matches_cvxpy():
    rng = np.random.default_rng(12)
    A = rng.normal(size=(25, 6))
    Q = A @ A.T + 1e-3 * np.eye(25)
    p = rng.normal(size=25) + 0.5
    b = box_qp(Q, p, 0.7)
    x = cp.Variable(25)
    cp.Problem(cp.Maximize(p @ x - 0.5 * cp.quad_form(x, cp.psd_wrap(Q))),
               [x >= 0, x <= 0.7]).solve(solver="CLARABEL")
    np.testing.assert_allclose(b, x.value, atol=1e-6)


def test_prior_offset_routes_agree_on_imbalanced_data():
    rng = np.random.default_rng(13)
    yt = (rng.random(40) < 0.25).astype(int)
    X = rng.normal(size=(40, 2))
    X[:, 0] += np.where(yt == 1, 2.0, -2.0)
    y = np.full(40, -1)
    lab = np.r_[np.flatnonzero(yt == 0)[:4], np.flatnonzero(yt == 1)[:2]]
    y[lab] = yt[lab]
    kw = dict(C_l=10.0, gamma=0.5, tol=1e-7, offset="prior")
    exact = ConvexTSVM(fallback="none", solver="clarabel", **kw).fit(X, y)
    low = ConvexTSVM(fallback="none", solver="lowrank", **kw).fit(X, y)
    assert exact.offset_ == pytest.approx(-1.0 / 3.0)
    assert abs(exact.objective_ - low.objective_) <= 1e-4 * exact.objective_
    np.testing.assert_array_equal(exact.transduction_, low.transduction_)
    assert low.lmi_min_eig_ >= -1e-5
    assert low.objective_ - low.dual_objective_ <= 1e-5 * low.objective_


# ---------------------------------------------------------------- TSVM refinement of the rounding
def test_tsvm_initial_labels_hook_reproduces_the_default_start():
    """``labels_u0`` equal to the paper's thresholded start gives the default TSVM run."""
    from semisup.losses import HingeTerms
    from semisup.regularizers import Ridge
    from semisup.solvers.design import Design
    from semisup.solvers.mfn import l2svm_mfn
    from semisup.solvers.s3vm import initial_labels, transductive_svm

    X, y, yt = blobs(n=60, l_per_class=3, sep=1.0, seed=3)
    order = np.r_[np.flatnonzero(y != -1), np.flatnonzero(y == -1)]
    A = Design(X[order], True, 1.0)
    l = int((y != -1).sum())
    y_l = np.where(y[order][:l] == 1, 1.0, -1.0)
    ref = transductive_svm(A, l, y_l, 1e-3, 1.0, 0.5)
    sup = l2svm_mfn(A.restrict(np.arange(l)), HingeTerms(y_l, np.full(l, 1.0 / l)),
                    Ridge(1e-3))
    start = initial_labels(A.matvec(sup.w)[l:], 0.5)
    hooked = transductive_svm(A, l, y_l, 1e-3, 1.0, 0.5, labels_u0=start)
    np.testing.assert_array_equal(hooked.labels_u, ref.labels_u)
    assert hooked.objective == pytest.approx(ref.objective, rel=1e-12)
    # another start is honoured: its number of positives is kept
    other = np.where(np.arange(start.size) % 3 == 0, 1.0, -1.0)
    res = transductive_svm(A, l, y_l, 1e-3, 1.0, 0.5, labels_u0=other)
    assert np.sum(res.labels_u > 0) == np.sum(other > 0)
    with pytest.raises(ValueError, match="labels_u0"):
        transductive_svm(A, l, y_l, 1e-3, 1.0, 0.5, labels_u0=np.zeros(start.size))


@pytest.mark.parametrize("solver", ["scs", "lowrank"])
def test_ctsvm_tsvm_refinement_descends_from_the_rounded_labels(solver):
    # a hard draw (the rounding is poor, so the TSVM has labels to switch)
    X, y, yt = blobs(n=60, l_per_class=3, sep=1.0, seed=3)
    kw = dict(C_l=10.0, gamma=0.5, solver=solver)
    plain = ConvexTSVM(fallback="none", **kw).fit(X, y)
    ref = ConvexTSVM(fallback="none", refine="tsvm", **kw).fit(X, y)
    unl = y == -1
    info = ref.fit_results_["refine"]
    # the same relaxation, refined labels: a descent of the TSVM objective from the rounding
    np.testing.assert_allclose(ref.relaxed_scores_, plain.relaxed_scores_)
    assert info["objective"] <= info["start_objective"] + 1e-12
    changed = int(np.sum(ref.transduction_[unl] != plain.transduction_[unl]))
    assert changed == info["changed"]
    assert np.sum(ref.transduction_[unl] == 1) == np.sum(plain.transduction_[unl] == 1)
    with pytest.raises(ValueError, match="refine"):
        ConvexTSVM(fallback="none", refine="da").fit(X, y)


# ---------------------------------------------------------------- low-rank solver parts
def test_lbfgs_matches_scipy_on_a_smooth_convex_problem():
    """The in-place L-BFGS (ring buffer wraps with memory=4) reaches scipy's minimiser."""
    from scipy.optimize import minimize

    from semisup.solvers.lowrank_sdp import lbfgs
    rng = np.random.default_rng(0)
    A, b = rng.normal(size=(60, 40)), rng.normal(size=60)

    def fun(x):
        r = A @ x - b
        return 0.5 * r @ r + np.sum(np.logaddexp(0.0, x)), A.T @ r + 1 / (1 + np.exp(-x))
    x, nit = lbfgs(fun, np.zeros(40), max_iter=5000, memory=4, gtol=1e-11, ftol=0.0)
    ref = minimize(fun, np.zeros(40), jac=True, method="L-BFGS-B",
                   options=dict(gtol=1e-12, ftol=1e-16, maxiter=10000)).x
    assert nit > 4                       # the ring buffer wrapped
    np.testing.assert_allclose(x, ref, atol=1e-6)


@pytest.mark.parametrize("compiled", [False, True])
def test_feature_factor_sparse_products_match_the_explicit_factor(compiled, monkeypatch):
    """scipy's products (small data) and the compiled CSR block kernels (serial and
    parallel) give the explicit factor's products; the kernels equal scipy bit for bit."""
    import semisup.solvers.lowrank_sdp as lr
    from semisup.solvers import _kernels

    monkeypatch.setattr(lr, "use_compiled", lambda nnz: compiled)
    rng = np.random.default_rng(1)
    X = sp.random(30, 20, density=0.3, random_state=1, format="csr")
    mean = np.asarray(X.mean(axis=0)).ravel()
    F = lr.FeatureFactor(X=X, mean=mean, ridge=0.3)
    assert F._compiled == compiled
    Fd = np.hstack([X.toarray() - mean, np.sqrt(0.3) * np.eye(30)])
    M, G = rng.normal(size=(50, 3)), rng.normal(size=(30, 3))
    np.testing.assert_allclose(F.matvec(M), Fd @ M, atol=1e-12)
    np.testing.assert_allclose(F.rmatvec(G), Fd.T @ G, atol=1e-12)
    if compiled:
        Y = sp.random(400, 300, density=0.05, random_state=2, format="csr")
        B = rng.normal(size=(300, 7))
        for threshold in (0, 10**12):   # parallel, serial
            monkeypatch.setattr(_kernels, "PARALLEL_MIN_NNZ", threshold)
            out = np.empty((400, 7))
            _kernels.csr_matmat(Y.indptr, Y.indices.view(np.uint32), Y.data, B, out)
            np.testing.assert_array_equal(out, Y @ B)


def test_lowrank_block_escape_and_warm_start_reach_the_same_certified_optimum():
    """From rank 1 with block escapes, and warm-started from a solution, the low-rank
    solver reaches the default run's optimum with its certificate (LMI, gap)."""
    import scipy.linalg as sla

    from semisup.solvers.lowrank_sdp import FeatureFactor, ctsvm_lowrank
    X, y, _ = blobs(n=40, seed=4)
    Kc, _, _ = centre_kernel(kernel_matrix(X, kernel="rbf", gamma=0.5))
    Kc += 1e-2 * np.mean(np.diag(Kc)) * np.eye(40)
    F = FeatureFactor(dense=sla.cholesky(Kc, lower=True), lower=True)
    lab = np.flatnonzero(y != -1)
    y_l = np.where(y[lab] == 1, 1.0, -1.0)
    C = np.full(40, 10.0)
    ref = ctsvm_lowrank(F, y_l, lab, C, 0.5, rank=8, tol=1e-7, max_outer=200)
    blk = ctsvm_lowrank(F, y_l, lab, C, 0.5, rank=1, escape_block=3, tol=1e-7,
                        max_outer=200)
    warm = ctsvm_lowrank(F, y_l, lab, C, 0.5, tol=1e-7, max_outer=200,
                         init=dict(M=np.column_stack([ref.u, ref.R]), gamma=ref.gamma,
                                   mu=ref.mu))
    for res in (ref, blk, warm):
        assert res.converged and res.min_eig >= -1e-6 and abs(res.gap) <= 1e-6
        assert abs(res.objective - ref.objective) <= 1e-5 * ref.objective
    assert warm.n_evals < ref.n_evals


def test_pataki_rank_is_the_largest_rank_an_extreme_optimum_needs():
    from semisup.solvers.lowrank_sdp import pataki_rank
    for m in range(1, 3000):
        r = pataki_rank(m)
        assert r * (r + 1) // 2 <= m < (r + 1) * (r + 2) // 2


def test_lowrank_default_rank_cap_reaches_a_high_rank_optimum():
    """A Gaussian cloud whose relaxed optimum has rank ~10 (like g241c, rank 23): a low
    cap leaves the LMI violated; the default cap (Barvinok-Pataki) certifies the optimum,
    from rank 1 with single or growing escape blocks alike."""
    import scipy.linalg as sla

    from semisup.solvers.lowrank_sdp import FeatureFactor, ctsvm_lowrank
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 10))
    y = (X[:, 0] > 0).astype(int)
    lab = np.r_[np.flatnonzero(y == 0)[:2], np.flatnonzero(y == 1)[:2]]
    Kc, _, _ = centre_kernel(kernel_matrix(X, kernel="rbf", gamma=0.05))
    Kc += 1e-2 * np.mean(np.diag(Kc)) * np.eye(60)
    F = FeatureFactor(dense=sla.cholesky(Kc, lower=True), lower=True)
    y_l = np.where(y[lab] == 1, 1.0, -1.0)
    C = np.full(60, 10.0)
    kw = dict(tol=1e-7, max_outer=200, random_state=0)
    capped = ctsvm_lowrank(F, y_l, lab, C, 0.5, rank=1, max_rank=3, **kw)
    assert not capped.converged and capped.min_eig < -1e-3
    single = ctsvm_lowrank(F, y_l, lab, C, 0.5, rank=1, **kw)
    grow = ctsvm_lowrank(F, y_l, lab, C, 0.5, rank=1, escape_block="grow", **kw)
    for res in (single, grow):
        assert res.converged and res.min_eig >= -1e-6 and abs(res.gap) <= 1e-6
        assert res.R.shape[1] > 3
    assert abs(grow.objective - single.objective) <= 1e-6 * single.objective
    assert capped.objective > single.objective + 0.1   # the cap cut off the optimum


def test_lbfgs_state_carries_pairs_and_scaling_to_the_next_problem():
    """Started with the state of a solve of a nearby problem, L-BFGS takes its first step
    without backtracking ('scale') and solves in fewer evaluations ('pairs'), reaching the
    same (exact) minimiser."""
    from semisup.solvers.lowrank_sdp import lbfgs
    rng = np.random.default_rng(2)
    A = rng.normal(size=(80, 50)) * np.linspace(0.1, 3.0, 50)
    b = rng.normal(size=80)
    counts = {"n": 0}

    def make(shift):
        def fun(x):
            counts["n"] += 1
            r = A @ x - b - shift
            return 0.5 * r @ r + 0.05 * x @ x, A.T @ r + 0.1 * x
        return fun

    def evals(x0, state, **kw):
        counts["n"] = 0
        x, _ = lbfgs(make(0.01), x0, state=state, memory=8, ftol=0.0, **kw)
        return x, counts["n"]
    exact = np.linalg.solve(A.T @ A + 0.1 * np.eye(50), A.T @ (b + 0.01))
    state: dict = {}
    x1, _ = lbfgs(make(0.0), np.zeros(50), state=state, max_iter=5000, memory=8,
                  gtol=1e-10, ftol=0.0)
    assert state["theta"] > 0 and state["stored"] > 0
    # one iteration: the carried scaling gives an acceptable first step at once
    scale_only = {"theta": state["theta"]}
    _, warm = evals(x1, scale_only, max_iter=1, gtol=0.0)
    _, cold = evals(x1, None, max_iter=1, gtol=0.0)
    assert warm <= 2 < cold
    # a full solve with the carried pairs
    x2, warm = evals(x1, state, max_iter=5000, gtol=1e-10)
    ref, cold = evals(x1, None, max_iter=5000, gtol=1e-10)
    np.testing.assert_allclose(x2, exact, atol=1e-5)
    np.testing.assert_allclose(ref, exact, atol=1e-5)
    assert warm < cold


def test_escape_step_minimises_the_lagrangian_along_the_new_column():
    """The exact line search of a rank escape equals a brute-force minimisation of
    ``s + sum huber(G - s w2)`` over a fine grid."""
    from semisup.solvers.lowrank_sdp import _escape_step, _huber
    rng = np.random.default_rng(7)
    G = rng.normal(0.2, 0.5, size=50)
    w2 = rng.uniform(0, 0.2, size=50)
    gamma, C, sigma = rng.uniform(0, 10, size=50), np.full(50, 10.0), 10.0
    s_star = _escape_step(G, w2, gamma, C, sigma)
    grid = np.linspace(0, 3 * max(s_star, 1.0), 30001)
    vals = [s + _huber(G - s * w2, gamma, C, sigma)[0] for s in grid]
    assert s_star > 0
    assert abs(s_star - grid[int(np.argmin(vals))]) <= 2 * (grid[1] - grid[0])
    # no descent (the derivative at 0 is positive): no step
    assert _escape_step(G, 1e-4 * w2, gamma, C, sigma) == 0.0


def test_trim_columns_keeps_w_and_drops_only_negligible_columns():
    from semisup.solvers.lowrank_sdp import _trim_columns
    rng = np.random.default_rng(3)
    u = rng.normal(size=30)
    R = rng.normal(size=(30, 3)) @ rng.normal(size=(3, 7))        # rank 3 in 7 columns
    R += 1e-9 * rng.normal(size=R.shape)
    out = _trim_columns(np.column_stack([u, R]), margin=1)
    assert out.shape == (30, 5)                                    # rank 3 + 1 spare
    np.testing.assert_array_equal(out[:, 0], u)
    np.testing.assert_allclose(out[:, 1:] @ out[:, 1:].T, R @ R.T, atol=1e-12)
    full = np.column_stack([u, rng.normal(size=(30, 4))])
    assert _trim_columns(full, margin=1) is full                   # full rank: untouched


@pytest.mark.parametrize("opts", [
    dict(sigma=1.0, sigma_max=160.0),
    dict(trim=1),
    dict(carry="pairs", certify="lazy"),
    dict(escape_scale="search", rank=1),
    dict(sigma=1.0, sigma_max=160.0, trim=1, carry="pairs", certify="lazy",
         escape_scale="search", rank=2),
])
def test_lowrank_adaptive_rules_reach_the_fixed_rule_certified_optimum(opts):
    """Adaptive penalty, rank trimming, carried L-BFGS state and the lazy certificate
    each reach the default (fixed-sigma, every-round certificate) run's objective with the
    same certificate (LMI, gap), on an RBF problem and on sparse linear features."""
    import scipy.linalg as sla

    from semisup.solvers.lowrank_sdp import FeatureFactor, ctsvm_lowrank
    X, y, _ = blobs(n=40, seed=4)
    Kc, _, _ = centre_kernel(kernel_matrix(X, kernel="rbf", gamma=0.5))
    Kc += 1e-2 * np.mean(np.diag(Kc)) * np.eye(40)
    Xs = sp.random(40, 60, density=0.2, random_state=6, format="csr")
    mean = np.asarray(Xs.mean(axis=0)).ravel()
    lab = np.flatnonzero(y != -1)
    y_l = np.where(y[lab] == 1, 1.0, -1.0)
    C = np.full(40, 10.0)
    for F in (FeatureFactor(dense=sla.cholesky(Kc, lower=True), lower=True),
              FeatureFactor(X=Xs, mean=mean, ridge=1e-2)):
        ref = ctsvm_lowrank(F, y_l, lab, C, 0.5, tol=1e-7, max_outer=200, random_state=0)
        new = ctsvm_lowrank(F, y_l, lab, C, 0.5, tol=1e-7, max_outer=200, random_state=0,
                            **opts)
        for res in (ref, new):
            assert res.converged and res.min_eig >= -1e-6 and abs(res.gap) <= 1e-6
        assert abs(new.objective - ref.objective) <= 1e-5 * ref.objective
        if "sigma_max" in opts:
            assert max(h["sigma"] for h in new.history) > 1.0    # the penalty did grow
        if "trim" in opts and "rank" not in opts:
            assert new.R.shape[1] < ref.R.shape[1]               # spare columns dropped
