"""Compiled kernels on demand.

Importing numba costs about half a second and compiling the library's kernels a few seconds
on first use (once per installation: numba's on-disk cache keeps them).  Small problems
cannot repay either, so every kernel has a numpy/scipy twin, and :func:`use_compiled`
decides by problem size which one runs.  :func:`njit` defers ``import numba`` and the
compilation to the first call of a kernel, so that a process solving only small problems
never loads numba.

Numba's cache lives next to the sources (``__pycache__``) when that directory is writable and
in the user's cache directory (``~/.cache/numba`` or ``NUMBA_CACHE_DIR``) otherwise, e.g. for
a read-only system install: the tests, the demo and the command line share one cache and no
kernel is compiled twice.

Numba's parallel kernels run on an OpenMP runtime whose idle threads spin by default.  On a
machine whose cores are busy with other work the spinning threads steal the time of the
working ones and a parallel product runs slower than the serial one (measured 2-3x slower
with one of two cores busy).  :func:`import_numba` therefore asks OpenMP to let idle threads
sleep (``OMP_WAIT_POLICY=PASSIVE``) before numba starts its runtime, unless the user chose a
policy; every numba import of the library goes through it.

With sleeping idle threads the parallel kernels stay faster than the serial ones on a busy
machine (measured under twice as many competing processes as cores: the product pair 0.59x
the serial time, DA 0.58-0.70x; ``benchmarks/bench_thread_policy.py``), so they keep every
numba thread by default.  ``SEMISUP_THREAD_POLICY=load`` caps the team at the cores other
processes leave free (:func:`semisup.solvers._kernels.parallel_threads`), for a fit that should
not take more than its share of a shared machine.
"""

from __future__ import annotations

import functools
import os

#: Problems with fewer stored entries (non-zeros, or loss terms) than this run on numpy and
#: scipy.sparse; larger ones on the compiled kernels.  At this size a numpy pass costs a
#: fraction of a millisecond more than the fused kernel, while a cold start of numba costs
#: seconds.  ``SEMISUP_COMPILE_MIN_SIZE`` overrides it (0: always compiled).
COMPILE_MIN_SIZE = int(os.environ.get("SEMISUP_COMPILE_MIN_SIZE", 200_000))

#: stands for ``numba.prange`` in kernel bodies until numba is loaded
prange = range

_BOUND_MODULES: set[str] = set()


#: A loss term or vector entry costs several numpy temporaries where a stored entry costs one
#: multiply-add: vectors of this many tenths of :data:`COMPILE_MIN_SIZE` go compiled.
VECTOR_FRACTION = 0.1


def use_compiled(size: int) -> bool:
    """Whether a matrix with ``size`` stored entries should be multiplied by compiled kernels."""
    return size >= COMPILE_MIN_SIZE


def use_compiled_vectors(length: int) -> bool:
    """Whether passes over vectors (loss terms, CG updates) of ``length`` should be compiled."""
    return length >= VECTOR_FRACTION * COMPILE_MIN_SIZE


def import_numba():
    """``import numba``, after choosing a passive OpenMP wait policy (see the module notes).

    The policy is read once, when the OpenMP runtime starts, and only by the runtime numba
    loads (scikit-learn and BLAS bring their own), so it is set here and not at package
    import.  An ``OMP_WAIT_POLICY`` already in the environment is left alone.
    """
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    import numba

    return numba


class LazyKernel:
    """A function to be compiled by ``numba.njit(**options)`` on its first call.

    On that call the numba dispatchers replace the lazy kernels (and :data:`prange`) among
    the globals of the defining module, so that compiled code calling other kernels of the
    module (or imported from another) sees numba functions.
    """

    def __init__(self, func, options: dict):
        self.py_func = func
        self._options = options
        self._dispatcher = None
        functools.update_wrapper(self, func)

    @property
    def dispatcher(self):
        """The numba dispatcher (created, and the module bound, on first access)."""
        if self._dispatcher is None:
            numba = import_numba()
            self._dispatcher = numba.njit(**self._options)(self.py_func)
            _bind_module(self.py_func.__globals__)
        return self._dispatcher

    def __call__(self, *args):
        return self.dispatcher(*args)


def _bind_module(namespace: dict) -> None:
    name = namespace.get("__name__")
    if name in _BOUND_MODULES:
        return
    _BOUND_MODULES.add(name)
    numba = import_numba()

    for key, value in list(namespace.items()):
        if isinstance(value, LazyKernel):
            namespace[key] = value.dispatcher
        elif key == "prange" and value is range:
            namespace[key] = numba.prange


def njit(**options):
    """``numba.njit(**options)``, applied on the first call of the function."""

    def decorate(func):
        return LazyKernel(func, options)

    return decorate
