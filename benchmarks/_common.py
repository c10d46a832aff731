"""Helpers shared by the benchmark scripts: timing, peak memory, machine info, tables.

Every script prints a markdown report and writes it to ``benchmarks/results/<name>.md``
together with the command that reproduces it and a description of the machine.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import scipy.sparse as sp

RESULTS_DIR = Path(__file__).resolve().parent / "results"
REPO = Path(__file__).resolve().parent.parent


# ----------------------------------------------------------------------------- machine


def _meminfo_kib(key: str) -> int | None:
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def machine_info() -> str:
    """One markdown paragraph: CPU, cores, RAM, library versions, numba threads."""
    import numba
    import scipy
    import sklearn

    cpu = platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    ncpu = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    mem = _meminfo_kib("MemTotal")
    mem_s = f"{mem / 2**20:.1f} GiB" if mem else "unknown"
    return (f"Machine: {cpu}, nproc={ncpu}, RAM {mem_s}; Python {platform.python_version()}, "
            f"numpy {np.__version__}, scipy {scipy.__version__}, scikit-learn "
            f"{sklearn.__version__}, numba {numba.__version__} "
            f"(default threads {numba.config.NUMBA_NUM_THREADS}).")


def command_line() -> str:
    """The command that reproduces this run, relative to the repository root."""
    script = Path(sys.argv[0]).resolve()
    try:
        script = script.relative_to(REPO)
    except ValueError:
        pass
    return " ".join(["python", shlex.quote(str(script)), *map(shlex.quote, sys.argv[1:])])


# ----------------------------------------------------------------------------- timing


def _call_times(fn: Callable[[], object], repeat: int, number: int, warmup: int) -> list:
    """Mean time of ``number`` calls, for each of ``repeat`` runs (after ``warmup`` calls)."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t0) / number)
    return times


def best_time(fn: Callable[[], object], repeat: int = 5, number: int = 1,
              warmup: int = 1) -> float:
    """Minimum over ``repeat`` runs of the mean time of ``number`` calls (seconds)."""
    return min(_call_times(fn, repeat, number, warmup))


def median_time(fn: Callable[[], object], repeat: int = 5, number: int = 1,
                warmup: int = 1) -> float:
    """Median over ``repeat`` runs of the mean time of ``number`` calls (seconds)."""
    return statistics.median(_call_times(fn, repeat, number, warmup))


class Timer:
    """``with Timer() as t: ...``; then ``t.seconds``."""

    def __enter__(self) -> Timer:
        self._t0 = time.perf_counter()
        return self

    def __exit__(self, *exc) -> None:
        self.seconds = time.perf_counter() - self._t0


# ----------------------------------------------------------------------------- memory


def _status_kib(key: str) -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise KeyError(key)


def rss_bytes() -> int:
    """Current resident set size of this process."""
    return _status_kib("VmRSS") * 1024


class PeakRSS:
    """Peak resident set size over a ``with`` block.

    Resets the kernel's high-water mark (``/proc/self/clear_refs``) on entry and reads
    ``VmHWM`` on exit; where the reset is not allowed a thread samples ``VmRSS`` every
    ``interval`` seconds instead.  Attributes after the block: ``start`` (RSS on entry),
    ``peak`` (bytes) and ``method``.
    """

    def __init__(self, interval: float = 0.002):
        self.interval = interval

    def __enter__(self) -> PeakRSS:
        self.start = rss_bytes()
        try:
            with open("/proc/self/clear_refs", "w") as fh:
                fh.write("5")
            self.method = "VmHWM"
            self._thread = None
        except OSError:
            self.method = "sampled VmRSS"
            self._peak = self.start
            self._stop = threading.Event()
            self._thread = threading.Thread(target=self._sample, daemon=True)
            self._thread.start()
        return self

    def _sample(self) -> None:
        while not self._stop.is_set():
            self._peak = max(self._peak, rss_bytes())
            time.sleep(self.interval)

    def __exit__(self, *exc) -> None:
        if self._thread is None:
            self.peak = _status_kib("VmHWM") * 1024
        else:
            self._stop.set()
            self._thread.join()
            self.peak = max(self._peak, rss_bytes())


def csr_bytes(X) -> int:
    """Bytes of a CSR matrix's three arrays (or of a dense array)."""
    if sp.issparse(X):
        return int(X.data.nbytes + X.indices.nbytes + X.indptr.nbytes)
    return int(np.asarray(X).nbytes)


def run_isolated(module_args: Sequence[str], timeout: float | None = None) -> str:
    """Run ``python <args>`` in a fresh process; return its stdout (raise on failure)."""
    proc = subprocess.run([sys.executable, *module_args], capture_output=True, text=True,
                          timeout=timeout, cwd=str(REPO), env=child_env())
    if proc.returncode != 0:
        raise RuntimeError(f"subprocess {module_args} failed:\n{proc.stderr[-4000:]}")
    return proc.stdout


class Contention:
    """CPU used by *other* processes during a ``with`` block, in cores (machine is shared).

    From ``/proc/stat`` (all busy time) minus this process's and its children's CPU time.
    Attributes after the block: ``foreign_cores``, ``own_cores``, ``wall``, ``loadavg``.
    """

    @staticmethod
    def _busy() -> float:
        with open("/proc/stat") as fh:
            parts = fh.readline().split()[1:]
        v = [int(x) for x in parts]
        busy = v[0] + v[1] + v[2] + v[5] + v[6] + (v[7] if len(v) > 7 else 0)
        return busy / os.sysconf("SC_CLK_TCK")

    @staticmethod
    def _own() -> float:
        t = os.times()
        return t.user + t.system + t.children_user + t.children_system

    def __enter__(self) -> Contention:
        self._b0, self._o0, self._t0 = self._busy(), self._own(), time.perf_counter()
        return self

    def __exit__(self, *exc) -> None:
        self.wall = max(time.perf_counter() - self._t0, 1e-9)
        own = self._own() - self._o0
        self.own_cores = own / self.wall
        self.foreign_cores = max(0.0, (self._busy() - self._b0 - own) / self.wall)
        self.loadavg = os.getloadavg()

    def line(self) -> str:
        return (f"Machine load while measuring: other processes used {self.foreign_cores:.2f} "
                f"cores on average over {self.wall:.0f} s (this benchmark "
                f"{self.own_cores:.2f} cores); load average at the end "
                f"{self.loadavg[0]:.2f} / {self.loadavg[1]:.2f} / {self.loadavg[2]:.2f}.  The "
                "machine is shared with other engineers' test runs, so timings are noisy; "
                "short kernels are reported as the best of several repeats.")


@contextlib.contextmanager
def competing_load(n: int):
    """``with competing_load(n) as load:`` runs the block with ``n`` CPU-bound processes
    started beside it (stopped on exit) and measures the machine's load meanwhile
    (``load`` is a :class:`Contention`)."""
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        with Contention() as load:
            yield load
    finally:
        for h in hogs:
            h.kill()
        for h in hogs:
            h.wait()


# ----------------------------------------------------------------------------- threads


#: extra environment for benchmark subprocesses (set by ``apply_threads``); numba reads
#: NUMBA_NUM_THREADS at start-up only, so it must not be changed in a running process.
CHILD_ENV: dict[str, str] = {}


def child_env() -> dict[str, str]:
    """Environment for a benchmark subprocess."""
    return {**os.environ, **CHILD_ENV}


def add_thread_arg(ap) -> None:
    """``--one-thread``: limit numba and BLAS to one thread for the whole benchmark."""
    ap.add_argument("--one-thread", action="store_true",
                    help="numba.set_num_threads(1) and BLAS limited to 1 thread; results go "
                         "to <name>_1thread.md")


def apply_threads(args) -> tuple[str, str]:
    """Apply ``--one-thread``; return (results-name suffix, sentence for the report)."""
    if not getattr(args, "one_thread", False):
        return "", ("Threads: library defaults (numba parallel kernels above the library's "
                    "non-zero threshold; estimators limit BLAS to one thread while they fit "
                    "sparse data).")
    import numba
    from threadpoolctl import threadpool_limits

    numba.set_num_threads(1)
    apply_threads._limiter = threadpool_limits(1, user_api="blas")  # kept alive
    CHILD_ENV.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", NUMBA_NUM_THREADS="1")
    return "_1thread", ("Threads: `--one-thread`: numba limited to 1 thread (serial kernels) "
                        "and BLAS to 1 thread.")


# ----------------------------------------------------------------------------- output


def fmt(x, digits: int = 3) -> str:
    """Compact number formatting for tables."""
    if isinstance(x, str):
        return x
    if x is None or (isinstance(x, float) and not np.isfinite(x)):
        return "-"
    if isinstance(x, (int, np.integer)):
        return f"{int(x):,}"
    ax = abs(x)
    if ax != 0 and (ax >= 1e5 or ax < 1e-3):
        return f"{x:.{digits}e}"
    return f"{x:.{digits}g}" if ax < 1 else f"{x:,.{digits}f}".rstrip("0").rstrip(".")


def table(headers: Sequence[str], rows: Sequence[Sequence]) -> str:
    """A markdown table."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    for row in rows:
        lines.append("| " + " | ".join(fmt(c) for c in row) + " |")
    return "\n".join(lines)


def report(name: str, title: str, sections: Sequence[str]) -> str:
    """Assemble, print and save ``benchmarks/results/<name>.md``; return the text."""
    text = "\n\n".join([f"# {title}", f"Command: `{command_line()}`", machine_info(),
                        *sections]) + "\n"
    print(text)
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    (RESULTS_DIR / f"{name}.md").write_text(text)
    return text


# ----------------------------------------------------------------------------- data


def mnist_even_odd(split: str = "train"):
    """MNIST as CSR with labels 1 = even digit, 0 = odd digit."""
    from semisup.datasets import load_mnist

    X, digit = load_mnist(split=split)
    return X, (digit % 2 == 0).astype(np.int64)


def pick_labeled(y: np.ndarray, n_labeled: int, seed: int = 0) -> np.ndarray:
    """Sorted random indices of ``n_labeled`` rows, redrawn until every class occurs."""
    rng = np.random.default_rng(seed)
    n_classes = np.unique(y).size
    for _ in range(1000):
        idx = np.sort(rng.choice(y.shape[0], n_labeled, replace=False))
        if np.unique(y[idx]).size == n_classes:
            return idx
    raise ValueError(f"could not draw {n_labeled} labeled rows covering all classes")


def semi_targets(y: np.ndarray, labeled: np.ndarray) -> np.ndarray:
    """``y`` (classes 0..k-1) on ``labeled`` rows, -1 elsewhere."""
    out = np.full(y.shape[0], -1, dtype=np.int64)
    out[labeled] = y[labeled]
    return out


def fit_default(make: Callable[[], object], data, n_labeled, split: int):
    """Fit ``make()`` (warnings silenced) on split ``split`` of a ``bench_defaults`` data set
    with ``n_labeled`` labels; returns ``(estimator, labeled rows, unlabeled rows, y with -1,
    CPU seconds)``."""
    _, lab, unl = data.splits(n_labeled, split)[split - 1]
    y = semi_targets(data.y, lab)
    start = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = make().fit(data.X, y)
    return est, lab, unl, y, time.process_time() - start


def resumable_cells(name: str, cells, measure: Callable, load: Callable) -> list[dict]:
    """Records of ``results/<name>.jsonl``, after measuring every ``(set, labels, split)``
    of ``cells`` not in it yet (``measure(set, labels, split, data)``, each record appended
    as it comes; ``load(set)`` gives the data)."""
    jsonl = RESULTS_DIR / f"{name}.jsonl"
    records = [json.loads(x) for x in jsonl.read_text().splitlines()] if jsonl.exists() \
        else []
    done = {(r["set"], str(r["labels"]), r["split"]) for r in records}
    loaded = (None, None)
    for set_name, labels, split in cells:
        if (set_name, str(labels), split) in done:
            continue
        if loaded[0] != set_name:
            loaded = (set_name, load(set_name))
        rec = measure(set_name, labels, split, loaded[1])
        print(json.dumps(rec), flush=True)
        with open(jsonl, "a") as fh:
            fh.write(json.dumps(rec) + "\n")
        records.append(rec)
    return records


def cells_main(doc: str, name: str, cells, measure: Callable, render: Callable,
               load: Callable) -> None:
    """Command line of a cell-by-cell benchmark: measure the cells not yet in
    ``results/<name>.jsonl`` (:func:`resumable_cells`), then ``render`` every record;
    ``--render`` only renders."""
    import argparse

    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--render", action="store_true", help="report from the .jsonl only")
    args = ap.parse_args()
    render(resumable_cells(name, [] if args.render else cells, measure, load))


def secstr_full(n_labeled: int = 10000, split: int = 0, dtype=np.float64):
    """SecStr one-hot with its extra unlabeled windows: 1,273,151 x 315 CSR, 19M non-zeros.

    The 83,679 rows of the SSL-book set come first, then the 1,189,472 windows of
    :func:`semisup.datasets.load_secstr_extra` (unlabeled by construction).

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (1273151, 315)
    y_semi : ndarray of int64
        Labels (0/1) of the official ``n_labeled``-point split ``split``, -1 elsewhere.
    y : ndarray of int64
        Labels of the 83,679 pool rows, -1 for the extra rows (no label exists).
    held_out : ndarray of int64
        The pool rows outside the split (for accuracy).
    """
    from semisup.datasets import load_secstr_extra, load_sslbook, one_hot_secstr

    s = load_sslbook("secstr", n_labeled)
    extra = load_secstr_extra()
    X = sp.vstack([one_hot_secstr(s.X, dtype=dtype), one_hot_secstr(extra, dtype=dtype)],
                  format="csr")
    del extra
    y = np.concatenate([s.y, np.full(X.shape[0] - s.y.size, -1)]).astype(np.int64)
    y_semi = semi_targets(y, s.splits[split])
    return X, y_semi, y, s.unlabeled_splits[split]
