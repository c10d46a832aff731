"""Model selection with unlabeled rows: splitters over labeled rows, scorers that skip -1."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_digits
from sklearn.experimental import enable_halving_search_cv  # noqa: F401
from sklearn.model_selection import (
    GridSearchCV,
    GroupKFold,
    HalvingGridSearchCV,
    cross_val_score,
)

from semisup import L2SVM, TransductiveSVM
from semisup.model_selection import (
    LabeledSplit,
    LabeledStratifiedKFold,
    LabeledStratifiedShuffleSplit,
    labeled_cv,
    labeled_scorer,
)


@pytest.fixture(scope="module")
def digits_3v8():
    X, y = load_digits(return_X_y=True)
    keep = np.isin(y, [3, 8])
    X, y = X[keep] / 16.0, y[keep]
    rng = np.random.default_rng(0)
    y_train = np.full(y.shape, -1)
    labeled = np.concatenate([rng.choice(np.flatnonzero(y == c), 15, replace=False)
                              for c in (3, 8)])
    y_train[labeled] = y[labeled]
    return X, y, y_train


@given(st.lists(st.sampled_from([-1, -1, 0, 1, 2]), min_size=30, max_size=80),
       st.integers(0, 10_000))
@settings(max_examples=60, deadline=None)
def test_labeled_kfold_properties(labels, seed):
    y = np.array(labels)
    counts = np.unique(y[y != -1], return_counts=True)[1]
    if counts.size == 0 or counts.max() < 3:
        return
    cv = LabeledStratifiedKFold(3, random_state=seed)
    unlabeled = set(np.flatnonzero(y == -1))
    seen = []
    with pytest.warns(UserWarning) if counts.min() < 3 else _no_warning():
        splits = list(cv.split(np.zeros((y.size, 2)), y))
    assert len(splits) == cv.get_n_splits() == 3
    for train, test in splits:
        assert unlabeled <= set(train)          # every unlabeled row in every training fold
        assert np.all(y[test] != -1)            # only labeled rows are held out
        assert not set(train) & set(test)
        assert np.all(np.diff(train) > 0)
        seen.extend(test)
    # the test folds partition the labeled rows
    assert sorted(seen) == list(np.flatnonzero(y != -1))
    with _no_warning() if counts.min() >= 3 else pytest.warns(UserWarning):
        again = list(cv.split(np.zeros((y.size, 2)), y))
    assert all(np.array_equal(a[1], b[1]) for a, b in zip(splits, again, strict=True))


class _no_warning:
    def __enter__(self):
        import warnings
        self._cm = warnings.catch_warnings()
        self._cm.__enter__()
        warnings.simplefilter("error", UserWarning)

    def __exit__(self, *exc):
        return self._cm.__exit__(*exc)


def test_kfold_is_stratified():
    y = np.array([-1] * 50 + [0] * 20 + [1] * 10)
    for _, test in LabeledStratifiedKFold(5, random_state=0).split(None, y):
        assert np.sum(y[test] == 0) == 4 and np.sum(y[test] == 1) == 2


def test_shuffle_split_and_wrapped_splitters():
    y = np.array([-1] * 10 + [0] * 10 + [1] * 10)
    for train, test in LabeledStratifiedShuffleSplit(4, test_size=0.2,
                                                     random_state=1).split(None, y):
        assert test.size == 4 and np.all(y[test] >= 0)
        assert set(range(10)) <= set(train)
    groups = np.repeat(np.arange(10), 3)
    cv = LabeledSplit(GroupKFold(2))
    for train, test in cv.split(None, y, groups):
        assert set(groups[test]).isdisjoint(groups[np.setdiff1d(train, np.arange(10))])
    assert isinstance(labeled_cv(3), LabeledStratifiedKFold)
    assert labeled_cv(cv) is cv
    assert isinstance(labeled_cv(GroupKFold(2)), LabeledSplit)


def test_splitter_errors():
    with pytest.raises(ValueError, match="no labeled rows"):
        list(LabeledStratifiedKFold(2).split(None, np.full(5, -1)))
    with pytest.raises(ValueError, match="larger than every labeled class"):
        list(LabeledStratifiedKFold(5).split(None, np.array([-1, 0, 0, 1, 1])))
    with pytest.raises(ValueError, match="needs y"):
        list(LabeledStratifiedKFold(2).split(np.zeros((4, 1)), None))
    with pytest.raises(ValueError, match="n_splits"):
        list(LabeledStratifiedKFold(1).split(None, np.array([0, 0, 1, 1])))


def test_score_ignores_unlabeled_rows(digits_3v8):
    X, y, y_train = digits_3v8
    clf = TransductiveSVM(lam=1e-3).fit(X, y_train)
    y_mixed = y.copy()
    y_mixed[::3] = -1
    keep = y_mixed != -1
    expected = np.mean(clf.predict(X[keep]) == y[keep])
    assert clf.score(X, y_mixed) == pytest.approx(expected)
    assert labeled_scorer("accuracy")(clf, X, y_mixed) == pytest.approx(expected)
    # scikit-learn's own accuracy counts -1 as a class nobody predicts
    assert np.mean(clf.predict(X) == y_mixed) < expected - 0.2
    w = np.linspace(0.5, 2.0, y.size)
    expected_w = np.average(clf.predict(X[keep]) == y[keep], weights=w[keep])
    assert clf.score(X, y_mixed, sample_weight=w) == pytest.approx(expected_w)
    assert labeled_scorer()(clf, X, y_mixed, sample_weight=w) == pytest.approx(expected_w)
    with pytest.raises(ValueError, match="no labeled rows to score"):
        clf.score(X, np.full(y.shape, -1))


def test_grid_search_score_equals_hand_computed_accuracy(digits_3v8):
    X, _, y_train = digits_3v8
    cv = LabeledStratifiedKFold(3, random_state=0)
    grid = {"lam": [1e-3, 1e-1], "lam_u": [0.1, 1.0]}
    search = GridSearchCV(TransductiveSVM(), grid, cv=cv,
                          scoring=labeled_scorer("accuracy")).fit(X, y_train)
    for i, params in enumerate(search.cv_results_["params"]):
        by_hand = []
        for train, test in cv.split(X, y_train):
            model = TransductiveSVM(**params).fit(X[train], y_train[train])
            by_hand.append(np.mean(model.predict(X[test]) == y_train[test]))
            # the unlabeled rows were all available to the fit
            assert np.sum(y_train[train] == -1) == np.sum(y_train == -1)
        assert search.cv_results_["mean_test_score"][i] == pytest.approx(np.mean(by_hand))
    # the estimator's own score gives the same numbers
    search2 = GridSearchCV(TransductiveSVM(), grid, cv=cv).fit(X, y_train)
    np.testing.assert_allclose(search2.cv_results_["mean_test_score"],
                               search.cv_results_["mean_test_score"])


def test_cross_val_score_out_of_the_box_is_labeled_accuracy(digits_3v8):
    """Even with scikit-learn's default splitter, the score counts labeled rows only."""
    X, y, y_train = digits_3v8
    scores = cross_val_score(TransductiveSVM(lam=1e-3), X, y_train, cv=3)
    assert np.all(scores >= 0.7)
    true_acc = TransductiveSVM(lam=1e-3).fit(X, y_train).score(X, y)
    assert abs(scores.mean() - true_acc) < 0.15


def test_halving_search_runs(digits_3v8):
    X, _, y_train = digits_3v8
    search = HalvingGridSearchCV(L2SVM(), {"lam": [1e-3, 1e-2, 1e-1, 1.0]},
                                 cv=LabeledStratifiedKFold(3, random_state=0),
                                 scoring=labeled_scorer(), min_resources=200,
                                 random_state=0).fit(X, y_train)
    assert 0.5 < search.best_score_ <= 1.0


def test_labeled_scorer_errors():
    with pytest.raises(ValueError, match="scoring must be"):
        labeled_scorer(3)
