"""SVMlin-family estimators: algorithmic properties, API behaviour, bad input."""

import pickle
from unittest import mock

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import dense_with_bias
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from sklearn.exceptions import ConvergenceWarning

from semisup import L2SVM, DeterministicAnnealingSVM, RLSClassifier, TransductiveSVM
from semisup.linear.da import annealing_objective, optimal_beliefs
from semisup.linear.tsvm import initial_labels, smallest, switch_labels
from semisup.losses import HingeTerms, symmetric_squared_hinge


def two_clusters(rng, n=300, d=5, n_labeled=6, gap=4.0, sparse=False):
    """Two Gaussian clusters separated along the first axis, few labels."""
    y_true = (np.arange(n) >= n // 2).astype(int)
    X = rng.normal(size=(n, d))
    X[:, 0] += np.where(y_true == 1, gap / 2, -gap / 2)
    y = np.full(n, -1)
    lab = np.concatenate([rng.choice(n // 2, n_labeled // 2, replace=False),
                          n // 2 + rng.choice(n // 2, n_labeled // 2, replace=False)])
    y[lab] = y_true[lab]
    return (sp.csr_matrix(X) if sparse else X), y, y_true


# --- TSVM ------------------------------------------------------------------------------

def test_switch_labels_lowers_objective_and_keeps_balance(rng):
    o = rng.normal(size=200)
    labels = initial_labels(rng.normal(size=200), 0.3)
    before = labels.copy()
    n = switch_labels(o, labels, None)
    assert n > 0
    assert (labels > 0).sum() == (before > 0).sum() == 60
    terms = lambda lab: HingeTerms(lab, np.ones(200)).value(o)  # noqa: E731
    assert terms(labels) < terms(before)
    # S caps the number of switched pairs
    labels2 = before.copy()
    assert switch_labels(o, labels2, 3) == min(3, n)


def _switch_labels_by_full_sort(o, labels, max_switches):
    """Section 3.1.2 read literally: sort both candidate lists completely."""
    pos = np.flatnonzero((labels > 0) & (o < 1.0))
    neg = np.flatnonzero((labels < 0) & (o > -1.0))
    k = min(pos.size, neg.size, np.inf if max_switches is None else max_switches)
    pos = pos[np.argsort(o[pos], kind="stable")][: int(k)]
    neg = neg[np.argsort(-o[neg], kind="stable")][: int(k)]
    n = int(np.count_nonzero(o[pos] < o[neg]))
    labels[pos[:n]], labels[neg[:n]] = -1.0, 1.0
    return n


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), u=st.sampled_from([1, 7, 300, 5000]),
       spread=st.sampled_from([0.05, 1.0]), ties=st.booleans(),
       max_switches=st.sampled_from([None, 1, 50, 2000]))
def test_switch_labels_equals_the_full_sort(seed, u, spread, ties, max_switches):
    """The partial ordering switches exactly the pairs the full sort does (thousands too)."""
    rng = np.random.default_rng(seed)
    o = rng.normal(scale=spread, size=u)
    if ties:
        o = np.round(o, 1)
    labels = np.where(rng.random(u) < 0.5, 1.0, -1.0)  # random labels: many pairs switch
    expected = labels.copy()
    n_ref = _switch_labels_by_full_sort(o, expected, max_switches)
    assert switch_labels(o, labels, max_switches) == n_ref
    np.testing.assert_array_equal(labels, expected)


@settings(max_examples=60, deadline=None)
@given(values=arrays(np.float64, st.integers(0, 60), elements=st.sampled_from(
    [-2.0, -1.0, 0.0, 0.5, 1.0, 3.0])), k=st.integers(0, 70))
def test_smallest_equals_stable_argsort_prefix(values, k):
    np.testing.assert_array_equal(smallest(values, k),
                                  np.argsort(values, kind="stable")[:k])


def test_switch_labels_stops_at_non_improving_pair():
    o = np.array([0.5, -0.5])        # positive already above the negative: no gain
    labels = np.array([1.0, -1.0])
    assert switch_labels(o, labels, None) == 0


@pytest.mark.parametrize("max_switches", [1, None])
def test_tsvm_objective_monotone_at_fixed_lam_u(rng, max_switches):
    X, y, _ = two_clusters(rng)
    est = TransductiveSVM(lam=1e-2, lam_u=1.0, max_switches=max_switches,
                          fallback="none").fit(X, y)
    hist = est.fit_results_[0].history
    for prev, cur in zip(hist, hist[1:], strict=False):
        if prev["lam_u"] == cur["lam_u"]:
            assert cur["objective"] <= prev["objective"] * (1 + 1e-10)
    assert hist[-1]["lam_u"] == 1.0


def test_tsvm_balance_constraint(rng):
    X, y, _ = two_clusters(rng, n=301)
    est = TransductiveSVM(lam=1e-2, positive_fraction=0.3, fallback="none").fit(X, y)
    labels_u = est.fit_results_[0].labels_u
    u = labels_u.size
    assert abs((labels_u > 0).sum() - 0.3 * u) <= 1


def test_tsvm_single_and_multiple_switching_agree(rng):
    X, y, y_true = two_clusters(rng, n=400, gap=3.5)
    one = TransductiveSVM(lam=1e-2, max_switches=1).fit(X, y)
    many = TransductiveSVM(lam=1e-2, max_switches=None).fit(X, y)
    assert abs(one.objective_ - many.objective_) <= 0.05 * one.objective_
    assert many.fit_results_[0].n_iter <= one.fit_results_[0].n_iter
    unl = y == -1
    assert np.mean(many.transduction_[unl] == y_true[unl]) > 0.9


def test_tsvm_uses_unlabeled_data(rng):
    X, y, y_true = two_clusters(rng, n=400, d=20, gap=4.0, n_labeled=4)
    sup = L2SVM(lam=1e-2 * 4).fit(X, y)
    tsvm = TransductiveSVM(lam=1e-2).fit(X, y)
    unl = y == -1
    acc = lambda m: np.mean(m.predict(X[unl]) == y_true[unl])  # noqa: E731
    assert acc(tsvm) >= acc(sup)
    assert acc(tsvm) > 0.9


# --- deterministic annealing ------------------------------------------------------------

@pytest.mark.parametrize("T", [10.0, 1.0, 1e-3])
@pytest.mark.parametrize("r", [0.1, 0.5, 0.77])
def test_p_step_satisfies_balance(rng, T, r):
    g = rng.normal(scale=3, size=500)
    p, _ = optimal_beliefs(g, T, r)
    assert abs(p.mean() - r) <= 1e-8
    assert np.all((p >= 0) & (p <= 1))


def test_p_step_minimises_over_the_simplex_slice(rng):
    """Perturbing p along the constraint never lowers the eq. 6 objective."""
    o_u = rng.normal(size=50)
    lam_u, T, r = 1.0, 0.5, 0.4
    g = lam_u * (np.maximum(0, 1 - o_u) ** 2 - np.maximum(0, 1 + o_u) ** 2)
    p, _ = optimal_beliefs(g, T, r)
    f = lambda q: annealing_objective(0.0, np.zeros(1), np.ones(1), o_u, q, lam_u, T)  # noqa: E731
    for _ in range(20):
        d = rng.normal(size=50)
        d -= d.mean()
        q = np.clip(p + 1e-3 * d, 1e-12, 1 - 1e-12)
        if abs(q.mean() - r) < 1e-9:
            assert f(q) >= f(p) - 1e-12


def test_da_traces_behave_as_in_the_paper(rng):
    X, y, _ = two_clusters(rng, n=300)
    est = DeterministicAnnealingSVM(lam=1e-2, fallback="none").fit(X, y)
    res = est.fit_results_[0]
    hist = res.history
    u = int((y == -1).sum())
    # at a fixed temperature the alternating minimisation never increases eq. 6
    for prev, cur in zip(hist, hist[1:], strict=False):
        assert cur["objective_w_step"] <= cur["objective_p_step"] + 1e-10
        if prev["temperature"] == cur["temperature"]:
            assert cur["objective_p_step"] <= prev["objective_w_step"] + 1e-10
    # each temperature's inner loop ends by the KL rule (or the iteration cap)
    temps = [h["temperature"] for h in hist]
    last_at_T = [i for i in range(len(hist)) if i + 1 == len(hist) or temps[i + 1] != temps[i]]
    assert all(hist[i]["kl"] < u * 1e-6 for i in last_at_T)
    # temperatures decrease geometrically and the beliefs harden
    assert all(a > b for a, b in zip(sorted(set(temps), reverse=True),
                                     sorted(set(temps), reverse=True)[1:], strict=False))
    assert hist[-1]["entropy"] < hist[0]["entropy"]
    # the returned solution is the best transductive objective on the path
    assert res.objective == pytest.approx(min([h["transductive_objective"] for h in hist]
                                              + [res.objective]))


def test_da_objective_matches_recomputation(rng):
    X, y, _ = two_clusters(rng, n=200)
    est = DeterministicAnnealingSVM(lam=1e-2, fallback="none").fit(X, y)
    Xa = dense_with_bias(X)
    w = np.r_[est.coef_[0], est.intercept_[0]]
    o = Xa @ w
    lab, unl = y != -1, y == -1
    yl = np.where(y[lab] == 1, 1.0, -1.0)
    ref = 0.5 * 1e-2 * w @ w + 0.5 * np.mean(np.maximum(0, 1 - yl * o[lab]) ** 2) \
        + 0.5 * np.mean(symmetric_squared_hinge(o[unl]))
    assert est.objective_ == pytest.approx(ref, rel=1e-9)


# --- API --------------------------------------------------------------------------------

ESTIMATORS = [L2SVM(solver="mfn"), RLSClassifier(), TransductiveSVM(lam=1e-2),
              DeterministicAnnealingSVM(lam=1e-2)]


@pytest.mark.parametrize("est", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_dense_and_sparse_agree(rng, est):
    X, y, _ = two_clusters(rng, n=120)
    a = est.fit(X, y).decision_function(X)
    b = est.fit(sp.csr_matrix(X), y).decision_function(X)
    np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("est", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_pickle_round_trip_and_determinism(rng, est):
    X, y, _ = two_clusters(rng, n=120)
    a = est.fit(X, y)
    d1 = a.decision_function(X)
    b = pickle.loads(pickle.dumps(a))
    np.testing.assert_array_equal(b.decision_function(X), d1)
    np.testing.assert_array_equal(type(est)(**est.get_params()).fit(X, y).decision_function(X), d1)


@pytest.mark.parametrize("cls", [TransductiveSVM, DeterministicAnnealingSVM])
def test_any_class_labels_and_transduction(rng, cls):
    X, y, y_true = two_clusters(rng, n=200)
    names = np.array(["spam", "ham"])
    ys = np.where(y == -1, -1, y).astype(object)
    ys[y != -1] = names[y[y != -1]]
    est = cls(lam=1e-2).fit(X, ys)
    assert set(est.classes_) == {"spam", "ham"}
    assert est.transduction_.shape == (200,)
    lab = y != -1
    assert np.all(est.transduction_[lab] == ys[lab])
    assert np.mean(est.transduction_[~lab] == names[y_true[~lab]]) > 0.9


@pytest.mark.parametrize("cls", [TransductiveSVM, DeterministicAnnealingSVM])
def test_multiclass_one_vs_rest(rng, cls):
    centers = np.array([[4, 0], [-4, 0], [0, 4]], dtype=float)
    y_true = np.repeat([0, 1, 2], 60)
    X = centers[y_true] + rng.normal(size=(180, 2))
    y = np.full(180, -1)
    for k in range(3):
        y[np.flatnonzero(y_true == k)[:2]] = k
    est = cls(lam=1e-2, fallback="none").fit(X, y)
    assert est.coef_.shape == (3, 2)
    assert est.decision_function(X).shape == (180, 3)
    assert np.mean(est.predict(X) == y_true) > 0.9
    assert len(est.fit_results_) == 3


def test_class_costs_shift_the_boundary(rng):
    X, y, _ = two_clusters(rng, n=200, n_labeled=200, gap=1.0)
    y = np.repeat([0, 1], 100)
    base = L2SVM(lam=1.0).fit(X, y).predict(X).mean()
    pos_heavy = L2SVM(lam=1.0, cost_positive=10.0).fit(X, y).predict(X).mean()
    assert pos_heavy > base


def test_sample_weight_equals_duplication(rng):
    X, y, _ = two_clusters(rng, n=100, n_labeled=100)
    y = np.repeat([0, 1], 50)
    sw = np.ones(100)
    sw[:10] = 2
    a = L2SVM(lam=0.5).fit(X, y, sample_weight=sw)
    b = L2SVM(lam=0.5).fit(np.vstack([X, X[:10]]), np.r_[y, y[:10]])
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-6)


@pytest.mark.parametrize("bad, match", [
    (lambda X, y: (np.where(np.arange(X.size).reshape(X.shape) == 7, np.nan, X), y), "NaN"),
    (lambda X, y: (np.where(np.arange(X.size).reshape(X.shape) == 7, np.inf, X), y), "infinity"),
    (lambda X, y: (X, y[:-3]), "inconsistent numbers of samples"),
    (lambda X, y: (X, np.full_like(y, -1)), "no labeled rows"),
    (lambda X, y: (X, np.where(y == 1, -1, y)), "at least 2"),
    (lambda X, y: (X, np.c_[y, y]), "1-dimensional"),
    (lambda X, y: (X[:, :0], y), "0 feature"),
])
def test_bad_input_is_reported_clearly(rng, bad, match):
    X, y, _ = two_clusters(rng, n=50)
    Xb, yb = bad(X, y)
    with pytest.raises(ValueError, match=match):
        TransductiveSVM().fit(Xb, yb)


@pytest.mark.parametrize("params, match", [
    ({"lam": 0}, "lam must be"), ({"lam_u": -1}, "lam_u must be"),
    ({"positive_fraction": 1.5}, "positive_fraction must be"),
    ({"max_switches": 0}, "max_switches must be"), ({"tol": -1}, "tol must be"),
])
def test_bad_parameters_are_named(rng, params, match):
    X, y, _ = two_clusters(rng, n=50)
    with pytest.raises(ValueError, match=match):
        TransductiveSVM(**params).fit(X, y)


def test_no_unlabeled_rows_warns_and_fits_supervised(rng):
    X, y, y_true = two_clusters(rng, n=60)
    with pytest.warns(UserWarning, match="no unlabeled rows"):
        est = TransductiveSVM().fit(X, y_true)
    assert np.mean(est.predict(X) == y_true) > 0.9


def test_duplicate_points_are_harmless(rng):
    X, y, y_true = two_clusters(rng, n=100)
    X2, y2 = np.vstack([X, X]), np.r_[y, y]
    for est in (TransductiveSVM(lam=1e-2), DeterministicAnnealingSVM(lam=1e-2)):
        pred = est.fit(X2, y2).predict(X)
        assert np.all(np.isfinite(est.coef_))
        assert np.mean(pred == y_true) > 0.9


def test_predict_checks_feature_count(rng):
    X, y, _ = two_clusters(rng, n=50)
    est = L2SVM().fit(X, y)
    with pytest.raises(ValueError, match="features"):
        est.predict(X[:, :3])


def test_l2svm_solvers_agree_and_auto_picks_by_shape(rng):
    X, y, _ = two_clusters(rng, n=200)
    Xs = sp.csr_matrix(X)
    lab = y != -1
    svmlin = {"penalize_intercept": True}   # dual CD needs SVMlin's regularised bias
    mfn = L2SVM(lam=0.1, solver="mfn", tol=1e-10, **svmlin).fit(Xs, y)
    dcd = L2SVM(lam=0.1, solver="dcd", tol=1e-12, **svmlin).fit(Xs, y)
    assert dcd.solver_ == "dcd" and mfn.solver_ == "mfn"
    np.testing.assert_allclose(dcd.decision_function(X), mfn.decision_function(X),
                               rtol=1e-5, atol=1e-6)
    assert dcd.fit_results_[0].duality_gap <= 1e-12
    # few rows per feature: dual; many rows per feature, dense input or a problem below
    # the compile threshold (no numba start-up for milliseconds of work): primal Newton
    assert L2SVM(**svmlin).fit(Xs, y).solver_ == "mfn"
    with mock.patch("semisup.linear._core._DCD_MIN_NNZ", 0):
        assert L2SVM(**svmlin).fit(Xs, y).solver_ == "dcd"
        # the default's free bias has no coordinate-wise dual: dual CD on the regularised
        # bias starts the fit, the Newton method finishes it at the free-bias optimum
        free = L2SVM(lam=0.1, tol=1e-10).fit(Xs, y)
        assert free.solver_ == "dcd+mfn"
    newton = L2SVM(lam=0.1, solver="mfn", tol=1e-10).fit(Xs, y)
    np.testing.assert_allclose(free.decision_function(X), newton.decision_function(X),
                               rtol=1e-6, atol=1e-7)
    assert free.objective_ == pytest.approx(newton.objective_, rel=1e-9)
    assert newton.objective_ < mfn.objective_   # the bias out of the norm
    explicit = L2SVM(lam=0.1, solver="dcd", tol=1e-10).fit(Xs, y)
    assert explicit.solver_ == "dcd+mfn"
    assert explicit.objective_ == pytest.approx(newton.objective_, rel=1e-9)
    assert L2SVM(**svmlin).fit(X, y).solver_ == "mfn"
    tall = sp.csr_matrix(np.repeat(X[lab], 200, axis=0))
    assert L2SVM(**svmlin).fit(tall, np.repeat(y[lab], 200)).solver_ == "mfn"
    with pytest.raises(ValueError, match="solver='dcd' needs sparse X"):
        L2SVM(solver="dcd", **svmlin).fit(X, y)
    with pytest.raises(ValueError, match="solver must be"):
        L2SVM(solver="newton").fit(Xs, y)


def one_hot_problem(n=1000, positions=8, symbols=6, seed=0):
    """SecStr-like one-hot rows: each position's indicators sum to one (a rank-deficient,
    badly conditioned dual when rows outnumber the features and lam is small)."""
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, symbols, size=(n, positions))
    cols = (np.arange(positions) * symbols + codes).ravel()
    X = sp.csr_matrix((np.ones(n * positions), cols, np.arange(0, n * positions + 1, positions)),
                      shape=(n, positions * symbols))
    score = X @ rng.normal(size=positions * symbols) + rng.normal(scale=2.0, size=n)
    return X, (score > np.median(score)).astype(np.int64)


def test_l2svm_auto_reaches_the_optimum_where_dual_cd_stalls():
    """The issue-30 default: on one-hot rows with lam=1e-3 dual CD alone stalls far above the
    minimum; ``auto`` hands its weights to MFN and reaches the scipy / tight-MFN objective."""
    import scipy.optimize as so

    X, y = one_hot_problem()
    lam = 1e-3
    svmlin = {"penalize_intercept": True}   # the objective dual CD solves
    with pytest.warns(ConvergenceWarning):
        dcd = L2SVM(lam=lam, solver="dcd", max_iter=2000, **svmlin).fit(X, y)
    mfn = L2SVM(lam=lam, solver="mfn", tol=1e-10, **svmlin).fit(X, y)
    # (a problem this small takes MFN directly: make it look large enough for dual CD)
    large = mock.patch("semisup.linear._core._DCD_MIN_NNZ", 0)
    with large:
        auto = L2SVM(lam=lam, **svmlin).fit(X, y)
    assert auto.solver_ == "dcd+mfn" and auto.fit_results_[0].converged
    A, ypm = dense_with_bias(X), np.where(y > 0, 1.0, -1.0)

    def f(w):
        m = np.maximum(0.0, 1.0 - ypm * (A @ w))
        return 0.5 * lam * w @ w + 0.5 * m @ m, lam * w - A.T @ (ypm * m)

    ref = so.minimize(f, np.zeros(A.shape[1]), jac=True, method="L-BFGS-B",
                      options={"gtol": 1e-13, "ftol": 1e-16, "maxiter": 20000}).fun
    assert abs(mfn.objective_ - ref) / ref < 1e-8
    assert (auto.objective_ - ref) / ref < 1e-6
    assert (dcd.objective_ - ref) / ref > 0.1  # why the switch exists
    # a problem dual CD solves quickly keeps the dual route and its certified gap
    Xt, yt = one_hot_problem(n=40, positions=8, symbols=6)
    with large:
        fast = L2SVM(lam=1.0, **svmlin).fit(Xt, yt)
    assert fast.solver_ == "dcd" and fast.fit_results_[0].duality_gap <= 1e-6


def test_l2svm_warns_when_the_solver_stops_early(rng):
    X, y, _ = two_clusters(rng, n=200)
    with pytest.warns(ConvergenceWarning, match="max_iter=1"):
        L2SVM(solver="dcd", max_iter=1, tol=1e-12,
              penalize_intercept=True).fit(sp.csr_matrix(X), y)


@pytest.mark.parametrize("cls", [L2SVM, RLSClassifier])
@pytest.mark.parametrize("sparse", [False, True])
def test_default_bias_is_free_as_logistic_regressions(rng, cls, sparse):
    """``(lam/2)||coef||^2`` plus the summed loss, the bias left out of the norm, against
    L-BFGS; ``penalize_intercept=True`` is SVMlin's objective with the bias in the norm."""
    import scipy.optimize as so

    X = rng.normal(size=(40, 4)) + 3.0          # off the origin, where the two differ
    y = (X[:, 0] + rng.normal(scale=0.7, size=40) > 3.3).astype(int)
    Xf = sp.csr_matrix(X) if sparse else X
    A, t = np.c_[X, np.ones(40)], np.where(y > 0, 1.0, -1.0)
    loss = (lambda m: np.maximum(0.0, 1.0 - m)) if cls is L2SVM else (lambda m: 1.0 - m)
    for penalize in (False, True):
        est = cls(lam=2.0, tol=1e-12, penalize_intercept=penalize).fit(Xf, y)
        ridge = np.r_[np.full(4, 2.0), 2.0 if penalize else 0.0]

        def f(w, ridge=ridge):
            r = loss(t * (A @ w))
            return 0.5 * w @ (ridge * w) + 0.5 * r @ r, ridge * w - A.T @ (t * r)

        ref = so.minimize(f, np.zeros(5), jac=True, method="L-BFGS-B",
                          options={"gtol": 1e-12, "ftol": 1e-16, "maxiter": 10_000})
        assert est.objective_ == pytest.approx(ref.fun, rel=1e-8)
        np.testing.assert_allclose(np.r_[est.coef_[0], est.intercept_], ref.x, atol=1e-6)


@pytest.mark.parametrize("cls", [L2SVM, RLSClassifier])
def test_free_bias_makes_the_fit_translation_invariant(rng, cls):
    """Moving every row by the same vector moves only the bias: the predictions of moved
    rows stay the same (not so with SVMlin's regularised bias)."""
    X, y, _ = two_clusters(rng, n=120)
    shift = rng.normal(size=X.shape[1]) * 5.0
    base = cls().fit(X, y)
    moved = cls().fit(X + shift, y)
    np.testing.assert_allclose(moved.coef_, base.coef_, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(moved.decision_function(X + shift), base.decision_function(X),
                               rtol=1e-6, atol=1e-6)
    svmlin = cls(penalize_intercept=True)
    assert not np.allclose(clone_fit(svmlin, X + shift, y).coef_,
                           clone_fit(svmlin, X, y).coef_, rtol=1e-3)


def clone_fit(est, X, y):
    from sklearn.base import clone

    return clone(est).fit(X, y)


def test_pickles_from_before_penalize_intercept_keep_the_regularised_bias(rng):
    X, y, _ = two_clusters(rng, n=60)
    state = dict(L2SVM().fit(X, y).__getstate__())
    state.pop("penalize_intercept")
    old = L2SVM.__new__(L2SVM)
    old.__setstate__(state)
    assert old.get_params()["penalize_intercept"] is True
    assert pickle.loads(pickle.dumps(L2SVM())).penalize_intercept is False
