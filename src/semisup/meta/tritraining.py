"""Tri-training (Zhou & Li 2005): three classifiers, each taught by the other two.

Zhou, Z.-H. and Li, M. "Tri-training: exploiting unlabeled data using three classifiers",
IEEE Transactions on Knowledge and Data Engineering 17(11), 2005, Section 3.  Three
classifiers are trained on bootstrap samples of the labeled set ``L``.  In each round,
classifier ``h_i`` is offered the set ``L_i`` of unlabeled rows on which the other two agree,
labeled with their common prediction, when

- the error ``e_i`` of the other two, measured on ``L`` as (rows of ``L`` both get wrong) /
  (rows of ``L`` on which they agree), went down: ``e_i < e_i'`` (``e_i'`` of the round in
  which ``h_i`` was last refined; 0.5 at the start), and
- the noise bound ``e_i |L_i| < e_i' |L_i'|`` holds with ``|L_i'| < |L_i|`` (the paper's
  condition ``0 < e_i / e_i' < |L_i'| / |L_i| < 1``); when ``|L_i|`` is too large for it but
  ``|L_i'| > e_i / (e_i' - e_i)``, ``L_i`` is subsampled to
  ``ceil(e_i' |L_i'| / e_i - 1)`` rows, which satisfies it.

``|L_i'|`` starts (the first time ``h_i`` is offered rows) at
``floor(e_i / (e_i' - e_i) + 1)``.  Refined classifiers are retrained on ``L ∪ L_i`` (``L_i``
is rebuilt every round, not accumulated); the rounds stop when no classifier changes.
Prediction is the majority vote (ties to the members' mean probability).
:func:`tri_training_round` is one round of the paper's pseudo-code on precomputed predictions.

With ``balance=True`` (as :class:`~semisup.meta.self_training.SelfTraining`'s default) two
changes keep the classes at the labeled rows' shares: each bootstrap sample is drawn within
each class (every member sees the labeled class counts), and the agreed rows are cut, at
random within each class, to the largest set whose class shares are the labeled ones (none
when a class has no agreed row) before the paper's conditions are applied to them (its
subsample is drawn in the same shares).  With two labels per class an ordinary bootstrap
gives one class four copies and another one, the pair's agreed rows pile into the first, and
the member retrained on them predicts it everywhere: on 20 Newsgroups (20 classes, dense
LSA) tri-training fell to 9 % against logistic regression's 30 %
(``benchmarks/results/tri_balance.md``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import expit
from sklearn.base import clone
from sklearn.utils import check_random_state
from sklearn.utils.metaestimators import available_if

from semisup._logging import get_logger, progress, verbosity
from semisup._validation import check_bool, warn_if_collapsed
from semisup.meta.self_training import (
    COLLAPSE_HINT,
    MetaClassifier,
    base_has,
    base_predict,
    base_scores,
    check_base,
    check_max_iter,
    class_quota,
    fit_base,
    take_rows,
    uses_unlabeled,
)

logger = get_logger(__name__)

__all__ = ["TriTraining", "TriRound", "combined_error", "tri_training_round"]


def combined_error(pred_j: np.ndarray, pred_k: np.ndarray, y: np.ndarray) -> float:
    """Error of the pair ``(h_j, h_k)`` on labeled rows, as the paper measures it.

    (rows both classify wrongly) / (rows on which they agree); 0.5 when they agree on no
    row (no evidence: the starting value, which never counts as an improvement).

    Examples
    --------
    >>> combined_error(np.array([0, 1, 1, 0]), np.array([0, 1, 0, 0]), np.array([0, 0, 1, 0]))
    0.3333333333333333
    """
    agree = pred_j == pred_k
    n = int(agree.sum())
    if n == 0:
        return 0.5
    return float(np.count_nonzero(agree & (pred_j != y)) / n)


@dataclass
class TriRound:
    """What one round decided for classifier ``h_i``.

    Attributes
    ----------
    error : float
        ``e_i``, the error of the other two classifiers on the labeled rows.
    n_agree : int
        Unlabeled rows on which the other two agree (``|L_i|`` before any subsampling;
        0 when ``e_i >= e_i'`` and ``L_i`` was not built).
    rows : ndarray of int
        Indices (into the unlabeled rows) of ``L_i`` as used (after subsampling).
    labels : ndarray of int
        Their labels (the other two's common prediction).
    update : bool
        Whether ``h_i`` is retrained on ``L ∪ L_i``.
    subsampled : bool
        Whether ``L_i`` was subsampled.
    l_prev : float
        ``|L_i'|`` after this round's initialisation (the paper sets it once, the first
        time ``e_i < e_i'``), before the update that sets it to ``|L_i|``.
    """

    error: float
    n_agree: int
    rows: np.ndarray
    labels: np.ndarray
    update: bool
    subsampled: bool
    l_prev: float


def tri_training_round(pred_labeled: np.ndarray, pred_unlabeled: np.ndarray,
                       y_labeled: np.ndarray, e_prev, l_prev, random_state=None,
                       prior: np.ndarray | None = None) -> list[TriRound]:
    """One round of tri-training's pseudo-code (Zhou & Li 2005, Section 3) for all three.

    Parameters
    ----------
    pred_labeled : ndarray of shape (3, n_labeled)
        Each classifier's predictions on the labeled rows.
    pred_unlabeled : ndarray of shape (3, n_unlabeled)
        Each classifier's predictions on the unlabeled rows.
    y_labeled : ndarray of shape (n_labeled,)
        True labels of the labeled rows.
    e_prev, l_prev : sequence of 3 floats
        ``e_i'`` and ``|L_i'|`` of each classifier (0.5 and 0 before its first update).
    random_state : int, RandomState instance or None
        Draws the subsample.
    prior : ndarray of shape (n_classes,), optional
        Class shares to keep: the agreed rows are first cut, at random within each class,
        to the largest set with these shares (none when a class with a positive share has
        no row), the paper's rule is applied to that set, and its subsample is drawn in
        the same shares.  ``None``: the paper's rule.

    Returns
    -------
    list of 3 TriRound
        The decision for each classifier; the caller applies the updates after all three
        are decided (each uses the other two of the previous round).

    Examples
    --------
    >>> y = np.array([0, 0, 1, 1])
    >>> preds_l = np.array([[0, 0, 1, 1], [0, 0, 1, 0], [0, 1, 1, 1]])
    >>> preds_u = np.array([[0, 1, 1], [0, 1, 0], [0, 1, 1]])
    >>> [(r.error, r.update) for r in tri_training_round(preds_l, preds_u, y, [.5] * 3, [0] * 3)]
    [(0.0, True), (0.0, True), (0.0, True)]
    """
    rng = check_random_state(random_state)
    out = []
    for i in range(3):
        j, k = (m for m in range(3) if m != i)
        e = combined_error(pred_labeled[j], pred_labeled[k], y_labeled)
        ep, lp = float(e_prev[i]), float(l_prev[i])
        rows = np.empty(0, dtype=np.int64)
        update = subsampled = False
        n_agree = 0
        if e < ep:
            rows = np.flatnonzero(pred_unlabeled[j] == pred_unlabeled[k])
            n_agree = rows.size
            if prior is not None:
                rows = _balanced(rows, pred_unlabeled[j][rows], prior, rng)
            if lp == 0:  # h_i never refined: the paper's starting |L_i'|
                lp = float(math.floor(e / (ep - e) + 1))
            if lp < rows.size:
                if e * rows.size < ep * lp:
                    update = True
                elif lp > e / (ep - e):
                    keep = math.ceil(ep * lp / e - 1)
                    rows = (np.sort(rng.choice(rows, keep, replace=False)) if prior is None
                            else _balanced(rows, pred_unlabeled[j][rows], prior, rng, keep))
                    update = subsampled = True
        labels = pred_unlabeled[j][rows]
        if not update:
            rows, labels = rows[:0], labels[:0]
        out.append(TriRound(error=e, n_agree=n_agree, rows=rows, labels=labels,
                            update=update, subsampled=subsampled, l_prev=lp))
    return out


def _balanced(rows: np.ndarray, labels: np.ndarray, prior: np.ndarray, rng,
              total: int | None = None) -> np.ndarray:
    """Rows drawn at random within each class so that the class shares are ``prior``.

    ``total=None``: the largest such subset of ``rows`` (:func:`class_quota`; empty when a
    class of positive share has no row).  Else at most ``total`` rows: ``floor(prior *
    total)`` per class, the rest to the largest remainders (the paper's subsample, drawn
    per class).
    """
    sizes = np.bincount(labels, minlength=prior.size)
    if total is None:
        scale = float(np.min(sizes[prior > 0] / prior[prior > 0]))
        if scale == 0.0:
            return rows[:0]
        quota = np.minimum(class_quota(prior, scale), sizes)
    else:
        share = prior * total
        quota = np.minimum(np.floor(share).astype(np.int64), sizes)
        for c in np.argsort(np.floor(share) - share, kind="stable"):
            if quota.sum() >= total:
                break
            quota[c] += quota[c] < sizes[c]
    keep = [rng.permutation(np.flatnonzero(labels == c))[:q] for c, q in enumerate(quota)]
    return np.sort(rows[np.concatenate(keep).astype(np.int64)])


def _bootstrap(y_index: np.ndarray, n_classes: int, rng, stratified: bool = False
               ) -> np.ndarray:
    """A bootstrap sample of the labeled rows that holds every class (redrawn until it
    does; a classifier cannot be fitted on one class); ``stratified``: drawn within each
    class, so that the class counts are the labeled ones."""
    n = y_index.size
    for _ in range(0 if stratified else 1000):
        sample = rng.randint(0, n, n)
        if np.unique(y_index[sample]).size == n_classes:
            return sample
    # stratified, or pathological class sizes: a bootstrap within each class
    return np.concatenate([rng.choice(np.flatnonzero(y_index == c), np.sum(y_index == c))
                           for c in range(n_classes)])


class TriTraining(MetaClassifier):
    """Tri-training (Zhou & Li 2005): three classifiers refine each other; majority vote.

    Three clones of ``estimator`` are fitted on bootstrap samples of the labeled rows;
    each round, each is retrained on the labeled rows plus the unlabeled rows on which the
    other two agree, when the paper's error-rate conditions say the added label noise is
    outweighed by the added rows (see the module docstring and
    :func:`tri_training_round`).  The rounds stop when no classifier changes.  Works with
    any classifier, many classes, and needs no views.

    Parameters
    ----------
    estimator : classifier or None, default=None
        The classifier to wrap (cloned three times). ``None`` means scikit-learn's
        ``LogisticRegression()``. A semi-supervised one (semisup,
        ``sklearn.semi_supervised``) also sees the rows not in its training set as -1.
    max_iter : int or None, default=30
        Most rounds (the paper has no limit; rounds stop when no classifier changes).
    balance : bool, default=False
        Keep the classes at the labeled rows' shares: bootstrap samples drawn within each
        class, and the rows offered to each classifier cut to those shares (module
        docstring).  ``False``: the paper's bootstrap and rule.  Measured on development
        draws (``benchmarks/results/tri_balance.md``, 29 cells: seven multi-class sets with
        2 labels per class, eleven sets at 10 and 100 labels): alone (``fallback="none"``)
        ``balance=True`` is within a point of logistic regression on 22 cells against 20, at
        a mean of +0.2 against -1.8 points and a worst cell of -6.8 against -21.1 (20
        Newsgroups: 23.5 against 9.2 %, logistic regression 30.3 %); under the guard
        (``fallback="cv"``) the paper's rule keeps more cells within a point, 28 against 25
        (it fails so plainly where it fails that the guard sees it), at a mean of -0.4
        against -0.1 points and a worst cell of -13.4 against -6.1.  So the default is the
        paper's; ``True`` is the safer method without the guard, and has the smaller worst
        case with it.
    random_state : int, RandomState instance or None, default=None
        Seeds the bootstrap samples and the subsampling, and the folds of ``fallback="cv"``.
    fallback : {"cv", "none"}, default="cv"
        ``"cv"``: keep the pseudo-labels only when labeled-only cross-validation says they
        help (:meth:`semisup.meta.self_training.MetaClassifier._fit_guarded`), else return
        ``estimator`` fitted on the labeled rows (``fallback_ is True``); ``"none"``: the
        method (with ``balance=False``, the default, as published).  Measured on official
        split 2 of the SSL-book sets (10 and 100 labels): cells within 1 point of
        LogisticRegression 12 of 16 unguarded, 16 of 16 guarded
        (``benchmarks/results/defaults_round3.md``).
    verbose : int, default=0
        Log each round (``1``) through the ``semisup`` logger, with a progress bar.

    Attributes
    ----------
    estimators_ : list of 3 classifiers
        The refined classifiers (fitted on class indices ``0 .. n_classes - 1``).
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    transduction_ : ndarray of shape (n_samples,)
        Labels of the training rows: given labels, majority vote for the unlabeled rows.
    history_ : list of list of TriRound
        Each round's decision for each classifier (errors, ``|L_i|``, updates).
    errors_ : ndarray of shape (3,)
        ``e_i'`` of each classifier at the end.
    n_iter_ : int
        Rounds run.
    termination_condition_ : {"no_change", "max_iter"}
        Why the rounds stopped.
    n_features_in_ : int
        Number of features seen in ``fit``.
    fallback_ : bool
        Whether the labeled-only CV chose ``estimator`` alone, fitted on the labeled rows
        (``supervised_estimator_``; then ``n_iter_ == 0`` and ``termination_condition_ ==
        "supervised_fallback"``).
    cv_scores_ : dict or None
        Mean held-out accuracy of the wrapper and of ``estimator`` alone, and the number
        of folds (None without CV).

    Examples
    --------
    >>> import numpy as np
    >>> from semisup.meta.tritraining import TriTraining
    >>> rng = np.random.default_rng(0)
    >>> y_true = np.repeat([0, 1], 100)
    >>> X = rng.normal(size=(200, 2)) + 2.0 * (2 * y_true[:, None] - 1)
    >>> y = np.full(200, -1)
    >>> y[[0, 1, 2, 100, 101, 102]] = 0, 0, 0, 1, 1, 1
    >>> model = TriTraining(random_state=0).fit(X, y)
    >>> float(np.mean(model.transduction_ == y_true)) > 0.95
    True
    """

    def __init__(self, estimator=None, *, max_iter: int | None = 30, balance: bool = False,
                 random_state=None, fallback: str = "cv", verbose: int = 0):
        self.estimator = estimator
        self.balance = balance
        self.fallback = fallback
        self.max_iter = max_iter
        self.random_state = random_state
        self.verbose = verbose

    def fit(self, X, y) -> TriTraining:
        """Fit by tri-training on ``(X, y)``; rows with ``y == -1`` are the unlabeled data.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Training rows, labeled and unlabeled.
        y : array-like of shape (n_samples,)
            Class labels, ``-1`` for unlabeled rows.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        with verbosity(self.verbose), self._fit_threads(X):
            self._fit_guarded(X, y)
        return self

    def _fit(self, X, y) -> None:
        data, codes = self._validate_fit(X, y)
        base = check_base(self._base(), type(self).__name__)
        max_iter = check_max_iter(self.max_iter)
        rng = check_random_state(self.random_state)
        X = data.X
        k = self.classes_.size
        semi = uses_unlabeled(base)
        L, U = data.labeled, data.unlabeled
        X_L, X_U = take_rows(X, L), take_rows(X, U)
        y_L = data.y_index

        def train(rows: np.ndarray, labels: np.ndarray):
            # rows may repeat (bootstrap); a semisup estimator also sees every other row
            # as unlabeled (-1)
            if semi:
                extra = np.setdiff1d(np.arange(codes.size), rows)
                rows = np.concatenate([rows, extra])
                labels = np.concatenate([labels, np.full(extra.size, -1)])
            return fit_base(clone(base), take_rows(X, rows), labels, semi=True)

        balance = check_bool(self.balance, "balance")
        prior = np.bincount(y_L, minlength=k) / y_L.size if balance else None
        members = [train(L[s], y_L[s])
                   for s in (_bootstrap(y_L, k, rng, stratified=balance) for _ in range(3))]
        e_prev, l_prev = [0.5] * 3, [0.0] * 3
        history, it, condition = [], 0, "no_change"
        limit = np.inf if max_iter is None else max_iter
        name = type(self).__name__
        with progress(max_iter, name, self.verbose, "round") as bar:
            while it < limit:
                it += 1
                pl = np.array([base_predict(m, X_L) for m in members])
                pu = np.array([base_predict(m, X_U) for m in members]) if U.size \
                    else np.empty((3, 0), dtype=np.int64)
                decisions = tri_training_round(pl, pu, y_L, e_prev, l_prev, rng, prior)
                history.append(decisions)
                bar.update()
                for i, d in enumerate(decisions):
                    l_prev[i] = d.l_prev
                    if d.update:
                        members[i] = train(np.concatenate([L, U[d.rows]]),
                                           np.concatenate([y_L, d.labels]))
                        e_prev[i], l_prev[i] = d.error, float(d.rows.size)
                logger.info("%s: round %d, errors %s, |L_i| %s, updated %s", name, it,
                            [round(d.error, 4) for d in decisions],
                            [d.rows.size for d in decisions], [d.update for d in decisions])
                if not any(d.update for d in decisions):
                    condition = "no_change"
                    break
            else:
                condition = "max_iter"
        self.estimators_ = members
        self.history_ = history
        self.errors_ = np.array(e_prev)
        self.n_iter_ = it
        self.termination_condition_ = condition
        predicted = self._vote(X_U).argmax(axis=1) if U.size else None
        self._finish(data, codes, predicted)
        warn_if_collapsed(self, self.transduction_[data.unlabeled], k, hint=COLLAPSE_HINT)

    def _vote(self, X) -> np.ndarray:
        """Votes per class plus a tie-break in [0, 1): ``(n, n_classes)``.

        The tie-break is the members' mean probability (or, without ``predict_proba``, the
        logistic of their mean decision value; else half a vote for the first member). A
        class's tie-break is below one and a class voted for by fewer members cannot gain
        a whole vote on one voted for by more, so the arg max is the majority vote and a
        tie goes to the class the members find most likely.
        """
        k = self.classes_.size
        n = X.shape[0]
        votes = np.zeros((n, k))
        for m in self.estimators_:
            votes[np.arange(n), base_predict(m, X)] += 1.0
        first = self.estimators_[0]
        if hasattr(first, "predict_proba"):
            tie = np.mean([base_scores(m, X, k) for m in self.estimators_], axis=0)
        elif hasattr(first, "decision_function"):
            tie = expit(np.mean([base_scores(m, X, k, "decision_function")
                                 for m in self.estimators_], axis=0))
        else:
            tie = np.zeros((n, k))
            tie[np.arange(n), base_predict(first, X)] = 0.5
        return votes + tie

    def predict(self, X) -> np.ndarray:
        """Majority vote of the three classifiers.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            New rows.

        Returns
        -------
        ndarray of shape (n_samples,)
            Predicted class labels.
        """
        out = self._fallback_output(X, "predict")
        if out is not None:
            return out
        X = self._check_predict_X(X)
        return self.classes_[self._vote(X).argmax(axis=1)]

    @available_if(base_has("predict_proba"))
    def predict_proba(self, X) -> np.ndarray:
        """Vote fractions smoothed by the members' mean probability.

        ``(votes + mean probability) / 4``, whose arg max is the majority vote
        (:meth:`predict`).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            New rows.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Class probabilities, columns in the order of ``classes_``.
        """
        out = self._fallback_output(X, "predict_proba")
        if out is not None:
            return out
        X = self._check_predict_X(X)
        return self._vote(X) / 4.0

    @available_if(base_has("decision_function"))
    def decision_function(self, X) -> np.ndarray:
        """Compute the votes plus the tie-break of :meth:`predict`.

        The arg max is the vote; for two classes the 1-D margin of ``classes_[1]`` over
        ``classes_[0]``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            New rows.

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_classes)
            Decision values: the score of ``classes_[1]``, or one column per class.
        """
        out = self._fallback_output(X, "decision_function")
        if out is not None:
            return out
        X = self._check_predict_X(X)
        s = self._vote(X)
        return s[:, 1] - s[:, 0] if s.shape[1] == 2 else s
