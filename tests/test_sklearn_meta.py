"""scikit-learn's meta-estimators with unlabeled rows (issue 27): semisup.meta.sklearn_compat.

Reference: on fully labeled data each wrapper must give scikit-learn's own numbers
(``CalibratedClassifierCV(ensemble=False)``, ``VotingClassifier``, ``StackingClassifier``
with the same folds).  With ``-1`` rows, scikit-learn's versions learn ``-1`` as a class;
the wrappers must not, must give semi-supervised members every row and any other member
the labeled rows only, and must calibrate / stack on held-out labeled rows only.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.calibration import CalibratedClassifierCV
from sklearn.datasets import make_classification, make_moons
from sklearn.ensemble import StackingClassifier, VotingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.semi_supervised import SelfTrainingClassifier
from sklearn.svm import LinearSVC
from sklearn.utils.estimator_checks import parametrize_with_checks

from semisup import LabelSpreading, LapRLS, TransductiveSVM
from semisup.meta.sklearn_compat import (
    SemiSupervisedCalibratedClassifier,
    SemiSupervisedStackingClassifier,
    SemiSupervisedVotingClassifier,
    check_meta_estimator,
)
from semisup.model_selection import (
    LabeledSplit,
    LabeledStratifiedKFold,
    LabeledStratifiedShuffleSplit,
)

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


def _labeled(n_classes: int):
    X, y = make_classification(120, 5, n_informative=3, n_classes=n_classes, random_state=0)
    return X, y


def _partial(n_labeled: int = 20):
    X, y_true = make_moons(120, noise=0.1, random_state=0)
    y = np.where(np.arange(120) < n_labeled, y_true, -1)
    return X, y, y_true


# same folds on both sides: LabeledStratifiedKFold shuffles the labeled rows with
# StratifiedKFold, which on fully labeled y is scikit-learn's own split
def _skf():
    return StratifiedKFold(3, shuffle=True, random_state=0)


def _lskf():
    return LabeledStratifiedKFold(3, random_state=0)


# ------------------------------------------------------------------ reference: sklearn


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("method", ["sigmoid", "isotonic"])
@pytest.mark.parametrize("base", [LinearSVC(), GaussianNB()], ids=["decision", "proba"])
def test_calibration_matches_sklearn_when_fully_labeled(n_classes, method, base):
    X, y = _labeled(n_classes)
    ref = CalibratedClassifierCV(base, method=method, cv=_skf(), ensemble=False).fit(X, y)
    ours = SemiSupervisedCalibratedClassifier(base, method=method, cv=_lskf()).fit(X, y)
    # sigmoid: our Newton solve of Platt's likelihood vs scikit-learn's L-BFGS
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-6)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))


@pytest.mark.parametrize("n_classes", [2, 3])
def test_voting_matches_sklearn_when_fully_labeled(n_classes):
    X, y = _labeled(n_classes)
    members = [("lr", LogisticRegression()), ("nb", GaussianNB()), ("svc", LinearSVC())]
    hard = SemiSupervisedVotingClassifier(members, weights=[1, 2, 1]).fit(X, y)
    ref = VotingClassifier(members, weights=[1, 2, 1]).fit(X, y)
    np.testing.assert_array_equal(hard.predict(X), ref.predict(X))
    soft = SemiSupervisedVotingClassifier(members[:2], voting="soft", weights=[2, 1]).fit(X, y)
    ref = VotingClassifier(members[:2], voting="soft", weights=[2, 1]).fit(X, y)
    np.testing.assert_allclose(soft.predict_proba(X), ref.predict_proba(X), atol=1e-12)
    np.testing.assert_array_equal(soft.predict(X), ref.predict(X))


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("passthrough", [False, True])
def test_stacking_matches_sklearn_when_fully_labeled(n_classes, passthrough):
    X, y = _labeled(n_classes)
    members = [("lr", LogisticRegression()), ("nb", GaussianNB()), ("svc", LinearSVC())]
    ours = SemiSupervisedStackingClassifier(members, cv=_lskf(),
                                            passthrough=passthrough).fit(X, y)
    ref = StackingClassifier(members, cv=_skf(), passthrough=passthrough).fit(X, y)
    assert ours.stack_method_ == ref.stack_method_
    np.testing.assert_allclose(ours.transform(X), ref.transform(X), atol=1e-12)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-10)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))


# ------------------------------------------------------- semi-supervised semantics


class _Recorder:
    """Wraps fit to record, per call, how many rows and how many ``-1`` rows it saw."""

    def __init__(self, cls, module: str):
        calls: list[tuple[int, int]] = []

        def fit(self, X, y, **kw):
            calls.append((len(y), int(np.sum(np.asarray(y) == -1))))
            return cls.fit(self, X, y, **kw)

        # a semisup member is recognised by its module (semisup.meta.self_training's rule)
        self.cls = type("Recording" + cls.__name__, (cls,), {"fit": fit, "__module__": module})
        self.calls = calls


def test_semi_supervised_members_see_every_row_and_others_the_labeled_ones():
    X, y, _ = _partial(n_labeled=21)
    semi = _Recorder(LapRLS, "semisup.testing")
    plain = _Recorder(LogisticRegression, "tests.plain")
    SemiSupervisedCalibratedClassifier(semi.cls(gamma=10.0, fallback="none"), cv=3,
                                       random_state=0).fit(X, y)
    # 3 folds (14 labeled rows + all 99 unlabeled each), then the final fit on all 120
    assert semi.calls == [(113, 99)] * 3 + [(120, 99)]
    SemiSupervisedStackingClassifier([("p", plain.cls())], cv=3, random_state=0).fit(X, y)
    assert plain.calls == [(14, 0)] * 3 + [(21, 0)]
    semi.calls.clear()
    plain.calls.clear()
    SemiSupervisedVotingClassifier([("s", semi.cls(gamma=10.0, fallback="none")),
                                    ("p", plain.cls())]).fit(X, y)
    assert semi.calls == [(120, 99)] and plain.calls == [(21, 0)]


def test_sklearn_meta_estimators_learn_minus_one_and_the_wrappers_do_not():
    X, y, y_true = _partial()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        wrong = CalibratedClassifierCV(LapRLS(gamma=10.0), cv=3).fit(X, y)
    assert -1 in wrong.classes_   # the silent failure check_meta_estimator refuses
    wrappers = [
        SemiSupervisedCalibratedClassifier(LapRLS(gamma=10.0), cv=3, random_state=0),
        SemiSupervisedVotingClassifier([("lap", LapRLS(gamma=10.0, probability=True)),
                                        ("spread", LabelSpreading())], voting="soft"),
        SemiSupervisedStackingClassifier([("lap", LapRLS(gamma=10.0)),
                                          ("spread", LabelSpreading())], cv=3, random_state=0),
    ]
    for model in wrappers:
        model.fit(X, y)
        assert model.classes_.tolist() == [0, 1]
        P = model.predict_proba(X)
        assert P.shape == (120, 2) and np.allclose(P.sum(axis=1), 1.0) and np.all(P >= 0)
        np.testing.assert_array_equal(model.predict(X), model.classes_[P.argmax(axis=1)])
        # 20 labels on two moons: the semi-supervised members find them
        assert model.score(X, y_true) > 0.95, type(model).__name__
        assert model.score(X, y) == model.score(X[:20], y_true[:20])   # -1 rows ignored


def test_calibrated_probabilities_track_accuracy():
    """Calibration on held-out labeled rows: mean confidence close to the accuracy."""
    X, y_true = make_moons(300, noise=0.3, random_state=1)
    y = np.where(np.arange(300) < 100, y_true, -1)
    model = SemiSupervisedCalibratedClassifier(LapRLS(gamma=2.0), cv=3,
                                               random_state=0).fit(X, y)
    test = np.arange(100, 300)
    P = model.predict_proba(X[test])
    accuracy = np.mean(model.predict(X[test]) == y_true[test])
    # 200 test rows: the accuracy's standard error is about 0.02; allow three of them
    assert abs(P.max(axis=1).mean() - accuracy) < 0.06


def test_string_labels_and_none_unlabeled():
    X, y, _ = _partial()
    names = np.array(["left", "right"], dtype=object)[np.maximum(y, 0)]
    names[y == -1] = None
    model = SemiSupervisedVotingClassifier([("lap", LapRLS(gamma=10.0)),
                                            ("lr", LogisticRegression())]).fit(X, names)
    assert model.classes_.tolist() == ["left", "right"]
    assert set(model.predict(X)) <= {"left", "right"}


def test_three_classes_calibration_and_stacking():
    X, y_true = make_classification(150, 4, n_informative=3, n_redundant=0, n_classes=3,
                                    random_state=2)
    y = np.where(np.arange(150) < 45, y_true, -1)
    for model in (SemiSupervisedCalibratedClassifier(TransductiveSVM(lam=1e-2), cv=3,
                                                     random_state=0),
                  SemiSupervisedStackingClassifier([("tsvm", TransductiveSVM(lam=1e-2))],
                                                   cv=3, random_state=0)):
        P = model.fit(X, y).predict_proba(X)
        assert P.shape == (150, 3) and np.allclose(P.sum(axis=1), 1.0)
        assert model.score(X, y_true) > 0.6


# ----------------------------------------------------------------------- the check


@pytest.mark.parametrize("meta", [
    CalibratedClassifierCV(LapRLS()),
    VotingClassifier([("a", LapRLS())]),
    StackingClassifier([("a", LapRLS())]),
    make_pipeline(StandardScaler(), VotingClassifier([("a", LapRLS())])),
], ids=["calibrated", "voting", "stacking", "pipeline"])
def test_check_refuses_meta_estimators_that_learn_minus_one(meta):
    _, y, _ = _partial()
    with pytest.raises(ValueError, match="SemiSupervised.*Classifier"):
        check_meta_estimator(meta, y)
    check_meta_estimator(meta, np.where(y == -1, 0, y))       # no unlabeled rows: fine
    check_meta_estimator(meta, np.where(y == -1, None, y).astype(object)[:20])


def test_check_self_training():
    _, y, _ = _partial()
    with pytest.raises(ValueError, match="probability=True"):
        check_meta_estimator(SelfTrainingClassifier(TransductiveSVM()), y)
    with pytest.warns(UserWarning, match="semisup.SelfTraining"):
        check_meta_estimator(SelfTrainingClassifier(LabelSpreading()), y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_meta_estimator(SelfTrainingClassifier(LogisticRegression()), y)
        check_meta_estimator(SemiSupervisedVotingClassifier([("a", LapRLS())]), y)


# ----------------------------------------------------------------------- bad input


@pytest.mark.parametrize("make, match", [
    (lambda: SemiSupervisedVotingClassifier(LapRLS()), "list of \\(name, estimator\\)"),
    (lambda: SemiSupervisedVotingClassifier([]), "non-empty"),
    (lambda: SemiSupervisedVotingClassifier([("a", LapRLS()), ("a", LapRLS())]), "unique"),
    (lambda: SemiSupervisedVotingClassifier([("a", LapRLS())], voting="mean"), "voting"),
    (lambda: SemiSupervisedVotingClassifier([("a", LapRLS())], weights=[1, 2]), "weights"),
    (lambda: SemiSupervisedVotingClassifier([("a", LapRLS())], weights=[-1]), "weights"),
    (lambda: SemiSupervisedVotingClassifier([("a", TransductiveSVM())], voting="soft"),
     "probability=True"),
    (lambda: SemiSupervisedCalibratedClassifier(LapRLS(), method="beta"), "method"),
    (lambda: SemiSupervisedCalibratedClassifier(LapRLS(kernel="precomputed")), "precomputed"),
    (lambda: SemiSupervisedStackingClassifier([("a", LapRLS())], stack_method="x"),
     "stack_method"),
    (lambda: SemiSupervisedStackingClassifier([("a", LapRLS())], passthrough="yes"),
     "passthrough"),
    (lambda: SemiSupervisedStackingClassifier(
        [("a", LapRLS())], cv=LabeledStratifiedShuffleSplit(3, random_state=0)),
     "exactly once"),
    (lambda: SemiSupervisedCalibratedClassifier(LapRLS(), cv=LabeledSplit(KFold(2))),
     "fewer folds"),
], ids=lambda v: "" if callable(v) else v)
def test_bad_input_names_the_argument(make, match):
    X, y, _ = _partial()
    if "fewer folds" in match:
        # unshuffled 2-fold over labels sorted by class: each training fold has one class
        y = np.full(120, -1)
        y[:6] = [0, 0, 0, 1, 1, 1]
    with pytest.raises((ValueError, TypeError), match=match):
        make().fit(X, y)


def test_one_labeled_class_is_refused():
    X, y, _ = _partial()
    y = np.where(y == 1, -1, y)
    with pytest.raises(ValueError, match="at least 2"):
        SemiSupervisedVotingClassifier([("a", LapRLS())]).fit(X, y)


# --------------------------------------------------------------- scikit-learn API


def _instances():
    return [SemiSupervisedCalibratedClassifier(LogisticRegression(), cv=3),
            SemiSupervisedVotingClassifier([("a", LogisticRegression()),
                                            ("b", LabelSpreading())], voting="soft"),
            SemiSupervisedStackingClassifier([("a", LogisticRegression()),
                                              ("b", GaussianNB())], cv=3)]


_MINUS_ONE = ("y == -1 marks unlabeled rows (the sklearn.semi_supervised convention), so the "
              "check's class label -1 cannot be a class")


@parametrize_with_checks(_instances(),
                         expected_failed_checks=lambda est: {"check_classifiers_classes":
                                                             _MINUS_ONE})
def test_sklearn_compatible(estimator, check):
    check(estimator)
