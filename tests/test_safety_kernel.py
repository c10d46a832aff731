"""The labeled-only CV guard (``fallback="cv"``, :mod:`semisup.safety`) on the kernel and
weak-supervision estimators: ConvexTSVM, MultipleKernelSVC, SelfTaughtClassifier, RhoTSVM,
SDPRelaxedTSVM, S4VM (counterpart ``SVC()``), MixtureSSL and AuxiliarySVM (counterpart
``LogisticRegression()``).

Each estimator gets (a) a constructed problem where its semi-supervised fit loses the guard's
cross-validation, so it must become its counterpart fitted on the labeled rows, and (b) one
where it wins, so it must equal the published fit (``fallback="none"``).
"""

from __future__ import annotations

import functools
import pickle
import warnings

import numpy as np
import pytest
from sklearn.datasets import make_moons
from sklearn.linear_model import LogisticRegression
from sklearn.svm import SVC

from semisup import (
    S4VM,
    AuxiliarySVM,
    ConvexTSVM,
    MixtureSSL,
    MultipleKernelSVC,
    RhoTSVM,
    SDPRelaxedTSVM,
    SelfTaughtClassifier,
    SupervisedSelfTaught,
)


def imbalanced_clouds():
    """90 rows of a wide class 0 and 10 of a tight class 1, three labels each: a balance
    learned from the labels (50/50) is wrong for the unlabeled rows (10 % class 1); the
    class-0 labels are its rows nearest class 1."""
    rng = np.random.default_rng(0)
    X = np.r_[rng.normal([0, 0], [3, 3], (90, 2)), rng.normal([9, 0], [0.3, 0.3], (10, 2))]
    truth = np.r_[np.zeros(90, int), np.ones(10, int)]
    y = np.full(100, -1)
    y[np.argsort(X[:90, 0])[[-1, -3, -5]]] = 0
    y[[90, 91, 92]] = 1
    return X, y, truth


def shifted_gap():
    """Labels split at ``x1 = 0`` inside one unlabeled cluster; the unlabeled rows' only gap
    (and their balanced split) is at ``x1 = 2``: the cluster assumption is false."""
    rng = np.random.default_rng(0)
    x1 = np.r_[np.linspace(-3, 1.5, 60), np.linspace(2.5, 7, 60)]
    X = np.c_[x1, rng.normal(0, 0.3, 120)]
    truth = (x1 > 0).astype(int)
    y = np.full(120, -1)
    lab = np.r_[np.flatnonzero((x1 > -2.2) & (x1 < -0.8))[::4][:3],
                np.flatnonzero((x1 > 0.3) & (x1 < 1.5))[::4][:3]]
    y[lab] = truth[lab]
    return X, y, truth


def moons():
    """Two moons, three labels per moon at its ends and middle: an SVC on two of them
    misplaces the third, the moons' shape does not."""
    X, truth = make_moons(60, noise=0.05, random_state=0)
    y = np.full(60, -1)
    for c in (0, 1):
        rows = np.flatnonzero(truth == c)
        y[rows[np.argsort(X[rows, 0])[[0, 15, 29]]]] = c
    return X, y, truth


def long_bars():
    """Two parallel bars 80 long and 2 apart (class = bar); the labels sit near the bars'
    ends, so a ridge-regularised linear fit on a few of them leans on the long axis."""
    rng = np.random.default_rng(0)
    x1 = np.r_[np.linspace(-40, 40, 60), np.linspace(-40, 40, 60)]
    x2 = np.r_[np.full(60, -1.0), np.full(60, 1.0)] + rng.normal(0, 0.1, 120)
    truth = (x2 > 0).astype(int)
    y = np.full(120, -1)
    for bar, at in ((0, (-38, -30, 35)), (1, (38, 30, -35))):
        for v in at:
            row = 60 * bar + int(np.argmin(np.abs(x1[60 * bar:60 * bar + 60] - v)))
            y[row] = truth[row]
    return np.c_[x1, x2], y, truth


def interleaved():
    """Two classes alternating along one line 0.6 apart: the kNN graph of the deformed
    kernels joins every row to the other class."""
    rng = np.random.default_rng(0)
    idx = np.arange(80)
    X = np.c_[np.linspace(-10, 10, 80), np.where(idx % 2 == 0, 0.3, -0.3)
              + rng.normal(0, 0.02, 80)]
    truth = (idx % 2 == 0).astype(int)
    y = np.full(80, -1)
    lab = [4, 30, 60, 5, 31, 61]
    y[lab] = truth[lab]
    return X, y, truth


# name -> (factory with the test's settings, problem where the guard falls back, problem
# where it keeps the semi-supervised fit, supervised counterpart)
CASES = {
    # the moons need a narrow kernel (the docstring's gamma); the default one suits the clouds
    "ConvexTSVM": (lambda gamma=None, **kw: ConvexTSVM(gamma=gamma, **kw), imbalanced_clouds,
                   lambda: moons() + ({"gamma": 10.0},), SVC),
    "MultipleKernelSVC": (lambda **kw: MultipleKernelSVC(**kw), interleaved, imbalanced_clouds,
                          SVC),
    "MixtureSSL": (lambda **kw: MixtureSSL(random_state=0, **kw), shifted_gap, long_bars,
                   LogisticRegression),
    "SelfTaughtClassifier": (lambda **kw: SelfTaughtClassifier(n_components=8, n_iter=10,
                                                               random_state=0, **kw),
                             shifted_gap, long_bars, SVC),
    # without auxiliary rows its fit ignores the unlabeled rows: the guard weighs its lam =
    # 0.02 against LogisticRegression() on the labeled rows
    "AuxiliarySVM": (lambda **kw: AuxiliarySVM(**kw), moons, long_bars, LogisticRegression),
    # the default rho = 0 on the interleaved line transduces 61 % against SVC's 78 %; a
    # narrow kernel and rho = 0.5 follow the moons (100 % against 87 %)
    "RhoTSVM": (lambda gamma=None, rho=0.0, **kw: RhoTSVM(gamma=gamma, rho=rho, **kw),
                interleaved, lambda: moons() + ({"gamma": 10.0, "rho": 0.5},), SVC),
    # the interleaved line: the relaxation transduces 50 % against SVC's 78 % (a tie on
    # held-out accuracy that the margins break); a narrow kernel follows the moons (100 %
    # against 87 %)
    "SDPRelaxedTSVM": (lambda gamma=None, **kw: SDPRelaxedTSVM(gamma=gamma, **kw),
                       interleaved, lambda: moons() + ({"gamma": 10.0},), SVC),
    # linear S4VM on the clouds keeps the labels' 50/50 balance within 0.1 (90 % against
    # SVC's 100 %): every separator shares the wrong balance, so the worst case over them
    # guarantees nothing; a narrow kernel follows the moons (100 % against 87 %)
    "S4VM": (lambda **kw: S4VM(n_candidates=20, random_state=0, **kw),
             lambda: imbalanced_clouds() + ({"kernel": "linear"},),
             lambda: moons() + ({"gamma": 10.0},), SVC),
}


@functools.cache
def fitted(name: str, which: str, fallback: str):
    """``(model, X, y, truth)``: estimator ``name`` fitted on its ``which`` problem
    (``"worse"`` / ``"better"``), cached across the tests (each fit costs a second or two)."""
    make, worse, better, _ = CASES[name]
    X, y, truth, *settings = (worse if which == "worse" else better)()
    kw = dict(*settings, fallback=fallback)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return make(**kw).fit(X, y), X, y, truth


@pytest.mark.parametrize("name", list(CASES))
def test_guard_falls_back_where_unlabeled_rows_mislead(name):
    Counterpart = CASES[name][3]
    model, X, y, _ = fitted(name, "worse", "cv")
    assert model.fallback_ is True
    scores = model.cv_scores_
    assert scores["semi_supervised"] <= scores["supervised"]
    lab = y >= 0
    reference = Counterpart().fit(X[lab], y[lab])       # labels are 0/1: codes = labels
    np.testing.assert_array_equal(model.predict(X), reference.predict(X))
    np.testing.assert_allclose(model.decision_function(X), reference.decision_function(X))
    np.testing.assert_array_equal(model.transduction_[~lab], reference.predict(X[~lab]))
    np.testing.assert_array_equal(model.transduction_[lab], y[lab])


@pytest.mark.parametrize("name", [n for n in CASES
                                  if n not in ("MultipleKernelSVC", "RhoTSVM", "SDPRelaxedTSVM")])
def test_guard_sees_a_strictly_worse_fit(name):
    # the fallback above is no tie: the labeled-only CV ranks the published fit lower (the
    # rho-TSVM and the SDP relaxation tie on accuracy and lose on the margins; for
    # MultipleKernelSVC no problem tried -- clouds, shifted gap, moons cut across, interleaved
    # classes -- made its labeled-block SVM differ from SVC on held-out rows: a tie, which
    # the guard also sends to the counterpart)
    model, *_ = fitted(name, "worse", "cv")
    assert model.cv_scores_["semi_supervised"] < model.cv_scores_["supervised"]


@pytest.mark.parametrize("name", list(CASES))
def test_guard_keeps_a_helpful_fit(name):
    model, X, y, _ = fitted(name, "better", "cv")
    plain, *_ = fitted(name, "better", "none")
    assert model.fallback_ is False
    assert model.cv_scores_["semi_supervised"] > model.cv_scores_["supervised"]
    np.testing.assert_array_equal(model.transduction_, plain.transduction_)
    np.testing.assert_array_equal(model.predict(X), plain.predict(X))
    np.testing.assert_allclose(model.decision_function(X), plain.decision_function(X))


@pytest.mark.parametrize("make", [ConvexTSVM, MultipleKernelSVC, MixtureSSL, RhoTSVM,
                                  SDPRelaxedTSVM, SelfTaughtClassifier, SupervisedSelfTaught,
                                  AuxiliarySVM, S4VM])
def test_bad_fallback_names_the_parameter(make):
    X, y, _ = moons()
    with pytest.raises(ValueError, match="fallback"):
        make(fallback="bad").fit(X, y)


@pytest.mark.parametrize("name", list(CASES))
def test_fallen_back_model_pickles(name):
    model, X, *_ = fitted(name, "worse", "cv")
    assert model.fallback_ is True
    again = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(again.predict(X), model.predict(X))
    np.testing.assert_allclose(again.decision_function(X), model.decision_function(X))


def test_sstl_auto_guards_only_an_overcomplete_dictionary():
    """``SupervisedSelfTaught(fallback="auto")`` (the default): the guard where the dictionary
    has more atoms than ``X`` has features, the published fit otherwise."""
    X, y, _ = moons()                                    # two features
    small = dict(n_iter=5, max_iter=2, random_state=0)
    over = SupervisedSelfTaught(n_components=3, **small).fit(X, y)
    assert over.fallback_mode_ == "cv" and over.cv_scores_ is not None
    guarded = SupervisedSelfTaught(n_components=3, fallback="cv", **small).fit(X, y)
    np.testing.assert_array_equal(over.transduction_, guarded.transduction_)
    assert over.fallback_ is guarded.fallback_
    complete = SupervisedSelfTaught(n_components=2, **small).fit(X, y)
    plain = SupervisedSelfTaught(n_components=2, fallback="none", **small).fit(X, y)
    assert complete.fallback_mode_ == "none" and complete.cv_scores_ is None
    np.testing.assert_allclose(complete.decision_function(X), plain.decision_function(X))


def test_sstl_auto_replaces_a_fit_with_mostly_all_zero_codes():
    """``"auto"``: when the published fit codes most rows as all zeros (``beta`` far above
    the scale of ``X``), every such row would get the bias's label; ``SVC()`` on the
    labeled rows replaces it, with one warning. ``fallback="none"`` keeps the fit."""
    from semisup._validation import CollapseWarning, DegenerateFitWarning

    rng = np.random.default_rng(0)
    y_true = np.repeat([0, 1], 40)
    X = 1e-3 * (rng.normal(size=(80, 4)) + 3.0 * y_true[:, None])   # 4 features, 3 atoms
    y = np.full(80, -1)
    y[[0, 1, 2, 40, 41, 42]] = [0, 0, 0, 1, 1, 1]
    small = dict(n_components=3, n_iter=5, max_iter=2, random_state=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        auto = SupervisedSelfTaught(**small).fit(X, y)
    degenerate = [w for w in caught if issubclass(w.category, CollapseWarning)]
    assert len(degenerate) == 1 and issubclass(degenerate[0].category, DegenerateFitWarning)
    assert "SVC() replaces the fit" in str(degenerate[0].message)
    assert auto.fallback_ is True and auto.fallback_mode_ == "codes"
    svc = SVC().fit(X[y != -1], y[y != -1])
    np.testing.assert_array_equal(auto.predict(X), svc.predict(X))
    np.testing.assert_array_equal(auto.transduction_[y == -1], svc.predict(X[y == -1]))
    with pytest.warns(CollapseWarning) as record:   # the degenerate codes, and a collapse
        plain = SupervisedSelfTaught(fallback="none", **small).fit(X, y)
    assert any(issubclass(w.category, DegenerateFitWarning) and "all-zero code" in
               str(w.message) for w in record)
    assert plain.fallback_ is False and plain.zero_code_share_ > 0.5
    # on a fit with informative codes "auto" is the published fit
    ok = SupervisedSelfTaught(**small).fit(X * 1e3, y)
    assert ok.fallback_mode_ == "none" and ok.zero_code_share_ <= 0.5


def test_selftaught_without_dictionary_says_why():
    model, X, *_ = fitted("SelfTaughtClassifier", "worse", "cv")
    assert model.fallback_ is True
    with pytest.raises(AttributeError, match="fallback='none'"):
        model.transform(X)


@pytest.mark.parametrize("make", [lambda: ConvexTSVM(gamma=1.0),
                                  lambda: MixtureSSL(random_state=0)])
def test_one_vs_rest_clones_are_published_fits(make):
    # the guard judges the multi-class fit: its binary estimators must not guard again
    rng = np.random.default_rng(0)
    X = np.r_[rng.normal([0, 0], 0.5, (20, 2)), rng.normal([4, 0], 0.5, (20, 2)),
              rng.normal([0, 4], 0.5, (20, 2))]
    y = np.full(60, -1)
    y[[0, 1, 20, 21, 40, 41]] = [0, 0, 1, 1, 2, 2]
    model = make()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model._fit_plain(X, y)
    assert model.fallback == "cv"
    assert [e.fallback for e in model.estimators_] == ["none"] * 3
    assert all(e.cv_scores_ is None for e in model.estimators_)   # no guard ran


def test_auxiliary_rows_are_never_guarded():
    # auxiliary rows carry their query's label, not a true one: no fold may score on them
    X, _, truth = moons()
    auxiliary = np.arange(60) % 10 >= 2
    model = AuxiliarySVM(gamma=0.1).fit(X, truth, auxiliary=auxiliary)
    assert model.fallback_ is False and model.cv_scores_ is None
    assert model.n_auxiliary_ == 48


def test_convex_tsvm_guard_folds_use_the_loose_low_rank_tolerance(monkeypatch):
    """The folds of ConvexTSVM's guard fit the low-rank route at ``GUARD_TOL`` (the labels
    they compare barely move below it); the exact SDP route keeps the estimator's ``tol``."""
    from semisup.transductive import ctsvm

    X, y, _ = imbalanced_clouds()
    assert ConvexTSVM()._guard_fold_params(X) == {"tol": ctsvm.GUARD_TOL}
    assert ConvexTSVM(tol=0.5)._guard_fold_params(X) == {"tol": 0.5}
    assert ConvexTSVM(solver="scs")._guard_fold_params(X) == {}
    seen = []
    plain = ConvexTSVM._fit_plain

    def spy(self, X, y):
        seen.append(self.tol)
        return plain(self, X, y)

    monkeypatch.setattr(ConvexTSVM, "_fit_plain", spy)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = ConvexTSVM().fit(X, y)
    n_folds = model.cv_scores_["n_folds"]
    assert seen == [ctsvm.GUARD_TOL] * n_folds + ([] if model.fallback_ else [1e-5])


def test_guard_folds_fit_a_sample_of_the_unlabeled_rows():
    """SDPRelaxedTSVM's guard fits each fold on every labeled row and GUARD_MAX_UNLABELED
    unlabeled rows drawn once (the same rows in every fold); the final fit sees every row,
    and the sample follows random_state."""
    from semisup.transductive.rtsvm import GUARD_MAX_UNLABELED

    class Recording(SDPRelaxedTSVM):
        fits: list = []

        def _fit_plain(self, X, y):
            type(self).fits.append((X.copy(), np.asarray(y).copy()))
            return super()._fit_plain(X, y)

    X, truth = make_moons(GUARD_MAX_UNLABELED + 90, noise=0.05, random_state=1)
    y = np.full(truth.size, -1)
    for c in (0, 1):
        y[np.flatnonzero(truth == c)[:6]] = c
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = Recording(gamma=10.0, random_state=0).fit(X, y)
    folds, final = Recording.fits[:3], Recording.fits[3:]
    labeled = {tuple(r) for r in X[y >= 0]}
    samples = []
    for Xf, yf in folds:
        assert Xf.shape[0] == 12 + GUARD_MAX_UNLABELED
        assert labeled <= {tuple(r) for r in Xf}            # every labeled row is there
        assert np.count_nonzero(yf >= 0) in (8, 10)         # a fold's labels are hidden
        samples.append({tuple(r) for r in Xf} - labeled)
    assert samples[0] == samples[1] == samples[2]
    if not model.fallback_:
        assert len(final) == 1 and final[0][0].shape[0] == X.shape[0]
    Recording.fits = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        Recording(gamma=10.0, random_state=1).fit(X, y)
    assert {tuple(r) for r in Recording.fits[0][0]} - labeled != samples[0]
