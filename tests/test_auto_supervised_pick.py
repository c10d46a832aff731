"""AutoClassifier's fallback: logistic regression unless another supervised model clearly wins.

The rule (``supervised_safety``, ``benchmarks/results/auto_safety_r3s4_dev.md``): a later
supervised candidate (the RBF SVM, naive Bayes) replaces logistic regression as the fallback
only when it wins by ``supervised_safety`` standard errors of the paired held-out
difference, a stricter bar than the ``safety`` a semi-supervised candidate must clear.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_moons
from sklearn.linear_model import LogisticRegression
from sklearn.svm import SVC

from semisup import AutoClassifier
from semisup.meta.auto import choose, safe_choice


def _scores():
    """Per-row held-out margin scores: ``svc`` beats ``lr`` by 1.2 standard errors."""
    lr = np.linspace(-0.5, 0.9, 10)
    z = np.array([1, -1, 1, -1, 1, -1, 1, -1, 1, -1], dtype=float)   # mean 0
    z /= z.std(ddof=1)
    svc = lr + 0.05 + (0.05 * np.sqrt(10) / 1.2) * z
    _, gain, se = safe_choice(lr, svc, 0.0)
    assert gain / se == pytest.approx(1.2)
    return lr, svc


def test_a_later_supervised_candidate_needs_supervised_safety_standard_errors():
    lr, svc = _scores()
    semi = [False, False]
    assert choose([lr, svc], semi, 0.5) == (1, 1)               # the v2 rule: one bar
    assert choose([lr, svc], semi, 0.5, supervised_safety=1.5) == (0, 0)
    assert choose([lr, svc], semi, 0.5, supervised_safety=1.0) == (1, 1)


def test_the_semi_supervised_bar_is_still_safety_against_the_fallback():
    lr, svc = _scores()
    # a semi-supervised model 1.2 se above logistic regression is chosen at safety 0.5
    sup, chosen = choose([lr, svc, svc.copy()], [False, False, True], 0.5,
                         supervised_safety=1.5)
    assert (sup, chosen) == (0, 2)
    # and not at safety 1.5, where logistic regression is kept
    assert choose([lr, svc, svc.copy()], [False, False, True], 1.5,
                  supervised_safety=1.5) == (0, 0)


def test_estimator_default_and_validation():
    assert AutoClassifier().get_params()["supervised_safety"] == "auto"
    X, y_true = make_moons(60, noise=0.1, random_state=0)
    y = np.full(60, -1)
    y[:10] = y_true[:10]
    with pytest.raises(ValueError, match="supervised_safety"):
        AutoClassifier(supervised_safety=-1.0).fit(X, y)


def test_fit_keeps_logistic_regression_unless_the_svm_wins_clearly():
    """Same folds, two bars: the fallback reported is the one ``choose`` replays."""
    X, y_true = make_moons(200, noise=0.25, random_state=3)
    rng = np.random.default_rng(3)
    y = np.full(200, -1)
    for c in (0, 1):
        y[rng.choice(np.flatnonzero(y_true == c), 5, replace=False)] = c
    cands = [LogisticRegression(), SVC()]
    fits = {s: AutoClassifier(candidates=cands, supervised_safety=s, random_state=0).fit(X, y)
            for s in (0.0, 1.5, np.inf)}
    assert fits[np.inf].best_candidate_ == "LogisticRegression"
    res = fits[1.5].cv_results_
    lr, svc = (np.asarray(v) for v in res["row_margin_scores"])
    won, gain, se = safe_choice(lr, svc, 1.5)
    assert fits[1.5].best_candidate_ == ("SVC" if won else "LogisticRegression")
    won0 = safe_choice(lr, svc, 0.0)[0]
    assert fits[0.0].best_candidate_ == ("SVC" if won0 else "LogisticRegression")


def test_a_candidate_that_tunes_its_own_weight_is_cross_validated_by_real_fold_fits():
    """``LapRLS(gamma_I='auto')`` picks its graph weight by its own CV on each fold's
    labels; the one-factorisation shortcut (fixed weights) must not stand in for it."""
    from semisup import LapRLS
    from semisup.meta.auto import Candidate, cv_plan

    X, y_true = make_moons(90, noise=0.1, random_state=1)
    y = np.full(90, -1)
    for c in (0, 1):
        y[np.flatnonzero(y_true == c)[:6]] = c
    est = LapRLS(gamma_I="auto")
    auto = AutoClassifier(candidates=[Candidate("LR", LogisticRegression(), False),
                                      Candidate("LapRLS", est, True)],
                          cv=3, random_state=2).fit(X, y)
    assert auto.cv_results_["status"] == ["ok", "ok"]
    labeled = np.flatnonzero(y != -1)
    hits = 0
    for _, test in cv_plan(y[labeled], 3, 2).repeats[0]:
        y_fold = y.copy()
        y_fold[labeled[test]] = -1
        pred = LapRLS(gamma_I="auto").fit(X, y_fold).transduction_[labeled[test]]
        hits += int(np.sum(pred == y[labeled[test]]))
    assert auto.cv_results_["mean_test_score"][1] == pytest.approx(hits / labeled.size)


def test_auto_bar_keeps_logistic_regression_beyond_two_classes():
    """Three rings: the RBF SVM wins the CV by far, and is the fallback at a bar of 1.5
    standard errors, but 'auto' keeps logistic regression with more than two classes."""
    rng = np.random.default_rng(0)
    radius = np.repeat([1.0, 2.0, 3.0], 100)
    angle = rng.uniform(0, 2 * np.pi, 300)
    X = np.column_stack([radius * np.cos(angle), radius * np.sin(angle)])
    X += rng.normal(scale=0.1, size=X.shape)
    y_true = np.repeat([0, 1, 2], 100)
    y = np.full(300, -1)
    for c in range(3):
        y[rng.choice(np.flatnonzero(y_true == c), 6, replace=False)] = c
    cands = [LogisticRegression(), SVC()]
    bar = AutoClassifier(candidates=cands, supervised_safety=1.5, random_state=0).fit(X, y)
    assert bar.supervised_candidate_ == "SVC"
    auto = AutoClassifier(candidates=cands, random_state=0).fit(X, y)
    assert auto.supervised_candidate_ == "LogisticRegression"
