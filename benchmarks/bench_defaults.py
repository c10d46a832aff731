"""Every public classifier with its defaults against its supervised counterpart (issue 26).

What a new user gets: each classifier exported by :mod:`semisup` that can be built with no
arguments (discovered from ``semisup.__all__`` when the script runs, so classifiers added
later are covered), fitted with its defaults, against scikit-learn's supervised counterpart
with *its* defaults fitted on the same labeled rows (:data:`COUNTERPART`).

Data.  Every SSL-book set (g241c, g241d, digit1, usps, coil2, coil, bci, text) with its
official splits (the first ``--splits`` of the 12) at 10 and 100 labels; the small UCI sets
of ``shared/data/uci_small`` (as distributed: the LIBSVM copies scaled to [-1, 1], the UCI
files raw, the ID column of LIBSVM's breast-cancer dropped, ``?`` in house-votes = 0 "did not
vote", in wpbc the column median) and the IDA sets of ``shared/data/ida_benchmarks`` (pool =
train + test of realisation 1).  Sets over 2,000 rows are subsampled to 2,000 (fixed seed);
for the UCI / IDA sets split ``s`` draws the labeled rows stratified at random with seed
``s`` (every class at least once), all other rows are unlabeled.

Measured per (classifier, set, labels, split): accuracy on the unlabeled rows
(``transduction_`` of a semi-supervised model, ``predict`` of a supervised one on those
rows), fit time, collapse (one class for every unlabeled row while the labeled rows hold
several) and whether the estimator warned about it (``CollapseWarning``), and whether the fit
finished within ``--timeout`` seconds: a fit has *timed out* when both its wall time and its
CPU time (all its threads) pass the timeout, so that a loaded machine does not blame the
estimator for other processes' work.  Every fit runs in a forked child process killed when it
times out, or after ``--kill-after`` seconds of wall time whatever its CPU time (one child per
classifier, set and label count serves all its splits; after a timeout the later splits of
that cell are recorded as not run); an exception is recorded by the first line of its message
and never stops the run.  Fits run one at a time.  Estimators with a ``random_state`` get
``random_state=0`` (repeatable runs); nothing else is changed.  A classifier tagged
``positive_only`` (SemiSupervisedNB's multinomial model of counts) is *not applicable* to a
set with a negative feature: its cells there are not run and not counted (see
:func:`applicable`), as MultinomialNB is not run on non-count data.  Each child is limited to
``--memory-gb`` of address space (the machine is shared).  The supervised counterparts
(LogisticRegression, SVC, and MultinomialNB on count data) are fitted in every cell.

Checks computed (section 2 of the report): every classifier finishes and reaches its
counterpart minus 1 point on at least 90 % of its cells; the AutoClassifier is never more than
1 point below LogisticRegression and SVC, within 1 point of the best single method of the
cell on at least 75 % of cells, and its *cost ratio* (its CPU time / the median CPU time of
the semi-supervised classifiers' default fits in the same cell) is at most 10; on each
SSL-book set where the book (ch. 21, 100 labels) reports a gain of TSVM or LapRLS over the
SVM, the best semi-supervised default beats the best supervised counterpart.

A *cell* is (classifier, set, labels): its accuracy is the mean over the splits; it
*finished* when every split finished within the timeout without an error.

Raw rows go to ``benchmarks/results/defaults.jsonl`` as they are measured (``--resume``
continues a partial run, ``--render`` rewrites the report from them), the report to
``benchmarks/results/defaults.md``.

Run (the full benchmark, one fit at a time; about 5 h on an idle 2-core machine, several times
that on a loaded one, see the report's load line)::

    nice -n 10 python benchmarks/bench_defaults.py            # then --resume if stopped
    python benchmarks/bench_defaults.py --render
    python benchmarks/bench_defaults.py --quick                # smoke run: defaults_quick.md
    python benchmarks/bench_defaults.py --pool SSL_RUN UCI_RUN --name POOLED  # one report
"""

from __future__ import annotations

import argparse
import inspect
import json
import multiprocessing as mp
import os
import statistics
import sys
import tarfile
import time
import traceback
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import RESULTS_DIR, command_line, fmt, machine_info, table  # noqa: E402

# ----------------------------------------------------------------------------- constants

SSLBOOK = ["g241c", "g241d", "digit1", "usps", "coil2", "coil", "bci", "text"]
UCI = ["ionosphere", "sonar", "breast-cancer", "pima", "wpbc", "heart", "house-votes", "wdbc",
       "australian", "german"]
IDA = ["ida-banana", "ida-breast-cancer", "ida-german", "ida-image", "ida-titanic",
       "ida-waveform"]
#: not in the issue's list (so not in ``all``): a count-text set (MultinomialNB's domain) and
#: multi-class sets (dna 3 classes, satimage 6, segment 7 with raw features, the ten USPS
#: digits), for the "which method for my data" summary and the issue's unseen tasks of
#: many classes; ``--sets extra`` (``results/defaults_r3s11_extra.md``)
EXTRA = ["pcmac", "segment", "dna", "satimage", "usps10"]
#: many classes, dense, as the issue's held-out tasks (20 objects, 26 letters): 20 Newsgroups
#: (1,500 test posts, 75 per group, TF-IDF -> 300 LSA dimensions, rows of unit length) and
#: the ten MNIST digits (2,000 test images, pixels / 255); ``--sets many``, usually with
#: ``--per-class --labels 2`` (two labeled rows per class, as the held-out object-image task)
MANY = ["news20", "mnist10"]
GROUPS = {"sslbook": SSLBOOK, "uci": UCI, "ida": IDA, "all": SSLBOOK + UCI + IDA,
          "extra": EXTRA, "many": MANY}
KNOWN = SSLBOOK + UCI + IDA + EXTRA + MANY
MAX_ROWS = 2000
SUBSAMPLE_SEED = 0

AUTO = "AutoClassifier"
LR, SVC_, MNB = "LogisticRegression", "SVC", "MultinomialNB"
#: the supervised counterparts (scikit-learn defaults, fitted on the labeled rows only)
SUPERVISED = (LR, SVC_, MNB)

# rules resolved per classifier (and data) by :func:`counterpart`
BY_KERNEL = "LogisticRegression if kernel='linear' else SVC"
NB_IF_COUNTS = "MultinomialNB on count data, else LogisticRegression"
BOTH = "LogisticRegression and SVC"

#: classifier -> supervised counterpart (the one place the mapping lives).  Linear methods
#: -> LogisticRegression; kernel and graph methods and everything not listed -> SVC; the
#: wrappers (self-/co-/tri-training) -> LogisticRegression, which is their default base
#: model; a method with a ``kernel`` parameter by its default kernel.
COUNTERPART: dict[str, str] = {
    "L2SVM": LR, "RLSClassifier": LR, "TransductiveSVM": LR, "DeterministicAnnealingSVM": LR,
    "LinearLapRLS": LR, "LinearLapSVM": LR, "CCCPS3VM": LR, "MixtureSSL": LR,
    "AuxiliarySVM": LR, "SelfTraining": LR, "CoTraining": LR, "TriTraining": LR,
    "S4VM": BY_KERNEL, "UniversumSVM": BY_KERNEL, "ConvexTSVM": BY_KERNEL,
    "RhoTSVM": BY_KERNEL, "SDPRelaxedTSVM": BY_KERNEL,
    "SemiSupervisedNB": NB_IF_COUNTS,
    AUTO: BOTH,
}
#: library classifiers that ignore unlabeled rows (left out of the "semi-supervised" medians)
SUPERVISED_LIBRARY = {"L2SVM", "RLSClassifier"}

#: SSL book, ch. 21, 100 labels: mean test error (%) of SVM, TSVM, LapRLS
#: (``shared/papers/reference-facts.md``); COIL is the 6-class set ``coil``.
BOOK_ERRORS = {
    "g241c": (23.1, 18.5, 24.4), "g241d": (24.6, 22.4, 26.5), "digit1": (5.5, 6.2, 2.9),
    "usps": (9.8, 9.8, 4.7), "coil": (22.9, 25.8, 11.9), "bci": (34.3, 33.3, 31.4),
    "text": (26.5, 24.5, 23.6),
}

QUICK = dict(sets=["bci", "heart"], labels=[10], splits=1,
             classifiers=["L2SVM", "TransductiveSVM", "LapRLS", AUTO])

#: test hooks: extra classifier factories (name -> zero-argument callable; seen by forked
#: children only) and a forced multiprocessing start method (None: :func:`_context` decides)
EXTRA_FACTORIES: dict[str, Callable[[], object]] = {}
START_METHOD: str | None = None

STARTUP_TIMEOUT = 120.0  # seconds for a child to reach its first fit
GRACE = 2.0  # seconds past the timeout for the child's result to arrive
POLL = 0.25  # seconds between looks at a running fit


# ----------------------------------------------------------------------------- data


@dataclass
class DataSet:
    """A data set ready for fitting: class codes 0..k-1 and the labeled draws."""

    name: str
    group: str
    X: object
    y: np.ndarray
    official: dict = field(default_factory=dict)  # n_labeled -> list of labeled index arrays

    @property
    def n_classes(self) -> int:
        return int(np.unique(self.y).size)

    @property
    def counts(self) -> bool:
        """Non-negative integer features (word counts): MultinomialNB's domain."""
        vals = self.X.data if sp.issparse(self.X) else np.asarray(self.X)
        return bool(vals.size and vals.min() >= 0 and np.all(vals == np.round(vals)))

    def category(self) -> str:
        """Data type for the "which method for my data" summary."""
        n, d = self.X.shape
        if sp.issparse(self.X) and d > 1000:
            return "sparse text"
        if self.n_classes > 2:
            return "many classes"
        if d <= 20:
            return "low-dimensional"
        return "dense small"

    def official_split(self, n_labeled: int, split: int) -> tuple[np.ndarray, np.ndarray,
                                                                  np.ndarray]:
        """Labeled rows, unlabeled rows and the labels with ``-1`` on the unlabeled rows, of
        split ``split`` (1-based) with ``n_labeled`` labels: the official one where the set
        has them, else the stratified draw with seed ``split`` (as :meth:`splits`)."""
        if n_labeled in self.official:
            lab = np.sort(np.asarray(self.official[n_labeled][split - 1], dtype=np.int64))
        else:
            lab = stratified_draw(self.y, n_labeled, seed=split)
        y = np.full(self.y.size, -1)
        y[lab] = self.y[lab]
        return lab, np.setdiff1d(np.arange(self.y.size), lab), y

    def splits(self, n_labeled: int | str, n_splits: int, first: int = 1) -> list[
            tuple[int, np.ndarray, np.ndarray]]:
        """``(split number, labeled rows, unlabeled rows)`` for splits ``first`` ..
        ``first + n_splits - 1``; ``n_labeled`` may be ``"k/class"``: ``k`` rows of every
        class (:func:`per_class_draw`, seed = split number)."""
        out = []
        n = self.y.size
        for s in range(first, first + n_splits):
            if isinstance(n_labeled, str):
                lab = per_class_draw(self.y, per_class_count(n_labeled), seed=s)
            elif n_labeled in self.official:
                labs = self.official[n_labeled]
                if s > len(labs):
                    break
                lab = np.sort(np.asarray(labs[s - 1], dtype=np.int64))
            else:
                lab = stratified_draw(self.y, n_labeled, seed=s)
            unl = np.setdiff1d(np.arange(n), lab)
            out.append((s, lab, unl))
        return out


def stratified_draw(y: np.ndarray, n_labeled: int, seed: int) -> np.ndarray:
    """Sorted indices of ``n_labeled`` rows, class shares as in ``y``, every class once."""
    rng = np.random.default_rng(seed)
    classes, counts = np.unique(y, return_counts=True)
    if n_labeled < classes.size or n_labeled >= y.size:
        raise ValueError(f"cannot draw {n_labeled} labeled rows from {y.size} rows of "
                         f"{classes.size} classes")
    share = n_labeled * counts / counts.sum()
    take = np.maximum(1, np.floor(share)).astype(int)
    # hand the remaining rows to the largest fractional parts (ties: larger class first)
    while take.sum() < n_labeled:
        room = np.where(take < counts, share - take, -np.inf)
        take[int(np.argmax(room))] += 1
    while take.sum() > n_labeled:
        take[int(np.argmax(np.where(take > 1, take - share, -np.inf)))] -= 1
    picked = [rng.choice(np.flatnonzero(y == c), t, replace=False)
              for c, t in zip(classes, take, strict=True)]
    return np.sort(np.concatenate(picked))


def per_class_draw(y: np.ndarray, k: int, seed: int) -> np.ndarray:
    """Sorted indices of ``k`` rows of every class (the development labelings with a fixed
    number of labels per class, ``auto_label_spreading.py`` / ``auto_partial_cv.py``)."""
    rng = np.random.default_rng(seed)
    return np.sort(np.concatenate([rng.choice(np.flatnonzero(y == c), k, replace=False)
                                   for c in np.unique(y)]))


def per_class_count(labels: str) -> int:
    """``k`` of a ``"k/class"`` labels spec."""
    return int(labels.split("/")[0])


def _codes(y) -> np.ndarray:
    return np.unique(np.asarray(y).ravel(), return_inverse=True)[1].astype(np.int64)


def _subsample(X, y) -> tuple[object, np.ndarray]:
    if y.size <= MAX_ROWS:
        return X, y
    idx = np.sort(np.random.default_rng(SUBSAMPLE_SEED).choice(y.size, MAX_ROWS,
                                                                replace=False))
    return X[idx], y[idx]


def _data_root() -> Path:
    from semisup.datasets import shared_data_dir

    root = shared_data_dir()
    if root is None or not root.is_dir():
        raise FileNotFoundError("shared data not found: set SEMISUP_DATA or place the shared "
                                "data directory at ../shared/data next to the repository")
    return root


def _load_uci(name: str) -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import load_svmlight_file

    d = _data_root() / "uci_small"
    libsvm = {"ionosphere": ("ionosphere_scale.bz2", 34), "heart": ("heart_scale.bz2", 13),
              "breast-cancer": ("breast-cancer_scale.bz2", 10),
              "australian": ("australian_scale.bz2", 14),
              "german": ("german.numer_scale.bz2", 24)}
    if name in libsvm:
        fname, nf = libsvm[name]
        X, y = load_svmlight_file(str(d / fname), n_features=nf)
        X = X.toarray()
        if name == "breast-cancer":
            X = X[:, 1:]  # column 0 is the scaled sample code number (an ID)
        return X, y
    if name == "sonar":
        S = np.genfromtxt(d / "sonar.csv.bz2", delimiter=",", dtype=str)
        return S[:, :-1].astype(float), S[:, -1]
    if name == "pima":
        A = np.loadtxt(d / "pima-indians-diabetes.csv.bz2", delimiter=",")
        return A[:, :-1], A[:, -1]
    if name in ("wdbc", "wpbc"):
        S = np.genfromtxt(d / f"{name}.data.bz2", delimiter=",", dtype=str)
        X = np.where(S[:, 2:] == "?", "nan", S[:, 2:]).astype(float)
        med = np.nanmedian(X, axis=0)
        X = np.where(np.isnan(X), med, X)
        return X, S[:, 1]
    if name == "house-votes":
        S = np.genfromtxt(d / "house-votes-84.data.bz2", delimiter=",", dtype=str)
        X = np.select([S[:, 1:] == "y", S[:, 1:] == "n"], [1.0, -1.0], 0.0)
        return X, S[:, 0]
    raise ValueError(f"unknown UCI set {name!r}")


def _load_ida(name: str) -> tuple[np.ndarray, np.ndarray]:
    base = name.removeprefix("ida-")
    path = _data_root() / "ida_benchmarks" / "ida_benchmarks_10splits.tar.xz"
    with tarfile.open(path) as tf:
        def part(kind):
            return np.loadtxt(tf.extractfile(f"ida_benchmarks/{base}/{base}_{kind}_1.asc"),
                              ndmin=2)
        X = np.vstack([part("train_data"), part("test_data")])
        y = np.concatenate([part("train_labels").ravel(), part("test_labels").ravel()])
    return X, y


def _load_extra(name: str) -> tuple[object, np.ndarray]:
    from sklearn.datasets import load_svmlight_file

    root = _data_root()
    if name == "pcmac":
        import scipy.io

        m = scipy.io.loadmat(str(root / "pcmac" / "PCMAC.mat"))
        return sp.csr_matrix(m["fea"], dtype=np.float64), m["gnd"].ravel()
    if name == "segment":
        A = np.loadtxt(root / "segment" / "segment.dat")
        return A[:, :-1], A[:, -1]
    if name == "dna":
        X, y = load_svmlight_file(str(root / "dna" / "dna.scale"), n_features=180)
        return X.toarray(), y
    if name == "satimage":
        X, y = load_svmlight_file(str(root / "satimage" / "satimage.scale"), n_features=36)
        return X.toarray(), y
    if name == "usps10":  # all ten digits: LIBSVM's USPS test file, 2,007 rows
        X, y = load_svmlight_file(str(root / "usps" / "usps.t.bz2"), n_features=256)
        return X.toarray(), y
    if name == "news20":
        return _load_news20()
    if name == "mnist10":
        from semisup.datasets import load_mnist

        return load_mnist(root, split="test", sparse=False)
    raise ValueError(f"unknown extra set {name!r}")


def _load_news20(per_group: int = 75, n_components: int = 300) -> tuple[np.ndarray,
                                                                        np.ndarray]:
    """20 Newsgroups as a dense many-class task: ``per_group`` test posts of every group
    (headers, signatures and quotes stripped; fixed seed), sublinear TF-IDF of the words in
    at least two of them (English stop words removed), the first ``n_components`` LSA
    dimensions (truncated SVD), rows scaled to unit length."""
    from sklearn.decomposition import TruncatedSVD
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.preprocessing import normalize

    from semisup.text.corpora import load_20newsgroups

    docs = [d for d in load_20newsgroups(_data_root()) if d.split == "test"]
    groups = np.array([d.labels[0] for d in docs])
    rng = np.random.default_rng(SUBSAMPLE_SEED)
    keep = np.sort(np.concatenate([rng.choice(np.flatnonzero(groups == g), per_group,
                                              replace=False) for g in np.unique(groups)]))
    T = TfidfVectorizer(sublinear_tf=True, min_df=2, stop_words="english").fit_transform(
        [docs[i].text for i in keep])
    Z = TruncatedSVD(n_components, random_state=SUBSAMPLE_SEED).fit_transform(T)
    return normalize(Z), groups[keep]


def load_any(name: str) -> tuple[DataSet | None, object, np.ndarray]:
    """``(DataSet or None, X, y)``: a benchmark set, or ``"digits"`` (scikit-learn's ten
    digits, no DataSet), for the development scripts of the automatic classifier."""
    if name == "digits":
        from sklearn.datasets import load_digits

        X, y = load_digits(return_X_y=True)
        return None, X.astype(float), y
    d = load_set(name)
    return d, d.X, d.y


def load_set(name: str) -> DataSet:
    """One benchmark set by name (see :data:`GROUPS`)."""
    if name in SSLBOOK:
        from semisup.datasets import load_sslbook

        official = {}
        for n_labeled in (10, 100):
            b = load_sslbook(name, n_labeled)
            official[n_labeled] = b.splits
        return DataSet(name, "sslbook", b.X, _codes(b.y), official)
    if name in UCI:
        X, y = _load_uci(name)
        group = "uci"
    elif name in IDA:
        X, y = _load_ida(name)
        group = "ida"
    elif name in EXTRA or name in MANY:
        X, y = _load_extra(name)
        group = "extra" if name in EXTRA else "many"
    else:
        raise ValueError(f"unknown set {name!r}; choose from {KNOWN} or a group "
                         f"{sorted(GROUPS)}")
    if not sp.issparse(X):
        X = np.ascontiguousarray(X, dtype=np.float64)
    X, y = _subsample(X, _codes(y))
    return DataSet(name, group, X, y)


# ----------------------------------------------------------------------------- classifiers


def discover_classifiers() -> list[str]:
    """Public classifiers of :mod:`semisup` that can be built with no arguments."""
    from sklearn.base import BaseEstimator, is_classifier

    import semisup

    found = []
    for name in semisup.__all__:
        try:
            obj = getattr(semisup, name)
        except Exception:  # an export that fails to import is not benchmarkable today
            continue
        if not (inspect.isclass(obj) and issubclass(obj, BaseEstimator)):
            continue
        required = [p for p in inspect.signature(obj.__init__).parameters.values()
                    if p.default is inspect.Parameter.empty and p.name != "self"
                    and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        if required or not hasattr(obj, "predict"):
            continue
        try:
            if is_classifier(obj()):
                found.append(name)
        except Exception:
            continue
    return found


def make_estimator(name: str):
    """A fresh estimator with its defaults (``random_state=0`` where it has one)."""
    if name in EXTRA_FACTORIES:
        est = EXTRA_FACTORIES[name]()
    elif name == LR:
        from sklearn.linear_model import LogisticRegression
        est = LogisticRegression()
    elif name == SVC_:
        from sklearn.svm import SVC
        est = SVC()
    elif name == MNB:
        from sklearn.naive_bayes import MultinomialNB
        est = MultinomialNB()
    else:
        import semisup
        est = getattr(semisup, name)()
    if "random_state" in est.get_params() and name not in SUPERVISED:
        est.set_params(random_state=0)
    return est


def applicable(name: str, data: DataSet) -> bool:
    """False for a classifier whose scikit-learn tags say ``positive_only`` on data with a
    negative feature (a multinomial model of counts on centred features): such cells are
    *not applicable* and are left out, as MultinomialNB is on non-count data."""
    if name in SUPERVISED:
        return True
    try:
        positive_only = make_estimator(name).__sklearn_tags__().input_tags.positive_only
    except Exception:  # noqa: BLE001  (no tags: assume it takes any real features)
        return True
    if not positive_only:
        return True
    vals = data.X.data if sp.issparse(data.X) else np.asarray(data.X)
    return not (vals.size and float(vals.min()) < 0)


def counterpart(name: str, counts: bool = False) -> str:
    """The supervised counterpart of classifier ``name`` (``BOTH`` for the automatic one)."""
    rule = COUNTERPART.get(name)
    if rule is None or rule == BY_KERNEL:
        try:
            kernel = make_estimator(name).get_params().get("kernel")
        except Exception:
            kernel = None
        if rule is None and kernel is None:
            return SVC_
        return LR if kernel == "linear" else SVC_
    if rule == NB_IF_COUNTS:
        return MNB if counts else LR
    return rule


# ----------------------------------------------------------------------------- child process


def _first_line(exc: BaseException) -> str:
    msg = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {msg[0] if msg else ''}"[:300]


def fit_one(name: str, X, y: np.ndarray, lab: np.ndarray, unl: np.ndarray) -> dict:
    """Fit ``name`` on one split; accuracy on the unlabeled rows, time, collapse."""
    from semisup._validation import CollapseWarning

    rec: dict = dict(acc=None, time=None, error=None, collapse=False, warned=False,
                     chosen=None)
    supervised = name in SUPERVISED
    y_semi = np.full(y.size, -1, dtype=np.int64)
    y_semi[lab] = y[lab]
    try:
        est = make_estimator(name)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            t0, c0 = time.perf_counter(), time.process_time()
            if supervised:
                est.fit(X[lab], y[lab])
            else:
                est.fit(X, y_semi)
            rec["time"] = time.perf_counter() - t0
            rec["cpu"] = time.process_time() - c0
            if supervised:
                pred = np.asarray(est.predict(X[unl]))
            else:
                trans = getattr(est, "transduction_", None)
                pred = (np.asarray(trans)[unl] if trans is not None
                        else np.asarray(est.predict(X[unl])))
        rec["warned"] = any(issubclass(w.category, CollapseWarning) for w in caught)
        pred = pred.astype(np.int64)
        rec["acc"] = float(np.mean(pred == y[unl]))
        rec["collapse"] = bool(np.unique(y[lab]).size > 1 and np.unique(pred).size == 1)
        chosen = getattr(est, "best_candidate_", None)
        rec["chosen"] = None if chosen is None else str(chosen)[:80]
    except BaseException as exc:  # noqa: BLE001  (recorded, never fatal)
        if isinstance(exc, KeyboardInterrupt):
            raise
        rec["error"] = _first_line(exc)
    return rec


def _child(conn, name: str, X, y, tasks, memory_gb: float) -> None:
    """Child process: fit ``name`` on each ``(split, lab, unl)``, one message per event."""
    try:
        if memory_gb > 0:
            import resource
            lim = int(memory_gb * 2**30)
            resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
        for s, lab, unl in tasks:
            conn.send(("start", s))
            conn.send(("done", s, fit_one(name, X, y, lab, unl)))
    except BaseException:  # noqa: BLE001
        try:
            conn.send(("crash", traceback.format_exc().strip().splitlines()[-1][:300]))
        except Exception:
            pass
    finally:
        conn.close()


def _numba_threads_started() -> bool:
    try:
        from numba.np.ufunc import parallel
    except ImportError:
        return False
    return bool(getattr(parallel, "_is_initialized", True))


def _context():
    """Fork where safe: the child inherits the imported library and the data (no start-up).

    A process that has already run a numba parallel kernel (GNU OpenMP threads) must not
    fork (the child would abort in its first parallel kernel); the forkserver's server has
    run none.  This script never fits in the parent, so the full run forks.
    """
    if START_METHOD is not None:
        return mp.get_context(START_METHOD)
    methods = mp.get_all_start_methods()
    if "fork" in methods and not _numba_threads_started():
        return mp.get_context("fork")
    return mp.get_context("forkserver" if "forkserver" in methods else "spawn")


def _recv(conn, timeout: float):
    """The next message, ``"timeout"`` or ``"eof"``."""
    try:
        if not conn.poll(timeout):
            return "timeout"
        return conn.recv()
    except (EOFError, OSError):
        return "eof"


def _stop(proc) -> None:
    if proc.is_alive():
        proc.terminate()
        proc.join(5)
    if proc.is_alive():
        proc.kill()
    proc.join()


def _cpu_seconds(pid: int) -> float | None:
    """CPU time (user + system, all threads) of process ``pid`` so far, from ``/proc``."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def _wait_fit(conn, pid: int, timeout: float, kill_after: float):
    """Wait for the result of the fit that just started in child ``pid``.

    Returns the message, ``"eof"``, or ``("killed", wall, cpu, reason)``.  The fit is over
    its time when *both* its wall time and its CPU time pass ``timeout`` (on a loaded machine
    the wall clock alone would blame the estimator for other people's work; CPU time is what
    the fit would need on an idle core), or when the wall time passes ``kill_after``.
    """
    t0, c0 = time.perf_counter(), _cpu_seconds(pid)
    while True:
        msg = _recv(conn, POLL)
        if msg != "timeout":
            return msg
        wall = time.perf_counter() - t0
        c1 = _cpu_seconds(pid)
        cpu = None if c0 is None or c1 is None else c1 - c0
        if wall > kill_after:
            return ("killed", wall, cpu, f"wall time over {kill_after:g} s")
        if wall > timeout + GRACE and (cpu is None or cpu > timeout + GRACE):
            return ("killed", wall, cpu, f"over {timeout:g} s")


def run_classifier(name: str, X, y, tasks: Sequence, timeout: float,
                   memory_gb: float = 8.0,
                   kill_after: float | None = None) -> Iterable[tuple[int, dict]]:
    """Yield ``(split, record)`` for every task; a fit over ``timeout`` s is killed.

    One child serves all tasks; after a crash a new one takes the remaining tasks, after a
    timeout the remaining tasks are recorded as not run (the cell has not finished anyway,
    and each would cost another ``timeout``).  A fit has *timed out* when both its wall
    time and its CPU time exceed ``timeout`` (see :func:`_wait_fit`); ``kill_after``
    (default ``4 * timeout``) bounds its wall time whatever its CPU time.
    """
    kill_after = 4 * timeout if kill_after is None else kill_after
    ctx = _context()
    pending = list(tasks)
    while pending:
        recv_conn, send_conn = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_child, args=(send_conn, name, X, y, pending, memory_gb),
                           daemon=True)
        proc.start()
        send_conn.close()
        restart = False
        while pending and not restart:
            s = pending[0][0]
            msg = _recv(recv_conn, STARTUP_TIMEOUT)
            if msg in ("timeout", "eof") or msg[0] != "start":
                why = msg[1] if isinstance(msg, tuple) and msg[0] == "crash" else msg
                yield s, dict(error=f"child process failed before the fit ({why}; exit "
                                    f"code {proc.exitcode})", acc=None, time=None,
                              timeout=False)
                pending.pop(0)
                restart = True
                continue
            t0 = time.perf_counter()
            msg = _wait_fit(recv_conn, proc.pid, timeout, kill_after)
            if msg != "eof" and msg[0] == "killed":
                _stop(proc)
                yield s, dict(error=None, acc=None, time=msg[1], cpu=msg[2], timeout=True,
                              killed=msg[3])
                pending.pop(0)
                for s2, _, _ in pending:
                    yield s2, dict(error=f"not run: split {s} timed out", acc=None,
                                   time=None, timeout=True, skipped=True)
                pending = []
            elif msg == "eof" or msg[0] == "crash":
                _stop(proc)
                why = msg[1] if isinstance(msg, tuple) else f"exit code {proc.exitcode}"
                yield s, dict(error=f"child process died during the fit ({why})", acc=None,
                              time=time.perf_counter() - t0, timeout=False)
                pending.pop(0)
                restart = True
            else:
                rec = msg[2]
                spent = [v for v in (rec.get("time"), rec.get("cpu")) if v is not None]
                rec["timeout"] = bool(spent) and min(spent) > timeout
                yield s, rec
                pending.pop(0)
        recv_conn.close()
        _stop(proc)


# ----------------------------------------------------------------------------- the run


@dataclass
class Config:
    sets: list
    labels: list
    splits: int
    classifiers: list
    timeout: float
    auto_timeout: float
    memory_gb: float
    jsonl: Path
    md: Path
    resume: bool = False
    kill_after: float | None = None
    per_class: bool = False
    first_split: int = 1


def _done_keys(path: Path) -> set:
    keys = set()
    for r in read_records(path):
        keys.add((r["set"], r["labels"], r["split"], r["classifier"]))
    return keys


def read_records(path: Path) -> list[dict]:
    if not path.exists():
        return []
    recs = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    for r in recs:
        for k in ("collapse", "warned", "timed_out", "skipped", "finished"):
            r[k] = bool(r.get(k))
    return recs


def run(cfg: Config, log: Callable[[str], None] = print) -> list[dict]:
    """Measure every requested cell, appending each record to ``cfg.jsonl`` at once."""
    if not cfg.resume and read_records(cfg.jsonl):
        raise SystemExit(f"{cfg.jsonl} already holds records: pass --resume to continue that "
                         "run, --render to re-render it, or delete the file to start again")
    cfg.jsonl.parent.mkdir(parents=True, exist_ok=True)
    done = _done_keys(cfg.jsonl) if cfg.resume else set()
    cmd = command_line()
    for set_name in cfg.sets:
        data = None
        for n_labeled in (cfg.labels if not cfg.per_class
                          else [f"{k}/class" for k in cfg.labels]):
            names = list(SUPERVISED) + list(cfg.classifiers)
            todo = [(nm, s) for nm in names
                    for s in range(cfg.first_split, cfg.first_split + cfg.splits)
                    if (set_name, n_labeled, s, nm) not in done]
            if not todo:
                continue
            if data is None:
                try:
                    data = load_set(set_name)
                except Exception as exc:  # noqa: BLE001  (a missing set is reported, not fatal)
                    log(f"skipping {set_name}: {_first_line(exc)}")
                    break
            splits = data.splits(n_labeled, cfg.splits, cfg.first_split)
            for nm in names:
                if (nm == MNB and not data.counts) or not applicable(nm, data):
                    continue
                tasks = [t for t in splits if (set_name, n_labeled, t[0], nm) not in done]
                if not tasks:
                    continue
                cp = "-" if nm in SUPERVISED else counterpart(nm, data.counts)
                tmax = cfg.auto_timeout if nm == AUTO else cfg.timeout
                n_lab = {t[0]: int(np.unique(data.y[t[1]]).size) for t in tasks}
                for s, rec in run_classifier(nm, data.X, data.y, tasks, tmax, cfg.memory_gb,
                                             cfg.kill_after):
                    rec = dict(
                        set=set_name, group=data.group, category=data.category(),
                        labels=n_labeled, split=s, classifier=nm,
                        role=("supervised" if nm in SUPERVISED
                              else "auto" if nm == AUTO else "library"),
                        counterpart=cp, n=int(data.y.size), d=int(data.X.shape[1]),
                        k=data.n_classes, labeled_classes=n_lab[s], timeout_s=tmax,
                        **{k: rec.get(k) for k in ("acc", "time", "cpu", "error", "chosen")},
                        collapse=bool(rec.get("collapse")), warned=bool(rec.get("warned")),
                        killed=rec.get("killed"),
                        load=os.getloadavg()[0],
                        timed_out=bool(rec.get("timeout")), skipped=bool(rec.get("skipped")),
                        finished=bool(rec.get("error") is None and not rec.get("timeout")
                                      and rec.get("acc") is not None),
                        command=cmd,
                    )
                    with open(cfg.jsonl, "a") as fh:
                        fh.write(json.dumps(rec) + "\n")
                    acc = "-" if rec["acc"] is None else f"{rec['acc']:.3f}"
                    t = "-" if rec["time"] is None else f"{rec['time']:.2f}s"
                    flag = (" TIMEOUT" if rec["timed_out"] else "") + \
                        (f" ERROR {rec['error']}" if rec["error"] else "") + \
                        (" collapse" if rec["collapse"] else "")
                    log(f"{set_name} {n_labeled} s{s} {nm}: {acc} {t}{flag}")
    return read_records(cfg.jsonl)


# ----------------------------------------------------------------------------- report


def _pct(x) -> str:
    return "-" if x is None else f"{100 * x:.1f}"


def _pts(x) -> str:
    return "-" if x is None else f"{100 * x:+.1f}"


@dataclass
class Cell:
    classifier: str
    set: str
    labels: int
    role: str
    counterpart: str
    category: str
    recs: list

    @property
    def finished(self) -> bool:
        return all(r["finished"] for r in self.recs)

    @property
    def acc(self) -> float | None:
        accs = [r["acc"] for r in self.recs if r["acc"] is not None]
        return float(np.mean(accs)) if accs else None

    @property
    def time(self) -> float | None:
        """Mean fit time; a timed-out fit counts as the timeout (a lower bound)."""
        ts = [r["timeout_s"] if r["timed_out"] else r["time"] for r in self.recs
              if r["time"] is not None or r["timed_out"]]
        return float(np.mean(ts)) if ts else None

    @property
    def cpu(self) -> float | None:
        """Mean CPU time (wall time where none was measured; timeouts at the timeout)."""
        ts = []
        for r in self.recs:
            if r["timed_out"] and not r["skipped"]:
                ts.append(r["timeout_s"])
            elif r.get("cpu") is not None:
                ts.append(r["cpu"])
            elif r["time"] is not None:
                ts.append(r["time"])
        return float(np.mean(ts)) if ts else None

    @property
    def splits(self) -> list:
        return [r["split"] for r in self.recs]


def build_cells(records: list[dict]) -> dict:
    """``{(set, labels): {classifier: Cell}}``; the last record of a split wins."""
    last = {}
    for r in records:
        last[(r["set"], r["labels"], r["split"], r["classifier"])] = r
    grouped = defaultdict(list)
    for (st, nl, _s, nm), r in last.items():
        grouped[(st, nl, nm)].append(r)
    cells = defaultdict(dict)
    for (st, nl, nm), recs in grouped.items():
        recs.sort(key=lambda r: r["split"])
        r0 = recs[0]
        cells[(st, nl)][nm] = Cell(nm, st, nl, r0["role"], r0["counterpart"], r0["category"],
                                   recs)
    return cells


def _sup_acc(group: dict, name: str, splits: list) -> float | None:
    """Mean accuracy of supervised ``name`` over ``splits`` (None when one is missing)."""
    cell = group.get(name)
    if cell is None:
        return None
    by = {r["split"]: r["acc"] for r in cell.recs}
    vals = [by.get(s) for s in splits]
    return None if any(v is None for v in vals) or not vals else float(np.mean(vals))


def counterpart_acc(group: dict, cell: Cell) -> float | None:
    if cell.counterpart == BOTH:
        vals = [_sup_acc(group, LR, cell.splits), _sup_acc(group, SVC_, cell.splits)]
        vals = [v for v in vals if v is not None]
        return max(vals) if vals else None
    return _sup_acc(group, cell.counterpart, cell.splits)


def _ok(group, cell, tol=0.01) -> bool:
    cp = counterpart_acc(group, cell)
    return bool(cell.finished and cp is not None and cell.acc is not None
                and cell.acc >= cp - tol - 1e-12)


def _order(cells) -> list:
    return sorted(cells, key=lambda k: (KNOWN.index(k[0]) if k[0] in KNOWN else 99, k[0],
                                        k[1]))


def summary_table(cells: dict) -> tuple[str, dict]:
    per = defaultdict(list)
    for key in cells:
        for nm, cell in cells[key].items():
            if cell.role != "supervised":
                per[nm].append((cells[key], cell))
    rows, verdict = [], {}
    for nm in sorted(per, key=lambda n: (n == AUTO, n)):
        items = per[nm]
        n_cells = len(items)
        fin = sum(c.finished for _, c in items)
        ok = sum(_ok(g, c) for g, c in items)
        gains = [c.acc - counterpart_acc(g, c) for g, c in items
                 if c.finished and counterpart_acc(g, c) is not None]
        recs = [r for _, c in items for r in c.recs]
        coll = sum(r["collapse"] for r in recs)
        silent = sum(r["collapse"] and not r["warned"] for r in recs)
        errs = sum(r["error"] is not None and not r["skipped"] for r in recs)
        touts = sum(r["timed_out"] and not r["skipped"] for r in recs)
        times = [r["time"] for r in recs if r["finished"]]
        cpus = [r["cpu"] for r in recs if r["finished"] and r.get("cpu") is not None]
        cps = sorted({c.counterpart for _, c in items})
        frac = ok / n_cells if n_cells else 0.0
        verdict[nm] = dict(cells=n_cells, finished=fin, ok=ok, frac=frac,
                           passed=fin == n_cells and frac >= 0.9)
        rows.append([nm, " / ".join(cps), n_cells, fin, ok, f"{100 * frac:.0f} %",
                     _pts(float(np.mean(gains))) if gains else "-",
                     f"{coll} ({silent})", errs, touts,
                     fmt(statistics.median(times)) if times else "-",
                     fmt(statistics.median(cpus)) if cpus else "-"])
    head = ["classifier", "counterpart", "cells", "finished", ">= cp - 1 pt", "fraction",
            "mean gain (pts)", "collapses (silent)", "errors", "timeouts", "median time (s)",
            "median CPU (s)"]
    return table(head, rows), verdict


def auto_section(cells: dict) -> tuple[str, dict]:
    rows, below, within, ratios, n = [], 0, 0, [], 0
    below_lr = below_svc = 0
    for key in _order(cells):
        group = cells[key]
        auto = group.get(AUTO)
        if auto is None:
            continue
        n += 1
        lr = _sup_acc(group, LR, auto.splits)
        svc = _sup_acc(group, SVC_, auto.splits)
        others = [c for nm, c in group.items() if nm != AUTO and c.finished
                  and c.acc is not None and c.splits == auto.splits]
        best = max(others, key=lambda c: c.acc) if others else None
        semi_times = [c.cpu for nm, c in group.items()
                      if c.role == "library" and nm not in SUPERVISED_LIBRARY
                      and c.cpu is not None]
        med = statistics.median(semi_times) if semi_times else None
        ratio = auto.cpu / med if auto.cpu is not None and med else None
        a = auto.acc if auto.finished else None
        sup = [v for v in (lr, svc) if v is not None]
        is_below = a is None or (bool(sup) and a < max(sup) - 0.01 - 1e-12)
        below += is_below
        below_lr += a is None or (lr is not None and a < lr - 0.01 - 1e-12)
        below_svc += a is None or (svc is not None and a < svc - 0.01 - 1e-12)
        ok_best = a is not None and best is not None and a >= best.acc - 0.01 - 1e-12
        within += ok_best
        if ratio is not None and auto.finished:
            ratios.append(ratio)
        chosen = sorted({str(r["chosen"]) for r in auto.recs if r["chosen"]})
        rows.append([key[0], key[1], _pct(a), _pct(lr), _pct(svc),
                     f"{best.classifier} {_pct(best.acc)}" if best else "-",
                     "-" if ratio is None else f"{fmt(ratio, 2)}x", ", ".join(chosen) or "-",
                     "; ".join(f for f, on in (("below counterpart", is_below),
                                               ("not finished", not auto.finished)) if on)])
    if not n:
        return "No AutoClassifier cells in this run.", {}
    stats = dict(n=n, below=below, below_lr=below_lr, below_svc=below_svc, within=within,
                 ratios=ratios)
    head = ["set", "labels", "Auto acc %", "LogReg %", "SVC %", "best single method %",
            "cost ratio", "chosen", "flags"]
    return table(head, rows), stats


def book_section(cells: dict) -> tuple[str, list]:
    rows, results = [], []
    for st, (svm, tsvm, lap) in BOOK_ERRORS.items():
        book_gain = svm - min(tsvm, lap)
        group = cells.get((st, 100))
        if group is None:
            continue
        sup = {nm: c.acc for nm, c in group.items() if c.role == "supervised" and c.finished}
        semi = {nm: c.acc for nm, c in group.items() if c.role == "library"
                and nm not in SUPERVISED_LIBRARY and c.finished}
        if not sup or not semi:
            continue
        best_sup = max(sup, key=sup.get)
        best_semi = max(semi, key=semi.get)
        gain = semi[best_semi] - sup[best_sup]
        auto = group.get(AUTO)
        auto_gain = auto.acc - sup[best_sup] if auto and auto.finished else None
        needed = book_gain > 0
        passed = gain > 0 if needed else None
        results.append(dict(set=st, needed=needed, passed=passed))
        rows.append([st, f"{book_gain:+.1f}", f"{best_sup} {_pct(sup[best_sup])}",
                     f"{best_semi} {_pct(semi[best_semi])}", _pts(gain), _pts(auto_gain),
                     "-" if passed is None else ("yes" if passed else "NO")])
    head = ["set (100 labels)", "book gain (pts, SVM - best of TSVM/LapRLS)",
            "best supervised counterpart %", "best semi-supervised default %",
            "library gain (pts)", "AutoClassifier gain (pts)", "gain shown"]
    return (table(head, rows) if rows else "No SSL-book cells at 100 labels in this run."), \
        results


def checks_section(verdict: dict, auto: dict, book: list, timeout: float) -> str:
    lib = {nm: v for nm, v in verdict.items() if nm != AUTO}
    failing = sorted(nm for nm, v in lib.items() if not v["passed"])
    lines = ["| check | result | detail |", "|---|---|---|"]
    lines.append(
        f"| every classifier with defaults finishes within {timeout:g} s on up to "
        f"{MAX_ROWS:,} rows and reaches its supervised counterpart minus 1 point on at "
        f"least 90 % of cells | {'PASS' if lib and not failing else 'FAIL'} | "
        f"{len(lib) - len(failing)} of {len(lib)} classifiers pass"
        + (f"; failing: {', '.join(failing)}" if failing else "") + " |")
    if auto:
        n = auto["n"]
        r = auto["ratios"]
        over = sum(x > 10 for x in r)
        lines.append(
            f"| AutoClassifier never more than 1 point below the supervised counterpart "
            f"(LogisticRegression and SVC) | {'PASS' if auto['below'] == 0 else 'FAIL'} | "
            f"below on {auto['below']} of {n} cells (vs LogisticRegression "
            f"{auto['below_lr']}, vs SVC {auto['below_svc']}; unfinished cells count as "
            "below) |")
        frac = auto["within"] / n
        lines.append(
            f"| AutoClassifier within 1 point of the best single method on >= 75 % of cells "
            f"| {'PASS' if frac >= 0.75 else 'FAIL'} | {auto['within']} of {n} "
            f"({100 * frac:.0f} %) |")
        lines.append(
            f"| AutoClassifier costs at most 10x one default fit | "
            f"{'PASS' if r and over == 0 and len(r) == n else 'FAIL'} | cost ratio = "
            "AutoClassifier CPU time / median CPU time of the semi-supervised classifiers' "
            "default fits in the same cell (timeouts counted at the timeout; CPU time, all "
            "threads, because wall time on a shared machine measures the load); "
            + (f"median {statistics.median(r):.1f}x, max {max(r):.1f}x, over 10x on {over} "
               f"of {len(r)} finished cells |" if r else "no finished cell |"))
    else:
        lines.append("| AutoClassifier checks | not run | no AutoClassifier cells |")
    needed = [b for b in book if b["needed"]]
    if needed:
        miss = [b["set"] for b in needed if not b["passed"]]
        lines.append(
            f"| where the SSL book reports a semi-supervised gain (100 labels), the library's "
            f"best default shows one | {'PASS' if not miss else 'FAIL'} | "
            f"{len(needed) - len(miss)} of {len(needed)} sets"
            + (f"; no gain on {', '.join(miss)}" if miss else "") + " |")
    else:
        lines.append("| SSL-book gain | not run | no SSL-book set at 100 labels |")
    return "\n".join(lines)


def cell_table(cells: dict) -> str:
    rows = []
    for key in _order(cells):
        group = cells[key]
        for nm in sorted(group, key=lambda n: (group[n].role != "supervised", n == AUTO, n)):
            c = group[nm]
            cp = counterpart_acc(group, c) if c.role != "supervised" else None
            flags = []
            tos = [r for r in c.recs if r["timed_out"] and not r["skipped"]]
            if tos:
                why = sorted({r.get("killed") or ("finished late" if r["acc"] is not None
                                                   else "killed") for r in tos})
                flags.append(f"timeout {len(tos)}/{len(c.recs)} ({', '.join(why)})")
            errs = sorted({r["error"] for r in c.recs if r["error"] and not r["skipped"]})
            flags += [f"error: {e}" for e in errs]
            coll = sum(r["collapse"] for r in c.recs)
            if coll:
                silent = sum(r["collapse"] and not r["warned"] for r in c.recs)
                flags.append(f"collapse {coll}/{len(c.recs)}"
                             + (f" ({silent} silent)" if silent else " (warned)"))
            if c.role != "supervised" and c.finished and cp is not None \
                    and c.acc < cp - 0.01 - 1e-12:
                flags.append("below cp - 1")
            cp_name = "-" if c.role == "supervised" else (
                "LogReg/SVC (best)" if c.counterpart == BOTH else c.counterpart)
            rows.append([key[0], key[1], nm, _pct(c.acc if c.finished else None),
                         cp_name, _pct(cp), _pts(c.acc - cp) if c.finished and cp is not None
                         else "-", fmt(c.time) if c.time is not None else "-",
                         fmt(c.cpu) if c.cpu is not None else "-",
                         "; ".join(f.replace("|", "/") for f in flags)])
    head = ["set", "labels", "classifier", "accuracy %", "counterpart", "counterpart %",
            "gain (pts)", "time (s)", "CPU (s)", "flags"]
    return table(head, rows)


def advice_section(cells: dict) -> str:
    """Best default per data type, written from the numbers."""
    by_cat = defaultdict(lambda: defaultdict(list))  # (category, labels) -> name -> [(g, c)]
    sets_of = defaultdict(set)
    for (st, nl), group in cells.items():
        for nm, c in group.items():
            by_cat[(c.category, nl)][nm].append((group, c))
            sets_of[c.category].add(st)
    paras = []
    for cat in ("dense small", "low-dimensional", "many classes", "sparse text"):
        keys = sorted(k for k in by_cat if k[0] == cat)
        if not keys:
            continue
        lines = [f"**{cat}** (sets: {', '.join(sorted(sets_of[cat]))})."]
        for key in keys:
            methods = by_cat[key]
            n_cells = max(len(v) for v in methods.values())
            full = {nm: v for nm, v in methods.items()
                    if len(v) == n_cells and all(c.finished for _, c in v)}
            sup = {nm: float(np.mean([c.acc for _, c in v])) for nm, v in full.items()
                   if v[0][1].role == "supervised"}
            semi = {nm: v for nm, v in full.items() if v[0][1].role != "supervised"}
            if not semi or not sup:
                lines.append(f"With {key[1]} labels: no method finished every cell.")
                continue

            def score(v):
                return float(np.mean([c.acc for _, c in v]))

            def safe(v):
                return sum(_ok(g, c) for g, c in v) / len(v)

            best = max(semi, key=lambda nm: score(semi[nm]))
            safest = max(semi, key=lambda nm: (safe(semi[nm]), score(semi[nm])))
            best_sup = max(sup, key=sup.get)
            v = semi[best]
            gain = float(np.mean([c.acc - counterpart_acc(g, c) for g, c in v
                                  if counterpart_acc(g, c) is not None] or [np.nan]))
            t = statistics.median([r["time"] for _, c in v for r in c.recs])
            plural = "s" if n_cells > 1 else ""
            text = (f"With {key[1]} labels ({n_cells} cell{plural}): the most accurate default is "
                    f"`{best}` (mean accuracy {_pct(score(v))} %, {_pts(gain)} points over "
                    f"its counterpart, at least the counterpart minus 1 point on "
                    f"{100 * safe(v):.0f} % of cells, median fit {fmt(t)} s); the best "
                    f"supervised counterpart is `{best_sup}` ({_pct(sup[best_sup])} %).")
            if safest != best:
                text += (f" The safest is `{safest}` (at least the counterpart minus 1 point "
                         f"on {100 * safe(semi[safest]):.0f} % of cells, mean accuracy "
                         f"{_pct(score(semi[safest]))} %).")
            if AUTO in semi and best != AUTO:
                text += f" `AutoClassifier`: {_pct(score(semi[AUTO]))} %."
            lines.append(text)
        paras.append(" ".join(lines))
    paras.append("Categories, from the data: *sparse text* = sparse input with over 1,000 "
                 "features; *many classes* = more than two classes; *low-dimensional* = at "
                 "most 20 features; *dense small* = the other dense sets.  Only methods that "
                 "finished every cell of a category and label count are ranked.")
    return "\n\n".join(paras)


def render(records: list[dict], out: Path, timeout: float | None = None) -> str:
    """Write the markdown report for ``records`` to ``out``; return it."""
    cells = build_cells(records)
    if timeout is None:
        ts = [r["timeout_s"] for r in records if r["role"] != "auto"]
        timeout = max(ts) if ts else 60.0
    summary, verdict = summary_table(cells)
    auto_tab, auto_stats = auto_section(cells)
    book_tab, book = book_section(cells)
    sets = sorted({r["set"] for r in records})
    n_fits = len(records)
    total = sum(r["time"] or 0.0 for r in records)
    loads = [r["load"] for r in records if r.get("load") is not None]
    cpu = sum(r.get("cpu") or 0.0 for r in records)
    sections = [
        "# Every classifier with its defaults vs its supervised counterpart (issue 26)",
        "Command: " + ", then ".join(f"`{c}`" for c in dict.fromkeys(
            r.get("command", "?") for r in records)) + f" (report: `{command_line()}`)",
        machine_info(),
        (f"{n_fits} fits on {len(sets)} sets ({', '.join(sets)}); {total / 60:.1f} min of "
         f"fitting in all ({cpu / 60:.1f} CPU-min); 1-minute load average after the fits: "
         f"median {statistics.median(loads) if loads else float('nan'):.2f} on a machine "
         f"shared with other work, so times are noisy (ratios within a cell are fairer "
         f"than seconds).  Protocol in the docstring of `benchmarks/bench_defaults.py`: "
         f"accuracy on the unlabeled rows of each split; a *cell* = (classifier, set, "
         f"labels), accuracy averaged over its splits; *finished* = every split within "
         f"{timeout:g} s (a fit times out when both its wall and its CPU time pass it) and "
         f"without an error; *cp* = the supervised counterpart "
         f"(scikit-learn defaults, same labeled rows); *collapse* = one class for every "
         f"unlabeled row while the labeled rows hold several (*silent*: without a "
         f"`CollapseWarning`).  Counterparts: {COUNTERPART_DOC}"),
        "## 1. Per classifier",
        summary,
        "## 2. The issue's \"done when\" checks",
        checks_section(verdict, auto_stats, book, timeout),
        "### SSL-book gains (100 labels)",
        book_tab,
        "### AutoClassifier per cell",
        auto_tab,
        "## 3. Per cell",
        cell_table(cells),
        "## 4. Which method for my data",
        advice_section(cells),
    ]
    text = "\n\n".join(sections) + "\n"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    return text


COUNTERPART_DOC = (
    "LogisticRegression for the linear methods (" + ", ".join(
        nm for nm, v in COUNTERPART.items() if v == LR) + "; the self-/co-/tri-training "
    "wrappers' default base model is LogisticRegression), by the default kernel for "
    + ", ".join(nm for nm, v in COUNTERPART.items() if v == BY_KERNEL)
    + ", MultinomialNB for SemiSupervisedNB on count data (else LogisticRegression), SVC "
    "for the kernel and graph methods and everything else; the AutoClassifier against both "
    "LogisticRegression and SVC and the best single method of the cell.")


# ----------------------------------------------------------------------------- CLI


def _expand_sets(names: Iterable[str]) -> list[str]:
    out = []
    for nm in names:
        for s in GROUPS.get(nm, [nm]):
            if s not in KNOWN:
                raise SystemExit(f"--sets: unknown set {s!r}; choose from {KNOWN} or a group "
                                 f"{sorted(GROUPS)}")
            if s not in out:
                out.append(s)
    return out


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", nargs="+", default=["all"],
                    help="set names or groups (sslbook, uci, ida, all = the three; extra: "
                         "pcmac, segment, dna, satimage)")
    ap.add_argument("--classifiers", nargs="+", default=None,
                    help="library classifiers (default: every one discovered); the "
                         "supervised counterparts always run")
    ap.add_argument("--labels", nargs="+", type=int, default=[10, 100])
    ap.add_argument("--per-class", action="store_true",
                    help="--labels counts labeled rows per class (k of every class, drawn "
                         "with seed = split; recorded as 'k/class'), as few-label multi-class "
                         "tasks are")
    ap.add_argument("--splits", type=int, default=2, help="splits per (set, labels)")
    ap.add_argument("--first-split", type=int, default=1,
                    help="number of the first split (official split or draw seed): fresh "
                         "splits for a confirmation run, the defaults having been developed "
                         "on others")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per fit")
    ap.add_argument("--auto-timeout", type=float, default=180.0,
                    help="seconds per AutoClassifier fit (its own time_budget is 120 s)")
    ap.add_argument("--kill-after", type=float, default=None,
                    help="wall seconds after which a fit is killed whatever its CPU time "
                         "(default: 4x the timeout)")
    ap.add_argument("--memory-gb", type=float, default=8.0,
                    help="address-space limit of each child (0: none)")
    ap.add_argument("--resume", action="store_true", help="continue the run in the .jsonl")
    ap.add_argument("--render", action="store_true", help="only re-render the .md")
    ap.add_argument("--pool", nargs="+", default=None, metavar="RUN",
                    help="render one report over the records of several runs (results "
                         "names, e.g. the SSL-book run and the UCI/IDA run: the issue's "
                         "benchmark is both) into --name; runs nothing")
    ap.add_argument("--quick", action="store_true",
                    help="a few cells (smoke run; rewrites defaults_quick.*)")
    ap.add_argument("--name", default=None,
                    help="results name (default: defaults, or defaults_quick)")
    ap.add_argument("--results-dir", type=Path, default=RESULTS_DIR)
    args = ap.parse_args(argv)
    if args.splits < 1 or args.first_split < 1:
        ap.error("--splits and --first-split must be at least 1")
    if args.timeout <= 0 or args.auto_timeout <= 0:
        ap.error("--timeout and --auto-timeout must be positive")
    return args


def main(argv: Sequence[str] | None = None) -> str:
    args = parse_args(argv)
    name = args.name or ("defaults_quick" if args.quick else "defaults")
    jsonl = args.results_dir / f"{name}.jsonl"
    md = args.results_dir / f"{name}.md"
    if args.pool:
        if not args.name:
            raise SystemExit("--pool needs --name (the pooled report's results name)")
        missing = [n for n in args.pool if not (args.results_dir / f"{n}.jsonl").exists()]
        if missing:
            raise SystemExit(f"--pool: no records for {missing} in {args.results_dir}")
        records = [r for run_name in args.pool
                   for r in read_records(args.results_dir / f"{run_name}.jsonl")]
        return render(records, md)
    if args.render:
        return render(read_records(jsonl), md)
    if args.quick:
        args.sets, args.labels, args.splits = QUICK["sets"], QUICK["labels"], QUICK["splits"]
        args.classifiers = args.classifiers or QUICK["classifiers"]
        if not args.resume and jsonl.exists():
            jsonl.unlink()  # a smoke run starts afresh
    found = discover_classifiers()
    if args.classifiers is None:
        classifiers = found
    else:
        unknown = [c for c in args.classifiers if c not in found and c not in EXTRA_FACTORIES]
        if unknown:
            raise SystemExit(f"--classifiers: {unknown} not found; discovered: {found}")
        classifiers = list(args.classifiers)
    cfg = Config(sets=_expand_sets(args.sets), labels=args.labels, splits=args.splits,
                 classifiers=classifiers, timeout=args.timeout,
                 auto_timeout=args.auto_timeout, memory_gb=args.memory_gb, jsonl=jsonl,
                 md=md, resume=args.resume, kill_after=args.kill_after,
                 per_class=args.per_class, first_split=args.first_split)
    records = run(cfg)
    text = render(records, md, timeout=cfg.timeout)
    print(text)
    return text


if __name__ == "__main__":
    main()
