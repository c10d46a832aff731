"""Automatic parameter modes: lam="auto" (L2SVM, RLSClassifier), gamma_I="auto" (LapRLS,
LinearLapRLS, LinearLapSVM).

Each mode is checked against a CV written here by hand: the folds are drawn with
scikit-learn's RepeatedStratifiedKFold over the labeled rows, every grid value is fitted
cold over the same folds with the held-out labels hidden (-1), and the chosen value and
the CV table must be the same.
"""

import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.model_selection import RepeatedStratifiedKFold

from semisup import L2SVM, LapRLS, LinearLapRLS, LinearLapSVM, RLSClassifier
from semisup.graph import graph_scale
from semisup.linear.laplacian import graph_laplacian
from semisup.model_selection import auto_folds, select_parameter


def blobs(rng, n_per=40, n_classes=2, d=4, labeled_per=6, spread=0.9):
    """Gaussian blobs, ``labeled_per`` labeled rows per class, the rest -1."""
    centers = 3.0 * rng.normal(size=(n_classes, d))
    X = np.vstack([c + spread * rng.normal(size=(n_per, d)) for c in centers])
    truth = np.repeat(np.arange(n_classes), n_per)
    y = np.full(truth.size, -1)
    for k in range(n_classes):
        rows = rng.choice(np.flatnonzero(truth == k), labeled_per, replace=False)
        y[rows] = k
    return X, y, truth


def hand_folds(y, seed=0):
    """The protocol, written out: k = min(5, smallest class), ceil(5/k) repeats."""
    labeled = np.flatnonzero(y != -1)
    k = min(5, np.bincount(y[labeled]).min())
    cv = RepeatedStratifiedKFold(n_splits=k, n_repeats=-(-5 // k), random_state=seed)
    return [(labeled[tr], labeled[te]) for tr, te in cv.split(labeled, y[labeled])]


def hand_cv(make, X, y, values, folds):
    """Held-out accuracy [value, fold], every fit cold."""
    acc = np.empty((len(values), len(folds)))
    for v, value in enumerate(values):
        for f, (train, test) in enumerate(folds):
            y_fit = np.full_like(y, -1)
            y_fit[train] = y[train]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = make(value).fit(X, y_fit)
            acc[v, f] = np.mean(model.predict(X[test]) == y[test])
    return acc


def check_against_hand(clf, name, make, X, y, values, seed=0):
    folds = hand_folds(y, seed)
    acc = hand_cv(make, X, y, values, folds)
    res = clf.cv_results_
    np.testing.assert_allclose(res[f"param_{name}"], values, rtol=1e-12)
    for f in range(len(folds)):
        np.testing.assert_array_equal(res[f"split{f}_test_score"], acc[:, f])
    np.testing.assert_array_equal(res["mean_test_score"], acc.mean(axis=1))
    np.testing.assert_array_equal(res["std_test_score"], acc.std(axis=1))
    mean = acc.mean(axis=1)
    best = values[np.flatnonzero(mean == mean.max())[0]]   # ties: strongest first
    assert getattr(clf, f"{name}_") == pytest.approx(best, rel=1e-12)


@pytest.mark.parametrize("cls", [L2SVM, RLSClassifier])
def test_lam_auto_reproduces_hand_cv(cls, rng):
    X, y, _ = blobs(rng, n_classes=3, spread=2.5)
    clf = cls(lam="auto").fit(X, y)
    lab = y != -1
    S = float(np.sum(X[lab] ** 2) + lab.sum())      # trace of the labeled Gram (+ bias)
    values = S * 10.0 ** np.arange(0, -7, -1)
    check_against_hand(clf, "lam", lambda v: cls(lam=v), X, y, values)
    # the fitted model is the refit at the chosen value, and lam stays "auto"
    ref = cls(lam=clf.lam_).fit(X, y)
    np.testing.assert_allclose(clf.coef_, ref.coef_, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(clf.transduction_, ref.transduction_)
    assert clf.get_params()["lam"] == "auto"
    # informative: the CV table is not constant, so the choice is a real one
    assert np.ptp(clf.cv_results_["mean_test_score"]) > 0


@pytest.mark.parametrize("solver", ["direct", "cg"])   # one-solve-per-fold route / refits
def test_linear_laprls_gamma_I_auto_reproduces_hand_cv(solver, rng):
    X, y, _ = blobs(rng, spread=2.0)
    # gamma_A fixed: the grid below is written for it (whatever the class default)
    clf = LinearLapRLS(gamma_A=1e-2, gamma_I="auto", solver=solver, tol=1e-10).fit(X, y)
    L, W = graph_laplacian(X, n_neighbors=10)
    trace = float(np.sum(X * (L @ X)))
    unit = 1e-2 * X.shape[1] / (graph_scale(W, X.shape[0], "n2") * trace)
    values = np.append(unit * 10.0 ** np.arange(4, -3, -1), 0.0)
    # the CV fits are the method as published (select_parameter sets fallback="none")
    check_against_hand(clf, "gamma_I", lambda v: LinearLapRLS(gamma_A=1e-2, gamma_I=v,
                                                              solver=solver, tol=1e-10,
                                                              fallback="none"),
                       X, y, values)
    ref = LinearLapRLS(gamma_A=1e-2, gamma_I=clf.gamma_I_, solver=solver,
                       tol=1e-10).fit(X, y)
    np.testing.assert_allclose(clf.coef_, ref.coef_, rtol=1e-8, atol=1e-10)


def test_laprls_gamma_I_auto_reproduces_hand_cv(rng):
    # the fast route (every fold from one factorisation per value) against plain refits
    X, y, _ = blobs(rng, n_per=30, n_classes=3, spread=2.0, labeled_per=4)
    clf = LapRLS(fallback="none", gamma_I="auto", fit_intercept=True).fit(X, y)
    values = clf.cv_results_["param_gamma_I"]
    assert values.size == 8 and values[-1] == 0 and np.all(np.diff(values) < 0)
    # the grid: mean eigenvalue of gamma_I s L K is 10^k gamma_A, k = 4 .. -2
    probe = LapRLS(fallback="none", gamma_I=0.0).fit(X, y)
    K = probe._train_gram(X)
    _, L, s = probe._graph_laplacian(X)
    unit = 1e-4 * X.shape[0] / (s * float(L.multiply(K).sum()))
    np.testing.assert_allclose(values[:-1], unit * 10.0 ** np.arange(4, -3, -1), rtol=1e-10)
    check_against_hand(clf, "gamma_I",
                       lambda v: LapRLS(fallback="none", gamma_I=v, fit_intercept=True),
                       X, y, values)
    ref = LapRLS(fallback="none", gamma_I=clf.gamma_I_, fit_intercept=True).fit(X, y)
    np.testing.assert_allclose(clf.alpha_, ref.alpha_, rtol=1e-10, atol=1e-12)
    assert clf.get_params()["gamma_I"] == "auto"


def test_linear_lapsvm_gamma_I_auto_reproduces_hand_cv(rng):
    X, y, _ = blobs(rng, spread=2.0)
    clf = LinearLapSVM(gamma_I="auto").fit(X, y)
    values = clf.cv_results_["param_gamma_I"]   # the grid of LinearLapRLS (checked above)
    np.testing.assert_allclose(values, LinearLapRLS(gamma_I="auto").fit(X, y)
                               .cv_results_["param_gamma_I"], rtol=1e-12)
    check_against_hand(clf, "gamma_I", lambda v: LinearLapSVM(gamma_I=v, fallback="none"),
                       X, y, values)


@pytest.mark.parametrize("make", [
    lambda v, ws: L2SVM(lam=v, warm_start=ws, tol=1e-10),
    lambda v, ws: RLSClassifier(lam=v, warm_start=ws, tol=1e-12),
    lambda v, ws: LinearLapRLS(gamma_I=v, solver="cg", warm_start=ws, tol=1e-12),
])
def test_warm_started_path_equals_cold_fits(make, rng):
    X, y, _ = blobs(rng, n_classes=3, spread=2.5)
    values = [10.0, 1.0, 0.1, 1e-2]
    warm = make(values[0], True)
    for v in values:
        warm.set_params(**{"lam" if "lam" in warm.get_params() else "gamma_I": v})
        warm.fit(X, y)
        cold = make(v, False).fit(X, y)
        np.testing.assert_allclose(warm.coef_, cold.coef_, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(warm.intercept_, cold.intercept_, rtol=1e-6, atol=1e-8)


def test_warm_start_is_used_along_the_path(rng):
    # the second fit of a path starts at the first's solution: fewer CG iterations
    X, y, _ = blobs(rng, n_per=200, d=30, spread=3.0, labeled_per=50)
    warm = RLSClassifier(lam=1.0, warm_start=True, tol=1e-10).fit(X, y)
    warm.set_params(lam=0.9).fit(X, y)
    cold = RLSClassifier(lam=0.9, tol=1e-10).fit(X, y)
    assert warm.n_iter_.sum() < cold.n_iter_.sum()


@pytest.mark.parametrize("make, name, default", [
    (lambda: L2SVM(lam="auto"), "lam", 4.0),
    (lambda: RLSClassifier(lam="auto"), "lam", 4.0),
    (lambda: LinearLapRLS(gamma_I="auto"), "gamma_I", 1.0),
    (lambda: LapRLS(gamma_I="auto"), "gamma_I", 1e4),
])
def test_single_labeled_row_falls_back_to_default(make, name, default, rng):
    X, y, _ = blobs(rng, labeled_per=5)
    y[np.flatnonzero(y == 1)[1:]] = -1       # class 1 keeps a single labeled row
    with pytest.warns(UserWarning, match=f"{name}='auto' needs at least 2 labeled rows") \
            as record:
        clf = make().fit(X, y)
    assert sum("needs at least 2 labeled" in str(w.message) for w in record) == 1
    assert getattr(clf, f"{name}_") == default
    assert np.isnan(clf.cv_results_["mean_test_score"]).all()
    ref = make().set_params(**{name: default}).fit(X, y)
    np.testing.assert_array_equal(clf.transduction_, ref.transduction_)


def test_tiny_classes_repeat_the_folds():
    y = np.array([0, 0, 1, 1, 1] + [-1] * 5)
    folds = auto_folds(y, random_state=3)
    assert len(folds) == 6                    # k = 2, 3 repeats
    for train, test in folds:
        assert set(np.unique(y[train])) == {0, 1}
        assert not np.intersect1d(train, test).size and (y[test] != -1).all()
    assert auto_folds(np.array([0, 1, 1, -1])) is None


def test_deterministic_given_random_state(rng):
    X, y, _ = blobs(rng, spread=2.5, labeled_per=8)
    a = L2SVM(lam="auto", random_state=5).fit(X, y).cv_results_
    b = L2SVM(lam="auto", random_state=5).fit(X, y).cv_results_
    c = L2SVM(lam="auto").fit(X, y).cv_results_
    folds = hand_folds(y, seed=5)
    assert len([k for k in a if k.startswith("split")]) == len(folds)
    for key in a:
        if key != "params":
            np.testing.assert_array_equal(a[key], b[key])
    # None means a fixed seed (0): the same table every call
    np.testing.assert_array_equal(c["mean_test_score"],
                                  L2SVM(lam="auto").fit(X, y).cv_results_["mean_test_score"])


def test_sparse_input(rng):
    X, y, _ = blobs(rng, spread=2.0)
    dense = L2SVM(lam="auto", solver="mfn").fit(X, y)
    sparse = L2SVM(lam="auto", solver="mfn").fit(sp.csr_matrix(X), y)
    assert dense.lam_ == pytest.approx(sparse.lam_)
    np.testing.assert_array_equal(dense.cv_results_["mean_test_score"],
                                  sparse.cv_results_["mean_test_score"])


def test_pickle_round_trip(rng):
    X, y, _ = blobs(rng, spread=2.0)
    for clf in (L2SVM(lam="auto"), LapRLS(gamma_I="auto"), LinearLapRLS(gamma_I="auto")):
        clf.fit(X, y)
        back = pickle.loads(pickle.dumps(clf))
        np.testing.assert_array_equal(back.predict(X), clf.predict(X))
        assert back.cv_results_.keys() == clf.cv_results_.keys()


def test_numeric_refit_clears_the_selection(rng):
    X, y, _ = blobs(rng, spread=2.0)
    clf = L2SVM(lam="auto").fit(X, y)
    assert hasattr(clf, "lam_")
    clf.set_params(lam=0.5).fit(X, y)
    assert not hasattr(clf, "lam_") and not hasattr(clf, "cv_results_")


@pytest.mark.parametrize("make, name", [
    (lambda v: L2SVM(lam=v), "lam"), (lambda v: RLSClassifier(lam=v), "lam"),
    (lambda v: LinearLapRLS(gamma_I=v), "gamma_I"), (lambda v: LapRLS(gamma_I=v), "gamma_I"),
])
@pytest.mark.parametrize("bad", ["automatic", -1.0, np.nan])
def test_bad_values_name_auto(make, name, bad, rng):
    X, y, _ = blobs(rng)
    with pytest.raises(ValueError, match=f"{name} must be .*'auto'"):
        make(bad).fit(X, y)


def test_select_parameter_ties_go_to_the_first_value():
    X = np.array([[-2.0], [-1.5], [-1.0], [1.0], [1.5], [2.0], [-0.5], [0.5]])
    y = np.array([0, 0, 0, 1, 1, 1, -1, -1])
    sel = select_parameter(L2SVM(), X, y, "lam", [10.0, 1.0, 0.1], default=1.0)
    assert sel.cv_results["mean_test_score"].tolist() == [1.0, 1.0, 1.0]
    assert sel.best == 10.0 and not sel.fallback
    with pytest.raises(ValueError, match="values for lam is empty"):
        select_parameter(L2SVM(), X, y, "lam", [], default=1.0)


AUTO_ESTIMATORS = [L2SVM(lam="auto"), RLSClassifier(lam="auto"),
                   LinearLapRLS(gamma_I="auto"), LapRLS(gamma_I="auto")]
SKLEARN_CHECKS = ["check_fit_idempotent", "check_estimators_pickle",
                  "check_dont_overwrite_parameters", "check_estimators_overwrite_params",
                  "check_n_features_in", "check_fit2d_predict1d", "check_classifiers_train"]


@pytest.mark.parametrize("est, check", [
    (est, check) for est in AUTO_ESTIMATORS for check in SKLEARN_CHECKS
    # LapRLS: dozens of fits with an n x n factorisation per grid value; the linear ones
    # cover the check
    if not (check == "check_classifiers_train" and isinstance(est, LapRLS))],
    ids=lambda p: p if isinstance(p, str) else type(p).__name__)
def test_sklearn_checks_in_auto_mode(est, check):
    # the full battery runs on the defaults (tests/test_sklearn_api.py); these are the
    # checks a parameter chosen inside fit could break
    from sklearn.utils import estimator_checks

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        getattr(estimator_checks, check)(type(est).__name__, est)
