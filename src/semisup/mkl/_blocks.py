"""Fused block kernels of :class:`semisup.mkl.bank.StreamingKernelBank` (issue 29).

Every dict kernel on one feature subset is an elementwise function of the inner products
``G`` of the subset (and, for Gaussians, of the squared distances ``D = |x|^2 + |z|^2 - 2 G``),
so a block of ``m`` kernels costs one matrix product and ``m`` elementwise passes.  At 10,000
rows and 100 kernels those passes, through numpy temporaries of the block's size, were most
of an MKL iteration (the combined kernel 24.3 of 31.5 CPU-s, the quadratic forms 5.3;
``benchmarks/results/mkl_streaming_profile.md``).  Here they are fused (9.9 and 1.5 CPU-s;
3.2 for the combined kernel when the bank keeps the inner products):

* Gaussians of widths that differ by powers of two share one exponential:
  ``exp(-2 g D) = exp(-g D)^2``.  The Gaussians of a subset, sorted by ``gamma``, form
  *chains* in which each ``gamma`` is ``2^s`` times the previous one exactly (``s <= 4``);
  a chain starts one vectorised ``exp`` (numpy's SIMD one) and every later member costs
  ``s`` squarings.  Squaring multiplies the relative error of the chain's start by the
  ratio of the widths, so a chain is cut at a ratio of ``2^10`` (``1e-13`` in float64);
  ``kernels='auto'`` (``gamma = 2^-3..2^3 g0``) is one chain per subset.
* The products of a chunk of rows stay in cache: the squared distances, the chain starts
  and the weighted sum (or the quadratic forms) are made per chunk of about ``2^16``
  entries, and the sum is added into the output once.

The arithmetic after the matrix product is float64 whatever the block precision, so the
float32 bank differs from the float64 one only by the rounding of ``G``.
"""

from __future__ import annotations

import numpy as np

from semisup._accel import njit

#: kinds of a program term
RBF_START, RBF_SQUARE, POLY = 0, 1, 2
#: largest ratio of widths along one chain (relative error ``ratio x eps``)
MAX_CHAIN_RATIO = 2.0 ** 10
#: entries of a chunk of rows (three float64 buffers of this size stay in L2/L3)
CHUNK_ENTRIES = 2 ** 16


class GroupProgram:
    """The dict kernels of one feature subset as a list of fused terms.

    Parameters
    ----------
    specs : list
        Checked kernel specs.
    idx : list of int
        Indices (into ``specs``) of the dict kernels on this subset.

    Attributes
    ----------
    kind : ndarray of int64
        ``RBF_START`` (a new exponential), ``RBF_SQUARE`` (the previous Gaussian squared
        ``steps`` times) or ``POLY`` (``(gamma G + coef0)^degree``; linear is degree 1,
        ``coef0 = 0``).
    chain : ndarray of int64
        Chain of each Gaussian term (``-1`` for polynomials).
    steps : ndarray of int64
        Squarings (``RBF_SQUARE``) or the integer degree (``POLY``; ``-1`` for a fractional
        degree, evaluated by ``pow``).
    gamma, coef0, degree : ndarray of float64
    kernel : ndarray of int64
        Index of the term's kernel in ``specs``.
    chain_gamma : ndarray of float64
        ``gamma`` of each chain's start.
    """

    def __init__(self, specs: list, idx: list[int]):
        rbf = sorted((i for i in idx if specs[i]["kernel"] == "rbf"),
                     key=lambda i: float(specs[i]["gamma"]))
        kind, chain, steps, gam, coef, deg, kern, chain_gamma = [], [], [], [], [], [], [], []
        prev = None
        for i in rbf:
            g = float(specs[i]["gamma"])
            s = _doubling_steps(prev, g, chain_gamma[-1] if chain_gamma else None)
            if s is None:
                chain_gamma.append(g)
                kind.append(RBF_START)
                steps.append(0)
            else:
                kind.append(RBF_SQUARE)
                steps.append(s)
            chain.append(len(chain_gamma) - 1)
            gam.append(g)
            coef.append(0.0)
            deg.append(0.0)
            kern.append(i)
            prev = g
        for i in idx:
            spec = specs[i]
            if spec["kernel"] == "rbf":
                continue
            if spec["kernel"] == "linear":
                g, c, d = 1.0, 0.0, 1.0
            else:
                g, c, d = (float(spec["gamma"]), float(spec.get("coef0", 1.0)),
                           float(spec.get("degree", 3)))
            kind.append(POLY)
            chain.append(-1)
            steps.append(int(d) if d == int(d) and 0 <= d <= 64 else -1)
            gam.append(g)
            coef.append(c)
            deg.append(d)
            kern.append(i)
        self.kind = np.asarray(kind, dtype=np.int64)
        self.chain = np.asarray(chain, dtype=np.int64)
        self.steps = np.asarray(steps, dtype=np.int64)
        self.gamma = np.asarray(gam, dtype=np.float64)
        self.coef0 = np.asarray(coef, dtype=np.float64)
        self.degree = np.asarray(deg, dtype=np.float64)
        self.kernel = np.asarray(kern, dtype=np.int64)
        self.chain_gamma = np.asarray(chain_gamma, dtype=np.float64)

    @property
    def needs_distances(self) -> bool:
        return self.chain_gamma.size > 0

    def needed(self, weights: np.ndarray) -> np.ndarray:
        """Terms to evaluate for kernel weights ``weights``: a non-zero weight, or a later
        member of the same chain that has one (it is squared from this one)."""
        w = weights[self.kernel]
        need = w != 0.0
        for t in range(self.kind.size - 2, -1, -1):
            if self.kind[t + 1] == RBF_SQUARE and need[t + 1]:
                need[t] = True
        return need


def _doubling_steps(prev: float | None, g: float, start: float | None) -> int | None:
    """``s`` with ``g == prev * 2^s`` exactly (``0 <= s <= 4``, within the chain's ratio
    cap), else ``None`` (a new chain)."""
    if prev is None or start is None or g / start > MAX_CHAIN_RATIO:
        return None
    for s in range(5):
        if g == prev * 2.0 ** s:
            return s
    return None


@njit(cache=True, nogil=True)
def _distances(G, sq_r, sq_c, D):  # pragma: no cover - compiled
    # D = max(|x_i|^2 + |z_j|^2 - 2 <x_i, z_j>, 0): round-off can make it slightly negative
    for i in range(G.shape[0]):
        si = sq_r[i]
        for j in range(G.shape[1]):
            d = si + sq_c[j] - 2.0 * np.float64(G[i, j])
            D[i, j] = d if d > 0.0 else 0.0


@njit(cache=True, nogil=True)
def _combine_rows(G, E, kind, chain, steps, gam, coef, deg, wt, need, out,
                  acc):  # pragma: no cover - compiled
    # out[i, :] += sum_t wt[t] * value_t(i, :); E[c] holds exp(-gamma_c D), squared in place
    nc = G.shape[1]
    for i in range(G.shape[0]):
        for j in range(nc):
            acc[j] = 0.0
        for t in range(kind.shape[0]):
            if not need[t]:
                continue
            w = wt[t]
            if kind[t] == 2:
                g = gam[t]
                c = coef[t]
                s = steps[t]
                if s == 1:
                    for j in range(nc):
                        acc[j] += w * (g * G[i, j] + c)
                elif s == 2:
                    for j in range(nc):
                        b = g * G[i, j] + c
                        acc[j] += w * (b * b)
                elif s == 3:
                    for j in range(nc):
                        b = g * G[i, j] + c
                        acc[j] += w * (b * b * b)
                else:
                    d = deg[t]
                    for j in range(nc):
                        acc[j] += w * (g * G[i, j] + c) ** d
                continue
            e = E[chain[t], i]
            if kind[t] == 1:
                for _ in range(steps[t]):
                    for j in range(nc):
                        e[j] = e[j] * e[j]
            if w != 0.0:
                for j in range(nc):
                    acc[j] += w * e[j]
        for j in range(nc):
            out[i, j] += acc[j]


@njit(cache=True, nogil=True)
def _quadratic_rows(G, E, kind, chain, steps, gam, coef, deg, a, b, diag0,
                    q):  # pragma: no cover - compiled
    # q[t] += sum_i a_i (b_{d_i} v_t(i, d_i) + 2 sum_{j > d_i} b_j v_t(i, j)), d_i = diag0 + i:
    # the upper triangle of a symmetric block, row i's own column at d_i
    nc = G.shape[1]
    for i in range(G.shape[0]):
        j0 = diag0 + i
        ai = a[i]
        for t in range(kind.shape[0]):
            if kind[t] == 2:
                g = gam[t]
                c = coef[t]
                s = steps[t]
                d = deg[t]
                tot = 0.0
                for j in range(j0 + 1, nc):
                    v = g * G[i, j] + c
                    if s == 1:
                        pass
                    elif s == 2:
                        v = v * v
                    elif s == 3:
                        v = v * v * v
                    else:
                        v = v ** d
                    tot += b[j] * v
                v = g * G[i, j0] + c
                v = v if s == 1 else (v * v if s == 2 else (v * v * v if s == 3 else v ** d))
                q[t] += ai * (b[j0] * v + 2.0 * tot)
                continue
            e = E[chain[t], i]
            if kind[t] == 1:
                for _ in range(steps[t]):
                    for j in range(j0, nc):
                        e[j] = e[j] * e[j]
            tot = 0.0
            for j in range(j0 + 1, nc):
                tot += b[j] * e[j]
            q[t] += ai * (b[j0] * e[j0] + 2.0 * tot)


def _chunk_rows(n_cols: int) -> int:
    return max(1, CHUNK_ENTRIES // max(n_cols, 1))


def _chain_starts(prog: GroupProgram, D: np.ndarray, E: np.ndarray, need_chain) -> None:
    """``E[c] = exp(-gamma_c D)`` for the chains in use (numpy's vectorised ``exp``)."""
    for c, g in enumerate(prog.chain_gamma):
        if need_chain is None or need_chain[c]:
            np.multiply(D, -g, out=E[c])
            np.exp(E[c], out=E[c])


def combine_block(prog: GroupProgram, G: np.ndarray, sq_r: np.ndarray, sq_c: np.ndarray,
                  weights: np.ndarray, out: np.ndarray) -> None:
    """``out += sum_k weights_k K_k`` over the kernels of one subset, from its products
    (a block of ``K(p)``, eq. 4.1 of Xu's thesis).

    Parameters
    ----------
    prog : GroupProgram
        The subset's kernels.
    G : ndarray of shape (r, c)
        Inner products of the block's rows and columns on the subset (float32 or float64).
    sq_r, sq_c : ndarray of float64
        Squared norms of the rows and the columns on the subset.
    weights : ndarray of shape (m,)
        Weight of every kernel of the bank (unit-trace factors folded in).
    out : ndarray of shape (r, c), float64
        Added to in place (a view is fine).
    """
    need = prog.needed(weights)
    if not need.any():
        return
    wt = weights[prog.kernel].astype(np.float64)
    need_chain = np.zeros(prog.chain_gamma.size, dtype=bool)
    need_chain[prog.chain[need & (prog.chain >= 0)]] = True
    r, c = G.shape
    step = _chunk_rows(c)
    D = np.empty((min(step, r), c))
    E = np.empty((prog.chain_gamma.size, min(step, r), c))
    acc = np.empty(c)
    for i0 in range(0, r, step):
        i1 = min(r, i0 + step)
        Gi = G[i0:i1]
        Ei = E[:, :i1 - i0]
        if need_chain.any():
            Di = D[:i1 - i0]
            _distances(Gi, sq_r[i0:i1], sq_c, Di)
            _chain_starts(prog, Di, Ei, need_chain)
        _combine_rows(Gi, Ei, prog.kind, prog.chain, prog.steps, prog.gamma, prog.coef0,
                      prog.degree, wt, need, out[i0:i1], acc)


def quadratic_block(prog: GroupProgram, G: np.ndarray, sq_r: np.ndarray, sq_c: np.ndarray,
                    a: np.ndarray, b: np.ndarray, diag0: int, q: np.ndarray) -> None:
    """``q_k += `` the part of ``u^T K_k u`` of a block's upper triangle, per kernel (the
    cut of eq. 4.5, ``u = alpha o y``).

    The block's rows are points ``diag0 + i`` of its columns' list (the diagonal of the
    symmetric matrix runs through column ``diag0 + i`` of row ``i``); columns left of it are
    skipped and those right of it count twice.

    Parameters
    ----------
    prog : GroupProgram
    G : ndarray of shape (r, c)
        Inner products of the rows and the columns on the subset.
    sq_r, sq_c : ndarray of float64
        Squared norms.
    a, b : ndarray of float64
        ``u`` on the rows and on the columns.
    diag0 : int
        Column of row 0's diagonal entry.
    q : ndarray of shape (m,)
        Added to in place.
    """
    r, c = G.shape
    step = _chunk_rows(c)
    D = np.empty((min(step, r), c))
    E = np.empty((prog.chain_gamma.size, min(step, r), c))
    qt = np.zeros(prog.kind.size)
    for i0 in range(0, r, step):
        i1 = min(r, i0 + step)
        Gi = G[i0:i1]
        Ei = E[:, :i1 - i0]
        if prog.needs_distances:
            Di = D[:i1 - i0]
            _distances(Gi, sq_r[i0:i1], sq_c, Di)
            _chain_starts(prog, Di, Ei, None)
        _quadratic_rows(Gi, Ei, prog.kind, prog.chain, prog.steps, prog.gamma, prog.coef0,
                        prog.degree, np.ascontiguousarray(a[i0:i1]), b, diag0 + i0, qt)
    np.add.at(q, prog.kernel, qt)
