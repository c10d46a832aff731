"""The semi-supervised linear SVMs of SVMlin as algorithms over a design matrix.

* :func:`transductive_svm` -- transductive L2-SVM with multiple label switching (section 3.1
  of Sindhwani & Keerthi 2006);
* :func:`deterministic_annealing` -- deterministic annealing (section 3.2).

They know nothing about estimators (:class:`semisup.TransductiveSVM` and
:class:`semisup.DeterministicAnnealingSVM` wrap them) and import neither scikit-learn nor
scipy.special, so that the command line starts fast.

The outer loops (:func:`transductive_svm_rows`, :func:`deterministic_annealing_rows`) reach
the rows only through a row object: :class:`LocalS3VMRows` here, one whose rows live on
the workers of a cluster in :mod:`semisup.distributed` -- the same loops on both.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from semisup._accel import njit, use_compiled_vectors
from semisup._logging import get_logger, progress, report_unconverged
from semisup.losses import HingeTerms, split_sample_weight, squared_hinge, transductive_objective
from semisup.regularizers import Ridge
from semisup.solvers.mfn import MFNResult, l2svm_mfn
from semisup.solvers.roots import safeguarded_newton

logger = get_logger(__name__)


def _expit(x: np.ndarray) -> np.ndarray:
    """``1 / (1 + exp(-x))`` without overflow (scipy.special.expit, without its import)."""
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0, e) / (1.0 + e)


def _xlogx(p: np.ndarray) -> np.ndarray:
    """``p log p`` with ``0 log 0 = 0``."""
    return p * np.log(np.where(p > 0, p, 1.0))


def _rel_entr(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``x log(x / y)``: 0 where ``x = 0``, ``inf`` where ``x > 0 = y``."""
    pos = x > 0
    with np.errstate(divide="ignore"):
        return np.where(pos, x * np.log(np.where(pos, x, 1.0) / np.where(pos, y, 1.0)), 0.0)


# DA's per-row statistics in fused passes.  As numpy expressions the p-step (gains, three or
# four balance evaluations, the beliefs), the entropy, the KL divergence and the objectives
# cost about 10 ms per (p, w) iteration on SecStr's 82,679 unlabeled rows, mostly in fresh
# temporaries.  Same formulas as the numpy functions below (which stay the reference, and
# the path for small problems), up to round-off (order of the sums, ``log p - log q`` for
# ``log(p / q)``).  The exponentials and
# logarithms stay numpy's, into buffers kept between calls: numpy's are vectorised, and a
# libm call per row in a compiled loop took 6-8x as long.
@njit(cache=True, nogil=True)
def _da_gains(o, l, lam_u, scale, g):
    """``g_j = lam_u [l_2(o_j) - l_2(-o_j)]`` (times ``scale_j`` when given) into ``g``;
    returns ``(min g, max g)``."""
    scaled = scale.shape[0] > 0
    g_min = np.inf
    g_max = -np.inf
    for j in range(g.shape[0]):
        z = o[l + j]
        a = max(0.0, 1.0 - z)
        b = max(0.0, 1.0 + z)
        v = lam_u * (a * a - b * b)
        if scaled:
            v = v * scale[j]
        g[j] = v
        g_min = min(g_min, v)
        g_max = max(g_max, v)
    return g_min, g_max


@njit(cache=True, nogil=True)
def _da_balance(x, e):
    """``(mean p, mean p (1 - p))`` for ``p = expit(x)`` given ``e = exp(-|x|)`` (eq. 9)."""
    sp = 0.0
    spq = 0.0
    for j in range(x.shape[0]):
        p = (1.0 if x[j] >= 0 else e[j]) / (1.0 + e[j])
        sp += p
        spq += p * (1.0 - p)
    n = x.shape[0]
    return sp / n, spq / n


@njit(cache=True, nogil=True)
def _da_beliefs(x, e, p):
    """Beliefs ``p = expit(x)`` into ``p`` given ``e = exp(-|x|)`` (as :func:`_expit`)."""
    for j in range(x.shape[0]):
        p[j] = (1.0 if x[j] >= 0 else e[j]) / (1.0 + e[j])


@njit(cache=True, nogil=True)
def _da_entropy_kl(p, log_p, log_1p, q, log_q, log_1q):
    """``(H(p), KL(p, q))`` from the beliefs and their logarithms (``log(1 - p)`` of the
    rounded ``1 - p``, as :func:`binary_entropy`).  ``0 log 0 = 0`` and the infinite KL of a
    belief that leaves an exact 0 or 1 are those of :func:`binary_entropy` and
    :func:`binary_kl`; the logarithms of ``q`` are those of the previous p-step."""
    h = 0.0
    kl = 0.0
    for j in range(p.shape[0]):
        pj = p[j]
        qj = q[j]
        if pj > 0.0:
            h -= pj * log_p[j]
            kl += pj * (log_p[j] - log_q[j]) if qj > 0.0 else np.inf
        rj = 1.0 - pj
        if rj > 0.0:
            h -= rj * log_1p[j]
            kl += rj * (log_1p[j] - log_1q[j]) if 1.0 - qj > 0.0 else np.inf
    return h, kl


@njit(cache=True, nogil=True)
def _order_statistics(g, k, g_min, g_max):
    """The ``k``-th and ``(k+1)``-th smallest entries of ``g`` (0-based, ``k + 1 < n``).

    Exact, in two passes instead of a partition (which took longer than the rest of a
    p-step): a histogram of the values over ``[g_min, g_max]`` locates the bins holding
    both ranks (the bin index is non-decreasing in the value, so every entry of an earlier
    bin is smaller), and only the entries of those bins are sorted.
    """
    n_bins = 1024
    width = g_max - g_min
    if not width > 0.0:
        return g_min, g_min
    scale = n_bins / width
    counts = np.zeros(n_bins, dtype=np.int64)
    for j in range(g.shape[0]):
        counts[min(int((g[j] - g_min) * scale), n_bins - 1)] += 1
    before = 0    # entries in the bins ahead of ``lo``
    lo = -1
    hi = n_bins - 1
    cum = 0
    for b in range(n_bins):
        if lo < 0 and cum + counts[b] > k:
            lo = b
            before = cum
        if cum + counts[b] > k + 1:
            hi = b
            break
        cum += counts[b]
    m = 0
    for b in range(lo, hi + 1):
        m += counts[b]
    cand = np.empty(m)
    i = 0
    for j in range(g.shape[0]):
        b = min(int((g[j] - g_min) * scale), n_bins - 1)
        # one comparison, false for nearly every entry: ``lo <= b`` alone is a coin toss
        # for a middle rank, and its mispredicted branches cost more than the rest
        if abs(2 * b - lo - hi) <= hi - lo:
            cand[i] = g[j]
            i += 1
    cand.sort()
    return cand[k - before], cand[k + 1 - before]


def _quantile(g: np.ndarray, q: float, g_min: float, g_max: float) -> float:
    """``np.quantile(g, q)`` (its default, linear method, to the last bit) from
    :func:`_order_statistics`."""
    n = g.shape[0]
    virtual = (n - 1) * q
    if not 0.0 <= virtual < n - 1:
        return float(np.quantile(g, q))
    previous = math.floor(virtual)
    a, b = _order_statistics(g, int(previous), g_min, g_max)
    t = virtual - previous
    # numpy's _lerp: from the nearer end
    diff = b - a
    return float(b - diff * (1 - t)) if t >= 0.5 else float(a + diff * t)


class _CompiledGains:
    """``g`` of the p-step computed and held by the fused passes (:func:`beliefs_root`),
    with the buffers of ``x = (s - g) / T`` and ``exp(-|x|)``."""

    def __init__(self, o: np.ndarray, l: int, lam_u: float, scale: np.ndarray,
                 g: np.ndarray):
        self.g = g
        self.range = _da_gains(o, l, float(lam_u), scale, g)
        self.x, self.e = np.empty_like(g), np.empty_like(g)

    def g_range(self) -> tuple[float, float]:
        return float(self.range[0]), float(self.range[1])

    def g_quantile(self, q: float) -> float:
        return _quantile(self.g, float(q), *self.range)

    def logistic(self, s: float, T: float) -> None:
        """``x = (s - g) / T`` and ``e = exp(-|x|)`` into the buffers (as :func:`_expit`)."""
        x, e = self.x, self.e
        np.subtract(s, self.g, out=x)
        np.divide(x, T, out=x)
        np.abs(x, out=e)
        np.negative(e, out=e)
        np.exp(e, out=e)

    def balance(self, s: float, T: float) -> tuple[float, float]:
        self.logistic(float(s), float(T))
        return _da_balance(self.x, self.e)


@njit(cache=True, nogil=True)
def _da_losses(o, y_l, c_l, v_u, p):
    """The loss sums of eq. 6 and of the transductive objective in one pass: ``(sum_i c_i
    l_2(y_i o_i), sum_j v_j [p_j l_2(o_j) + (1 - p_j) l_2(-o_j)], sum_j v_j
    max(0, 1 - |o_j|)^2)``."""
    l = y_l.shape[0]
    lab = 0.0
    for i in range(l):
        a = max(0.0, 1.0 - y_l[i] * o[i])
        lab += c_l[i] * (a * a)
    unl = 0.0
    sym = 0.0
    for j in range(v_u.shape[0]):
        z = o[l + j]
        a = max(0.0, 1.0 - z)
        b = max(0.0, 1.0 + z)
        m = min(a, b)
        unl += v_u[j] * (p[j] * (a * a) + (1.0 - p[j]) * (b * b))
        sym += v_u[j] * (m * m)
    return lab, unl, sym



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
    return switch_pairs(_SwitchLists(outputs_u, labels_u), max_switches)


class _SwitchLists:
    """``L+`` and ``L-`` of :func:`switch_labels` over outputs and labels held here."""

    def __init__(self, outputs_u: np.ndarray, labels_u: np.ndarray):
        self.o, self.labels = outputs_u, labels_u

    def switch_candidates(self, m: int) -> tuple:
        o, lab = self.o, self.labels
        pos = np.flatnonzero((lab > 0) & (o < 1.0))
        neg = np.flatnonzero((lab < 0) & (o > -1.0))
        p = pos[smallest(o[pos], min(m, pos.size))]
        q = neg[smallest(-o[neg], min(m, neg.size))]
        return pos.size, neg.size, o[p], p, o[q], q

    def switch(self, to_negative: np.ndarray, to_positive: np.ndarray) -> None:
        self.labels[to_negative] = -1.0
        self.labels[to_positive] = 1.0


def switch_pairs(rows, max_switches: int | None) -> int:
    """The multiple switching of :func:`switch_labels` on a row object.

    ``rows.switch_candidates(m)`` returns ``(|L+|, |L-|, values, keys, values, keys)``: the
    first ``m`` entries of both lists in their order (ties by position, as a stable sort
    gives), with the outputs and whatever identifies the rows to ``rows.switch(keys_pos,
    keys_neg)``, which flips them.
    """
    m = _FIRST_PAIRS if max_switches is None else min(_FIRST_PAIRS, int(max_switches))
    # the switching pairs are a prefix of both orders (the condition is monotone), usually a
    # short one: order only the first m of each list, and widen while every pair switches
    while True:
        n_pos, n_neg, p_val, p_key, q_val, q_key = rows.switch_candidates(m)
        k = min(n_pos, n_neg)
        if max_switches is not None:
            k = min(k, int(max_switches))
        if k == 0:
            return 0
        k0 = min(k, m)
        n = int(np.count_nonzero(p_val[:k0] < q_val[:k0]))
        if n < k0 or k0 == k:
            break
        m = min(k, 4 * m)
    rows.switch(p_key[:n], q_key[:n])
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


class LocalS3VMRows:
    """The per-row half of TSVM and DA in this process: outputs, temporary labels, beliefs.

    :func:`transductive_svm_rows` and :func:`deterministic_annealing_rows` reach the rows
    only through these methods (``d``-vectors in, scalars and ``d``-vectors out, the
    L2-SVM-MFN calls included), so the same outer loops run on rows held elsewhere
    (:class:`semisup.distributed._solvers.BlockS3VMRows`).

    Parameters
    ----------
    A : Design
        The ``n_labeled`` labeled rows first, then the unlabeled rows.
    n_labeled : int
    y_l : ndarray
        ``+1/-1`` labels of the labeled rows.
    sample_weight : ndarray, optional
        Row weights (labeled rows first): the means of the objectives become weighted means
        ``c_l`` and ``v_u`` (:func:`semisup.losses.split_sample_weight`); uniform ``1/l``
        and ``1/u`` without.
    """

    def __init__(self, A, n_labeled: int, y_l: np.ndarray,
                 sample_weight: np.ndarray | None = None):
        l = n_labeled
        u = A.n_rows - l
        self.A, self.l, self.y_l = A, l, y_l
        self.n_labeled, self.n_unlabeled = l, u
        self.weights = split_sample_weight(sample_weight, l, u)
        self.c_l, self.v_u = (np.full(l, 1.0 / l), np.full(u, 1.0 / max(u, 1))) \
            if self.weights is None else self.weights
        self.y = self.da_rows = None
        # DA's per-row statistics as compiled passes (large problems; numpy otherwise)
        self._compiled = use_compiled_vectors(u)
        self._stats = self._losses_at = None

    # --- both ----------------------------------------------------------------------------
    def supervised(self, reg, opts: dict) -> MFNResult:
        """The L2-SVM on the labeled rows (costs ``c_l``) that TSVM and DA start from."""
        l = self.l
        return l2svm_mfn(self.A.restrict(np.arange(l)), HingeTerms(self.y_l, self.c_l), reg,
                         **opts)

    def outputs(self, w: np.ndarray) -> None:
        """``o = A w`` over labeled and unlabeled rows."""
        self.o = self.A.matvec(w)

    def mfn(self, reg, w: np.ndarray, preconditioner0, opts: dict) -> MFNResult:
        """L2-SVM-MFN on the current problem (:meth:`problem_transductive` or
        :meth:`problem_annealing`) from ``w`` and the outputs kept here."""
        res = l2svm_mfn(self.A, self._terms(), reg, w0=w, outputs0=self.o,
                        preconditioner0=preconditioner0, **opts)
        self.o = res.outputs
        return res

    def transductive_objective(self, reg_value: float, lam_u: float) -> float:
        o, l = self.o, self.l
        if self._compiled and self.n_unlabeled:
            lab, _, sym = self._losses()
            return reg_value + 0.5 * lab + 0.5 * lam_u * sym
        return transductive_objective(reg_value, o[:l], self.y_l, o[l:], lam_u, self.weights)

    def _losses(self) -> tuple[float, float, float]:
        """:func:`_da_losses` at the current outputs and beliefs (one pass serves the DA and
        the transductive objective at the same ``w``)."""
        o, p = self.o, getattr(self, "p", None)
        at = self._losses_at
        if at is None or at[0] is not o or at[1] is not p:
            # the outputs and beliefs are replaced, never written in place: identity says
            # whether the sums are current
            p_arg = self.v_u if p is None else p
            self._losses_at = (o, p, _da_losses(o, self.y_l, self.c_l, self.v_u, p_arg))
        return self._losses_at[2]

    # --- TSVM ----------------------------------------------------------------------------
    def initial_labels(self, positive_fraction: float) -> None:
        self.set_labels(initial_labels(self.o[self.l:], positive_fraction))

    def set_labels(self, labels_u: np.ndarray) -> None:
        l = self.l
        self.y = np.concatenate([self.y_l, labels_u])
        self.cost = np.empty(l + self.n_unlabeled)
        self.cost[:l] = self.c_l

    def problem_transductive(self, lam_cur: float) -> None:
        """Hinge terms of the labeled rows and of the unlabeled rows with their temporary
        labels at ``lam_u' = lam_cur``."""
        self.cost[self.l:] = lam_cur * self.v_u
        self.problem = "transductive"

    def switch_candidates(self, m: int) -> tuple:
        """See :func:`switch_pairs`; keys are positions among the unlabeled rows."""
        return _SwitchLists(self.o[self.l:], self.y[self.l:]).switch_candidates(m)

    def switch(self, to_negative: np.ndarray, to_positive: np.ndarray) -> None:
        _SwitchLists(self.o[self.l:], self.y[self.l:]).switch(to_negative, to_positive)

    def labels_u(self) -> np.ndarray:
        return np.empty(0) if self.y is None else self.y[self.l:].copy()

    # --- DA ------------------------------------------------------------------------------
    def start_beliefs(self, positive_fraction: float) -> None:
        self.p = np.full(self.n_unlabeled, positive_fraction)
        self.best_p = self.p.copy()
        if self._compiled:
            with np.errstate(divide="ignore"):
                self.log_p, self.log_1p = np.log(self.p), np.log(1.0 - self.p)

    def p_step(self, lam_u: float, temperature: float, positive_fraction: float) -> None:
        """``p`` of eq. 9 at the current outputs (:func:`optimal_beliefs`); the previous
        beliefs are kept as ``q``."""
        o_u, u = self.o[self.l:], self.n_unlabeled
        self.q = self.p
        if self._compiled:
            # gains, root, beliefs, H(p) and KL(p, q) in compiled passes
            scale = np.empty(0) if self.weights is None else u * self.v_u
            gains = _CompiledGains(self.o, self.l, lam_u, scale, np.empty(u))
            s = beliefs_root(gains, temperature, positive_fraction)
            gains.logistic(s, float(temperature))
            self.p = np.empty(u)
            _da_beliefs(gains.x, gains.e, self.p)
            # the logarithms vectorised (numpy's), each once: the next KL reuses them for q
            log_q, log_1q = self.log_p, self.log_1p
            with np.errstate(divide="ignore"):
                self.log_p = np.log(self.p)
                self.log_1p = np.subtract(1.0, self.p, out=gains.x)
                np.log(self.log_1p, out=self.log_1p)
            self._stats = _da_entropy_kl(self.p, self.log_p, self.log_1p, self.q, log_q,
                                         log_1q)
            return
        g = lam_u * (squared_hinge(o_u) - squared_hinge(-o_u))
        if self.weights is not None:
            g *= u * self.v_u
        self.p, _ = optimal_beliefs(g, temperature, positive_fraction)

    def entropy(self) -> float:
        if self._compiled:
            return float(self._stats[0])
        return binary_entropy(self.p)

    def kl(self) -> float:
        """``KL(p, q)`` of the last p-step."""
        if self._compiled:
            return float(self._stats[1])
        return binary_kl(self.p, self.q)

    def annealing_objective(self, reg_value: float, lam_u: float, temperature: float,
                            entropy: float) -> float:
        o, l = self.o, self.l
        if self._compiled:
            lab, unl, _ = self._losses()
            return reg_value + 0.5 * lab + 0.5 * lam_u * unl \
                - 0.5 * temperature / self.n_unlabeled * entropy
        return annealing_objective(reg_value, o[:l], self.y_l, o[l:], self.p, lam_u,
                                   temperature, entropy, self.weights)

    def problem_annealing(self, lam_u: float) -> None:
        """Hinge terms of the labeled rows and of every unlabeled row twice, +1 with cost
        ``lam_u p_j v_j`` and -1 with ``lam_u (1 - p_j) v_j`` (one data row for both)."""
        l, u = self.l, self.n_unlabeled
        if self.da_rows is None:
            unl = np.arange(l, l + u)
            self.da_rows = np.concatenate([np.arange(l), unl, unl])
            self.da_y = np.concatenate([self.y_l, np.ones(u), -np.ones(u)])
            self.da_cost = np.empty(l + 2 * u)
            self.da_cost[:l] = self.c_l
        self.da_cost[l:l + u] = lam_u * self.p * self.v_u
        self.da_cost[l + u:] = lam_u * (1.0 - self.p) * self.v_u
        self.problem = "annealing"

    def _terms(self) -> HingeTerms:
        if self.problem == "transductive":
            return HingeTerms(self.y, self.cost)
        return HingeTerms(self.da_y, self.da_cost, rows=self.da_rows,
                          n_rows=self.l + self.n_unlabeled)

    def keep_best(self) -> None:
        self.best_p = self.p.copy()

    def best_beliefs(self) -> np.ndarray:
        return self.best_p


def _supervised_start(rows, lam: float, reg, mfn_options: dict | None):
    """The L2-SVM on the labeled rows that TSVM and DA start from, and its outputs on all
    rows; returns ``(mfn options, regulariser, result)``."""
    opts = dict(mfn_options or {})
    reg = Ridge(lam) if reg is None else reg
    sup = rows.supervised(reg, opts)
    rows.outputs(sup.w)
    return opts, reg, sup


def transductive_svm(A, n_labeled: int, y_l: np.ndarray, lam: float, lam_u: float,
                     positive_fraction: float, max_switches: int | None = None,
                     lam_u_init: float = 1e-5, lam_u_growth: float = 1.5,
                     mfn_options: dict | None = None, max_rounds: int = 100_000,
                     reg=None, verbose: int = 0,
                     sample_weight: np.ndarray | None = None,
                     labels_u0: np.ndarray | None = None) -> TSVMResult:
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
        ``semisup.solvers.s3vm`` logger.
    sample_weight : ndarray, optional
        Row weights (labeled rows first): the means of the objective become weighted means
        (:func:`semisup.losses.split_sample_weight`).  Label switching keeps the paper's
        rule (exact for equal weights of the switched pair) and the balance constraint
        counts rows.
    labels_u0 : ndarray of shape (u,), optional
        Initial ``+1/-1`` labels of the unlabeled rows (e.g. a rounded convex relaxation)
        instead of thresholding the supervised outputs at ``positive_fraction``; switching
        keeps their number of positives.  ``None`` (default): the paper's start.
    """
    return transductive_svm_rows(LocalS3VMRows(A, n_labeled, y_l, sample_weight), lam, lam_u,
                                 positive_fraction, max_switches=max_switches,
                                 lam_u_init=lam_u_init, lam_u_growth=lam_u_growth,
                                 mfn_options=mfn_options, max_rounds=max_rounds, reg=reg,
                                 verbose=verbose, labels_u0=labels_u0)


def transductive_svm_rows(rows, lam: float, lam_u: float, positive_fraction: float,
                          max_switches: int | None = None, lam_u_init: float = 1e-5,
                          lam_u_growth: float = 1.5, mfn_options: dict | None = None,
                          max_rounds: int = 100_000, reg=None, verbose: int = 0,
                          labels_u0: np.ndarray | None = None) -> TSVMResult:
    """The label-switching loop of :func:`transductive_svm` on a row object
    (:class:`LocalS3VMRows` or one whose rows live elsewhere); the parameters are those of
    :func:`transductive_svm`."""
    u = rows.n_unlabeled
    opts, reg, sup = _supervised_start(rows, lam, reg, mfn_options)
    w = sup.w
    if u == 0:
        return TSVMResult(w=w, labels_u=rows.labels_u(), objective=sup.objective, n_iter=1,
                          n_switches=0, n_cg_iter=sup.n_cg_iter, history=[])
    if labels_u0 is None:
        rows.initial_labels(positive_fraction)
    else:
        labels_u = np.asarray(labels_u0, dtype=np.float64)
        if labels_u.shape != (u,) or not np.all(np.abs(labels_u) == 1):
            raise ValueError(f"labels_u0 must hold +1/-1 for each of the {u} unlabeled rows")
        rows.set_labels(labels_u)
    lam_cur = min(lam_u_init, lam_u)
    history = []
    n_fits, n_switches, n_cg = 1, 0, sup.n_cg_iter
    switched = 0
    precond = None
    n_stages, stage_lam = 1, lam_cur
    while stage_lam < lam_u:
        stage_lam, n_stages = min(stage_lam * lam_u_growth, lam_u), n_stages + 1
    bar = progress(n_stages, "TSVM lam_u stages", verbose, "stage")
    while True:
        rows.problem_transductive(lam_cur)
        for _ in range(max_rounds):
            # label switches leave the row costs alone: the last preconditioner still serves
            res = rows.mfn(reg, w, precond, opts)
            precond = res.preconditioner
            w = res.w
            n_fits += 1
            n_cg += res.n_cg_iter
            history.append({"lam_u": lam_cur, "objective": res.objective, "switched": switched})
            switched = switch_pairs(rows, max_switches)
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
    objective = rows.transductive_objective(reg.value(w), lam_u)
    logger.info("TSVM: %d stages, %d retrainings, %d pairs switched, %d CG iterations, "
                "objective %.8g", n_stages, n_fits, n_switches, n_cg, objective)
    return TSVMResult(w=w, labels_u=rows.labels_u(), objective=objective, n_iter=n_fits,
                      n_switches=n_switches, n_cg_iter=n_cg, history=history)


def optimal_beliefs(g: np.ndarray, temperature: float, positive_fraction: float,
                    tol: float = 1e-10) -> tuple[np.ndarray, float]:
    """The p-step: minimise eq. 6 over ``p`` subject to the balance constraint (eq. 7).

    ``p_j = 1 / (1 + exp((g_j - 2 nu) / T))`` (eq. 9) with ``2 nu`` the root of
    ``mean_j p_j = r``, found by safeguarded Newton / bisection.

    Parameters
    ----------
    g : ndarray
        ``g_j = lam_u [l_2(o_j) - l_2(-o_j)]``.
    temperature : float
        ``T > 0``.
    positive_fraction : float
        ``r`` in (0, 1).
    tol : float
        Tolerance on ``|mean p - r|``.

    Returns
    -------
    p : ndarray
    two_nu : float
    """
    s = beliefs_root(_Gains(g), temperature, positive_fraction, tol)
    return _expit((s - g) / float(temperature)), s


class _Gains:
    """``g`` of :func:`optimal_beliefs` held here (see :func:`beliefs_root`)."""

    def __init__(self, g: np.ndarray):
        self.g = g

    def g_range(self) -> tuple[float, float]:
        return float(self.g.min()), float(self.g.max())

    def g_quantile(self, q: float) -> float:
        return float(np.quantile(self.g, q))

    def balance(self, s: float, T: float) -> tuple[float, float]:
        p = _expit((s - self.g) / T)
        return float(p.mean()), float(np.mean(p * (1.0 - p)))


def beliefs_root(gains, temperature: float, positive_fraction: float,
                 tol: float = 1e-10) -> float:
    """``2 nu`` of eq. 9, the root of ``mean_j p_j = r``, for ``g`` held by ``gains``.

    ``gains`` gives ``g_range()`` (min, max), ``g_quantile(q)`` (the Newton start, the
    ``r``-quantile) and ``balance(s, T)``: ``(mean p, mean p (1 - p))`` at ``p =
    expit((s - g)/T)`` -- here or as sums over the blocks of a cluster.
    """
    T, r = float(temperature), float(positive_fraction)

    def balance(s):
        mean_p, mean_pq = gains.balance(s, T)
        return mean_p - r, mean_pq / T

    shift = T * math.log(r / (1.0 - r))
    g_min, g_max = gains.g_range()
    return safeguarded_newton(balance, g_min + shift, g_max + shift,
                              x0=gains.g_quantile(r), tol=tol)


def balance_entropy_floor(n_unlabeled: int, positive_fraction: float) -> float:
    """The least entropy beliefs can have under the balance constraint (eq. 7).

    ``sum_j p_j = r u`` holds at every temperature, so when ``r u`` is not an integer one
    belief stays at its fractional part however low ``T`` goes (an odd ``u`` with ``r =
    1/2`` keeps one belief at 1/2: ``H = log 2``).  The annealing stops on the entropy
    above this floor.
    """
    f = n_unlabeled * positive_fraction
    f -= math.floor(f)
    if f < 1e-9 or f > 1.0 - 1e-9:
        return 0.0
    return -(f * math.log(f) + (1.0 - f) * math.log1p(-f))


def binary_entropy(p: np.ndarray) -> float:
    """``H(p) = -sum_j [p_j log p_j + (1 - p_j) log(1 - p_j)]``."""
    return -float(np.sum(_xlogx(p) + _xlogx(1.0 - p)))


def binary_kl(p: np.ndarray, q: np.ndarray) -> float:
    """``KL(p, q) = sum_j p_j log(p_j/q_j) + (1-p_j) log((1-p_j)/(1-q_j))`` (section 3.2.3)."""
    return float(np.sum(_rel_entr(p, q) + _rel_entr(1.0 - p, 1.0 - q)))


def annealing_objective(reg_value: float, outputs_l, y_l, outputs_u, p, lam_u: float,
                        temperature: float, entropy: float | None = None,
                        weights=None) -> float:
    """The DA objective of eq. 6 at temperature ``T``.

    ``entropy`` is ``H(p)`` if already known; ``weights`` the ``(c_l, v_u)`` of
    :func:`semisup.losses.split_sample_weight` (weighted means).
    """
    u = outputs_u.shape[0]
    c_l, v_u = (np.full(y_l.shape[0], 1.0 / y_l.shape[0]), np.full(u, 1.0 / u)) \
        if weights is None else weights
    obj = reg_value + 0.5 * float(c_l @ squared_hinge(y_l * outputs_l))
    obj += 0.5 * lam_u * float((v_u * p) @ squared_hinge(outputs_u)
                               + (v_u * (1.0 - p)) @ squared_hinge(-outputs_u))
    if entropy is None:
        entropy = binary_entropy(p)
    return obj - 0.5 * temperature / u * entropy


@dataclass
class DAResult:
    """Outcome of :func:`deterministic_annealing`.

    Attributes
    ----------
    w : ndarray
        Weights of the lowest transductive objective seen on the annealing path.
    beliefs : ndarray
        ``p_j`` at the returned solution.
    objective : float
        Its transductive objective (section 3.2.3).
    n_iter : int
        Alternating (p, w) iterations in total.
    n_cg_iter : int
        CGLS iterations in total.
    history : list of dict
        Per inner iteration: temperature, DA objective (eq. 6) after the p-step and
        after the w-step, KL divergence, entropy, transductive objective.
    """

    w: np.ndarray
    beliefs: np.ndarray
    objective: float
    n_iter: int
    n_cg_iter: int
    history: list = field(default_factory=list)


def deterministic_annealing(A, n_labeled: int, y_l: np.ndarray, lam: float, lam_u: float,
                            positive_fraction: float, temperature_init: float | None = None,
                            temperature_decay: float = 1.5, max_outer_iter: int = 30,
                            max_inner_iter: int = 100, kl_tol: float = 1e-6,
                            entropy_tol: float = 1e-6, mfn_options: dict | None = None,
                            reg=None, verbose: int = 0,
                            sample_weight: np.ndarray | None = None) -> DAResult:
    """DA for semi-supervised L2-SVMs: track the minimiser of eq. 6 as ``T`` decreases.

    For each temperature, alternate the p-step (:func:`optimal_beliefs`) and the w-step
    (L2-SVM-MFN on the labeled rows plus every unlabeled row twice, with labels +1 and -1
    and costs ``lam_u p_j / u`` and ``lam_u (1 - p_j) / u`` — the duplicated rows share
    one data row, so no data is copied) until ``KL(p, q) < u kl_tol``; then divide ``T`` by
    ``temperature_decay`` until the entropy falls below ``u entropy_tol``.

    Parameters
    ----------
    A : Design
        Labeled rows first, then unlabeled rows.
    n_labeled : int
    y_l : ndarray
        ``+1/-1`` labels of the labeled rows.
    lam, lam_u : float
    positive_fraction : float
        ``r`` in the balance constraint (eq. 7).
    temperature_init : float, optional
        Starting ``T``; ``10 * lam_u`` when omitted.
    temperature_decay : float
    max_outer_iter, max_inner_iter : int
    kl_tol, entropy_tol : float
    mfn_options : dict
    reg : regulariser, optional
        ``Ridge(lam)`` by default; a :class:`semisup.regularizers.GraphRidge` adds a graph
        term (manifold regularization on top of the S3VM loss).
    verbose : int
        A progress bar over the temperatures; one DEBUG line per temperature.
    sample_weight : ndarray, optional
        Row weights (labeled rows first): weighted means in eq. 6 (the p-step's ``g_j``
        scales with ``u v_j``), see :func:`semisup.losses.split_sample_weight`.
    """
    return deterministic_annealing_rows(
        LocalS3VMRows(A, n_labeled, y_l, sample_weight), lam, lam_u, positive_fraction,
        temperature_init=temperature_init, temperature_decay=temperature_decay,
        max_outer_iter=max_outer_iter, max_inner_iter=max_inner_iter, kl_tol=kl_tol,
        entropy_tol=entropy_tol, mfn_options=mfn_options, reg=reg, verbose=verbose)


def deterministic_annealing_rows(rows, lam: float, lam_u: float, positive_fraction: float,
                                 temperature_init: float | None = None,
                                 temperature_decay: float = 1.5, max_outer_iter: int = 30,
                                 max_inner_iter: int = 100, kl_tol: float = 1e-6,
                                 entropy_tol: float = 1e-6, mfn_options: dict | None = None,
                                 reg=None, verbose: int = 0) -> DAResult:
    """The annealing loop of :func:`deterministic_annealing` on a row object
    (:class:`LocalS3VMRows` or one whose rows live elsewhere); the parameters are those of
    :func:`deterministic_annealing`."""
    u = rows.n_unlabeled
    opts, reg, sup = _supervised_start(rows, lam, reg, mfn_options)
    w = sup.w
    r = float(positive_fraction)
    rows.start_beliefs(r)
    if u == 0 or lam_u == 0.0:
        return DAResult(w=w, beliefs=rows.best_beliefs(), objective=sup.objective,
                        n_iter=sup.n_iter, n_cg_iter=sup.n_cg_iter)
    T = 10.0 * lam_u if temperature_init is None else float(temperature_init)
    floor = balance_entropy_floor(u, r)
    best_obj = rows.transductive_objective(reg.value(w), lam_u)
    best_w = w.copy()
    history = []
    n_iter, n_cg = 0, sup.n_cg_iter
    precond = None
    bar = progress(max_outer_iter, "DA temperatures", verbose, "T")
    for _outer in range(max_outer_iter):
        for _inner in range(max_inner_iter):
            rows.p_step(lam_u, T, r)
            # H(p) once per p-step: each evaluation is two logarithms per unlabeled row
            entropy = rows.entropy()
            obj_p = rows.annealing_objective(reg.value(w), lam_u, T, entropy)
            rows.problem_annealing(lam_u)
            # the preconditioner of the previous w-step serves while the row costs it was
            # built for have barely moved (late inner iterations, low temperatures)
            res = rows.mfn(reg, w, precond, opts)
            precond = res.preconditioner
            w = res.w
            n_iter += 1
            n_cg += res.n_cg_iter
            kl = rows.kl()
            tobj = rows.transductive_objective(reg.value(w), lam_u)
            history.append({
                "temperature": T, "objective_p_step": obj_p,
                "objective_w_step": rows.annealing_objective(reg.value(w), lam_u, T, entropy),
                "kl": kl, "entropy": entropy, "transductive_objective": tobj})
            if tobj < best_obj:
                best_obj, best_w = tobj, w.copy()
                rows.keep_best()
            if kl < u * kl_tol:
                break
        else:
            report_unconverged("DA inner", f"KL >= u kl_tol after {max_inner_iter} (p, w) "
                                           f"iterations at T={T:.3g}")
        logger.debug("DA T=%.4g inner=%d entropy/u=%.3g objective=%.8g best=%.8g", T,
                     _inner + 1, entropy / u, tobj, best_obj)
        bar.update()
        if entropy - floor < u * entropy_tol:
            break
        T /= temperature_decay
    else:
        if entropy - floor >= u * _SOFT_ENTROPY_FACTOR * entropy_tol:
            report_unconverged("DA annealing",
                               f"T={T * temperature_decay:.3g} with the beliefs still soft: "
                               f"entropy/u={entropy / u:.3g}, entropy_tol={entropy_tol:g}; "
                               "temperature_decay also shortens the path")
    bar.close()
    logger.info("DA: %d temperatures, %d (p, w) iterations, %d CG iterations, objective %.8g",
                _outer + 1, n_iter, n_cg, best_obj)
    return DAResult(w=best_w, beliefs=rows.best_beliefs(), objective=best_obj, n_iter=n_iter,
                    n_cg_iter=n_cg, history=history)


# The temperature budget may end the path a little above ``entropy_tol`` with nothing left
# to change.  Above this many times ``entropy_tol`` (over the balance floor) the beliefs are
# still soft and the path was cut short of the hard-label limit the method is defined by:
# say so.
_SOFT_ENTROPY_FACTOR = 100.0

