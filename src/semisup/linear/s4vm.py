"""Safe semi-supervised SVM (S4VM; Li & Zhou, "Towards making unlabeled data never hurt").

The method (Li & Zhou, ICML 2011; IEEE TPAMI 2015), in three steps per binary problem:

1. **Diverse low-density separators.**  ``n_candidates`` local searches of the S3VM
   objective ``(1/2)||w||^2 + (C1/2) sum_l l(y_i f(x_i)) + (C2/2) sum_u l(y^_j f(x_j))``
   under the balance constraint ``|mean(y^) - mean(y_l)| <= balance``, each from random
   labels of the unlabeled rows, alternating an SVM fit at fixed labels with the optimal
   labels at fixed ``f`` (the paper's sampling version S4VM_s).  The label vectors are
   clustered by k-means into ``n_separators`` groups and the lowest objective of each
   group is kept: the set ``M`` of separators ``y^_1 .. y^_T``.
2. **The supervised SVM** on the labeled rows gives ``y_svm`` on the unlabeled rows.
3. **Safe labels** (the paper's max-min label assignment):
   ``max_y min_t gain(y, y^_t, y_svm) - lam * loss(y, y^_t, y_svm)`` where, were ``y^_t``
   the truth, ``gain`` counts the rows ``y`` gets right and ``y_svm`` wrong and ``loss``
   those ``y`` gets wrong and ``y_svm`` right (the gain and loss in accuracy over the SVM).
   Both are affine in ``y``, so this is the integer program ``max theta s.t. theta <=
   a_t^T y + b_t`` (its LP relaxation in the paper); ``y = y_svm`` scores 0 against every
   separator, and when the maximum is not positive (no gain can be guaranteed) the SVM's
   labels are returned.

Every SVM is L2-SVM-MFN (:func:`semisup.solvers.mfn.l2svm_mfn`, squared hinge where the
paper uses libsvm's hinge) on a feature map: ``X`` itself for ``kernel='linear'`` (dense or
sparse), for ``kernel='rbf'`` the empirical kernel map ``Phi = U S^(1/2)`` of the Gram matrix
``K = U S U^T`` of all training rows, on which a linear SVM is exactly the kernel SVM over
the training rows (representer theorem); new rows are mapped by ``k(x, X) U S^(-1/2)``.

The estimator wraps the three steps in the library's guard (``fallback="cv"``,
:mod:`semisup.safety`): step 3 is safe only when the truth is among the separators, which
share the labels' balance, so on weak features they can all be wrong alike.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted, check_random_state

from semisup._logging import (
    convergence_check,
    get_logger,
    progress,
    report_unconverged,
    verbosity,
)
from semisup._validation import (
    check_choice,
    check_int,
    check_positive,
    check_real,
    check_semi_supervised,
    check_X,
    warn_if_collapsed,
)
from semisup.base import SemiSupervisedClassifierMixin, SupervisedFallbackMixin
from semisup.linear._core import solver_threads
from semisup.losses import HingeTerms, squared_hinge
from semisup.regularizers import Ridge
from semisup.safety import check_fallback
from semisup.solvers.design import Design
from semisup.solvers.mfn import l2svm_mfn

logger = get_logger(__name__)

KERNELS = ("rbf", "linear")
ASSIGNMENTS = ("exact", "relaxed")
#: named RBF widths: scikit-learn's ``SVC()`` rule and the paper's
GAMMAS = ("scale", "mean_distance")
#: eigenvalues of the Gram matrix below this fraction of the largest are dropped from the map
EIGEN_RTOL = 1e-10


# --------------------------------------------------------------------------------------------
# the pieces of the method (no estimator state)
# --------------------------------------------------------------------------------------------


def mean_distance_gamma(X, n_pairs: int = 2000, random_state=0) -> float:
    """RBF ``gamma = 1 / (2 sigma^2)`` with ``sigma`` the mean distance between rows.

    The paper's width (``sigma`` = average distance between instances), estimated on
    ``n_pairs`` random pairs of rows.
    """
    rng = check_random_state(random_state)
    n = X.shape[0]
    if n < 2:
        return 1.0
    i, j = rng.randint(0, n, size=n_pairs), rng.randint(0, n, size=n_pairs)
    diff = X[i] - X[j]
    sq = diff.multiply(diff).sum(axis=1) if hasattr(diff, "multiply") else (diff ** 2).sum(1)
    with np.errstate(over="ignore", divide="ignore"):
        sigma = float(np.mean(np.sqrt(np.asarray(sq, dtype=np.float64))))
        gamma = 1.0 / (2.0 * sigma ** 2) if sigma > 0 else 1.0
    if not (np.isfinite(gamma) and gamma > 0):
        raise ValueError(f"the default RBF width gamma = 1 / (2 mean distance^2) is {gamma!r}: "
                         "the scale of X is extreme; rescale X or pass gamma explicitly")
    return gamma


def balance_bounds(n_unlabeled: int, positive_fraction: float, balance: float) -> tuple:
    """Fewest and most positives allowed among the unlabeled rows.

    The paper's balance constraint ``|sum_j y^_j / u - sum_i y_i / l| <= beta`` on the mean
    +1/-1 label, i.e. a positive fraction within ``beta / 2`` of the labeled one.
    """
    u = n_unlabeled
    lo = max(0, math.ceil(u * (positive_fraction - balance / 2.0) - 1e-9))
    hi = min(u, math.floor(u * (positive_fraction + balance / 2.0) + 1e-9))
    if lo > hi:  # a band narrower than one row: the nearest count
        lo = hi = min(u, max(0, round(u * positive_fraction)))
    return lo, hi


def balanced_labels(outputs_u: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """Labels minimising the loss of the outputs under ``lo <= #positives <= hi``.

    ``l(f) - l(-f)`` decreases with ``f``, so the optimum labels the ``k`` largest outputs
    positive, ``k`` the number of positive outputs clipped to ``[lo, hi]``.
    """
    k = min(max(int(np.count_nonzero(outputs_u > 0)), lo), hi)
    labels = -np.ones(outputs_u.shape[0])
    labels[np.argsort(-outputs_u, kind="stable")[:k]] = 1.0
    return labels


def gain_coefficients(separators: np.ndarray, y_svm: np.ndarray,
                      lam: float) -> tuple[np.ndarray, np.ndarray]:
    """``(A, b)`` with ``gain(y, y^_t, y_svm) - lam loss(y, y^_t, y_svm) = A[t] @ y + b[t]``.

    Taking the separator ``y^`` as the truth, per row ``gain = (1 + y y^)(1 - y_s y^) / 4``
    (``y`` right where the SVM is wrong) and ``loss = (1 - y y^)(1 + y_s y^) / 4`` (``y``
    wrong where the SVM is right), as Li & Zhou define them.  With ``y^2 = 1`` the difference is
    ``[(1 - lam)(1 - y y_s) + (1 + lam)(y - y_s) y^] / 4``: affine in ``y``, and 0 at
    ``y = y_s``.
    """
    S = np.atleast_2d(np.asarray(separators, dtype=np.float64))
    A = ((1.0 + lam) * S - (1.0 - lam) * y_svm) / 4.0
    b = np.sum((1.0 - lam) - (1.0 + lam) * S * y_svm, axis=1) / 4.0
    return A, b


def worst_case_gain(y: np.ndarray, separators: np.ndarray, y_svm: np.ndarray,
                    lam: float) -> float:
    """``min_t gain - lam loss``: rows ``y`` gets right and the SVM wrong, minus ``lam`` times
    rows ``y`` gets wrong and the SVM right, if separator ``t`` were the truth."""
    S = np.atleast_2d(separators)
    gain = np.sum((y == S) & (y_svm != S), axis=1)
    loss = np.sum((y != S) & (y_svm == S), axis=1)
    return float(np.min(gain - lam * loss))


def safe_labels(separators: np.ndarray, y_svm: np.ndarray, lam: float,
                assignment: str = "exact", time_limit: float = 60.0) -> tuple:
    """The labels of step 3: the maximiser of the worst-case gain over the SVM.

    Only the rows where some separator disagrees with the SVM enter the program (elsewhere
    any choice but ``y_svm`` loses against every separator).  ``assignment='exact'`` solves
    the integer program by HiGHS's branch and bound; ``'relaxed'`` solves the paper's LP
    relaxation and takes signs (ties to the SVM).  The program is solved by
    :func:`semisup.solvers.lp.max_min_affine_on_box`.

    Returns
    -------
    labels : ndarray
        ``y_svm`` when no positive worst-case gain is found (the fall-back).
    value : float
        The worst-case gain of ``labels`` (0 for the fall-back).
    fallback : bool
    """
    from semisup.solvers.lp import max_min_affine_on_box

    y_svm = np.asarray(y_svm, dtype=np.float64)
    S = np.atleast_2d(np.asarray(separators, dtype=np.float64))
    differ = np.flatnonzero(np.any(S != y_svm, axis=0))
    if differ.size == 0 or S.shape[0] == 0:
        return y_svm.copy(), 0.0, True
    A, b = gain_coefficients(S[:, differ], y_svm[differ], lam)
    y_d, _, optimal = max_min_affine_on_box(A, b, integer=assignment == "exact",
                                            time_limit=time_limit)
    if not optimal:
        logger.info("S4VM label step stopped at time_limit before proving optimality")
    y = y_svm.copy()
    y[differ] = np.where(y_d > 0, 1.0, np.where(y_d < 0, -1.0, y_svm[differ]))
    value = worst_case_gain(y, S, y_svm, lam)
    if value <= 0:
        return y_svm.copy(), 0.0, True
    return y, value, False


def kernel_feature_map(X, gamma: float, n_components: int | None = None) -> tuple:
    """Empirical RBF feature map ``Phi = U S^(1/2)`` of the training rows, ``K = U S U^T``.

    A linear SVM on ``Phi`` is the kernel SVM over the training rows (``Phi Phi^T = K``);
    a new row maps to ``k(x, X) @ components``.  With ``n_components`` only the leading
    eigenpairs are kept (a rank-``n_components`` kernel).

    Returns
    -------
    features : ndarray of shape (n, r)
    components : ndarray of shape (n, r)
        ``U S^(-1/2)``.
    """
    from semisup.kernels import kernel_matrix
    from semisup.prototypes.lowrank import psd_eigh

    K = kernel_matrix(X, kernel="rbf", gamma=gamma)
    n = K.shape[0]
    if n_components is None or n_components >= n:
        values, vectors = psd_eigh(K, rtol=EIGEN_RTOL)
    else:  # the leading eigenpairs only (much cheaper than all of them)
        import scipy.linalg as sla

        values, vectors = sla.eigh(K, subset_by_index=[n - n_components, n - 1])
        keep = values > EIGEN_RTOL * values[-1]
        values, vectors = values[keep], vectors[:, keep]
    root = np.sqrt(values)
    return vectors * root, vectors / root


@dataclass
class S4VMResult:
    """Outcome of one binary S4VM problem.

    Attributes
    ----------
    w : ndarray
        Weights of the final SVM (bias last): the supervised SVM for the fall-back, else an
        SVM on the labeled rows and the safe labels, all at weight ``C1``.
    w_svm : ndarray
        Weights of the supervised SVM.
    labels_u : ndarray
        The safe +1/-1 labels of the unlabeled rows.
    svm_labels_u : ndarray
        The supervised SVM's labels of the unlabeled rows.
    separators : ndarray of shape (T, u)
        Label vectors of the kept low-density separators.
    separator_objectives : ndarray of shape (T,)
    candidate_objectives : ndarray of shape (n_candidates,)
        S3VM objective at the end of each local search.
    worst_case_gain : float
        ``min_t gain - lam loss`` of ``labels_u`` (0 for the fall-back).
    fallback : bool
        Whether the SVM's labels were returned (no positive worst-case gain).
    n_iter : ndarray of int
        Alternations of each local search.
    """

    w: np.ndarray
    w_svm: np.ndarray
    labels_u: np.ndarray
    svm_labels_u: np.ndarray
    separators: np.ndarray
    separator_objectives: np.ndarray
    candidate_objectives: np.ndarray
    worst_case_gain: float
    fallback: bool
    n_iter: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))


def _s3vm_objective(w, o, y, cost) -> float:
    return 0.5 * float(w @ w) + 0.5 * float(np.sum(cost * squared_hinge(y * o)))


def local_search(A, n_labeled: int, y_l: np.ndarray, labels_u: np.ndarray, C1: float, C2: float,
                 lo: int, hi: int, max_iter: int, mfn_options: dict, w0: np.ndarray,
                 outputs0: np.ndarray) -> tuple:
    """Alternate the SVM at fixed labels and the best balanced labels at fixed ``f``.

    Both steps are exact minimisations of the S3VM objective, which therefore never
    increases; the search stops when the labels repeat (a local minimum over labels).

    Returns
    -------
    labels_u, w, objective, n_iter, converged
    """
    l = n_labeled
    cost = np.r_[np.full(l, C1), np.full(labels_u.shape[0], C2)]
    w, o = w0, outputs0
    for it in range(1, max_iter + 1):
        y = np.r_[y_l, labels_u]
        res = l2svm_mfn(A, HingeTerms(y, cost), Ridge(1.0), w0=w, outputs0=o, **mfn_options)
        w, o = res.w, res.outputs
        new = balanced_labels(o[l:], lo, hi)
        if np.array_equal(new, labels_u):
            return labels_u, w, res.objective, it, True
        labels_u = new
    return labels_u, w, _s3vm_objective(w, o, np.r_[y_l, labels_u], cost), max_iter, False


def diverse_separators(labels: np.ndarray, objectives: np.ndarray, n_separators: int,
                       seed: int) -> np.ndarray:
    """Indices of the kept separators: k-means on the label vectors, best objective per group.

    With no more distinct label vectors than ``n_separators``, each distinct one is a group.
    """
    distinct, inverse = np.unique(labels, axis=0, return_inverse=True)
    inverse = np.asarray(inverse).ravel()
    if distinct.shape[0] <= n_separators:
        groups = inverse
    else:
        from sklearn.cluster import KMeans

        groups = KMeans(n_clusters=n_separators, n_init=10, random_state=seed).fit_predict(
            labels)
    keep = [np.flatnonzero(groups == g)[np.argmin(objectives[groups == g])]
            for g in np.unique(groups)]
    return np.asarray(keep, dtype=np.int64)


def s4vm_binary(A, n_labeled: int, y_l: np.ndarray, *, C1: float, C2: float, lam: float,
                balance: float, n_candidates: int, n_separators: int, max_iter: int,
                assignment: str, seed: int, mfn_options: dict, verbose=0) -> S4VMResult:
    """One binary S4VM over a design whose ``n_labeled`` labeled rows come first.

    Parameters
    ----------
    A : Design
        Feature rows, labeled first (``y_l`` their +1/-1 labels), then the unlabeled rows.
    seed : int
        Seeds the random starts and k-means (the same seed gives the same fit).

    Returns
    -------
    S4VMResult
    """
    l = n_labeled
    u = A.n_rows - l
    svm = l2svm_mfn(A.restrict(np.arange(l)), HingeTerms(y_l, np.full(l, C1)), Ridge(1.0),
                    **mfn_options)
    if u == 0:
        empty = np.zeros((0, 0))
        return S4VMResult(w=svm.w, w_svm=svm.w, labels_u=np.zeros(0), svm_labels_u=np.zeros(0),
                          separators=empty, separator_objectives=np.zeros(0),
                          candidate_objectives=np.zeros(0), worst_case_gain=0.0,
                          fallback=True)
    o_svm = A.matvec(svm.w)
    y_svm = np.where(o_svm[l:] > 0, 1.0, -1.0)
    lo, hi = balance_bounds(u, float(np.mean(y_l > 0)), balance)
    rng = np.random.default_rng(seed)
    labels = np.empty((n_candidates, u))
    objectives = np.empty(n_candidates)
    n_iter = np.empty(n_candidates, dtype=np.int64)
    with progress(n_candidates, "S4VM local searches", verbose, "start") as bar:
        for k in range(n_candidates):
            if k == 0:  # the TSVM start: the SVM's outputs under the balance
                start = balanced_labels(o_svm[l:], lo, hi)
            else:
                start = -np.ones(u)
                start[rng.permutation(u)[:int(rng.integers(lo, hi + 1))]] = 1.0
            labels[k], _, objectives[k], n_iter[k], converged = local_search(
                A, l, y_l, start, C1, C2, lo, hi, max_iter, mfn_options, svm.w, o_svm)
            if not converged:
                report_unconverged("S4VM local search", f"{max_iter} alternations")
            bar.update()
    keep = diverse_separators(labels, objectives, n_separators, seed)
    separators = labels[keep]
    labels_u, value, fallback = safe_labels(separators, y_svm, lam, assignment)
    logger.info("S4VM: %d separators kept from %d searches; worst-case gain %.3g%s",
                keep.size, n_candidates, value, " (SVM labels kept)" if fallback else "")
    if fallback:
        w = svm.w
    else:  # the inductive use: an SVM on the labeled rows and the safe labels, both at C1
        # (at C2 the refit would overrule the safe labels it was meant to carry to new rows)
        w = l2svm_mfn(A, HingeTerms(np.r_[y_l, labels_u], np.full(l + u, C1)), Ridge(1.0),
                      w0=svm.w, outputs0=o_svm, **mfn_options).w
    return S4VMResult(w=w, w_svm=svm.w, labels_u=labels_u, svm_labels_u=y_svm,
                      separators=separators, separator_objectives=objectives[keep],
                      candidate_objectives=objectives, worst_case_gain=value,
                      fallback=fallback, n_iter=n_iter)


def claimed_scores(supervised: np.ndarray, claims: np.ndarray) -> np.ndarray:
    """One-vs-rest scores whose argmax is the class the safe binary answers claim.

    ``claims[i, k]``: binary problem ``k`` puts row ``i`` in class ``k`` (its safe label, or
    the sign of its final SVM on new rows).  The scores are the supervised SVMs' decision
    values, lowered below every claimed class's for the classes not claimed where some
    class is: a row claimed by one class gets it, a row claimed by several gets the one the
    supervised SVMs prefer among them, and a row claimed by none the supervised answer.

    The binary problems' final SVMs are not comparable across classes: a problem that fell
    back keeps the SVM of the labeled rows, the others an SVM refitted on every row, whose
    decision values have another scale; ranking them put 47.8 % of the unlabeled rows of
    ten-class USPS with 2 labels per class right, against 59.7 % for the supervised SVMs
    and 60.0 % for this rule (``benchmarks/results/s4vm_multiclass.md``).
    """
    supervised = np.asarray(supervised, dtype=np.float64)
    # per row, so that a row's scores do not depend on the other rows asked with it
    span = np.ptp(supervised, axis=1, keepdims=True) + 1.0
    lower = ~claims & claims.any(axis=1, keepdims=True)
    return supervised - span * lower


# --------------------------------------------------------------------------------------------
# the estimator
# --------------------------------------------------------------------------------------------


#: Local searches of each fold fit of the guard (``fallback="cv"``): on 48 development cells
#: (official split 3 of the SSL-book sets, draw 4 of the UCI/IDA sets, 10 and 100 labels) the
#: guard decided as with the default 100 on 46 and the guarded fit took about half the CPU
#: (``benchmarks/results/s4vm_guard.md``)
GUARD_FOLD_CANDIDATES = 30


class S4VM(SupervisedFallbackMixin, SemiSupervisedClassifierMixin, ClassifierMixin,
           BaseEstimator):
    """Safe semi-supervised SVM (S4VM): unlabeled data that never hurts the SVM's labels.

    Generates many large-margin low-density separators, keeps a diverse set of them, and
    labels the unlabeled rows so as to maximise the worst-case gain in accuracy over the
    supervised SVM, ``max_y min_t gain(y, y^_t, y_svm) - lam loss(y, y^_t, y_svm)`` (Li &
    Zhou, TPAMI 2015).  When no positive gain can be guaranteed, the SVM's labels
    are returned.  If the true labels are one of the separators and ``lam >= 1``, the
    result is never less accurate than the SVM on the unlabeled rows (the paper's
    safeness theorem).  See :mod:`semisup.linear.s4vm` for the steps.

    Parameters
    ----------
    kernel : {'rbf', 'linear'}, default='rbf'
        ``rbf`` works on the empirical kernel map of all training rows (an ``n x n`` Gram
        matrix and its eigendecomposition: ``O(n^2)`` memory, ``O(n^3)`` time, for up to a
        few thousand rows); ``linear`` on ``X`` itself (dense or sparse, any size).
    gamma : float, 'scale', 'mean_distance' or None, default='scale'
        RBF ``gamma`` in ``exp(-gamma ||x - y||^2)``.  ``'scale'``: scikit-learn's
        ``SVC()`` width, ``1 / (n_features Var(X))`` over all training rows
        (:func:`semisup.kernels.scale_gamma`), so that the supervised SVM the answer is
        guaranteed against works with the kernel of the ``SVC()`` a user would compare it
        with; ``'mean_distance'``: the paper's width, ``1 / (2 sigma^2)`` with ``sigma``
        the mean distance between training rows (the default before 0.3, see ``C1``;
        ``None``, its spelling then, still means it).
    n_components : int or None, default=100
        ``kernel='rbf'``: keep the leading ``n_components`` eigenpairs of the Gram matrix
        (a rank-``n_components`` kernel over the training rows, every SVM in its span);
        ``None`` keeps all numerically non-zero ones (the exact kernel SVMs). The default
        is the setting of ``benchmarks/results/s4vm.md``: the exact map made one fit take
        about a minute at n = 1,500 (100 local searches on an n-dimensional map).
    C1, C2 : float, default=1.0, 0.1
        Weights of the labeled and unlabeled squared-hinge terms.  The paper's values are
        100 and 0.1 (with ``gamma='mean_distance'``).  ``C1 = 1`` is ``SVC()``'s ``C``: the
        safeness of the method is relative to its own supervised SVM (step 2), and at
        ``C1 = 100`` on raw features that SVM itself is far from ``SVC()``.  Measured
        against ``SVC()`` on the labeled rows, accuracy on the unlabeled rows
        (``benchmarks/results/s4vm_defaults.md``): on development labelings of the small
        UCI and IDA sets (seeds 3 and 4, 10 and 100 labels, 64 cells) within a point of
        ``SVC()`` on 35 cells with the paper's values, 49 with ``C1 = 1``, 51 with
        ``C1 = 1`` and ``gamma='scale'`` (mean gain -0.5 -> +0.7 points); on the SSL book's
        official split 2 (16 cells) 15 -> 16, at a smaller mean gain (+10.4 -> +6.7
        points) and half the median CPU time.
    lam : float, default=3.0
        ``lambda``: weight of a loss against a gain over the SVM (the paper's value; the
        guarantee needs ``lam >= 1``).
    n_candidates : int, default=100
        Local searches (the paper's sampling size ``N``); the first starts from the SVM's
        labels (the TSVM start), the others from random balanced labels.
    n_separators : int, default=10
        Separators kept (the paper's ``T``, the number of k-means clusters).
    balance : float, default=0.1
        ``beta`` of the balance constraint ``|mean(y^_u) - mean(y_l)| <= beta`` on the
        mean +1/-1 label (the paper's value).
    assignment : {'exact', 'relaxed'}, default='exact'
        Solve the label step as the integer program (HiGHS branch and bound) or as the
        paper's LP relaxation followed by signs.
    max_iter : int, default=50
        Alternations of each local search.
    tol : float, default=1e-6
        Relative CG residual of each L2-SVM-MFN solve.
    random_state : int, RandomState or None, default=None
        Seeds the random starts and k-means; every one-vs-rest problem uses the same seed.
    verbose : int, default=0
        ``1`` logs each problem's outcome and shows a progress bar over the local searches.
    fallback : {"cv", "none"}, default="cv"
        ``"cv"``: the guard of :mod:`semisup.safety` -- 3-fold labeled-only
        cross-validation (held-out labeled rows hidden among the unlabeled ones) against
        scikit-learn's ``SVC()``; the S4VM fit is kept only when it wins the guard's margin
        test, otherwise the estimator is ``SVC()`` fitted on the labeled rows
        (``fallback_ is True``).  The folds' fits run at most ``GUARD_FOLD_CANDIDATES``
        (30) local searches.  ``"none"``: the method as published.  S4VM is safe by
        construction only when the truth is among its kept separators, and every
        separator obeys the same balance constraint: where
        the labels' balance is right but the features are weak, the separators all put
        the labeled share of rows in the minority class while the best the SVM can do is
        to predict the majority (wpbc at 100 labels: 67-75 % against ``SVC()``'s 76.5 % on
        seven of seven draws, each with a worst-case gain of 12-19 rows over its own SVM).
        On development draws (``benchmarks/results/s4vm_guard.md``) the guard raised the
        cells within a point of ``SVC()`` from 78 to 92 of 96 (UCI/IDA draws 3-5, 10 and
        100 labels) at 1.6x the median CPU, and kept 16 of 16 on the SSL book's split 2,
        where the mean gain fell from +7.3 to +5.7 points (its folds of 33 held-out rows
        missed S4VM's gain on usps, g241d and bci at 100 labels).

    Attributes
    ----------
    fallback_ : bool
        Whether the guard replaced the fit by ``SVC()`` on the labeled rows
        (``supervised_estimator_``, which then answers ``predict`` and
        ``decision_function``; of the fitted attributes below only ``classes_`` and
        ``transduction_`` are then set).
    cv_scores_ : dict or None
        The guard's result (:func:`semisup.safety.guard`); ``None`` with
        ``fallback="none"`` or when no fold existed.
    classes_ : ndarray
    transduction_ : ndarray
        Labels of the training rows.  Binary: the safe labels of the max-min step.  More
        classes (one-vs-rest): the class whose binary problem alone claims the row (its safe
        label is +1), else the supervised SVMs' choice among the claiming classes, or among
        all when none claims it (:func:`claimed_scores`).  ``predict`` and
        ``decision_function`` use the final SVMs: the supervised SVM where the answer fell
        back to it, else an SVM trained on the labeled rows and the safe labels (all at
        weight ``C1``, so that it carries the safe labels to new rows); beyond two classes
        their signs are the claims and the supervised SVMs rank the claiming classes, as
        for the training rows.
    coef_ : ndarray of shape (n_problems, n_features)
        ``kernel='linear'``: hyperplanes of the final SVMs.
    dual_coef_ : ndarray of shape (n_problems, n_train)
        ``kernel='rbf'``: the final SVMs as ``f(x) = sum_i dual_coef_i k(x, x_i) + b``.
    intercept_ : ndarray of shape (n_problems,)
    supervised_coef_, supervised_dual_coef_, supervised_intercept_ : ndarray
        Beyond two classes, the supervised SVMs of the labeled rows, as ``coef_`` /
        ``dual_coef_`` / ``intercept_`` (they rank the classes the final SVMs claim).
    gamma_ : float or None
        RBF width used.
    worst_case_gain_ : ndarray of shape (n_problems,)
        Guaranteed gain (rows) over the SVM against the kept separators (0: fall-back).
    svm_labels_kept_ : ndarray of bool
        Problems whose answer is their own SVM's (no positive worst-case gain; named
        ``fallback_`` before 0.3.0, which is now the guard's).
    fit_results_ : list of S4VMResult
    n_iter_ : ndarray of int
        L2-SVM-MFN solves of each problem (supervised SVM, local-search alternations, final
        refit).
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from semisup import S4VM
    >>> rng = np.random.default_rng(0)
    >>> X = np.r_[rng.normal(size=(30, 2)) + 3, rng.normal(size=(30, 2)) - 3]
    >>> y = np.full(60, -1)
    >>> y[[0, 1, 30, 31]] = [1, 1, 0, 0]
    >>> clf = S4VM(n_candidates=20, random_state=0).fit(X, y)
    >>> float(np.mean(clf.transduction_[:30] == 1))
    1.0
    >>> clf.predict([[3.0, 3.0], [-3.0, -3.0]]).tolist()
    [1, 0]
    """

    def __init__(self, kernel: str = "rbf", gamma: float | str = "scale",
                 n_components: int | None = 100, C1: float = 1.0,
                 C2: float = 0.1, lam: float = 3.0, n_candidates: int = 100,
                 n_separators: int = 10, balance: float = 0.1, assignment: str = "exact",
                 max_iter: int = 50, tol: float = 1e-6, random_state=None, verbose: int = 0,
                 fallback: str = "cv"):
        self.kernel = kernel
        self.gamma = gamma
        self.n_components = n_components
        self.C1 = C1
        self.C2 = C2
        self.lam = lam
        self.n_candidates = n_candidates
        self.n_separators = n_separators
        self.balance = balance
        self.assignment = assignment
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.verbose = verbose
        self.fallback = fallback

    def _validate_params(self) -> None:
        check_choice(self.kernel, "kernel", KERNELS)
        if isinstance(self.gamma, str):
            check_choice(self.gamma, "gamma", GAMMAS)
        else:
            check_real(self.gamma, "gamma", positive=True, allow_none=True)
        if self.n_components is not None:
            check_int(self.n_components, "n_components")
        check_positive(self.C1, "C1")
        check_positive(self.C2, "C2")
        check_positive(self.lam, "lam", allow_zero=True)
        check_int(self.n_candidates, "n_candidates")
        check_int(self.n_separators, "n_separators")
        check_positive(self.balance, "balance", allow_zero=True)
        check_choice(self.assignment, "assignment", ASSIGNMENTS)
        check_int(self.max_iter, "max_iter")
        check_positive(self.tol, "tol")

    def _features(self, X):
        """The feature rows of the training data (``X`` or the empirical kernel map)."""
        if self.kernel == "linear":
            self.gamma_ = None
            return X
        if self.gamma == "scale":
            from semisup.kernels import scale_gamma

            self.gamma_ = scale_gamma(X)
        elif self.gamma is None or self.gamma == "mean_distance":
            self.gamma_ = mean_distance_gamma(X)
        else:
            self.gamma_ = float(self.gamma)
        features, self._components = kernel_feature_map(X, self.gamma_, self.n_components)
        self.X_fit_ = X
        return features

    def _guard_fold_params(self, X) -> dict:
        """The guard's fold fits run ``GUARD_FOLD_CANDIDATES`` local searches at most."""
        return {"n_candidates": min(self.n_candidates, GUARD_FOLD_CANDIDATES)}

    def fit(self, X, y):
        """Fit on ``(X, y)``; rows with ``y == -1`` are the unlabeled data.

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
        # bad input and parameters fail before the guard's fold fits
        check_semi_supervised(X, y, require_unlabeled=True, estimator=self)
        self._validate_params()
        check_fallback(self.fallback)
        return self._fit_guarded(X, y)

    def _fit_plain(self, X, y):
        """S4VM as published (``fallback="none"``); see :meth:`fit`."""
        with verbosity(self.verbose), \
                convergence_check(self, {"S4VM local search": "max_iter", "mfn": "max_iter"}):
            data = check_semi_supervised(X, y, require_unlabeled=True, estimator=self)
            seed = int(check_random_state(self.random_state).randint(np.iinfo(np.int32).max))
            features = self._features(data.X)
            order = np.concatenate([data.labeled, data.unlabeled])
            # labeled rows first; dense rows copied in that order (an indexed design would
            # gather the rows again in every product)
            A = Design(features, fit_intercept=True).restrict(order) if hasattr(
                features, "tocsr") else Design(np.ascontiguousarray(features[order]))
            n_classes = data.classes.size
            positives = [1] if n_classes == 2 else list(range(n_classes))
            options = dict(C1=float(self.C1), C2=float(self.C2), lam=float(self.lam),
                           balance=float(self.balance), n_candidates=self.n_candidates,
                           n_separators=self.n_separators, max_iter=self.max_iter,
                           assignment=self.assignment, seed=seed,
                           mfn_options=dict(tol=float(self.tol)), verbose=self.verbose)
            results = []
            # the linear family's thread policy: the map has n_components + 1 columns, too
            # narrow for a BLAS thread team to pay for itself
            with solver_threads(A):
                for k in positives:
                    if n_classes > 2:
                        logger.info("S4VM: class %r vs rest", data.classes[k])
                    results.append(s4vm_binary(A, data.labeled.size, data.binary_targets(k),
                                               **options))
        W = np.vstack([r.w for r in results])
        W_svm = np.vstack([r.w_svm for r in results])
        for stale in ("coef_", "dual_coef_", "X_fit_", "supervised_coef_",
                      "supervised_dual_coef_", "supervised_intercept_"):
            # from a fit with the other kernel, or with two classes
            if stale in self.__dict__ and not (self.kernel == "rbf" and stale == "X_fit_"):
                delattr(self, stale)
        self.classes_ = data.classes
        self.n_features_in_ = data.X.shape[1]
        self.intercept_ = W[:, -1].copy()
        if self.kernel == "linear":
            self.coef_ = W[:, :-1].copy()
        else:
            self.dual_coef_ = (self._components @ W[:, :-1].T).T
        if n_classes > 2:
            self.supervised_intercept_ = W_svm[:, -1].copy()
            if self.kernel == "linear":
                self.supervised_coef_ = W_svm[:, :-1].copy()
            else:
                self.supervised_dual_coef_ = (self._components @ W_svm[:, :-1].T).T
        self.__dict__.pop("_components", None)
        self.fit_results_ = results
        self.worst_case_gain_ = np.array([r.worst_case_gain for r in results])
        self.svm_labels_kept_ = np.array([r.fallback for r in results])
        # SVM solves per problem: the supervised one, every alternation, the final refit
        self.n_iter_ = np.array([1 + int(r.n_iter.sum()) + (not r.fallback) for r in results])
        transduction = np.empty(data.X.shape[0], dtype=data.classes.dtype)
        transduction[data.labeled] = data.classes[data.y_index]
        if data.unlabeled.size:
            if n_classes == 2:
                winner = (results[0].labels_u > 0).astype(np.intp)
            else:  # one-vs-rest: the safe labels' claims (features already at hand)
                Au = A.restrict(np.arange(data.labeled.size, A.n_rows))
                supervised = np.column_stack([Au.matvec(r.w_svm) for r in results])
                claims = np.column_stack([r.labels_u > 0 for r in results])
                winner = claimed_scores(supervised, claims).argmax(axis=1)
            transduction[data.unlabeled] = data.classes[winner]
            warn_if_collapsed(self, transduction[data.unlabeled], n_classes,
                              hint="C1 / C2 / gamma are probably off for the scale of X "
                                   "(rescale X or set gamma)")
        self.transduction_ = transduction
        return self

    def decision_function(self, X) -> np.ndarray:
        """Decision values of the final SVM; beyond two classes, one column per class.

        Beyond two classes the columns are :func:`claimed_scores` of the supervised SVMs,
        the final SVMs' signs being the claims (see ``transduction_``).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            New rows.

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_classes)
            Decision values: the score of ``classes_[1]``, or one column per class.
        """
        out = self._fallback_answer(X, "decision_function")
        if out is not None:
            return out
        check_is_fitted(self, "intercept_")
        X = check_X(X, estimator=self, reset=False)
        linear = not hasattr(self, "dual_coef_")
        if linear:
            scores = np.asarray(X @ self.coef_.T) + self.intercept_
        else:
            from semisup.kernels import kernel_matrix

            K = kernel_matrix(X, self.X_fit_, kernel="rbf", gamma=self.gamma_)
            scores = K @ self.dual_coef_.T + self.intercept_
        if scores.shape[1] == 1:
            return scores[:, 0]
        if not hasattr(self, "supervised_intercept_"):  # fitted before 0.3.0: final argmax
            return scores
        supervised = np.asarray(X @ self.supervised_coef_.T) if linear \
            else K @ self.supervised_dual_coef_.T
        return claimed_scores(supervised + self.supervised_intercept_, scores > 0)

    def predict(self, X) -> np.ndarray:
        """Class of each row of ``X`` by the final SVM(s).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            New rows.

        Returns
        -------
        ndarray of shape (n_samples,)
            Predicted class labels.
        """
        out = self._fallback_answer(X, "predict")
        if out is not None:
            return out
        scores = self.decision_function(X)
        winner = (scores > 0).astype(np.intp) if scores.ndim == 1 else scores.argmax(axis=1)
        return self.classes_[winner]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
