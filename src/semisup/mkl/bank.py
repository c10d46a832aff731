"""Base kernels for multiple kernel learning: specifications, the bank of Gram matrices.

A kernel *spec* is a dict ``{'kernel': 'rbf'|'poly'|'linear', 'gamma': .., 'degree': ..,
'coef0': .., 'features': None | list of column indices}`` or a callable ``f(X, Y) ->
ndarray`` (a Gram matrix).  :func:`simplemkl_kernels` lists the bank of SimpleMKL
(Rakotomamonjy et al. 2008) used in Table 4.1 of Xu's thesis: Gaussians of 10 widths
``sigma = 2^-3..2^6`` and polynomials of degree 1-3, on all features and on each single
feature, ``m = 13 (d + 1)`` kernels.  Every Gram matrix is normalised to unit trace on the
training rows (the thesis, §4.3.1); the same factor scales its out-of-sample rows.

Memory is the limit of the method: ``m`` Gram matrices of ``n x n``.  :class:`KernelBank`
checks ``m n (n + 1) / 2`` against ``max_memory`` *before* allocating, and stores the upper
triangles of the matrices in one ``(n (n + 1) / 2, m)`` array (``float64``, or ``float32``
to halve it).  Past that, :class:`StreamingKernelBank` recomputes the kernels in row blocks
at every request and holds ``O(n^2)`` whatever ``m`` (issue 29: 10,000 rows x 100 kernels).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence

import numpy as np

from semisup._accel import use_compiled
from semisup.kernels import kernel_matrix
from semisup.mkl._blocks import GroupProgram, combine_block, quadratic_block

BANK_KINDS = ("rbf", "poly", "linear")


def simplemkl_kernels(n_features: int, widths: Sequence[float] | None = None,
                      degrees: Sequence[int] = (1, 2, 3), single_features: bool = True,
                      single_feature_kinds: Sequence[str] = ("rbf", "poly")) -> list[dict]:
    """The SimpleMKL kernel bank (Xu's thesis §4.3.1; Rakotomamonjy et al. 2008).

    Parameters
    ----------
    n_features : int
        ``d``.
    widths : sequence of float, optional
        Gaussian widths ``sigma`` of ``exp(-||x - z||^2 / (2 sigma^2))``; default
        ``2^-3, ..., 2^6``.
    degrees : sequence of int
        Degrees of the polynomial kernels ``(<x, z> + 1)^degree``.
    single_features : bool
        Also build each kernel on each single feature (``m = 13 (d + 1)`` by default).
    single_feature_kinds : sequence of {'rbf', 'poly', 'linear'}
        Which kinds are repeated per feature: ``('rbf', 'poly')`` is SimpleMKL's bank,
        ``('linear',)`` the thesis's semi-supervised bank (Table 4.3: one linear kernel per
        pixel).

    Returns
    -------
    list of dict
        Kernel specs (see the module docstring).
    """
    if not isinstance(n_features, numbers.Integral) or n_features < 1:
        raise ValueError(f"n_features must be a positive integer, got {n_features!r}")
    widths = 2.0 ** np.arange(-3, 7) if widths is None else np.asarray(widths, dtype=float)
    if np.any(widths <= 0):
        raise ValueError("widths must be positive")

    def group(features):
        specs = [{"kernel": "rbf", "gamma": 1.0 / (2.0 * s * s), "features": features}
                 for s in widths]
        specs += [{"kernel": "poly", "gamma": 1.0, "coef0": 1.0, "degree": int(g),
                   "features": features} for g in degrees]
        return specs

    specs = group(None)
    if single_features:
        for j in range(n_features):
            for spec in group([j]):
                if spec["kernel"] in single_feature_kinds:
                    specs.append(spec)
            if "linear" in single_feature_kinds:
                specs.append({"kernel": "linear", "features": [j]})
    return specs


def auto_kernels(X, factors: Sequence[float] = (1 / 8, 1 / 4, 1 / 2, 1, 2, 4, 8),
                 degrees: Sequence[int] = (1, 2)) -> list[dict]:
    """A compact kernel bank scaled to the data (``kernels='auto'`` of MultipleKernelSVC).

    Gaussians ``exp(-g ||x - z||^2)`` with ``g = f * g0`` for each factor ``f``, where
    ``g0`` is the reciprocal mean squared distance (:func:`semisup.kernels.default_gamma`),
    and polynomials ``(g1 <x, z> + 1)^degree`` with ``g1`` the reciprocal mean squared row
    norm, all on all features: 9 kernels whatever ``d``.  SimpleMKL's bank
    (:func:`simplemkl_kernels`) has ``13 (d + 1)`` kernels of fixed widths, so its cost
    grows with ``d`` and its widths miss data far from unit scale (digits in 0..16: the
    semi-supervised fit on 357 rows took 134 s; on 1,560 rows it did not finish).

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, d)
        The rows the kernels are computed on.
    factors : sequence of float
        Multiples of ``g0``.
    degrees : sequence of int
        Polynomial degrees.

    Returns
    -------
    list of dict
        Kernel specs.

    Examples
    --------
    >>> import numpy as np
    >>> from semisup.mkl.bank import auto_kernels
    >>> specs = auto_kernels(np.random.default_rng(0).normal(size=(50, 4)))
    >>> len(specs), [s["kernel"] for s in specs][-3:]
    (9, ['rbf', 'poly', 'poly'])
    """
    from semisup.kernels import default_gamma

    g0 = default_gamma(X)
    sq = np.asarray(X.multiply(X).sum(axis=1)).ravel() if hasattr(X, "tocsr") \
        else np.einsum("ij,ij->i", X, X)
    mean_sq = float(np.mean(sq))
    g1 = 1.0 / mean_sq if mean_sq > 0 else 1.0
    specs = [{"kernel": "rbf", "gamma": float(f) * g0, "features": None} for f in factors]
    specs += [{"kernel": "poly", "gamma": g1, "coef0": 1.0, "degree": int(g),
               "features": None} for g in degrees]
    return specs


def check_kernel_specs(kernels, n_features: int) -> list:
    """Validate a list of kernel specs (dicts or callables); return normalised copies."""
    if isinstance(kernels, (str, dict)) or callable(kernels):
        raise ValueError("kernels must be a list of kernel specs (dicts or callables) or "
                         f"'simplemkl', got {kernels!r}")
    specs = list(kernels)
    if not specs:
        raise ValueError("kernels is an empty list: give at least one kernel spec, or "
                         "kernels='simplemkl' for the SimpleMKL bank")
    out = []
    for i, spec in enumerate(specs):
        if callable(spec):
            out.append(spec)
            continue
        if isinstance(spec, str):
            spec = {"kernel": spec}
        if not isinstance(spec, dict) or spec.get("kernel") not in BANK_KINDS:
            raise ValueError(f"kernels[{i}] must be a callable or a dict with 'kernel' in "
                             f"{BANK_KINDS}, got {spec!r}")
        spec = dict(spec)
        spec.setdefault("features", None)
        if spec["kernel"] in ("rbf", "poly"):
            spec.setdefault("gamma", 1.0 / n_features if spec["kernel"] == "rbf" else 1.0)
            if not spec["gamma"] > 0:
                raise ValueError(f"kernels[{i}]['gamma'] must be > 0, got {spec['gamma']!r}")
        if spec["features"] is not None:
            f = np.asarray(spec["features"], dtype=np.intp)
            if f.ndim != 1 or f.size == 0 or f.min() < 0 or f.max() >= n_features:
                raise ValueError(f"kernels[{i}]['features'] must list column indices in "
                                 f"[0, {n_features}), got {spec['features']!r}")
            spec["features"] = f
        out.append(spec)
    return out


def evaluate_kernel(spec, X: np.ndarray, Y: np.ndarray | None = None) -> np.ndarray:
    """The Gram matrix ``K(X, Y)`` of one spec (``Y`` defaults to ``X``)."""
    if callable(spec):
        K = np.asarray(spec(X, X if Y is None else Y), dtype=np.float64)
        expected = (X.shape[0], (X if Y is None else Y).shape[0])
        if K.shape != expected:
            raise ValueError(f"a callable kernel returned shape {K.shape}, expected "
                             f"{expected}: kernels of mismatched shapes")
        return K
    f = spec["features"]
    Xs = X if f is None else X[:, f]
    Ys = None if Y is None else (Y if f is None else Y[:, f])
    return kernel_matrix(Xs, Ys, kernel=spec["kernel"], gamma=spec.get("gamma"),
                         degree=spec.get("degree", 3), coef0=spec.get("coef0", 1.0))


def check_memory(n_kernels: int, n_samples: int, dtype, max_memory: float) -> int:
    """Bytes of ``n_kernels`` packed Gram matrices (``n (n + 1) / 2`` entries each); refuse
    when over ``max_memory``.

    Raises
    ------
    ValueError
        Before anything is allocated, with the sizes and the ways out.
    """
    n = int(n_samples)
    nbytes = int(n_kernels) * (n * (n + 1) // 2) * np.dtype(dtype).itemsize
    if nbytes > max_memory:
        raise ValueError(
            f"the kernel bank needs m n (n + 1) / 2 = {n_kernels} x {n * (n + 1) // 2} x "
            f"{np.dtype(dtype).itemsize} bytes = {nbytes / 2**30:.2f} GiB, over max_memory="
            f"{max_memory / 2**30:.2f} GiB: use fewer kernels or rows, dtype='float32', "
            "or raise max_memory")
    return nbytes


def check_deformed_memory(n_kernels: int, n_samples: int, n_labeled: int, dtype,
                          max_memory: float) -> int:
    """Bytes of semi-supervised MKL (eq. 4.10); refuse when over ``max_memory``.

    The packed bank on the labeled rows, the ``n x l`` deformation columns ``Z`` kept per
    kernel for prediction (float64) and the one full ``n x n`` kernel being deformed.

    Raises
    ------
    ValueError
        Before anything is allocated, with the sizes and the ways out.
    """
    n, n_l, m = int(n_samples), int(n_labeled), int(n_kernels)
    bank = m * (n_l * (n_l + 1) // 2) * np.dtype(dtype).itemsize
    z = m * n * n_l * 8
    full = 2 * n * n * 8
    nbytes = bank + z + full
    if nbytes > max_memory:
        raise ValueError(
            f"semi-supervised MKL needs {nbytes / 2**30:.2f} GiB (bank {bank / 2**30:.2f} "
            f"GiB + deformation columns m n l = {m} x {n} x {n_l} x 8 bytes = "
            f"{z / 2**30:.2f} GiB + two n x n kernels {full / 2**30:.2f} GiB), over "
            f"max_memory={max_memory / 2**30:.2f} GiB: use fewer kernels, labeled or "
            "unlabeled rows, or raise max_memory")
    return nbytes


def _triu(n: int) -> tuple[np.ndarray, np.ndarray]:
    return np.triu_indices(n)


class KernelBank:
    """``m`` base Gram matrices on ``n`` points, each scaled to unit trace.

    A Gram matrix is symmetric, so only its upper triangle is kept: the bank is one
    ``(n (n + 1) / 2, m)`` array (``float64``, or ``float32`` to halve it again), row ``r``
    the ``m`` kernel values of the ``r``-th pair ``i <= j`` in row-major order.  The
    combined kernel is one matrix-vector product over the bank, and the quadratic forms on
    the support vectors ``S`` read only the rows of the pairs in ``S x S``.

    Parameters
    ----------
    data : ndarray of shape (n, n, m) or (n (n + 1) / 2, m)
        The (already scaled) Gram matrices, kernel index last: full, or packed when
        ``n_samples`` is given.
    scales : ndarray of shape (m,)
        The factor each raw Gram matrix was multiplied by (``1 / trace``).
    n_samples : int, optional
        ``n`` when ``data`` is packed.

    Attributes
    ----------
    packed : ndarray of shape (n (n + 1) / 2, m)
    scales : ndarray of shape (m,)
    """

    def __init__(self, data: np.ndarray, scales: np.ndarray, n_samples: int | None = None):
        if n_samples is None:
            n = data.shape[0]
            iu, ju = _triu(n)
            data = data[iu, ju]
        else:
            n = int(n_samples)
            if data.ndim != 2 or data.shape[0] != n * (n + 1) // 2:
                raise ValueError(f"packed data must have {n * (n + 1) // 2} rows for "
                                 f"n_samples={n}, got shape {data.shape}")
        self.packed = np.ascontiguousarray(data)
        self.scales = np.asarray(scales, dtype=np.float64)
        self._n = n
        self._iu, self._ju = _triu(n)
        # row offset of pair (i, i) in the packed order
        self._row0 = (np.arange(n) * (2 * n - np.arange(n) + 1)) // 2

    @property
    def n_kernels(self) -> int:
        return self.packed.shape[1]

    @property
    def n_samples(self) -> int:
        return self._n

    @property
    def nbytes(self) -> int:
        return int(self.packed.nbytes)

    def _unpack(self, v: np.ndarray) -> np.ndarray:
        K = np.empty((self._n, self._n))
        K[self._iu, self._ju] = v
        K[self._ju, self._iu] = v
        return K

    def kernel(self, k: int) -> np.ndarray:
        """The ``k``-th (scaled) Gram matrix, as float64."""
        return self._unpack(self.packed[:, k])

    @classmethod
    def from_matrices(cls, matrices: Sequence[np.ndarray] | np.ndarray, *,
                      normalize: bool = True, dtype=np.float64, check_psd: bool = True,
                      max_memory: float = 4 * 2**30) -> KernelBank:
        """Validate precomputed Gram matrices (square, same shape, finite, symmetric, PSD).

        Raises
        ------
        ValueError
            Empty list, mismatched shapes, NaN/inf, asymmetric or indefinite matrices.
        """
        if isinstance(matrices, np.ndarray) and matrices.ndim == 2:
            matrices = [matrices]
        mats = list(matrices)
        if len(mats) == 0:
            raise ValueError("kernels is empty: give at least one Gram matrix")
        n = np.shape(mats[0])[0]
        check_memory(len(mats), n, dtype, max_memory)
        iu, ju = _triu(n)
        out = np.empty((iu.size, len(mats)), dtype=dtype)
        scales = np.ones(len(mats))
        for i, Ki in enumerate(mats):
            Ki = np.asarray(Ki, dtype=np.float64)
            if Ki.shape != (n, n):
                raise ValueError(f"kernels of mismatched shapes: kernels[{i}] has shape "
                                 f"{Ki.shape}, kernels[0] has {(n, n)}; every Gram matrix "
                                 "must be n x n on the same rows")
            scales[i] = _check_gram(Ki, i, check_psd, normalize)
            out[:, i] = Ki[iu, ju] * scales[i]
        return cls(out, scales, n_samples=n)

    @classmethod
    def from_specs(cls, specs: list, X: np.ndarray, *, normalize: bool = True,
                   dtype=np.float64, check_psd: bool = False,
                   max_memory: float = 4 * 2**30,
                   transform: Callable[[np.ndarray], np.ndarray] | None = None) -> KernelBank:
        """Compute every spec's Gram matrix on ``X`` (memory checked first).

        Dict specs are computed directly in packed form, grouped by feature subset: the
        inner products and squared distances of a subset are formed once and every kernel
        on it is an elementwise function of them (symmetric and, for these kinds, PSD by
        construction, so only finiteness and the trace are checked).  Callables, and every
        spec when ``transform`` is given, go through the full ``n x n`` matrix and all
        checks.  ``transform`` maps each raw Gram matrix before the unit-trace scaling (the
        semi-supervised deformation, eq. 4.10).
        """
        X = np.asarray(X, dtype=np.float64)
        n = X.shape[0]
        check_memory(len(specs), n, dtype, max_memory)
        iu, ju = _triu(n)
        diag = np.flatnonzero(iu == ju)
        out = np.empty((iu.size, len(specs)), dtype=dtype)
        scales = np.ones(len(specs))
        groups: dict = {}
        for i, spec in enumerate(specs):
            if callable(spec) or transform is not None:
                Ki = evaluate_kernel(spec, X)
                if transform is not None:
                    Ki = transform(Ki)
                scales[i] = _check_gram(Ki, i, check_psd or callable(spec), normalize)
                out[:, i] = Ki[iu, ju] * scales[i]
            else:
                f = spec["features"]
                groups.setdefault(None if f is None else tuple(int(c) for c in f),
                                  []).append(i)
        for feats, idx in groups.items():
            Xs = X if feats is None else X[:, list(feats)]
            G = (Xs @ Xs.T)[iu, ju] if Xs.shape[1] > 1 else Xs[iu, 0] * Xs[ju, 0]
            D = None
            for i in idx:
                spec = specs[i]
                if spec["kernel"] == "rbf" and D is None:
                    sq = G[diag]
                    D = np.maximum(sq[iu] + sq[ju] - 2.0 * G, 0.0)
                v = _values(spec, G, D)
                if not np.all(np.isfinite(v)):
                    raise ValueError(f"kernels[{i}] contains NaN or infinity: check the "
                                     "kernel's inputs and parameters")
                if check_psd:
                    _check_gram(_unpack(v, n, iu, ju), i, True, False)
                trace = float(v[diag].sum())
                if normalize and not trace > 0:
                    raise ValueError(f"kernels[{i}] has trace {trace:.3g} <= 0 and cannot "
                                     "be scaled to unit trace; drop it or pass "
                                     "normalize=False")
                scales[i] = 1.0 / trace if normalize else 1.0
                out[:, i] = v * scales[i]
        return cls(out, scales, n_samples=n)

    def combine(self, p: np.ndarray) -> np.ndarray:
        """``K(p) = sum_k p_k K_k`` (float64): one product with the packed bank."""
        p = np.asarray(p, dtype=self.packed.dtype)
        return self._unpack(self.packed @ p)

    def quadratic_forms(self, u: np.ndarray) -> np.ndarray:
        """``q_k = u^T K_k u`` for every kernel.

        ``u = alpha o y`` is zero off the support vectors ``S``; only the rows of the pairs
        in ``S x S`` are read.
        """
        u = np.asarray(u, dtype=np.float64)
        S = np.flatnonzero(u)
        if S.size == 0:
            return np.zeros(self.n_kernels)
        # pairs a <= b of S, weighted 2 u_a u_b off the diagonal
        a, b = np.triu_indices(S.size)
        w = u[S][a] * u[S][b]
        w[a != b] *= 2.0
        if S.size > 0.7 * self._n:          # gathering would copy most of the bank
            full = np.zeros(self.packed.shape[0])
            full[self._row0[S[a]] + S[b] - S[a]] = w
            return np.asarray(full.astype(self.packed.dtype, copy=False) @ self.packed,
                              dtype=np.float64)
        rows = self.packed[self._row0[S[a]] + S[b] - S[a]]
        return np.asarray(w.astype(self.packed.dtype, copy=False) @ rows, dtype=np.float64)


def _values(spec: dict, G: np.ndarray, D: np.ndarray | None) -> np.ndarray:
    """A dict spec's kernel values from the inner products ``G`` of its features (and, for
    ``'rbf'``, the squared distances ``D``): every kernel on one feature subset is an
    elementwise function of the same ``G``/``D``, which are formed once per subset."""
    kind = spec["kernel"]
    if kind == "linear":
        return G
    if kind == "poly":
        return (spec["gamma"] * G + spec.get("coef0", 1.0)) ** spec.get("degree", 3)
    return np.exp(-spec["gamma"] * D)


def _unpack(v: np.ndarray, n: int, iu: np.ndarray, ju: np.ndarray) -> np.ndarray:
    K = np.empty((n, n))
    K[iu, ju] = v
    K[ju, iu] = v
    return K


def _check_gram(K: np.ndarray, i: int, check_psd: bool, normalize: bool) -> float:
    """Validate one Gram matrix; return its unit-trace scale."""
    if not np.all(np.isfinite(K)):
        raise ValueError(f"kernels[{i}] contains NaN or infinity: check the kernel's inputs "
                         "and parameters")
    scale = float(np.max(np.abs(K))) or 1.0
    if not np.allclose(K, K.T, rtol=0, atol=1e-8 * scale):
        raise ValueError(f"kernels[{i}] is not symmetric: a Gram matrix must be; symmetrise "
                         "it with (K + K.T) / 2 if the asymmetry is round-off")
    if check_psd:
        low = float(np.linalg.eigvalsh(K)[0])
        if low < -1e-8 * K.shape[0] * scale:
            raise ValueError(f"kernels[{i}] is not positive semi-definite (smallest "
                             f"eigenvalue {low:.3g}): MKL needs PSD base kernels")
    if not normalize:
        return 1.0
    trace = float(np.trace(K))
    if not trace > 0:
        raise ValueError(f"kernels[{i}] has trace {trace:.3g} <= 0 and cannot be scaled to "
                         "unit trace; drop it or pass normalize=False")
    return 1.0 / trace


def kernel_sum(specs: list, w: np.ndarray, X: np.ndarray, Y: np.ndarray, *,
               dtype=np.float64, out: np.ndarray | None = None) -> np.ndarray:
    """``sum_k w_k K_k(X, Y)`` over the specs with ``w_k != 0`` (unscaled kernels).

    The inner products (and, for Gaussians, squared distances) of each feature subset are
    formed once and shared by all its kernels (:func:`_values`), so ``m`` kernels on one
    subset cost one matrix product plus ``m`` elementwise passes.

    Parameters
    ----------
    specs : list
        Checked kernel specs (:func:`check_kernel_specs`).
    w : ndarray of shape (m,)
        Weight of each kernel (fold the unit-trace scales in).
    X, Y : ndarray of shape (n_X, d) and (n_Y, d)
        Dense rows.
    dtype : numpy dtype
        Precision of the products and elementwise passes.
    out : ndarray of shape (n_X, n_Y), optional
        Added to in place (a view into a larger matrix is fine).

    Returns
    -------
    ndarray of shape (n_X, n_Y)
        The weighted sum of the kernels; ``out`` itself when given.
    """
    if out is None:
        out = np.zeros((X.shape[0], Y.shape[0]))
    groups: dict = {}
    for i, spec in enumerate(specs):
        if w[i] == 0.0:
            continue
        if callable(spec):
            out += w[i] * evaluate_kernel(spec, X, Y)
            continue
        f = spec["features"]
        groups.setdefault(None if f is None else tuple(int(c) for c in f), []).append(i)
    for key, idx in groups.items():
        Xs = np.asarray(X if key is None else X[:, list(key)], dtype=dtype)
        Ys = np.asarray(Y if key is None else Y[:, list(key)], dtype=dtype)
        G = Xs @ Ys.T
        D = None
        for i in idx:
            if specs[i]["kernel"] == "rbf" and D is None:
                D = (np.einsum("ij,ij->i", Xs, Xs)[:, None]
                     + np.einsum("ij,ij->i", Ys, Ys)[None, :] - 2.0 * G)
                np.maximum(D, 0.0, out=D)
            out += w[i] * _values(specs[i], G, D)
    return out


#: combined ``n x n`` float64 kernels alive at once: SimpleMKL's line search holds ``K(p)``,
#: ``K(D)``, the segment's end and a trial point; the level method and SILP one kernel and
#: the SVM's copy at most
DENSE_KERNELS = {"simple": 4, "level": 2, "silp": 2}


def check_streaming_memory(n_samples: int, solver: str, block_bytes: int,
                           max_memory: float) -> int:
    """Bytes of MKL on a :class:`StreamingKernelBank`; refuse when over ``max_memory``.

    Nothing of size ``m n^2`` is stored: the footprint is the combined ``n x n`` float64
    kernels of the solver (:data:`DENSE_KERNELS`) and the block temporaries.

    Raises
    ------
    ValueError
        Before anything is allocated, with the sizes and the ways out.
    """
    n = int(n_samples)
    k = DENSE_KERNELS.get(solver, 4)
    nbytes = k * n * n * 8 + int(block_bytes)
    if nbytes > max_memory:
        raise ValueError(
            f"streaming MKL with solver={solver!r} holds {k} combined n x n kernels = {k} x "
            f"{n} x {n} x 8 bytes (+ {block_bytes / 2**20:.0f} MiB of blocks) = "
            f"{nbytes / 2**30:.2f} GiB, over max_memory={max_memory / 2**30:.2f} GiB: use "
            "fewer rows, solver='level', or raise max_memory")
    return nbytes


class StreamingKernelBank:
    """``m`` base kernels on ``n`` points evaluated on the fly, in row blocks.

    The packed :class:`KernelBank` stores ``m n (n + 1) / 2`` numbers (about 20 GB in
    float32 for ``n = 10,000`` and ``m = 100``).  This bank stores only ``X``, per feature
    subset of the dict specs, and the unit-trace factors; every request recomputes the
    kernels it needs:

    * :meth:`combine` forms ``K(p) = sum_k p_k K_k`` (eq. 4.1) block of rows by block of
      rows over the upper triangle (the lower one is its mirror), skipping ``p_k = 0``: the
      inner products (and squared distances) of a feature subset are formed once per block
      and shared by all its kernels, by :func:`kernel_sum` or, with ``compiled``, by the
      fused kernels of :mod:`semisup.mkl._blocks` (one exponential per chain of Gaussian
      widths, cache-sized passes).  ``O(n^2 (d + m))`` time, ``O(n^2)`` memory (the
      output); with ``cache_bytes`` the inner products are kept, ``O(n^2 m)`` time and
      ``O(n^2 s)`` memory for ``s`` feature subsets.
    * :meth:`quadratic_forms` evaluates the kernels on the upper triangle of the support
      vectors only, ``O(|S|^2 (d + m))``.

    The same interface as :class:`KernelBank` for :class:`MKLProblem` and the solvers; it
    trades the bank's ``O(m n^2)`` memory for recomputing ``m n^2`` kernel values per SVM
    solve (the packed bank reads as many numbers from memory instead).

    Parameters
    ----------
    specs : list
        Checked kernel specs (:func:`check_kernel_specs`); callables are evaluated on full
        blocks and checked once (symmetry, PSD is not checked) at construction.
    X : ndarray of shape (n, d)
        Dense rows.
    normalize : bool
        Scale each kernel to unit trace (the traces come from the diagonals, ``O(n d)``).
    dtype : numpy dtype
        Precision of the block computations (``float32`` roughly halves their time); the
        combined kernel is float64.
    block_bytes : int
        Bytes of the temporaries of one block (rows per block ``~ block_bytes / (32 n)``).
    compiled : bool or 'auto'
        Evaluate the dict kernels with the fused kernels of :mod:`semisup.mkl._blocks`
        (Gaussians whose widths differ by powers of two share one exponential, every pass
        after the matrix product stays in cache; the combined kernel of 10,000 rows x 100
        kernels in 9.9 CPU-s instead of 24.3, ``benchmarks/results/mkl_streaming_profile.md``)
        rather than numpy passes over the block.  ``'auto'``: when ``n^2`` reaches
        :data:`semisup._accel.COMPILE_MIN_SIZE` (numba's start-up is not repaid below).
    cache_bytes : float
        With the fused kernels, keep the inner products of every feature subset's blocks
        between requests when they fit in this many bytes (``cache_nbytes``: one ``n x n``
        upper triangle per subset in ``dtype``, 2 GB for 10 subsets of 10,000 rows in
        float32); :meth:`combine` then skips the matrix products.  0: never.
    """

    def __init__(self, specs: list, X: np.ndarray, *, normalize: bool = True,
                 dtype=np.float64, block_bytes: int = 2**27, compiled: bool | str = "auto",
                 cache_bytes: float = 0):
        X = np.asarray(X, dtype=np.float64)
        if compiled not in (True, False, "auto"):
            raise ValueError(f"compiled must be True, False or 'auto', got {compiled!r}")
        if X.ndim != 2:
            raise ValueError(f"X must be a 2-d array of rows, got shape {X.shape}")
        if not (isinstance(block_bytes, numbers.Integral) and block_bytes > 0):
            raise ValueError(f"block_bytes must be a positive integer, got {block_bytes!r}")
        n = X.shape[0]
        self.specs = list(specs)
        self._n = n
        self._X = X
        self._dtype = np.dtype(dtype)
        self.block_bytes = int(block_bytes)
        self._rows = max(1, int(block_bytes) // (32 * max(n, 1)))
        self._groups: dict = {}
        self._callables = []
        for i, spec in enumerate(self.specs):
            if callable(spec):
                self._callables.append(i)
                continue
            f = spec["features"]
            key = None if f is None else tuple(int(c) for c in f)
            self._groups.setdefault(key, []).append(i)
        # per feature subset: the columns (in the block precision) and squared row norms
        self._feats = {}
        for key in self._groups:
            Xs = X if key is None else X[:, list(key)]
            Xs = np.ascontiguousarray(Xs, dtype=self._dtype)
            self._feats[key] = (Xs, np.einsum("ij,ij->i", Xs, Xs))
        # the fused kernels (:mod:`semisup.mkl._blocks`) pay a numba start-up of seconds:
        # by default only where the n^2 kernel values per kernel repay it
        self.compiled = bool(use_compiled(n * n)) if compiled == "auto" else bool(compiled)
        self._programs = {key: GroupProgram(self.specs, idx)
                          for key, idx in self._groups.items()} if self.compiled else {}
        # float64 squared norms of the rows as stored (float32 rows in float32), so that
        # D = |x|^2 + |z|^2 - 2 G is consistent with the rounded G
        self._sq64 = {key: np.einsum("ij,ij->i", *(2 * (Xs.astype(np.float64),)))
                      for key, (Xs, _) in self._feats.items()} if self.compiled else {}
        # the inner products of every subset's blocks do not change between iterations:
        # kept when they fit cache_bytes (one n x n upper triangle per subset), the combined
        # kernel costs only the elementwise passes
        entries = sum((min(n, s + self._rows) - s) * (n - s) for s in range(0, n, self._rows))
        need = len(self._groups) * entries * self._dtype.itemsize
        self._cache = {} if self.compiled and 0 < need <= cache_bytes else None
        self.cache_nbytes = need if self._cache is not None else 0
        self.scales = np.ones(len(self.specs))
        for key, idx in self._groups.items():
            sq = self._feats[key][1].astype(np.float64)
            for i in idx:
                diag = _values(self.specs[i], sq, np.zeros_like(sq))
                self._set_scale(i, diag, normalize)
        for i in self._callables:
            K = evaluate_kernel(self.specs[i], X)
            self.scales[i] = _check_gram(K, i, False, normalize)

    def _set_scale(self, i: int, diag: np.ndarray, normalize: bool) -> None:
        if not np.all(np.isfinite(diag)):
            raise ValueError(f"kernels[{i}] contains NaN or infinity: check the kernel's "
                             "inputs and parameters")
        trace = float(diag.sum())
        if normalize and not trace > 0:
            raise ValueError(f"kernels[{i}] has trace {trace:.3g} <= 0 and cannot be scaled "
                             "to unit trace; drop it or pass normalize=False")
        self.scales[i] = 1.0 / trace if normalize else 1.0

    @property
    def n_kernels(self) -> int:
        return len(self.specs)

    @property
    def n_samples(self) -> int:
        return self._n

    @property
    def nbytes(self) -> int:
        """Memory held between requests (the feature copies and the product cache)."""
        return int(sum(Xs.nbytes + sq.nbytes for Xs, sq in self._feats.values())
                   + self.cache_nbytes)

    def combine(self, p: np.ndarray) -> np.ndarray:
        """``K(p) = sum_k p_k K_k`` (float64), computed block by block.

        Parameters
        ----------
        p : ndarray of shape (m,)
            Weight of each (scaled) kernel; kernels with ``p_k = 0`` are skipped.

        Returns
        -------
        ndarray of shape (n, n)
            The combined Gram matrix, float64.
        """
        w = np.asarray(p, dtype=np.float64) * self.scales
        n, b = self._n, self._rows
        K = np.zeros((n, n))
        for start in range(0, n, b):
            stop = min(n, start + b)
            # the block's upper part, diagonal block included; the rest is its mirror
            if self.compiled:
                self._combine_fused(w, start, stop, K[start:stop, start:])
            else:
                kernel_sum(self.specs, w, self._X[start:stop], self._X[start:],
                           dtype=self._dtype, out=K[start:stop, start:])
            K[stop:, start:stop] = K[start:stop, stop:].T
        return K

    def _products(self, key, start: int, stop: int) -> np.ndarray:
        """Inner products of rows ``start:stop`` with rows ``start:`` on subset ``key``."""
        G = None if self._cache is None else self._cache.get((key, start))
        if G is None:
            Xs = self._feats[key][0]
            G = Xs[start:stop] @ Xs[start:].T
            if self._cache is not None:
                self._cache[(key, start)] = G
        return G

    def _combine_fused(self, w: np.ndarray, start: int, stop: int, out: np.ndarray) -> None:
        """One block of :meth:`combine` through the fused kernels (callables as before)."""
        for key, prog in self._programs.items():
            if not prog.needed(w).any():
                continue
            sq64 = self._sq64[key]
            combine_block(prog, self._products(key, start, stop), sq64[start:stop],
                          sq64[start:], w, out)
        for i in self._callables:
            if w[i] != 0.0:
                out += w[i] * evaluate_kernel(self.specs[i], self._X[start:stop],
                                              self._X[start:])

    def kernel(self, k: int) -> np.ndarray:
        """The ``k``-th (scaled) Gram matrix.

        Parameters
        ----------
        k : int
            Index of the kernel in ``specs``.

        Returns
        -------
        ndarray of shape (n, n)
            ``K_k`` scaled by its unit-trace factor, float64.
        """
        e = np.zeros(self.n_kernels)
        e[k] = 1.0
        return self.combine(e)

    def quadratic_forms(self, u: np.ndarray) -> np.ndarray:
        """``q_k = u^T K_k u`` for every kernel, from the support vectors ``u != 0`` only.

        Parameters
        ----------
        u : ndarray of shape (n,)
            The vector, zero off the support vectors (``u = alpha o y``).

        Returns
        -------
        ndarray of shape (m,)
            ``u^T K_k u`` for each (scaled) kernel ``K_k``.
        """
        u = np.asarray(u, dtype=np.float64)
        S = np.flatnonzero(u)
        q = np.zeros(self.n_kernels)
        if S.size == 0:
            return q
        uS = u[S]
        b = max(1, self.block_bytes // (32 * S.size))
        if self.compiled:
            return self._quadratic_fused(S, uS, b)
        for start in range(0, S.size, b):
            rows = S[start:start + b]
            ur = uS[start:start + b]
            for key, idx in self._groups.items():
                Xs, sq = self._feats[key]
                G = Xs[rows] @ Xs[S].T
                D = None
                for i in idx:
                    if self.specs[i]["kernel"] == "rbf" and D is None:
                        D = sq[rows][:, None] + sq[S][None, :] - 2.0 * G
                        np.maximum(D, 0.0, out=D)
                    q[i] += float(ur @ (_values(self.specs[i], G, D) @ uS))
            for i in self._callables:
                q[i] += float(ur @ (evaluate_kernel(self.specs[i], self._X[rows],
                                                    self._X[S]) @ uS))
        return q * self.scales

    def _quadratic_fused(self, S: np.ndarray, uS: np.ndarray, b: int) -> np.ndarray:
        """:meth:`quadratic_forms` through the fused kernels, on the upper triangle of
        ``S x S`` (row blocks against the columns from their own diagonal on)."""
        q = np.zeros(self.n_kernels)
        for key, prog in self._programs.items():
            XS, sqS = self._feats[key][0][S], self._sq64[key][S]
            for start in range(0, S.size, b):
                stop = min(S.size, start + b)
                quadratic_block(prog, XS[start:stop] @ XS[start:].T, sqS[start:stop],
                                sqS[start:], uS[start:stop], uS[start:], 0, q)
        for start in range(0, S.size, b):
            rows = S[start:start + b]
            ur = uS[start:start + b]
            for i in self._callables:
                q[i] += float(ur @ (evaluate_kernel(self.specs[i], self._X[rows],
                                                    self._X[S]) @ uS))
        return q * self.scales
