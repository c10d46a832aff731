"""Transductive SVM with multiple label switching (section 3.1 of the SVMlin paper)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from semisup._logging import get_logger, progress, report_unconverged
from semisup.linear._s3vm import SemiSupervisedLinearSVM
from semisup.losses import HingeTerms, split_sample_weight, transductive_objective
from semisup.regularizers import Ridge
from semisup.solvers.mfn import l2svm_mfn

logger = get_logger(__name__)


def initial_labels(outputs_u: np.ndarray, positive_fraction: float) -> np.ndarray:
    """Threshold the outputs so that a fraction ``r`` of the unlabeled rows is positive."""
    u = outputs_u.shape[0]
    n_pos = int(round(positive_fraction * u))
    labels = -np.ones(u)
    labels[np.argsort(-outputs_u, kind="stable")[:n_pos]] = 1.0
    return labels


_FIRST_PAIRS = 1024  # candidates of each list ordered first by switch_labels


def switch_labels(outputs_u: np.ndarray, labels_u: np.ndarray, max_switches: int | None) -> int:
    """Switch up to ``S`` pairs of temporary labels that lower the objective (section 3.1.2).

    ``L+``: active positives (output < 1) in ascending order of output; ``L-``: active
    negatives (output > -1) in descending order.  Pairs are taken from the top of both
    lists while the positive's output is below the negative's: for the squared hinge,
    switching such a pair strictly lowers the objective at fixed ``w``.  The number of
    positives, hence the balance constraint, is unchanged.  ``labels_u`` is modified in
    place.

    Returns
    -------
    int
        Number of pairs switched.
    """
    pos = np.flatnonzero((labels_u > 0) & (outputs_u < 1.0))
    neg = np.flatnonzero((labels_u < 0) & (outputs_u > -1.0))
    k = min(pos.size, neg.size)
    if max_switches is not None:
        k = min(k, int(max_switches))
    if k == 0:
        return 0
    # the switching pairs are a prefix of both orders (the condition is monotone), usually a
    # short one: order only the first k0 of each list, and widen while every pair switches
    k0 = min(k, _FIRST_PAIRS)
    while True:
        p = pos[smallest(outputs_u[pos], k0)]
        q = neg[smallest(-outputs_u[neg], k0)]
        n = int(np.count_nonzero(outputs_u[p] < outputs_u[q]))
        if n < k0 or k0 == k:
            break
        k0 = min(k, 4 * k0)
    labels_u[p[:n]] = -1.0
    labels_u[q[:n]] = 1.0
    return n


def smallest(values: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` smallest values, ascending, ties by index.

    Equals ``np.argsort(values, kind="stable")[:k]`` in ``O(n + k log k)``: a partition
    finds the ``k``-th value, and only the candidates up to it are sorted.
    """
    if k >= values.size:
        return np.argsort(values, kind="stable")[:k]
    if k <= 0:
        return np.empty(0, dtype=np.intp)
    kth = np.partition(values, k - 1)[k - 1]
    candidates = np.flatnonzero(values <= kth)  # in index order: a stable sort keeps ties so
    return candidates[np.argsort(values[candidates], kind="stable")[:k]]


@dataclass
class TSVMResult:
    """Outcome of :func:`transductive_svm`.

    Attributes
    ----------
    w : ndarray
        Final weights.
    labels_u : ndarray
        Final temporary labels of the unlabeled rows.
    objective : float
        Transductive objective at ``lam_u`` (section 3.2.3).
    n_iter : int
        Number of retrainings (l2-SVM-MFN calls).
    n_switches : int
        Pairs switched in total.
    n_cg_iter : int
        CGLS iterations in total.
    history : list of dict
        One entry per retraining: ``lam_u`` in force, objective at the fixed labels,
        pairs switched just before.
    """

    w: np.ndarray
    labels_u: np.ndarray
    objective: float
    n_iter: int
    n_switches: int
    n_cg_iter: int
    history: list = field(default_factory=list)


def transductive_svm(A, n_labeled: int, y_l: np.ndarray, lam: float, lam_u: float,
                     positive_fraction: float, max_switches: int | None = None,
                     lam_u_init: float = 1e-5, lam_u_growth: float = 1.5,
                     mfn_options: dict | None = None, max_rounds: int = 100_000,
                     reg=None, verbose: int = 0,
                     sample_weight: np.ndarray | None = None) -> TSVMResult:
    """Transductive L2-SVM-MFN with multiple switching.

    Parameters
    ----------
    A : Design
        Rows: the ``n_labeled`` labeled rows first, then the unlabeled rows.
    n_labeled : int
    y_l : ndarray
        ``+1/-1`` labels of the labeled rows.
    lam, lam_u : float
        ``lambda`` and ``lambda'`` of the TSVM objective.
    positive_fraction : float
        ``r``, the fraction of unlabeled rows labeled positive.
    max_switches : int or None
        ``S``, pairs switched per round; ``1`` is Joachims' TSVM, ``None`` as many as
        improve the objective.
    lam_u_init, lam_u_growth : float
        ``lambda'`` starts at ``min(lam_u_init, lam_u)`` and is multiplied by
        ``lam_u_growth`` after each round of switching until it reaches ``lam_u``.
    mfn_options : dict
        Passed to :func:`semisup.solvers.mfn.l2svm_mfn`.
    max_rounds : int
        Safety bound on switching rounds per value of ``lambda'``.
    reg : regulariser, optional
        ``R`` of the objective; ``Ridge(lam)`` by default, a
        :class:`semisup.regularizers.GraphRidge` adds a graph term.
    verbose : int
        A progress bar over the ``lam_u'`` stages; per-round lines at DEBUG level of the
        ``semisup.linear.tsvm`` logger.
    sample_weight : ndarray, optional
        Row weights (labeled rows first): the means of the objective become weighted means
        (:func:`semisup.losses.split_sample_weight`).  Label switching keeps the paper's
        rule (exact for equal weights of the switched pair) and the balance constraint
        counts rows.
    """
    opts = dict(mfn_options or {})
    l = n_labeled
    u = A.n_rows - l
    reg = Ridge(lam) if reg is None else reg
    weights = split_sample_weight(sample_weight, l, u)
    c_l, v_u = (np.full(l, 1.0 / l), np.full(u, 1.0 / max(u, 1))) if weights is None \
        else weights
    sup = l2svm_mfn(A.restrict(np.arange(l)), HingeTerms(y_l, c_l), reg, **opts)
    w = sup.w
    o = A.matvec(w)
    if u == 0:
        return TSVMResult(w=w, labels_u=np.empty(0), objective=sup.objective, n_iter=1,
                          n_switches=0, n_cg_iter=sup.n_cg_iter, history=[])
    labels_u = initial_labels(o[l:], positive_fraction)
    y = np.concatenate([y_l, labels_u])
    cost = np.empty(l + u)
    cost[:l] = c_l
    lam_cur = min(lam_u_init, lam_u)
    history = []
    n_fits, n_switches, n_cg = 1, 0, sup.n_cg_iter
    switched = 0
    n_stages, stage_lam = 1, lam_cur
    while stage_lam < lam_u:
        stage_lam, n_stages = min(stage_lam * lam_u_growth, lam_u), n_stages + 1
    bar = progress(n_stages, "TSVM lam_u stages", verbose, "stage")
    while True:
        cost[l:] = lam_cur * v_u
        for _ in range(max_rounds):
            res = l2svm_mfn(A, HingeTerms(y, cost), reg, w0=w, outputs0=o, **opts)
            w, o = res.w, res.outputs
            n_fits += 1
            n_cg += res.n_cg_iter
            history.append({"lam_u": lam_cur, "objective": res.objective, "switched": switched})
            switched = switch_labels(o[l:], y[l:], max_switches)
            n_switches += switched
            logger.debug("TSVM lam_u'=%.3g objective=%.8g switched=%d", lam_cur,
                         res.objective, switched)
            if switched == 0:
                break
        else:
            report_unconverged("label switching", f"{max_rounds} rounds at "
                                                  f"lam_u'={lam_cur:.3g}")
        bar.update()
        if lam_cur >= lam_u:
            break
        lam_cur = min(lam_cur * lam_u_growth, lam_u)
    bar.close()
    objective = transductive_objective(reg.value(w), o[:l], y_l, o[l:], lam_u, weights)
    logger.info("TSVM: %d stages, %d retrainings, %d pairs switched, %d CG iterations, "
                "objective %.8g", n_stages, n_fits, n_switches, n_cg, objective)
    return TSVMResult(w=w, labels_u=y[l:].copy(), objective=objective, n_iter=n_fits,
                      n_switches=n_switches, n_cg_iter=n_cg, history=history)


class TransductiveSVM(SemiSupervisedLinearSVM):
    """Linear transductive SVM with multiple switching (TSVM, SVMlin's ``-A 2``).

    Minimises over ``w`` and the labels ``y'`` of the unlabeled rows

    ``(lam/2)||w||^2 + (1/2l) sum_i l_2(y_i w^T x_i) + (lam_u/2u) sum_j l_2(y'_j w^T x'_j)``

    subject to a fraction ``positive_fraction`` of unlabeled rows being positive, by
    Joachims' label-switching scheme on top of L2-SVM-MFN (Sindhwani & Keerthi, 2006,
    section 3.1), switching up to ``max_switches`` pairs per round and raising
    ``lam_u'`` from ``lam_u_init`` to ``lam_u`` by ``lam_u_growth``.

    Parameters
    ----------
    lam : float, default=1e-3
        ``lambda`` (the paper's experiments use 0.001; SVMlin ``-W``).
    lam_u : float, default=1.0
        ``lambda'``, weight of the unlabeled rows (SVMlin ``-U``).
    positive_fraction : float or None, default=None
        ``r`` (SVMlin ``-R``); ``None`` takes the positive fraction of the labeled rows.
    max_switches : int or None, default=None
        ``S`` (SVMlin ``-S``); ``1`` recovers Joachims' single switching, ``None`` is
        ``S = max``.
    lam_u_init : float, default=1e-5
    lam_u_growth : float, default=1.5
    gamma_I : float, default=0.0
        Weight of a graph (manifold) regulariser ``(gamma_I / 2n^2) (Xw)^T L (Xw)`` added to
        the objective; 0 is the paper's method.
    graph : sparse matrix of shape (n_samples, n_samples), optional
        Adjacency for the graph term (e.g. ``semisup.graph.adjacency_graph(X, 10,
        metric='cosine')`` for text); a 10-NN heat-kernel graph when omitted.
    fit_intercept, intercept_scaling, tol, max_iter, max_cg_iter, verbose, probability :
        As :class:`L2SVM`; ``verbose=1`` shows a progress bar (elapsed time) over the
        annealing loop.

    Attributes
    ----------
    coef_, intercept_, classes_ : fitted hyperplane(s).
    transduction_ : ndarray
        Labels of the training rows (given for labeled rows, predicted for unlabeled).
    objective_ : float or ndarray
        Transductive objective at ``lam_u``.
    fit_results_ : list of TSVMResult
        Rounds, switches, CG iterations and per-round objective history.
    """

    def __init__(self, lam: float = 1e-3, lam_u: float = 1.0,
                 positive_fraction: float | None = None, max_switches: int | None = None,
                 lam_u_init: float = 1e-5, lam_u_growth: float = 1.5, gamma_I: float = 0.0,
                 graph=None, fit_intercept: bool = True,
                 intercept_scaling: float = 1.0, tol: float = 1e-6, max_iter: int = 50,
                 max_cg_iter: int = 10_000, verbose: int = 0,
                 probability: bool = False):
        self.lam = lam
        self.lam_u = lam_u
        self.positive_fraction = positive_fraction
        self.max_switches = max_switches
        self.lam_u_init = lam_u_init
        self.lam_u_growth = lam_u_growth
        self.gamma_I = gamma_I
        self.graph = graph
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.tol = tol
        self.max_iter = max_iter
        self.max_cg_iter = max_cg_iter
        self.verbose = verbose
        self.probability = probability

    def _validate_params(self) -> None:
        super()._validate_params()
        if self.max_switches is not None and (
                not isinstance(self.max_switches, (int, np.integer)) or self.max_switches < 1):
            raise ValueError(f"max_switches must be a positive integer or None (S = max), got "
                             f"{self.max_switches!r}")
        if not self.lam_u_growth > 1:
            raise ValueError(f"lam_u_growth must be > 1, got {self.lam_u_growth!r}")

    _algorithm = staticmethod(transductive_svm)

    def _algorithm_options(self) -> dict:
        return dict(max_switches=self.max_switches, lam_u_init=self.lam_u_init,
                    lam_u_growth=self.lam_u_growth)
