"""The linear semi-supervised SVMs over a :class:`~semisup.distributed.DistributedDesign`.

The client runs the same iterations as :func:`semisup.solvers.mfn.l2svm_mfn` (with its
CGLS), :func:`semisup.linear.tsvm.transductive_svm` and
:func:`semisup.linear.da.deterministic_annealing`, on ``d``-vectors and scalars only; every
per-row vector stays on the workers, whose :class:`~semisup.distributed._worker.BlockWorker`
does each step's per-row work with the single-machine kernels.  What differs from one
machine is only where sums are taken, i.e. round-off:

* CGLS: one reduction of ``q^T C q`` (a scalar) and one of ``A^T z`` (a ``d``-vector) per
  iteration, exactly the two products of the single-machine iteration;
* exact line search (eq. 5): per-block slope/intercept of ``phi'`` and its values at the
  probe steps, summed; then the break points up to the first probe with ``phi' >= 0``,
  concatenated, sorted and walked on the client;
* TSVM switching (section 3.1.2): each block's first ``m`` candidates of ``L+`` and ``L-``
  merged into the global first ``m`` (``m`` widened as on one machine), ties broken by
  the global position of the row, as the stable sort does;
* DA p-step (eq. 9): the balance ``mean p - r`` and its derivative as per-block sums inside
  the same safeguarded Newton iteration; its starting quantile by distributed selection.

Only the ``"jacobi"`` preconditioner is available here (the row-sampled sketch draws rows
from one global distribution).
"""

from __future__ import annotations

import logging

import numpy as np

from semisup._accel import use_compiled_vectors
from semisup._logging import report_unconverged
from semisup.regularizers import Ridge
from semisup.solvers.cgls import cgls_rows
from semisup.solvers.line_search import _PROBES, _walk
from semisup.solvers.mfn import REUSE_PRECONDITIONER, MFNResult, mfn_rows
from semisup.solvers.preconditioners import Diagonal
from semisup.solvers.roots import safeguarded_newton
from semisup.solvers.s3vm import _FIRST_PAIRS, _SOFT_ENTROPY_FACTOR, DAResult, TSVMResult

logger = logging.getLogger("semisup.distributed")

_SELECT_CAP = 4096  # values gathered to the client to finish a selection


class BlockRows:
    """The row half of CGLS (:class:`semisup.solvers.cgls.LocalRows`) on the workers.

    ``fused``: one round trip per iteration instead of two.  The workers return ``q^T C q``
    together with ``A^T C q`` and :meth:`update` forms ``A^T z -= gamma A^T C q`` here
    (mathematically the product the single-machine iteration recomputes from ``z``, which
    needs ``gamma``, hence a second round trip).
    """

    def __init__(self, dd, fused: bool = True):
        self.dd, self.fused = dd, fused

    def start(self, x: np.ndarray, rhs_norm: bool):
        n = x.shape[0]
        start = self.dd._sum("cg_start", x)
        self.n, self.data_r = n, start[:n].copy()
        return start[:n], float(np.linalg.norm(start[n:])) if rhs_norm else None

    def curvature(self, p: np.ndarray) -> float:
        if not self.fused:
            return self.dd._sum("cg_curvature", p)
        step = self.dd._sum("cg_step", p)
        self.AtCq = step[1:]
        return float(step[0])

    def update(self, gamma: float) -> np.ndarray:
        if not self.fused:
            return self.dd._sum("cg_update", gamma, self.n)
        self.data_r -= gamma * self.AtCq
        return self.data_r.copy()


def cgls(dd, reg, x0: np.ndarray, inverse: np.ndarray | None, tol: float, max_iter: int,
         fused: bool = True):
    """:func:`semisup.solvers.cgls.cgls_rows` over the active rows the workers hold.

    Returns ``(x, n_iter, converged)``.
    """
    x = np.array(x0, dtype=np.float64, copy=True)
    res = cgls_rows(BlockRows(dd, fused), reg, x, None if inverse is None else Diagonal(inverse),
                    tol, max_iter, compiled=use_compiled_vectors(x.shape[0]))
    return res.x, res.n_iter, res.converged


def line_search(dd, reg_cross: float, reg_curv: float, summary: np.ndarray) -> float:
    """Exact line search (eq. 5) from per-block break-point summaries.

    ``summary``: the summed ``[slope, intercept, phi'(probes)]`` of the loss terms
    (:meth:`~semisup.distributed._worker.BlockWorker.slope_summary`).
    """
    slope = reg_curv + summary[0]
    intercept = reg_cross + summary[1]
    deriv = reg_cross + reg_curv * _PROBES + summary[2:]
    if intercept >= 0.0:
        return 0.0
    hits = np.flatnonzero(deriv >= 0.0)
    limit = float(_PROBES[hits[0]]) if hits.size else np.inf
    parts = dd._call("break_points", limit)
    bp, dslope, dint = (np.concatenate(v) for v in zip(*parts, strict=True))
    return float(_walk(slope, intercept, bp, dslope, dint, np.argsort(bp, kind="stable")))


class BlockMFNRows:
    """The per-row half of L2-SVM-MFN (:class:`semisup.solvers.mfn.LocalMFNRows`) on the
    workers, for :func:`semisup.solvers.mfn.mfn_rows`.

    ``outputs_ready``: the workers' outputs already equal ``X w0``.  Jacobi is the only
    preconditioner (the row-sampled sketch draws rows from one global distribution).
    """

    def __init__(self, dd, n_weights: int, outputs_ready: bool = False, fused: bool = True):
        self.dd, self.n, self.outputs_ready, self.fused = dd, n_weights, outputs_ready, fused

    def start(self, w):
        if self.outputs_ready and w is not None:
            return self.dd._sum("loss")
        return self.dd._sum("outputs", w)

    def newton_system(self) -> int:
        n_rows, self.moved, self.total = self.dd._sum("newton_system")
        return int(n_rows)

    def preconditioner(self, kind, reg, previous):
        if kind in (False, None):
            return None, None
        if previous is None or previous[0] is None or \
                self.moved > REUSE_PRECONDITIONER * self.total:
            diag = reg.diagonal(self.n) + self.dd._sum("jacobi_diagonal", self.n)
            return Diagonal(np.where(diag > 0, 1.0 / np.where(diag > 0, diag, 1.0), 1.0)), None
        return previous

    def cg_rows(self) -> BlockRows:
        return BlockRows(self.dd, self.fused)

    def compiled(self) -> bool:
        return use_compiled_vectors(self.n)

    def newton_point(self, w_bar) -> bool:
        point = self.dd._sum("newton_point", w_bar, _PROBES)
        self.summary = point[1:]  # the line search's first pass, in the same round trip
        return point[0] == 0

    def accept_newton_point(self) -> float:
        return self.dd._sum("accept_newton_point")

    def line_search(self, reg_cross: float, reg_curv: float) -> float:
        return line_search(self.dd, reg_cross, reg_curv, self.summary)

    def step(self, delta: float) -> float:
        return self.dd._sum("step", delta)

    def finish(self, w):
        # drop the round-off of the output updates, as on one machine; outputs stay there
        return self.dd._sum("outputs", w), None


def l2svm_mfn(dd, reg, n_weights: int, w0: np.ndarray | None = None,
              outputs_ready: bool = False, precondition="jacobi", fused: bool = True,
              **options) -> MFNResult:
    """:func:`semisup.solvers.mfn.mfn_rows` over the problem the workers have set up.

    ``outputs`` of the result is ``None``: the outputs stay on the workers.  ``fused``: see
    :class:`BlockRows`; ``options``: those of :func:`semisup.solvers.mfn.l2svm_mfn`.
    """
    if precondition not in ("jacobi", "auto", True, False, None):
        raise ValueError(f"precondition must be 'jacobi' or False on a DistributedDesign, got "
                         f"{precondition!r}")
    return mfn_rows(BlockMFNRows(dd, n_weights, outputs_ready, fused), reg, n_weights, w0=w0,
                    precondition=precondition, **options)


def kth_smallest(dd, name: str, k: int, stats=None) -> float:
    """The ``k``-th smallest (1-based) of the per-row vector ``name`` over all blocks.

    Bisection on the value with per-block counts until at most a few thousand candidates
    remain, which are gathered and sorted: ``O(log)`` scalar round trips, no ``n``-vector.
    """
    n, vmin, vmax = stats if stats is not None else _range(dd, name)
    if not 1 <= k <= n:
        raise ValueError(f"k={k} outside 1..{n}")
    lo, hi = np.nextafter(vmin, -np.inf), vmax
    below = 0                      # values <= lo
    inside = n                     # values in (lo, hi]
    while True:
        if inside <= _SELECT_CAP:
            vals = np.sort(np.concatenate(dd._call("values_in", name, lo, hi)))
            return float(vals[k - below - 1])
        mid = lo + 0.5 * (hi - lo)
        if not lo < mid < hi:  # (lo, hi] holds one value, many times
            return float(hi)
        c = dd._sum("count_le", name, mid)
        if c >= k:
            hi, inside = mid, c - below
        else:
            lo, inside, below = mid, inside - (c - below), c


def _range(dd, name: str) -> tuple:
    res = dd._call("value_range", name)
    return (sum(r[0] for r in res), min(r[1] for r in res), max(r[2] for r in res))


def quantile(dd, name: str, q: float, stats=None) -> float:
    """``np.quantile(values, q)`` (linear interpolation) by two selections."""
    stats = stats or _range(dd, name)
    n = stats[0]
    virtual = (n - 1) * q  # numpy's virtual index for the 'linear' method
    lo_i = int(np.floor(virtual))
    t = virtual - lo_i
    lo_i = min(max(lo_i, 0), n - 1)
    hi_i = min(lo_i + 1, n - 1)
    a = kth_smallest(dd, name, lo_i + 1, stats)
    b = a if hi_i == lo_i else kth_smallest(dd, name, hi_i + 1, stats)
    diff = b - a
    return float(b - diff * (1.0 - t)) if t >= 0.5 else float(a + diff * t)


def _initial_labels(dd, u: int, positive_fraction: float) -> None:
    """``initial_labels`` of :mod:`semisup.linear.tsvm`: the ``round(r u)`` largest outputs."""
    n_pos = int(round(positive_fraction * u))
    if n_pos == 0:
        dd._call("initial_labels", np.inf, {})
        return
    value = kth_smallest(dd, "o_u", u - n_pos + 1)
    per_block = sorted(c for per in dd._call("count_above", "o_u", value) for c in per)
    remaining = n_pos - sum(c[1] for c in per_block)
    ties = {}
    for index, _, eq in per_block:  # ties go to the earliest rows, as a stable sort gives
        take = min(eq, max(remaining, 0))
        ties[index] = take
        remaining -= take
    dd._call("initial_labels", value, ties)


def _merge(lists: list, key_sign: float, m: int) -> np.ndarray:
    """Global first ``m`` of per-block candidate rows ``(value, position, partition)``."""
    rows = np.concatenate(lists) if lists else np.empty((0, 3))
    order = np.lexsort((rows[:, 1], key_sign * rows[:, 0]))
    return rows[order[:m]]


def switch_labels(dd, max_switches: int | None) -> int:
    """Multiple switching (section 3.1.2) from per-block candidate lists."""
    m = _FIRST_PAIRS if max_switches is None else min(_FIRST_PAIRS, int(max_switches))
    while True:
        res = dd._call("switch_candidates", m)
        n_pos = sum(r[0] for r in res)
        n_neg = sum(r[1] for r in res)
        k = min(n_pos, n_neg)
        if max_switches is not None:
            k = min(k, int(max_switches))
        if k == 0:
            return 0
        k0 = min(k, m)
        p = _merge([r[2] for r in res], 1.0, k0)
        q = _merge([r[3] for r in res], -1.0, k0)
        n = int(np.count_nonzero(p[:, 0] < q[:, 0]))
        if n < k0 or k0 == k:
            break
        m = min(k, 4 * m)
    to_neg: dict = {}
    to_pos: dict = {}
    for row in p[:n]:
        to_neg.setdefault(int(row[2]), []).append(int(row[1]))
    for row in q[:n]:
        to_pos.setdefault(int(row[2]), []).append(int(row[1]))
    dd._call("switch", to_neg, to_pos)
    return n


def _transductive_objective(dd, reg, w, l: int, u: int, lam_u: float) -> float:
    s = dd._sum("transductive_parts")
    obj = reg.value(w) + 0.5 * s[0] / l
    return obj + (0.5 * lam_u * s[1] / u if u else 0.0)


def _supervised_start(dd, n_weights: int, lam: float, mfn_options: dict | None):
    """The L2-SVM on the labeled rows that TSVM and DA start from (cost ``1/l`` each)."""
    opts = dict(mfn_options or {})
    reg = Ridge(lam)
    dd._call("problem_supervised", dd.n_labeled)
    sup = l2svm_mfn(dd, reg, n_weights, **opts)
    return opts, dd.n_labeled, dd.n_unlabeled, reg, sup


def transductive_svm(dd, n_weights: int, lam: float, lam_u: float, positive_fraction: float,
                     max_switches: int | None = None, lam_u_init: float = 1e-5,
                     lam_u_growth: float = 1.5, mfn_options: dict | None = None,
                     max_rounds: int = 100_000) -> TSVMResult:
    """:func:`semisup.linear.tsvm.transductive_svm` over a distributed design."""
    opts, l, u, reg, sup = _supervised_start(dd, n_weights, lam, mfn_options)
    w = sup.w
    if u == 0:
        return TSVMResult(w=w, labels_u=None, objective=sup.objective, n_iter=1,
                          n_switches=0, n_cg_iter=sup.n_cg_iter, history=[])
    dd._call("unlabeled_outputs", w)
    _initial_labels(dd, u, positive_fraction)
    lam_cur = min(lam_u_init, lam_u)
    history = []
    n_fits, n_switches, n_cg = 1, 0, sup.n_cg_iter
    switched = 0
    precond = None
    while True:
        dd._call("problem_transductive", l, u, lam_cur)
        for _ in range(max_rounds):
            res = l2svm_mfn(dd, reg, n_weights, w0=w, outputs_ready=True,
                            preconditioner0=precond, **opts)
            precond = res.preconditioner
            w = res.w
            n_fits += 1
            n_cg += res.n_cg_iter
            history.append({"lam_u": lam_cur, "objective": res.objective, "switched": switched})
            switched = switch_labels(dd, max_switches)
            n_switches += switched
            logger.info("TSVM lam_u'=%.3g objective=%.8g switched=%d", lam_cur, res.objective,
                        switched)
            if switched == 0:
                break
        else:
            report_unconverged("label switching", f"{max_rounds} rounds at "
                                                  f"lam_u'={lam_cur:.3g}")
        if lam_cur >= lam_u:
            break
        lam_cur = min(lam_cur * lam_u_growth, lam_u)
    objective = _transductive_objective(dd, reg, w, l, u, lam_u)
    return TSVMResult(w=w, labels_u=None, objective=objective, n_iter=n_fits,
                      n_switches=n_switches, n_cg_iter=n_cg, history=history)


def deterministic_annealing(dd, n_weights: int, lam: float, lam_u: float,
                            positive_fraction: float, temperature_init: float | None = None,
                            temperature_decay: float = 1.5, max_outer_iter: int = 30,
                            max_inner_iter: int = 100, kl_tol: float = 1e-6,
                            entropy_tol: float = 1e-6, mfn_options: dict | None = None
                            ) -> DAResult:
    """:func:`semisup.linear.da.deterministic_annealing` over a distributed design."""
    opts, l, u, reg, sup = _supervised_start(dd, n_weights, lam, mfn_options)
    w = sup.w
    r = float(positive_fraction)
    if u == 0 or lam_u == 0.0:
        return DAResult(w=w, beliefs=None, objective=sup.objective, n_iter=sup.n_iter,
                        n_cg_iter=sup.n_cg_iter)
    dd._call("unlabeled_outputs", w)
    T = 10.0 * lam_u if temperature_init is None else float(temperature_init)
    dd._call("start_beliefs", r)
    best_obj = _transductive_objective(dd, reg, w, l, u, lam_u)
    best_w = w.copy()
    history = []
    n_iter, n_cg = 0, sup.n_cg_iter
    precond = None
    for _outer in range(max_outer_iter):
        for _inner in range(max_inner_iter):
            dd._call("compute_g", lam_u)
            s = _beliefs_root(dd, T, r, u)
            loss_u, entropy, kl = dd._sum("set_beliefs", s, T)
            sup_part = dd._sum("transductive_parts")[0]
            obj_p = reg.value(w) + 0.5 * sup_part / l + 0.5 * lam_u / u * loss_u \
                - 0.5 * T / u * entropy
            dd._call("problem_annealing", l, u, lam_u)
            res = l2svm_mfn(dd, reg, n_weights, w0=w, outputs_ready=True,
                            preconditioner0=precond, **opts)
            precond = res.preconditioner
            w = res.w
            n_iter += 1
            n_cg += res.n_cg_iter
            parts = dd._sum("transductive_parts")
            tobj = reg.value(w) + 0.5 * parts[0] / l + 0.5 * lam_u * parts[1] / u
            loss_u_w = dd._sum("belief_sums")[0]
            history.append({
                "temperature": T, "objective_p_step": obj_p,
                "objective_w_step": reg.value(w) + 0.5 * parts[0] / l
                + 0.5 * lam_u / u * loss_u_w - 0.5 * T / u * entropy,
                "kl": kl, "entropy": entropy, "transductive_objective": tobj})
            if tobj < best_obj:
                best_obj, best_w = tobj, w.copy()
                dd._call("keep_best_beliefs")
            if kl < u * kl_tol:
                break
        else:
            report_unconverged("DA inner", f"KL >= u kl_tol after {max_inner_iter} (p, w) "
                                           f"iterations at T={T:.3g}")
        logger.info("DA T=%.4g inner=%d entropy/u=%.3g objective=%.8g best=%.8g", T,
                    _inner + 1, entropy / u, tobj, best_obj)
        if entropy < u * entropy_tol:
            break
        T /= temperature_decay
    else:
        if entropy >= u * _SOFT_ENTROPY_FACTOR * entropy_tol:
            report_unconverged("DA annealing", f"T={T * temperature_decay:.3g} with the beliefs "
                               f"still soft: entropy/u={entropy / u:.3g}")
    return DAResult(w=best_w, beliefs=None, objective=best_obj, n_iter=n_iter,
                    n_cg_iter=n_cg, history=history)


def _beliefs_root(dd, T: float, r: float, u: int, tol: float = 1e-10) -> float:
    """``2 nu`` of eq. 9: the root of ``mean_j p_j = r`` (as :func:`optimal_beliefs`)."""
    from scipy.special import logit

    def balance(s):
        sums = dd._sum("balance", s, T)
        return float(sums[0] / u) - r, float(sums[1] / u) / T

    stats = _range(dd, "g")
    shift = T * float(logit(r))
    lo, hi = stats[1] + shift, stats[2] + shift
    return safeguarded_newton(balance, lo, hi, x0=quantile(dd, "g", r, stats), tol=tol)
