"""Transductive cross-validation: held-out labeled rows stay in the fit as unlabeled rows."""

import itertools
import pickle

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.datasets import load_digits
from sklearn.exceptions import FitFailedWarning
from sklearn.metrics import accuracy_score, balanced_accuracy_score
from sklearn.model_selection import GridSearchCV, ParameterGrid, StratifiedKFold

from semisup import L2SVM, LapRLS, LinearLapRLS, TransductiveSVM
from semisup.base import SemiSupervisedClassifierMixin
from semisup.graph import adjacency_graph
from semisup.kernels import kernel_matrix
from semisup.model_selection import (
    LabeledSplit,
    LabeledStratifiedKFold,
    TransductiveGridSearchCV,
    transductive_cross_val_score,
    transductive_cross_validate,
)


@pytest.fixture(scope="module")
def digits_3v8():
    X, y = load_digits(return_X_y=True)
    keep = np.isin(y, [3, 8])
    X, y = X[keep] / 16.0, y[keep]
    rng = np.random.default_rng(0)
    y_train = np.full(y.shape, -1)
    labeled = np.concatenate([rng.choice(np.flatnonzero(y == c), 12, replace=False)
                              for c in (3, 8)])
    y_train[labeled] = y[labeled]
    return X, y, y_train


def _hand_scores(estimator, X, y_train, test_folds, scorer=accuracy_score, keep=None):
    """The protocol written out: fit on every row with the held-out labels hidden."""
    out = []
    for f, test in enumerate(test_folds):
        y_fit = y_train.copy()
        y_fit[test] = -1
        if keep is not None:        # labeled rows outside the given train fold are hidden too
            hidden = np.setdiff1d(np.flatnonzero(y_train != -1), keep[f])
            y_fit[hidden] = -1
        model = clone(estimator).fit(X, y_fit)
        out.append(scorer(y_train[test], model.predict(X[test])))
    return np.array(out)


def _folds(y_train, k=3, seed=0):
    return [test for _, test in LabeledStratifiedKFold(k, random_state=seed).split(
        np.zeros((y_train.size, 1)), y_train)]


class SpyClassifier(SemiSupervisedClassifierMixin, ClassifierMixin, BaseEstimator):
    """Nearest class mean of the labeled rows; keeps what ``fit`` was given."""

    def __init__(self, p=0, warm_start=False):
        self.p = p
        self.warm_start = warm_start

    def fit(self, X, y):
        y = np.asarray(y)
        self.X_seen_, self.y_seen_ = np.array(X, copy=True), y.copy()
        self.history_ = getattr(self, "history_", []) + [self.p] if self.warm_start \
            else [self.p]
        lab = y != -1
        self.classes_ = np.unique(y[lab])
        self.means_ = np.array([X[y == c].mean(axis=0) for c in self.classes_])
        # a serial number, not id(): a collected object's id may be reused by the next one
        self.serial_ = getattr(self, "serial_", None) or next(SpyClassifier.serials)
        SpyClassifier.log.append((self.serial_, self.p, tuple(self.history_)))
        return self

    def predict(self, X):
        d = ((np.asarray(X)[:, None, :] - self.means_[None]) ** 2).sum(-1)
        return self.classes_[d.argmin(1) if self.p >= 0 else d.argmax(1)]


SpyClassifier.log = []
SpyClassifier.serials = itertools.count(1)


def test_cross_val_score_equals_hand_computed_loop(digits_3v8):
    X, _, y_train = digits_3v8
    est = TransductiveSVM(lam=1e-3, lam_u=0.5)
    got = transductive_cross_val_score(est, X, y_train, cv=3, random_state=0)
    np.testing.assert_array_equal(got, _hand_scores(est, X, y_train, _folds(y_train)))
    res = transductive_cross_validate(est, X, y_train, cv=3, random_state=0,
                                      scoring=["accuracy", "balanced_accuracy"],
                                      return_indices=True)
    np.testing.assert_array_equal(res["test_accuracy"], got)
    np.testing.assert_array_equal(
        res["test_balanced_accuracy"],
        _hand_scores(est, X, y_train, _folds(y_train), balanced_accuracy_score))
    for test, want in zip(res["indices"]["test"], _folds(y_train), strict=True):
        np.testing.assert_array_equal(test, want)
    assert res["fit_time"].shape == res["score_time"].shape == (3,)


def test_held_out_labels_never_reach_fit(digits_3v8):
    X, _, y_train = digits_3v8
    res = transductive_cross_validate(SpyClassifier(), X, y_train, cv=4, random_state=1,
                                      return_estimator=True, return_indices=True,
                                      return_train_score=True)
    labeled = np.flatnonzero(y_train != -1)
    seen_test = []
    for model, train, test in zip(res["estimator"], res["indices"]["train"],
                                  res["indices"]["test"], strict=True):
        np.testing.assert_array_equal(model.X_seen_, X)          # every row is in the fit
        assert np.all(model.y_seen_[test] == -1)                   # held-out labels hidden
        np.testing.assert_array_equal(model.y_seen_[train], y_train[train])
        np.testing.assert_array_equal(np.sort(np.concatenate([train, test])), labeled)
        assert np.all(model.y_seen_[y_train == -1] == -1)
        seen_test.extend(test)
    assert sorted(seen_test) == list(labeled)                     # folds partition the labels
    for model, train, score in zip(res["estimator"], res["indices"]["train"],
                                   res["train_score"], strict=True):   # scored on kept rows
        assert score == accuracy_score(y_train[train], model.predict(X[train]))
    # and the input y itself is not modified
    assert np.sum(y_train != -1) == labeled.size


def test_grid_search_matches_manual_loop(digits_3v8):
    X, _, y_train = digits_3v8
    grid = {"lam": [1e-3, 1e-1], "lam_u": [0.1, 1.0]}
    est = TransductiveSVM()
    search = TransductiveGridSearchCV(est, grid, cv=3, random_state=0).fit(X, y_train)
    folds = _folds(y_train)
    candidates = list(ParameterGrid(grid))
    assert search.cv_results_["params"] == candidates
    means = []
    for c, params in enumerate(candidates):
        scores = _hand_scores(clone(est).set_params(**params), X, y_train, folds)
        for f in range(3):
            assert search.cv_results_[f"split{f}_test_score"][c] == scores[f]
        assert search.cv_results_["mean_test_score"][c] == pytest.approx(scores.mean())
        assert search.cv_results_["std_test_score"][c] == pytest.approx(scores.std())
        means.append(scores.mean())
    best = int(np.flatnonzero(np.isclose(means, max(means)))[0])
    assert search.best_index_ == best
    assert search.best_params_ == candidates[best]
    assert search.best_score_ == pytest.approx(max(means))
    assert search.cv_results_["rank_test_score"][best] == 1
    refit = clone(est).set_params(**candidates[best]).fit(X, y_train)
    np.testing.assert_array_equal(search.predict(X), refit.predict(X))
    np.testing.assert_array_equal(search.transduction_, refit.transduction_)
    np.testing.assert_array_equal(search.classes_, [3, 8])
    assert search.n_splits_ == 3
    # random_state makes it deterministic, with or without joblib workers
    again = TransductiveGridSearchCV(est, grid, cv=3, random_state=0, n_jobs=2).fit(X, y_train)
    for key in ("mean_test_score", "rank_test_score", "split2_test_score"):
        np.testing.assert_array_equal(again.cv_results_[key], search.cv_results_[key])


def test_cv_results_have_scikit_learns_layout(digits_3v8):
    X, _, y_train = digits_3v8
    grid = [{"lam": [1e-2, 1.0]}, {"lam": [1e-1], "max_iter": [50]}]
    ours = TransductiveGridSearchCV(L2SVM(), grid, cv=3, random_state=0,
                                    return_train_score=True).fit(X, y_train)
    theirs = GridSearchCV(L2SVM(), grid, cv=LabeledStratifiedKFold(3, random_state=0),
                          return_train_score=True).fit(X, y_train)
    assert set(ours.cv_results_) == set(theirs.cv_results_)
    assert ours.cv_results_["param_max_iter"].mask.tolist() == [True, True, False]
    assert list(ours.cv_results_["param_lam"]) == [1e-2, 1.0, 1e-1]


def test_multimetric_and_callable_refit(digits_3v8):
    X, _, y_train = digits_3v8
    grid = {"lam": [1e-2, 1.0, 1e2]}
    search = TransductiveGridSearchCV(L2SVM(), grid, cv=3, random_state=0,
                                      scoring={"acc": "accuracy", "bal": "balanced_accuracy"},
                                      refit="bal").fit(X, y_train)
    assert search.multimetric_
    assert search.best_index_ == int(np.argmin(search.cv_results_["rank_test_bal"]))
    assert search.score(X, np.where(y_train == -1, -1, y_train)) == pytest.approx(1.0)
    pick_last = TransductiveGridSearchCV(L2SVM(), grid, cv=3, random_state=0,
                                         refit=lambda r: len(r["params"]) - 1).fit(X, y_train)
    assert pick_last.best_params_ == {"lam": 1e2}
    assert not hasattr(pick_last, "best_score_")
    no_refit = TransductiveGridSearchCV(L2SVM(), grid, cv=3, random_state=0,
                                        refit=False).fit(X, y_train)
    assert not hasattr(no_refit, "best_estimator_")
    assert no_refit.best_params_ == search.cv_results_["params"][
        int(np.argmin(no_refit.cv_results_["rank_test_score"]))]
    with pytest.raises(Exception, match="refit"):
        no_refit.predict(X)


def test_path_fits_one_estimator_per_fold_in_grid_order(digits_3v8):
    X, _, y_train = digits_3v8
    SpyClassifier.log.clear()
    search = TransductiveGridSearchCV(SpyClassifier(warm_start=True), {"p": [0, 1, 2, 3]},
                                      cv=3, random_state=0, path="p", refit=False)
    search.fit(X, y_train)
    fits = SpyClassifier.log
    assert len(fits) == 12
    by_object = {}
    for obj, p, history in fits:
        by_object.setdefault(obj, []).append((p, history))
    assert len(by_object) == 3                                  # one object per fold
    for seq in by_object.values():
        assert [p for p, _ in seq] == [0, 1, 2, 3]             # in grid order
        assert seq[-1][1] == (0, 1, 2, 3)                        # warm: each fit continued
    SpyClassifier.log.clear()
    TransductiveGridSearchCV(SpyClassifier(warm_start=True), {"p": [0, 1, 2, 3]}, cv=3,
                             random_state=0, refit=False).fit(X, y_train)
    assert len(SpyClassifier.log) == 12                         # no path: a fresh clone
    assert all(history == (p,) for _, p, history in SpyClassifier.log)  # for every fit


def test_path_with_warm_started_linear_laprls_matches_independent_fits(digits_3v8):
    X, _, y_train = digits_3v8
    grid = {"gamma_A": [1e-3, 1e-2], "gamma_I": [0.0, 1e2, 1e4]}
    base = LinearLapRLS(n_neighbors=6, tol=1e-10)
    warm = TransductiveGridSearchCV(base.set_params(warm_start=True), grid, cv=3,
                                    random_state=0, path="gamma_I").fit(X, y_train)
    cold = TransductiveGridSearchCV(clone(base).set_params(warm_start=False), grid, cv=3,
                                    random_state=0).fit(X, y_train)
    np.testing.assert_array_equal(warm.cv_results_["mean_test_score"],
                                  cold.cv_results_["mean_test_score"])
    assert warm.best_params_ == cold.best_params_


def test_precomputed_graph_and_kernel_give_the_same_scores(digits_3v8):
    X, _, y_train = digits_3v8
    W = adjacency_graph(X, 6, warn=False)
    on_X = LapRLS(gamma_A=1e-3, gamma_I=1e3, gamma=0.05, graph=W)
    on_K = LapRLS(gamma_A=1e-3, gamma_I=1e3, kernel="precomputed", graph=W)
    a = transductive_cross_val_score(on_X, X, y_train, cv=3, random_state=0)
    b = transductive_cross_val_score(on_K, kernel_matrix(X, gamma=0.05), y_train, cv=3,
                                     random_state=0)
    np.testing.assert_array_equal(a, b)
    assert a.mean() > 0.8


def test_explicit_folds_and_sklearn_splitters(digits_3v8):
    X, _, y_train = digits_3v8
    labeled = np.flatnonzero(y_train != -1)
    est = L2SVM()
    # explicit (train, test) folds: labeled rows outside train are hidden as well
    folds = [(labeled[:10], labeled[10:16]), (labeled[8:], labeled[:8])]
    got = transductive_cross_val_score(est, X, y_train, cv=folds)
    want = _hand_scores(est, X, y_train, [te for _, te in folds],
                        keep=[tr for tr, _ in folds])
    np.testing.assert_array_equal(got, want)
    # a scikit-learn splitter sees the labeled rows only
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    a = transductive_cross_val_score(est, X, y_train, cv=cv)
    b = transductive_cross_val_score(est, X, y_train, cv=LabeledSplit(cv))
    c = transductive_cross_val_score(est, X, y_train, cv=LabeledStratifiedKFold(
        3, random_state=0))
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, c)


def test_string_labels(digits_3v8):
    X, _, y_train = digits_3v8
    names = np.where(y_train == 3, "a", np.where(y_train == 8, "b", "-1"))
    a = transductive_cross_val_score(L2SVM(), X, names, cv=3, random_state=0)
    b = transductive_cross_val_score(L2SVM(), X, y_train, cv=3, random_state=0)
    np.testing.assert_array_equal(a, b)
    lab = y_train != -1                       # no unlabeled row: dtype '<U1', no room for '-1'
    short = names[lab].astype("<U1")
    a = transductive_cross_val_score(L2SVM(), X[lab], short, cv=3, random_state=0)
    b = transductive_cross_val_score(L2SVM(), X[lab], y_train[lab], cv=3, random_state=0)
    np.testing.assert_array_equal(a, b)


def test_failed_fits_get_error_score(digits_3v8):
    X, _, y_train = digits_3v8
    grid = {"lam": [1e-2, -1.0]}      # a negative lam is refused by fit
    with pytest.warns(FitFailedWarning, match="lam"):
        search = TransductiveGridSearchCV(L2SVM(), grid, cv=3, random_state=0).fit(X, y_train)
    assert np.isnan(search.cv_results_["mean_test_score"][1])
    assert search.cv_results_["rank_test_score"].tolist() == [1, 2]
    with pytest.raises(ValueError, match="lam"):
        TransductiveGridSearchCV(L2SVM(), grid, cv=3, random_state=0,
                                 error_score="raise").fit(X, y_train)


@pytest.mark.parametrize("case, match", [
    ("no_labels", "no labeled rows"),
    ("small_class", "fewer than the 5 folds"),
    ("unlabeled_test", "holds out unlabeled rows"),
    ("bool_y", "boolean"),
    ("length", "one entry per row"),
    ("path", "path='gamma'"),
    ("empty_grid", "empty"),
    ("multi_refit", "refit must name"),
    ("bad_cv", "cv must be"),
    ("bad_error_score", "error_score"),
])
def test_bad_input(digits_3v8, case, match):
    X, _, y_train = digits_3v8
    y = y_train.copy()
    cv, grid, kw = 3, {"lam": [1e-2]}, {}
    if case == "no_labels":
        y[:] = -1
    elif case == "small_class":
        y[np.flatnonzero(y == 3)[4:]] = -1     # 4 labeled rows of class 3
        cv = 5
    elif case == "unlabeled_test":
        cv = [(np.flatnonzero(y != -1), np.flatnonzero(y == -1)[:3])]
    elif case == "bool_y":
        y = y == 3
    elif case == "length":
        y = y[:-1]
    elif case == "path":
        kw = {"path": "gamma"}
    elif case == "empty_grid":
        grid = {"lam": []}
    elif case == "multi_refit":
        kw = {"scoring": ["accuracy", "f1_macro"]}
    elif case == "bad_cv":
        cv = "five"
    elif case == "bad_error_score":
        kw = {"error_score": "ignore"}
    with pytest.raises(ValueError, match=match):
        TransductiveGridSearchCV(L2SVM(), grid, cv=cv, random_state=0, **kw).fit(X, y)


def test_search_pickles(digits_3v8):
    X, _, y_train = digits_3v8
    search = TransductiveGridSearchCV(L2SVM(), {"lam": [1e-2, 1.0]}, cv=3, random_state=0)
    assert pickle.loads(pickle.dumps(search)).get_params()["cv"] == 3
    search.fit(X, y_train)
    back = pickle.loads(pickle.dumps(search))
    np.testing.assert_array_equal(back.predict(X), search.predict(X))
    np.testing.assert_array_equal(back.cv_results_["mean_test_score"],
                                  search.cv_results_["mean_test_score"])
    assert back.best_params_ == search.best_params_
