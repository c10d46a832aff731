"""The shared guard of semisup.safety: its folds (property-based) and its decision rule."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from semisup.safety import GUARD_FOLDS, check_fallback, guard, guard_folds, hide_rows


@st.composite
def _codes(draw):
    n_classes = draw(st.integers(2, 4))
    counts = draw(st.lists(st.integers(1, 9), min_size=n_classes, max_size=n_classes))
    n_unlabeled = draw(st.integers(0, 6))
    codes = np.concatenate([np.repeat(np.arange(n_classes), counts),
                            np.full(n_unlabeled, -1)])
    order = draw(st.permutations(range(codes.size)))
    return codes[np.asarray(order, dtype=np.int64)]


@settings(max_examples=200, deadline=None)
@given(_codes(), st.integers(0, 2**31 - 1))
def test_folds_partition_the_labeled_rows_by_class(codes, seed):
    folds = guard_folds(codes, seed)
    labeled = np.flatnonzero(codes >= 0)
    counts = np.bincount(codes[labeled])
    if counts.min() < 2:
        assert folds is None
        return
    assert len(folds) == min(GUARD_FOLDS, counts.min())
    tests = np.concatenate([test for _, test in folds])
    np.testing.assert_array_equal(np.sort(tests), labeled)      # each labeled row held out once
    for train, test in folds:
        np.testing.assert_array_equal(np.sort(np.r_[train, test]), labeled)
        assert np.all(np.diff(train) > 0) and np.all(np.diff(test) > 0)
        # stratified: every class in every training fold and every test fold
        assert np.unique(codes[train]).size == counts.size
        assert np.unique(codes[test]).size == counts.size
    sizes = [test.size for _, test in folds]
    assert max(sizes) - min(sizes) <= 1                          # the deal continues across classes
    again = guard_folds(codes, seed)
    for (a, b), (c, d) in zip(folds, again, strict=True):
        np.testing.assert_array_equal(a, c)
        np.testing.assert_array_equal(b, d)


def test_hide_rows_keeps_only_the_training_labels():
    codes = np.array([0, 1, 1, -1, 0])
    np.testing.assert_array_equal(hide_rows(codes, np.array([1, 4])), [-1, 1, -1, -1, 0])


def _scripted(correct_semi: float, correct_sup: float, codes: np.ndarray):
    """A fit_predict that is right on the first fraction of each test fold's rows."""
    calls = []

    def fit_predict(which, train, test):
        calls.append((which, train.copy(), test.copy()))
        frac = correct_semi if which == "semi_supervised" else correct_sup
        out = codes[test].copy()
        wrong = np.arange(test.size) >= round(frac * test.size)
        out[wrong] = (out[wrong] + 1) % 2
        return out

    return fit_predict, calls


@pytest.mark.parametrize("semi, sup, keep", [(1.0, 0.5, True), (0.5, 1.0, False),
                                             (1.0, 1.0, False)])     # a tie: the simpler model
def test_guard_keeps_only_a_strictly_better_semi_supervised_fit(semi, sup, keep):
    codes = np.r_[np.repeat([0, 1], 6), np.full(10, -1)]
    fit_predict, calls = _scripted(semi, sup, codes)
    result = guard(fit_predict, codes, random_state=3)
    assert result["keep"] is keep
    assert result["n_folds"] == 3
    assert result["semi_supervised"] == pytest.approx(semi)
    assert result["supervised"] == pytest.approx(sup)
    assert [c[0] for c in calls] == ["semi_supervised", "supervised"] * 3
    for (_, train, test), (f_train, f_test) in zip(calls[::2], guard_folds(codes, 3),
                                                   strict=True):
        np.testing.assert_array_equal(train, f_train)
        np.testing.assert_array_equal(test, f_test)


def test_guard_has_no_fold_without_two_labels_per_class_or_unlabeled_rows():
    fit_predict, calls = _scripted(1.0, 0.0, np.zeros(8, dtype=np.int64))
    assert guard(fit_predict, np.array([0, 1, 1, 1, -1, -1])) is None       # one label of 0
    assert guard(fit_predict, np.array([0, 0, 1, 1])) is None               # nothing unlabeled
    assert calls == []


def test_bad_fallback_is_named():
    assert check_fallback("cv") == "cv"
    with pytest.raises(ValueError, match="fallback"):
        check_fallback("auto")
