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

from semisup._logging import report_unconverged
from semisup.regularizers import Ridge
from semisup.solvers.line_search import _PROBES, _walk
from semisup.solvers.mfn import REUSE_PRECONDITIONER, MFNResult
from semisup.solvers.roots import safeguarded_newton
from semisup.solvers.s3vm import _FIRST_PAIRS, _SOFT_ENTROPY_FACTOR, DAResult, TSVMResult

logger = logging.getLogger("semisup.distributed")

_SELECT_CAP = 4096  # values gathered to the client to finish a selection


def cgls(dd, reg, x0: np.ndarray, inverse: np.ndarray | None, tol: float, max_iter: int,
         fused: bool = True):
    """CGLS over the active rows the workers hold (:func:`semisup.solvers.cgls.cgls`).

    ``fused``: one round trip per iteration instead of two.  The workers return
    ``q^T C q`` together with ``A^T C q`` and the client updates ``A^T z`` by the
    recurrence ``A^T z -= gamma A^T C q`` (mathematically the product the single-machine
    iteration recomputes, which needs ``gamma``, hence a second round trip).

    Returns ``(x, n_iter, converged)``.
    """
    n = x0.shape[0]
    x = np.array(x0, dtype=np.float64, copy=True)
    start = dd._sum("cg_start", x)
    Rx = reg.matvec(x)
    data_r = start[:n].copy()          # A^T z
    r = data_r - Rx
    b_norm = float(np.linalg.norm(start[n:])) or 1.0
    s = r if inverse is None else inverse * r
    rho = float(r @ s)
    omega = float(r @ r)
    p = s.copy()
    threshold = (tol * b_norm) ** 2
    it = 0
    while omega > threshold and it < max_iter:
        Rp = reg.matvec(p)
        if fused:
            step = dd._sum("cg_step", p)
            curvature = float(p @ Rp) + step[0]
        else:
            curvature = float(p @ Rp) + dd._sum("cg_curvature", p)
        if curvature <= 0.0:
            break
        gamma = rho / curvature
        x += gamma * p
        Rx += gamma * Rp
        if fused:
            data_r -= gamma * step[1:]
        else:
            data_r = dd._sum("cg_update", gamma, n)
        r = data_r - Rx
        s = r if inverse is None else inverse * r
        rho_new = float(r @ s)
        omega = float(r @ r)
        p = s + (rho_new / rho) * p
        rho = rho_new
        it += 1
    return x, it, omega <= threshold


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


def l2svm_mfn(dd, reg, n_weights: int, w0: np.ndarray | None = None,
              outputs_ready: bool = False, tol: float = 1e-6, max_iter: int = 50,
              max_cg_iter: int = 10_000, loose_tol: float = 1e-2, loose_cg_iter: int = 10,
              obj_rtol: float = 1e-9, precondition="jacobi", fused: bool = True
              ) -> MFNResult:
    """L2-SVM-MFN over the problem the workers have set up (:func:`semisup.solvers.mfn.l2svm_mfn`).

    ``outputs_ready``: the workers' outputs already equal ``X w0``.  ``outputs`` of the
    result is ``None``: the outputs stay on the workers.  ``fused``: see :func:`cgls`.
    """
    if precondition not in ("jacobi", "auto", True, False, None):
        raise ValueError(f"precondition must be 'jacobi' or False on a DistributedDesign, got "
                         f"{precondition!r}")
    use_jacobi = precondition not in (False, None)
    w = np.zeros(n_weights) if w0 is None else np.array(w0, dtype=np.float64, copy=True)
    loss = dd._sum("loss") if (outputs_ready and w0 is not None) else \
        dd._sum("outputs", None if w0 is None else w)
    loose = w0 is None
    f = reg.value(w) + loss
    history = [f]
    n_cg = 0
    converged = False
    it = 0
    inverse, have_M = None, False
    while it < max_iter:
        it += 1
        cg_tol, cg_max = (loose_tol, loose_cg_iter) if loose else (tol, max_cg_iter)
        n_rows, changed = (int(v) for v in dd._sum("newton_system"))
        if use_jacobi and (not have_M or changed > REUSE_PRECONDITIONER * max(n_rows, 1)):
            diag = reg.diagonal(n_weights) + dd._sum("jacobi_diagonal", n_weights)
            inverse = np.where(diag > 0, 1.0 / np.where(diag > 0, diag, 1.0), 1.0)
            have_M = True
        w_bar, n_it, cg_ok = cgls(dd, reg, w, inverse, cg_tol, cg_max, fused)
        n_cg += n_it
        point = dd._sum("newton_point", w_bar, _PROBES)
        if cg_ok and point[0] == 0:
            w = w_bar
            f_new = reg.value(w) + dd._sum("accept_newton_point")
            history.append(f_new)
            if loose:
                loose = False
                f = f_new
                continue
            converged = True
            break
        step = w_bar - w
        Rstep = reg.matvec(step)
        delta = line_search(dd, float(w @ Rstep), float(step @ Rstep), point[1:])
        w += delta * step
        f_new = reg.value(w) + dd._sum("step", delta)
        history.append(f_new)
        logger.debug("mfn it=%d f=%.10g delta=%.3g |j|=%d cg=%d", it, f_new, delta, n_rows, n_it)
        if not loose and f - f_new <= obj_rtol * abs(f_new):
            converged = True
            break
        f = f_new
    loss = dd._sum("outputs", w)  # drop the round-off of the output updates, as on one machine
    if not converged:
        report_unconverged("mfn", f"Newton max_iter={max_iter}")
    return MFNResult(w=w, outputs=None, objective=reg.value(w) + loss, n_iter=it,
                     n_cg_iter=n_cg, converged=converged, history=history)


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


def transductive_svm(dd, n_weights: int, lam: float, lam_u: float, positive_fraction: float,
                     max_switches: int | None = None, lam_u_init: float = 1e-5,
                     lam_u_growth: float = 1.5, mfn_options: dict | None = None,
                     max_rounds: int = 100_000) -> TSVMResult:
    """:func:`semisup.linear.tsvm.transductive_svm` over a distributed design."""
    opts = dict(mfn_options or {})
    l, u = dd.n_labeled, dd.n_unlabeled
    reg = Ridge(lam)
    dd._call("problem_supervised", l)
    sup = l2svm_mfn(dd, reg, n_weights, **opts)
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
    while True:
        dd._call("problem_transductive", l, u, lam_cur)
        for _ in range(max_rounds):
            res = l2svm_mfn(dd, reg, n_weights, w0=w, outputs_ready=True, **opts)
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
    opts = dict(mfn_options or {})
    l, u = dd.n_labeled, dd.n_unlabeled
    reg = Ridge(lam)
    dd._call("problem_supervised", l)
    sup = l2svm_mfn(dd, reg, n_weights, **opts)
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
    for _outer in range(max_outer_iter):
        for _inner in range(max_inner_iter):
            dd._call("compute_g", lam_u)
            s = _beliefs_root(dd, T, r, u)
            loss_u, entropy, kl = dd._sum("set_beliefs", s, T)
            sup_part = dd._sum("transductive_parts")[0]
            obj_p = reg.value(w) + 0.5 * sup_part / l + 0.5 * lam_u / u * loss_u \
                - 0.5 * T / u * entropy
            dd._call("problem_annealing", l, u, lam_u)
            res = l2svm_mfn(dd, reg, n_weights, w0=w, outputs_ready=True, **opts)
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
