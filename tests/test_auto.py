"""The safe automatic classifier: its CV plan, its rule, and the CV it reports."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import make_moons
from sklearn.linear_model import LogisticRegression

from semisup import AutoClassifier, LabelSpreading, LapRLS
from semisup.meta.auto import Candidate, choose, cv_plan, preferred, safe_choice


def _moons(n=200, per_class=6, seed=0):
    X, y_true = make_moons(n, noise=0.08, random_state=seed)
    rng = np.random.default_rng(seed)
    y = np.full(n, -1)
    for c in (0, 1):
        pick = rng.choice(np.flatnonzero(y_true == c), per_class, replace=False)
        y[pick] = c
    return X, y, y_true


# ------------------------------------------------------------------------------ the plan


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(2, 9), min_size=2, max_size=4), st.integers(0, 1000))
def test_cv_plan_partitions_the_labeled_rows_in_each_repetition(counts, seed):
    y = np.repeat(np.arange(len(counts)), counts)
    plan = cv_plan(y, "auto", seed)
    k = min(5, min(counts))
    assert all(len(folds) == k for folds in plan.repeats)
    assert plan.n_fits >= min(6, 5)
    for folds in plan.repeats:
        held = np.concatenate([te for _, te in folds])
        np.testing.assert_array_equal(np.sort(held), np.arange(y.size))
        for train, test in folds:
            assert np.intersect1d(train, test).size == 0
            # every class keeps a labeled row in every training part
            assert np.unique(y[train]).size == len(counts)


def test_cv_plan_is_none_unless_two_classes_have_two_labeled_rows():
    assert cv_plan(np.array([0, 0, 0, 1]), "auto", 0) is None
    assert cv_plan(np.array([0, 1, 2, 3]), "auto", 0) is None
    assert cv_plan(np.array([0, 0, 1, 1]), 3, 0).n_fits == 2    # capped at the class size


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 6), min_size=3, max_size=6), st.integers(0, 1000),
       st.sampled_from(["auto", 2, 3]))
def test_cv_plan_holds_out_the_classes_with_two_rows_and_trains_on_every_class(
        counts, seed, cv):
    """Single-row classes train in every fold; the others are held out once a repetition."""
    counts = sorted(counts, reverse=True)
    y = np.repeat(np.arange(len(counts)), counts)
    plan = cv_plan(y, cv, seed)
    multi = [c for c, n in enumerate(counts) if n >= 2]
    if len(multi) < 2:
        assert plan is None
        return
    expected_held = np.flatnonzero(np.isin(y, multi))
    np.testing.assert_array_equal(plan.held_out_rows(y.size), expected_held)
    for folds in plan.repeats:
        held = np.concatenate([te for _, te in folds])
        np.testing.assert_array_equal(np.sort(held), expected_held)
        for train, test in folds:
            assert np.intersect1d(train, test).size == 0
            assert np.unique(y[train]).size == len(counts)
            np.testing.assert_array_equal(np.union1d(train, test), np.arange(y.size))


def test_partial_cv_reproduces_a_hand_written_one_and_can_use_the_unlabeled_rows():
    """Three blobs, one labeled row in the third class: the rows of the other two are
    held out (the singleton trains every fold), as a hand-written CV does."""
    from sklearn.datasets import make_blobs

    X, y_true = make_blobs(300, centers=[[0, 0], [4, 0], [2, 4]], cluster_std=0.7,
                           random_state=0)
    y = np.full(300, -1)
    for c, k in ((0, 3), (1, 3), (2, 1)):
        y[np.flatnonzero(y_true == c)[:k]] = c
    cands = [Candidate("LR", LogisticRegression(), False),
             Candidate("LabelSpreading", LabelSpreading(alpha=0.99), True)]
    auto = AutoClassifier(candidates=cands, cv=3, random_state=0).fit(X, y)
    labeled = np.flatnonzero(y != -1)
    plan = cv_plan(y[labeled], 3, 0)
    held = plan.held_out_rows(labeled.size)
    assert held.size == 6 and y[labeled[held]].max() == 1
    hits = {"LR": 0, "LabelSpreading": 0}
    for train, test in plan.repeats[0]:
        lr = LogisticRegression().fit(X[labeled[train]], y[labeled[train]])
        hits["LR"] += int(np.sum(lr.predict(X[labeled[test]]) == y[labeled[test]]))
        y_fold = y.copy()
        y_fold[labeled[test]] = -1
        ls = LabelSpreading(alpha=0.99, fallback="none").fit(X, y_fold)
        hits["LabelSpreading"] += int(np.sum(ls.transduction_[labeled[test]]
                                             == y[labeled[test]]))
    np.testing.assert_allclose(auto.cv_results_["mean_test_score"],
                               [hits["LR"] / 6, hits["LabelSpreading"] / 6])
    # the never-held-out row has no score
    singleton = np.flatnonzero(y[labeled] == 2)
    for scores in auto.cv_results_["row_margin_scores"]:
        assert np.isnan(scores[singleton]).all() and not np.isnan(scores[held]).any()
    assert "never held out" in auto.selection_


def test_safe_choice_is_the_paired_one_standard_error_rule():
    sup = np.array([1, 1, 1, 1, 1, 1, 1, 0, 0, 0], dtype=float)
    two_better = sup.copy()
    two_better[[7, 8]] = 1
    chosen, gain, se = safe_choice(sup, two_better, 1.0)
    d = two_better - sup
    assert gain == pytest.approx(0.2)
    assert se == pytest.approx(d.std(ddof=1) / np.sqrt(10))
    assert chosen
    one_better = sup.copy()
    one_better[7] = 1
    assert not safe_choice(sup, one_better, 1.0)[0]      # gain 0.1 == 1 se: not enough
    assert safe_choice(sup, one_better, 0.5)[0]
    assert not safe_choice(sup, sup, 0.0)[0]              # a tie never switches


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=2, max_size=40),
       st.floats(0, 3))
def test_safe_choice_never_picks_a_model_that_is_not_better(pairs, safety):
    sup, semi = (np.array(v, dtype=float) for v in zip(*pairs, strict=True))
    chosen, gain, se = safe_choice(sup, semi, safety)
    if chosen:
        assert semi.mean() > sup.mean() and gain >= safety * se


def test_choose_prefers_the_earlier_candidate_unless_a_later_one_wins_by_the_rule():
    base = np.array([1, 1, 1, 1, 1, 1, 1, 0, 0, 0], dtype=float)
    slightly = base.copy()
    slightly[7] = 1                      # one row better: gain 0.1 = 1 standard error
    clearly = base.copy()
    clearly[[7, 8, 9]] = 1               # three rows better
    assert preferred([base, slightly], 1.0) == 0
    assert preferred([base, slightly], 0.5) == 1
    assert preferred([base, clearly, slightly], 1.0) == 1
    # supervised pick first; the semi-supervised pick must beat it
    sup, chosen = choose([base, slightly, clearly], [False, True, True], 1.0)
    assert (sup, chosen) == (0, 2)
    sup, chosen = choose([base, clearly, slightly], [False, False, True], 1.0)
    assert (sup, chosen) == (1, 1)       # SVC-like second supervised model won; kept
    assert choose([base], [False], 0.5) == (0, 0)


# ------------------------------------------------------------------------------ the CV


def test_cv_results_reproduce_a_hand_written_transductive_cv():
    X, y, _ = _moons(120, per_class=6)
    cands = [Candidate("LR", LogisticRegression(), False),
             Candidate("LapRLS", LapRLS(fallback="none"), True, [{}, {"gamma_I": 10.0}])]
    auto = AutoClassifier(candidates=cands, cv=3, random_state=3).fit(X, y)
    labeled = np.flatnonzero(y != -1)
    plan = cv_plan(y[labeled], 3, 3)
    expected = []
    for est, semi in [(LogisticRegression(), False), (LapRLS(fallback="none"), True),
                      (LapRLS(fallback="none", gamma_I=10.0), True)]:
        hits = 0
        for train, test in plan.repeats[0]:
            if semi:
                y_fold = y.copy()
                y_fold[labeled[test]] = -1
                pred = est.fit(X, y_fold).transduction_[labeled[test]]
            else:
                pred = est.fit(X[labeled[train]], y[labeled[train]]).predict(X[labeled[test]])
            hits += int(np.sum(pred == y[labeled[test]]))
        expected.append(hits / labeled.size)
    np.testing.assert_allclose(auto.cv_results_["mean_test_score"], expected)


def test_laprls_held_out_scores_equal_refits():
    X, y, _ = _moons(100, per_class=5)
    labeled = np.flatnonzero(y != -1)
    folds = cv_plan(y[labeled], 5, 0).repeats[0]
    for fit_intercept in (False, True):
        # a fixed graph weight: the one-factorisation CV is for fixed weights
        est = LapRLS(fallback="none", gamma_I=1e4, fit_intercept=fit_intercept)
        for (_, test), scores in zip(folds, est._held_out_scores(X, y, folds), strict=True):
            y_fold = y.copy()
            y_fold[labeled[test]] = -1
            ref = LapRLS(fallback="none", gamma_I=1e4, fit_intercept=fit_intercept).fit(X, y_fold)
            np.testing.assert_allclose(scores, ref.training_scores_, atol=1e-9)


# ------------------------------------------------------------------------------ choices


def test_two_moons_choose_a_semi_supervised_model():
    X, y, y_true = _moons(300, per_class=6)
    auto = AutoClassifier(random_state=0).fit(X, y)
    r = auto.cv_results_
    assert dict(zip(r["candidate_setting"], r["semi_supervised"], strict=True))[
        auto.best_candidate_]
    unl = y == -1
    assert np.mean(auto.transduction_[unl] == y_true[unl]) > 0.97
    assert "chosen" in auto.selection_


def test_keeps_the_supervised_model_when_the_clusters_cross_the_classes():
    # two far-apart clusters, each split in half by the class boundary x0 = 0: the graph
    # joins rows of both classes, so a manifold method can only lose
    rng = np.random.default_rng(1)
    centres = np.array([[0.0, -6.0], [0.0, 6.0]])
    X = np.vstack([c + rng.normal(size=(150, 2)) * [2.0, 0.6] for c in centres])
    y_true = (X[:, 0] > 0).astype(int)
    y = np.full(300, -1)
    for c in (0, 1):
        y[rng.choice(np.flatnonzero(y_true == c), 8, replace=False)] = c
    auto = AutoClassifier(random_state=0).fit(X, y)
    sup = LogisticRegression().fit(X[y != -1], y[y != -1])
    unl = y == -1
    acc_auto = np.mean(auto.transduction_[unl] == y_true[unl])
    acc_sup = np.mean(sup.predict(X[unl]) == y_true[unl])
    assert acc_auto >= acc_sup - 0.01


def test_single_labeled_row_in_a_class_warns_and_keeps_the_supervised_model():
    X, y, _ = _moons(100, per_class=4)
    y[np.flatnonzero(y == 1)[1:]] = -1
    with pytest.warns(UserWarning, match="fewer than two classes have two labeled rows"):
        auto = AutoClassifier(random_state=0).fit(X, y)
    assert auto.best_candidate_ == auto.supervised_candidate_


def test_time_budget_skips_the_semi_supervised_candidates():
    X, y, _ = _moons(150)
    auto = AutoClassifier(time_budget=1e-9, random_state=0).fit(X, y)
    r = auto.cv_results_
    status = dict(zip(r["candidate_setting"], r["status"], strict=True))
    assert all(s == "skipped: time budget" for name, s in status.items()
               if dict(zip(r["candidate_setting"], r["semi_supervised"], strict=True))[name])
    assert auto.best_candidate_ == auto.supervised_candidate_


def test_string_labels_probabilities_and_pickle():
    X, y, y_true = _moons(160, per_class=6)
    names = np.array(["left", "right"], dtype=object)
    y_s = np.where(y == -1, "-1", names[np.maximum(y, 0)]).astype(object)
    auto = AutoClassifier(random_state=0).fit(X, y_s)
    assert set(auto.classes_) == {"left", "right"}
    lab = y != -1
    np.testing.assert_array_equal(auto.transduction_[lab], y_s[lab])
    P = auto.predict_proba(X)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    np.testing.assert_array_equal(auto.classes_[P.argmax(axis=1)], auto.predict(X))
    again = pickle.loads(pickle.dumps(auto))
    np.testing.assert_array_equal(again.predict(X), auto.predict(X))


def test_three_classes():
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(size=(60, 3)) + 5 * np.eye(3)[k] for k in range(3)])
    y_true = np.repeat([0, 1, 2], 60)
    y = np.full(180, -1)
    for k in range(3):
        y[rng.choice(np.flatnonzero(y_true == k), 4, replace=False)] = k
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        auto = AutoClassifier(random_state=0).fit(X, y)
    assert np.mean(auto.predict(X) == y_true) > 0.95
    assert auto.predict_proba(X).shape == (180, 3)


def test_deterministic_given_random_state():
    X, y, _ = _moons(150)
    a = AutoClassifier(random_state=5).fit(X, y)
    b = AutoClassifier(random_state=5).fit(X, y)
    assert a.cv_results_["mean_test_score"] == b.cv_results_["mean_test_score"]
    np.testing.assert_array_equal(a.transduction_, b.transduction_)


def test_candidates_are_validated():
    X, y, _ = _moons(60)
    with pytest.raises(ValueError, match="at least one supervised"):
        AutoClassifier(candidates=[LapRLS()]).fit(X, y)
    with pytest.raises(TypeError, match="not a scikit-learn estimator"):
        AutoClassifier(candidates=[LogisticRegression(), object()]).fit(X, y)
    with pytest.raises(ValueError, match="safety"):
        AutoClassifier(safety=-1).fit(X, y)


def test_candidates_by_size():
    """LapRLS up to 4,000 rows; label spreading (its CV is one block solve) at every size,
    before the transductive SVM."""
    from semisup.meta.auto import auto_candidates

    small = [c.name for c in auto_candidates(np.zeros((4000, 3)), 2, 20)]
    large = [c.name for c in auto_candidates(np.zeros((4001, 3)), 2, 20)]
    assert small == ["LogisticRegression", "SVC", "LapRLS", "LabelSpreading", "TransductiveSVM"]
    assert large == ["LogisticRegression", "SVC", "LabelSpreading", "TransductiveSVM"]


def test_label_spreading_candidate_cross_validated_in_one_solve():
    """The automatic classifier uses LabelSpreading's one-solve CV, can pick it, and then
    answers decision_function from its class probabilities."""
    from semisup import LabelSpreading

    X, y_true = make_moons(300, noise=0.05, random_state=0)
    y = np.full(300, -1)
    for c in (0, 1):
        y[np.flatnonzero(y_true == c)[:6]] = c
    auto = AutoClassifier(candidates=[LogisticRegression(), LabelSpreading()],
                          random_state=0).fit(X, y)
    assert auto.best_candidate_ == "LabelSpreading"
    assert np.mean(auto.transduction_[y == -1] == y_true[y == -1]) > 0.95
    # label spreading has no decision function: its class probabilities stand in
    dec = auto.decision_function(X)
    assert dec.shape == (300,)
    np.testing.assert_array_equal(auto.classes_[(dec > 0).astype(int)], auto.predict(X))


def test_a_candidate_that_collapses_in_most_folds_is_not_chosen():
    """Pure noise, 12 labels of one class and 4 of the other: always predicting the large
    class wins the CV, but one class for every row is no model; logistic regression stays."""
    from sklearn.dummy import DummyClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 5))
    y = np.full(200, -1)
    y[:12], y[12:16] = 0, 1
    auto = AutoClassifier(candidates=[LogisticRegression(), ("Dummy", DummyClassifier())],
                          supervised_safety=0.0, random_state=0).fit(X, y)
    r = auto.cv_results_
    plan = cv_plan(y[:16], "auto", 0)
    assert r["collapsed_folds"] == [0, plan.n_fits]
    # by its scores alone the rule would take it
    assert choose([np.asarray(s) for s in r["row_margin_scores"]], [False, False],
                  0.5, 0.0)[0] == 1
    assert auto.best_candidate_ == "LogisticRegression"
    assert "one class for every row out of most folds: Dummy" in auto.selection_

