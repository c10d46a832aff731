"""Reading and writing SVMlin / SVMlight (libsvm) text files.

Formats
-------
SVMlin examples file
    One example per line as whitespace-separated ``index:value`` pairs with 1-based, strictly
    increasing integer indices and **no** label column.  An empty line is an example without
    non-zeros.  A file without any line at all is an error.
SVMlin labels file
    One label per line: ``+1``, ``1``, ``-1`` or ``0`` (0 marks an unlabeled example); floats
    with those values (``1.0``, ``-1.0``, ``0.0``) are accepted as well.
SVMlight / libsvm file
    ``label index:value index:value ... [# comment]`` per line, 1-based indices, any finite
    numeric label.  Blank and comment-only lines are skipped.  ``qid:`` tokens are not
    supported.
Vector files
    One number per line, e.g. the ``.weights`` (bias last) and ``.outputs`` files of SVMlin.

Files ending in ``.gz`` or ``.bz2`` are (de)compressed transparently, for reading and writing.

Every writer is atomic: it writes a temporary file next to the target and renames it over the
target (:func:`os.replace`) only once the whole content is written, so a failure or an
interrupt (Ctrl-C) part-way leaves the previous file, or none, never a truncated one.

Label coding: SVMlin files mark unlabeled examples with ``0`` and the classes with ``+1/-1``;
semisup estimators read ``-1`` as unlabeled.  :func:`svmlin_to_labels` and
:func:`labels_to_svmlin` convert between the two.

Numbers are decimal literals (``[+-]digits[.digits][e[+-]digits]``); ``nan``, ``inf`` and
values overflowing float64 are rejected (``read_svmlight(..., missing_labels=True)`` reads
the label tokens ``nan`` and ``?`` as a missing target, NaN).  Every malformed input raises
:class:`FileFormatError` naming the file, the first offending 1-based line, the offending
token and what was expected.

Implementation note: the readers first try a fast path (a numpy-vectorised parser, only on
files whose characters cannot smuggle in anything the format forbids; it accepts a token only
when it is certainly valid and converts numbers exactly as ``float()`` does).  If that fails or
looks suspicious, an authoritative line-by-line parser runs, which either returns the data or
raises for the first bad line.
"""

from __future__ import annotations

import bz2
import gzip
import io
import math
import numbers
import operator
import os
import re
import tempfile
import zlib
from array import array
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO

import numpy as np
import scipy.sparse as sp

__all__ = [
    "FileFormatError",
    "read_svmlin_examples",
    "read_svmlin_labels",
    "read_svmlight",
    "write_svmlin_examples",
    "write_svmlin_labels",
    "write_svmlight",
    "write_vector",
    "read_vector",
    "check_consistent",
    "svmlin_to_labels",
    "labels_to_svmlin",
]

PathLike = str | os.PathLike[str]

# Largest feature index accepted (the C ``int`` range used by SVMlin-style tools).
_MAX_INDEX = 2**31 - 1
# Rows formatted per chunk by the writers (bounds memory use on huge matrices).
_WRITE_CHUNK = 65536

_FLOAT_RE = re.compile(rb"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_INDEX_RE = re.compile(rb"\+?[0-9]+")
_NEG_INDEX_RE = re.compile(rb"-[0-9]+")
_NONFINITE_RE = re.compile(rb"[+-]?(?:nan|inf|infinity)", re.IGNORECASE)
_COMMENT_RE = re.compile(rb"#[^\n]*")

# Characters a file may consist of to be eligible for the fast paths.  With these only, Python's
# int()/float() (used by the compiled parser) accept exactly the grammar above, so the fast path
# cannot accept anything the line-by-line parser would reject.
_SPARSE_CHARS = b"0123456789.eE+-: \t\r\n"
_NUMBER_CHARS = b"0123456789.eE+- \t\r\n"

_EXPECT_PAIR = "whitespace-separated index:value pairs"
#: Label tokens (lower-cased) that ``read_svmlight(..., missing_labels=True)`` reads as NaN.
MISSING_LABELS = (b"nan", b"?")
_EXPECT_LABEL = "one label per line: +1, 1, -1 or 0"


class FileFormatError(ValueError):
    """Raised for malformed input files.

    ``str()`` gives ``'<path>:<line>: <what is wrong>; expected <what>'`` (the ``:<line>`` part is
    left out when the problem concerns the file as a whole).

    Parameters
    ----------
    path : str or os.PathLike
        The offending file.
    line : int or None
        1-based number of the first offending line, or None for whole-file problems.
    reason : str
        What is wrong.
    expected : str or None, optional
        What was expected instead.

    Attributes
    ----------
    path : str
    line : int or None
    reason : str
    expected : str or None
    """

    path: str
    line: int | None
    reason: str
    expected: str | None

    def __init__(
        self, path: PathLike, line: int | None, reason: str, expected: str | None = None
    ) -> None:
        path = os.fsdecode(path)
        super().__init__(path, line, reason, expected)
        self.path = path
        self.line = line
        self.reason = reason
        self.expected = expected

    def __str__(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        tail = "" if self.expected is None else f"; expected {self.expected}"
        return f"{where}: {self.reason}{tail}"


# --------------------------------------------------------------------------------------------
# low-level helpers
# --------------------------------------------------------------------------------------------


def _show(token: bytes, limit: int = 40) -> str:
    """Printable, truncated representation of a token for error messages."""
    text = token.decode("utf-8", errors="replace")
    if len(text) > limit:
        text = text[:limit] + "..."
    return repr(text)


def _compression(path: str) -> str | None:
    suffix = Path(path).suffix.lower()
    if suffix == ".gz":
        return "gzip"
    if suffix == ".bz2":
        return "bz2"
    return None


def _read_bytes(path: PathLike) -> tuple[str, bytes]:
    """Read a whole (possibly compressed) file; return its printable name and its bytes."""
    name = os.fsdecode(os.fspath(path))
    kind = _compression(name)
    with open(path, "rb") as raw:  # FileNotFoundError carries the path
        if kind is None:
            return name, raw.read()
        try:
            if kind == "gzip":
                with gzip.GzipFile(fileobj=raw, mode="rb") as fh:
                    return name, fh.read()
            with bz2.BZ2File(raw, mode="rb") as fh:
                return name, fh.read()
        except (OSError, EOFError, ValueError, zlib.error) as exc:
            raise FileFormatError(
                name, None, f"cannot decompress {kind} data ({exc})", f"a valid {kind} file"
            ) from None


def _open_write(path: PathLike, kind: str | None) -> IO[bytes]:
    """Open ``path`` for writing, compressed as ``kind`` ('gzip', 'bz2' or None)."""
    if kind == "gzip":
        return gzip.open(path, "wb")
    if kind == "bz2":
        return bz2.open(path, "wb")
    return open(path, "wb")


def _body(name: str, data: bytes) -> tuple[bytes, int]:
    """Strip the final newline; return the body and its number of lines."""
    if not data:
        raise FileFormatError(name, None, "empty file", "at least one line")
    body = data[:-1] if data.endswith(b"\n") else data
    return body, body.count(b"\n") + 1


def _iter_lines(body: bytes) -> Iterator[bytes]:
    """Lines of ``body`` split at ``\\n`` only (without the terminator)."""
    for line in io.BytesIO(body):
        yield line[:-1] if line.endswith(b"\n") else line
    if not body or body.endswith(b"\n"):
        yield b""  # BytesIO iteration does not produce a final empty line


def _check_n_features(n_features: int | None) -> int | None:
    if n_features is None:
        return None
    if isinstance(n_features, bool):
        raise TypeError("n_features must be an integer or None, not bool")
    n = operator.index(n_features)
    if n < 0:
        raise ValueError(f"n_features must be >= 0, got {n}")
    return n


#: Default cap on the width of a file read without ``n_features`` (``max_features="auto"``):
#: 10**8 features make each float64 weight vector 0.8 GB; beyond, an index is almost surely
#: a corrupt or mis-numbered file, not data (the largest public sparse sets have ~5e7).
DEFAULT_MAX_FEATURES = 10**8
#: Dense float64 vectors of length ``n_features`` the memory check counts: the solvers hold
#: the weights, gradient, CG directions and preconditioner at once (one-vs-rest keeps
#: one weight vector per class more).
DENSE_VECTORS = 16


def available_memory() -> int | None:
    """Bytes this process may still allocate, or None when the system does not say.

    The least of: the system's available memory (``MemAvailable`` of ``/proc/meminfo``, else
    ``os.sysconf`` free pages), the cgroup (container) limit less its usage, and the address
    space / data-segment limits (``resource.setrlimit``) less what this process uses.
    """
    found: list[int] = []
    try:
        with open("/proc/meminfo", "rb") as fh:
            for line in fh:
                if line.startswith(b"MemAvailable:"):
                    found.append(int(line.split()[1]) * 1024)
    except (OSError, ValueError, IndexError):
        pass
    if not found:
        try:
            found.append(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
        except (ValueError, OSError, AttributeError):
            pass
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        if limit.isdigit():
            used = int(Path("/sys/fs/cgroup/memory.current").read_text())
            found.append(int(limit) - used)
    except (OSError, ValueError):
        pass
    try:
        import resource

        status = Path("/proc/self/status").read_text()
        for rlimit, field in ((resource.RLIMIT_AS, "VmSize:"), (resource.RLIMIT_DATA, "VmData:")):
            soft = resource.getrlimit(rlimit)[0]
            if soft != resource.RLIM_INFINITY:
                used = next((int(line.split()[1]) * 1024 for line in status.splitlines()
                             if line.startswith(field)), 0)
                found.append(soft - used)
    except (ImportError, OSError, ValueError):
        pass
    return max(min(found), 0) if found else None


def _check_max_features(max_features) -> int | str | None:
    if max_features is None or max_features == "auto":
        return max_features
    if isinstance(max_features, bool) or not isinstance(max_features, numbers.Integral) \
            or max_features < 1:
        raise ValueError(f"max_features must be 'auto', None or an integer >= 1, got "
                         f"{max_features!r}")
    return int(max_features)


def _line_of_row(body: bytes, row: int, labelled: bool) -> int:
    """1-based line of the ``row``-th example (SVMlight files skip blank and comment lines)."""
    if not labelled:
        return row + 1
    seen = -1
    for lineno, line in enumerate(_iter_lines(body), start=1):
        if line.split(b"#", 1)[0].strip():
            seen += 1
            if seen == row:
                return lineno
    return row + 1  # pragma: no cover - the parser counted these rows


def _guard_width(name: str, body: bytes, X: sp.csr_matrix, labelled: bool,
                 max_features) -> None:
    """Refuse a file whose largest feature index would make training allocate more than
    the cap or the memory available (every solver holds dense vectors of that length)."""
    if max_features is None:
        return
    d = X.shape[1]
    cap = DEFAULT_MAX_FEATURES if max_features == "auto" else max_features
    need = DENSE_VECTORS * 8 * d
    over_cap = d > cap
    avail = None
    if max_features == "auto" and not over_cap and need > 2**28:  # below: not worth asking
        avail = available_memory()
    if not over_cap and (avail is None or need <= avail):
        return
    pos = int(np.flatnonzero(X.indices == d - 1)[0])
    row = int(np.searchsorted(X.indptr, pos, side="right")) - 1
    line = _line_of_row(body, row, labelled)
    gib = 2.0**30
    if over_cap:
        reason = (f"feature index {d} is above the limit of {cap} features "
                  f"(training would allocate {need / gib:.1f} GiB of weight vectors)")
    else:
        reason = (f"feature index {d} would make training allocate {need / gib:.1f} GiB "
                  f"({DENSE_VECTORS} weight vectors of {d} float64), more than the "
                  f"{avail / gib:.1f} GiB of memory available")
    raise FileFormatError(name, line, reason,
                          "smaller feature indices (renumber the features); if the file "
                          "really has that many, pass max_features=N (command line: "
                          "--max-features N)")


def _number_problem(token: bytes, what: str) -> str:
    """Describe why ``token`` is not an acceptable finite number (or '' when it is)."""
    if _FLOAT_RE.fullmatch(token):
        if math.isfinite(float(token)):
            return ""
        return f"non-finite {what} {_show(token)} (overflows float64)"
    if _NONFINITE_RE.fullmatch(token):
        return f"non-finite {what} {_show(token)}"
    return f"non-numeric {what} {_show(token)}"


# --------------------------------------------------------------------------------------------
# sparse readers
# --------------------------------------------------------------------------------------------


def _pair_problem(token: bytes, prev: int, n_features: int | None) -> tuple[str, str]:
    """Explain what is wrong with an ``index:value`` token (called only for bad tokens)."""
    shown = _show(token)
    idx_s, sep, val_s = token.partition(b":")
    if idx_s.lower() == b"qid":
        return f"qid token {shown} is unsupported", "index:value pairs without qid"
    if not sep:
        return f"missing ':' in token {shown}", "index:value"
    if not idx_s:
        return f"missing index in token {shown}", "index:value with a positive integer index"
    if not val_s:
        return f"missing value in token {shown}", "index:value with a numeric value"
    if not _INDEX_RE.fullmatch(idx_s):
        if _NEG_INDEX_RE.fullmatch(idx_s):
            return f"negative index in token {shown}", "1-based indices (>= 1)"
        return f"non-integer index in token {shown}", "a positive integer index"
    idx = int(idx_s)
    if idx == 0:
        return f"index 0 in token {shown}", "1-based indices (>= 1)"
    if idx > _MAX_INDEX:
        return f"index {idx} is too large", f"indices <= {_MAX_INDEX}"
    if idx <= prev:
        what = "duplicate" if idx == prev else "decreasing"
        return (
            f"{what} index {idx} after index {prev} (token {shown})",
            "strictly increasing indices within a line",
        )
    if n_features is not None and idx > n_features:
        return f"index {idx} exceeds n_features={n_features}", f"indices in 1..{n_features}"
    if b":" in val_s:
        return f"more than one ':' in token {shown}", "index:value"
    problem = _number_problem(val_s, "value")
    if problem:
        return f"{problem} in token {shown}", "a finite decimal number as value"
    raise AssertionError(f"token {shown} is valid")  # pragma: no cover


def _parse_slow(
    name: str, body: bytes, *, labelled: bool, n_features: int | None,
    missing_labels: bool = False,
) -> tuple[sp.csr_matrix, np.ndarray]:
    """Authoritative line-by-line parser; raises FileFormatError at the first bad line.

    With ``missing_labels`` a label token in :data:`MISSING_LABELS` reads as NaN."""
    indices = array("q")
    values = array("d")
    indptr = array("q", [0])
    labels = array("d")
    limit = _MAX_INDEX if n_features is None else min(n_features, _MAX_INDEX)
    max_idx = 0
    float_match = _FLOAT_RE.fullmatch
    index_match = _INDEX_RE.fullmatch
    isfinite = math.isfinite

    for lineno, line in enumerate(_iter_lines(body), start=1):
        if labelled:
            hash_pos = line.find(b"#")
            if hash_pos >= 0:
                line = line[:hash_pos]
        elif b"#" in line:
            raise FileFormatError(
                name, lineno, "comment character '#' in an SVMlin examples file", _EXPECT_PAIR
            )
        tokens = line.split()
        if labelled:
            if not tokens:
                continue  # blank or comment-only line
            first = tokens[0]
            if b":" in first:
                raise FileFormatError(
                    name,
                    lineno,
                    f"missing label (line starts with {_show(first)})",
                    "a numeric label before the index:value pairs",
                )
            if missing_labels and first.lower() in MISSING_LABELS:
                labels.append(math.nan)
            else:
                problem = _number_problem(first, "label")
                if problem:
                    expected = "a finite numeric label" + (
                        " or a missing-target marker (nan, ?)" if missing_labels else "")
                    raise FileFormatError(name, lineno, problem, expected)
                labels.append(float(first))
            tokens = tokens[1:]
        prev = 0
        for token in tokens:
            idx_s, sep, val_s = token.partition(b":")
            if sep and index_match(idx_s) and float_match(val_s):
                idx = int(idx_s)
                val = float(val_s)
                if prev < idx <= limit and isfinite(val):
                    indices.append(idx - 1)
                    values.append(val)
                    prev = idx
                    continue
            reason, expected = _pair_problem(token, prev, n_features)
            raise FileFormatError(name, lineno, reason, expected)
        max_idx = max(max_idx, prev)
        indptr.append(len(indices))

    n_rows = len(indptr) - 1
    if n_rows == 0:
        raise FileFormatError(
            name, None, "no examples (only blank or comment lines)", "at least one example line"
        )
    n_cols = max_idx if n_features is None else n_features
    X = _make_csr(
        np.frombuffer(values, dtype=np.float64),
        np.frombuffer(indices, dtype=np.int64),
        np.frombuffer(indptr, dtype=np.int64),
        (n_rows, n_cols),
    )
    return X, np.frombuffer(labels, dtype=np.float64).copy()


def _make_csr(
    data: np.ndarray, indices: np.ndarray, indptr: np.ndarray, shape: tuple[int, int]
) -> sp.csr_matrix:
    """Build a canonical float64 CSR matrix (sorted indices, explicit zeros removed)."""
    idx_dtype = np.int32 if max(shape[1], len(data)) < 2**31 - 1 else np.int64
    X = sp.csr_matrix(
        (
            np.array(data, dtype=np.float64),
            np.array(indices, dtype=idx_dtype),
            np.array(indptr, dtype=idx_dtype),
        ),
        shape=shape,
    )
    X.has_sorted_indices = True
    X.has_canonical_format = True
    X.eliminate_zeros()
    return X


# Powers of ten as float64, exact up to 10**15: the place values of the digits of a short
# integer token (at most 15 digits, see _token_values).
_POW10 = np.power(10.0, np.arange(16))


# digit value of each byte (0 for the other characters)
_DIGIT_VALUE = np.zeros(256)
_DIGIT_VALUE[48:58] = np.arange(10)
_SEPARATOR = np.zeros(256, dtype=bool)
_SEPARATOR[list(b" \t\r\n:")] = True
_COLON_TO_SPACE = bytes.maketrans(b":", b" ")


def _place_values(c: np.ndarray, right: np.ndarray, first: np.ndarray) -> np.ndarray:
    """Per token (starting at ``first`` in ``c``, at most 15 digits): its digits read as a
    decimal integer, ``right`` being the number of digits right of each one.  Exact: every
    term and partial sum is an integer below 2**53."""
    weights = _DIGIT_VALUE[c] * _POW10[right]
    return np.add.reduceat(weights, first)


def _token_values(buf: bytes, c: np.ndarray, starts: np.ndarray, lengths: np.ndarray,
                  others: np.ndarray, others_tok: np.ndarray) -> np.ndarray | None:
    """Values of the tokens of ``buf``, vectorised; None unless every token is a decimal
    literal ``[+-]?(digits[.digits]|[digits].digits)([eE][+-]?digits)?``.

    ``c`` is the concatenation of the tokens (separators removed), ``starts`` and
    ``lengths`` their byte ranges in ``buf``, ``others`` the positions in ``c`` of the
    characters other than digits and ``others_tok`` their tokens.  The grammar is checked
    on the few non-digit characters.  Values are what ``float()`` gives (correctly
    rounded): short unsigned integers (indices, counts, one-hot values) exactly from their
    digits' place values, everything else by numpy's C conversion of the whole buffer.
    """
    n_tok = starts.size
    if n_tok == 0:
        return np.zeros(0)
    first = np.zeros(n_tok, dtype=np.intp)
    np.cumsum(lengths[:-1], out=first[1:])
    if others.size == 0 and lengths.max() <= 15:
        # short integers only (indices, counts, one-hot values): no grammar to check, exact;
        # a digit's power of ten: the digits right of it in its token
        return _place_values(c, np.repeat(first + lengths - 1, lengths) - np.arange(c.size),
                             first)
    # the grammar, checked on the few characters that are not digits
    oc, ot = c[others], others_tok
    ok = others - first[ot]  # their position within the token
    is_e, is_dot = (oc | 32) == 101, oc == 46
    sign = ~(is_e | is_dot)  # the character set leaves '+' and '-'
    if np.bincount(ot[is_e], minlength=n_tok).max(initial=0) > 1 \
            or np.bincount(ot[is_dot], minlength=n_tok).max(initial=0) > 1:
        return None
    mant_end = lengths.copy()  # where the mantissa ends: at the 'e', or the token's end
    mant_end[ot[is_e]] = ok[is_e]
    has_e = mant_end < lengths
    dot_at = np.full(n_tok, -1)
    dot_at[ot[is_dot]] = ok[is_dot]
    has_dot = dot_at >= 0
    if np.any(dot_at > mant_end):
        return None  # a dot in the exponent
    sign_k, sign_t = ok[sign], ot[sign]
    exp_sign = has_e[sign_t] & (sign_k == mant_end[sign_t] + 1)
    if not np.all((sign_k == 0) | exp_sign):
        return None  # a sign inside a number
    lead_sign = np.zeros(n_tok, dtype=bool)
    lead_sign[sign_t[sign_k == 0]] = True
    has_exp_sign = np.zeros(n_tok, dtype=bool)
    has_exp_sign[sign_t[exp_sign]] = True
    n_mant = mant_end - lead_sign - has_dot
    if np.any(n_mant < 1) or np.any(has_e & (lengths - mant_end - 1 - has_exp_sign < 1)):
        return None  # no digits before, or after, the 'e'
    # the grammar holds: C's correctly rounded conversion of every token in one pass (as
    # ``float()``; several times faster than digit place values on long decimals)
    try:
        values = np.fromstring(buf.translate(_COLON_TO_SPACE), dtype=np.float64, sep=" ")
    except ValueError:
        return None
    return values if values.size == n_tok else None


def _parse_fast(buf: bytes, labelled: bool
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """Vectorised parser for text made of :data:`_SPARSE_CHARS` only; None when in doubt.

    ``labelled=False`` (SVMlin examples): every line is a row, an empty one too, and every
    token is ``index:value``.  ``labelled=True`` (SVMlight, comments removed): lines without
    tokens are skipped, the others start with a label.  Returns ``(data, indices (0-based),
    indptr, labels)`` (labels all 0 when unlabelled), or None for anything not certainly
    valid: the line-by-line parser then decides and names the bad line.
    """
    a = np.frombuffer(buf, dtype=np.uint8)
    n = a.size
    if n == 0:
        if labelled:
            return None
        return np.zeros(0), np.zeros(0, dtype=np.int64), np.zeros(2, dtype=np.int64), \
            np.zeros(1)
    sep = _SEPARATOR[a]
    # tokens: maximal runs of other characters (a label, an index or a value)
    edges = np.flatnonzero(np.diff(sep, prepend=True, append=True))
    starts, ends = edges[0::2], edges[1::2]
    colons = np.flatnonzero(a == 58)
    if colons.size and (colons[0] == 0 or colons[-1] == n - 1 or sep[colons - 1].any()
                        or sep[colons + 1].any()):
        return None  # a colon at the edge of a token
    # so every colon joins an index token (ending at it) and a value token (starting after)
    is_index = np.zeros(starts.size, dtype=bool)
    inner = ends < n
    is_index[inner] = a[ends[inner]] == 58
    is_value = np.zeros(starts.size, dtype=bool)
    inner = starts > 0
    is_value[inner] = a[starts[inner] - 1] == 58
    if np.any(is_index & is_value):
        return None  # two colons in a token
    index_tok = np.flatnonzero(is_index)
    lines = np.flatnonzero(a == 10)
    if labelled:
        is_label = ~(is_index | is_value)
        line = np.searchsorted(lines, starts)
        first_in_line = np.ones(starts.size, dtype=bool)
        first_in_line[1:] = line[1:] != line[:-1]
        if not np.array_equal(is_label, first_in_line):
            return None  # a line not made of a label and index:value pairs
        n_rows = int(np.count_nonzero(first_in_line))
        if n_rows == 0:
            return None
        counts = np.bincount(np.cumsum(first_in_line)[index_tok] - 1, minlength=n_rows)
    else:
        if index_tok.size * 2 != starts.size:
            return None  # a token without a colon
        n_rows = lines.size + 1
        # one colon per pair: a row's pairs are the colons between its line's ends
        counts = np.diff(np.searchsorted(colons, lines), prepend=0, append=colons.size)
    lengths = ends - starts
    c = a[~sep]
    others = np.flatnonzero((c - 48) > 9)  # not a digit (uint8: below '0' wraps)
    others_tok = np.searchsorted(np.cumsum(lengths), others, side="right")
    if is_index[others_tok].any():
        return None  # indices are plain digits (no sign, dot or exponent)
    with np.errstate(over="ignore", invalid="ignore"):  # long tokens: inf, see float() below
        values = _token_values(buf, c, starts, lengths, others, others_tok)
    if values is None:
        return None
    index = values[index_tok]
    if index.size and (index.min() < 1 or index.max() > _MAX_INDEX):
        return None
    indices = index.astype(np.int64) - 1
    indptr = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    steps = np.diff(indices)
    row_starts = indptr[1:-1]
    steps[row_starts[(row_starts > 0) & (row_starts < indices.size)] - 1] = 1
    if np.any(steps <= 0):  # indices must increase strictly within a row
        return None
    labels = values[~(is_index | is_value)] if labelled else np.zeros(n_rows)
    return values[index_tok + 1], indices, indptr, labels


def _fast_result(
    parsed: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None,
    n_rows: int | None,
    n_features: int | None,
) -> tuple[sp.csr_matrix, np.ndarray] | None:
    """Validate a fast-path parse; None when anything is off (the slow path then decides)."""
    if parsed is None:
        return None
    data, indices, indptr, y = parsed
    n = len(indptr) - 1
    if n == 0 or (n_rows is not None and n != n_rows) or len(y) != n:
        return None
    if not (np.isfinite(data).all() and np.isfinite(y).all()):
        return None
    max_idx = int(indices.max()) + 1 if len(indices) else 0
    if n_features is not None and max_idx > n_features:
        return None
    n_cols = max_idx if n_features is None else n_features
    return _make_csr(data, indices, indptr, (n, n_cols)), np.array(y, dtype=np.float64)


def read_svmlin_examples(path: PathLike, n_features: int | None = None,
                         max_features: int | str | None = "auto") -> sp.csr_matrix:
    """Read an SVMlin examples file.

    Parameters
    ----------
    path : str or os.PathLike
        File with one example per line as ``index:value`` pairs (1-based, strictly increasing
        indices, no label column).  ``.gz`` / ``.bz2`` files are decompressed.
    n_features : int or None, optional
        Number of columns of the result.  Indices larger than this are an error.  By default the
        largest index seen is used.
    max_features : 'auto', int or None, optional
        Without ``n_features``, the largest index accepted.  ``'auto'`` (default):
        :data:`DEFAULT_MAX_FEATURES`, and no more than the memory available can hold
        :data:`DENSE_VECTORS` float64 vectors of that length (what training allocates);
        an int sets the cap (and skips the memory check); None accepts any index.

    Returns
    -------
    scipy.sparse.csr_matrix
        A float64 matrix of shape ``(number of lines, n_features or max index)`` with
        0-based columns, sorted indices and no explicitly stored zeros.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    FileFormatError
        For an empty or malformed file, or a feature index beyond ``max_features``; names
        the first bad line and token.

    Examples
    --------
    >>> import tempfile, os
    >>> from semisup import io
    >>> path = os.path.join(tempfile.mkdtemp(), "ex")
    >>> _ = open(path, "w").write("1:0.5 3:1\\n2:2\\n")
    >>> io.read_svmlin_examples(path).toarray()
    array([[0.5, 0. , 1. ],
           [0. , 2. , 0. ]])
    >>> _ = open(path, "w").write("1:0.5 2147483647:1\\n")
    >>> io.read_svmlin_examples(path)
    Traceback (most recent call last):
    ...
    semisup.io.FileFormatError: ...:1: feature index 2147483647 is above the limit of ...
    """
    n_features = _check_n_features(n_features)
    max_features = _check_max_features(max_features)
    name, data = _read_bytes(path)
    body, n_lines = _body(name, data)
    del data
    X = None
    if not body.translate(None, _SPARSE_CHARS):
        result = _fast_result(_parse_fast(body, labelled=False), n_lines, n_features)
        if result is not None:
            X = result[0]
    if X is None:
        X, _ = _parse_slow(name, body, labelled=False, n_features=n_features)
    if X.shape[0] != n_lines:  # pragma: no cover - defensive
        raise AssertionError("line count mismatch in SVMlin examples parser")
    if n_features is None:
        _guard_width(name, body, X, False, max_features)
    return X


def read_svmlight(
    path: PathLike, n_features: int | None = None, max_features: int | str | None = "auto",
    *, missing_labels: bool = False,
) -> tuple[sp.csr_matrix, np.ndarray]:
    """Read an SVMlight / libsvm file.

    Parameters
    ----------
    path : str or os.PathLike
        File with lines ``label index:value ... [# comment]`` (1-based, strictly increasing
        indices; blank and comment-only lines are skipped).  ``.gz`` / ``.bz2`` files are
        decompressed.  ``qid:`` tokens are rejected as unsupported.
    n_features : int or None, optional
        Number of columns of the result; larger indices are an error.  By default the largest
        index seen is used.
    max_features : 'auto', int or None, optional
        Without ``n_features``, the largest index accepted (as in
        :func:`read_svmlin_examples`: by default :data:`DEFAULT_MAX_FEATURES` and what the
        memory available allows).
    missing_labels : bool, default=False
        Read the label tokens ``nan`` (any case) and ``?`` as NaN, the missing target of a
        semi-supervised regressor (otherwise they are an error, as every non-finite label).

    Returns
    -------
    X : scipy.sparse.csr_matrix
        A float64 matrix of shape ``(n_examples, n_features or max index)``, 0-based
        columns.
    y : numpy.ndarray
        The float64 labels, shape ``(n_examples,)`` (NaN for a missing label).

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    FileFormatError
        For an empty or malformed file, or a feature index beyond ``max_features``; names
        the first bad line and token.
    """
    n_features = _check_n_features(n_features)
    max_features = _check_max_features(max_features)
    name, data = _read_bytes(path)
    body, _ = _body(name, data)
    del data
    code = _COMMENT_RE.sub(b"", body) if b"#" in body else body
    result = None
    if not code.translate(None, _SPARSE_CHARS):
        result = _fast_result(_parse_fast(code, labelled=True), None, n_features)
    del code
    if result is None:
        # missing-label tokens contain characters outside the fast path's: this path reads them
        result = _parse_slow(name, body, labelled=True, n_features=n_features,
                             missing_labels=missing_labels)
    if n_features is None:
        _guard_width(name, body, result[0], True, max_features)
    return result


# --------------------------------------------------------------------------------------------
# labels and vectors
# --------------------------------------------------------------------------------------------


def _read_numbers(body: bytes, valid: np.ndarray | None) -> np.ndarray | None:
    """Fast path for one-number-per-line files; None when the slow path must decide."""
    if body.translate(None, _NUMBER_CHARS):
        return None
    try:
        out = np.array([float(t) for t in body.split(b"\n")], dtype=np.float64)
    except ValueError:  # empty line, or several numbers on one line
        return None
    if not np.isfinite(out).all():
        return None
    if valid is not None and not np.isin(out, valid).all():
        return None
    return out + 0.0  # turn -0.0 into 0.0


def _raise_first_bad_number(name: str, body: bytes, what: str, expected: str,
                            allowed: tuple[float, ...] | None = None) -> None:
    """Slow path of the one-number-per-line readers (labels, vectors), run only when the
    fast parser refused the file: raise :class:`FileFormatError` at the first line that is
    not a single number (in ``allowed`` when given)."""
    for lineno, line in enumerate(_iter_lines(body), start=1):
        tokens = line.split()
        if not tokens:
            raise FileFormatError(name, lineno, "empty line", expected)
        if len(tokens) > 1:
            raise FileFormatError(
                name, lineno, f"{len(tokens)} tokens {_show(line.strip())}", expected
            )
        token = tokens[0]
        problem = _number_problem(token, what)
        if problem:
            raise FileFormatError(name, lineno, problem, expected)
        if allowed is not None and float(token) not in allowed:
            raise FileFormatError(name, lineno, f"invalid {what} {_show(token)}", expected)


def read_svmlin_labels(path: PathLike) -> np.ndarray:
    """Read an SVMlin labels file.

    Parameters
    ----------
    path : str or os.PathLike
        File with one label per line: ``+1``, ``1``, ``-1`` or ``0`` (unlabeled), or a float with
        one of these values such as ``1.0``.  ``.gz`` / ``.bz2`` files are decompressed.

    Returns
    -------
    numpy.ndarray
        A float64 array with values in {-1, 0, +1}, one per line.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    FileFormatError
        For an empty file, an empty line, or any other token; names the first bad line.
    """
    name, data = _read_bytes(path)
    body, _ = _body(name, data)
    allowed = np.array([-1.0, 0.0, 1.0])
    out = _read_numbers(body, allowed)
    if out is not None:
        return out
    _raise_first_bad_number(name, body, "label", _EXPECT_LABEL, allowed=(-1.0, 0.0, 1.0))
    raise AssertionError("labels fast path failed on a valid file")  # pragma: no cover


def read_vector(path: PathLike) -> np.ndarray:
    """Read a vector written one number per line (SVMlin ``.weights`` / ``.outputs`` files).

    Parameters
    ----------
    path : str or os.PathLike
        The file; ``.gz`` / ``.bz2`` files are decompressed.

    Returns
    -------
    numpy.ndarray
        float64 array with one entry per line.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    FileFormatError
        For an empty file, an empty line, several numbers on one line, a non-numeric or a
        non-finite entry; names the first bad line.
    """
    name, data = _read_bytes(path)
    body, _ = _body(name, data)
    out = _read_numbers(body, None)
    if out is not None:
        return out
    _raise_first_bad_number(name, body, "value", "one finite number per line")
    raise AssertionError("vector fast path failed on a valid file")  # pragma: no cover


# --------------------------------------------------------------------------------------------
# writers
# --------------------------------------------------------------------------------------------


def _as_csr(X: object) -> sp.csr_matrix:
    """Validated canonical float64 CSR copy of a dense or sparse 2-D matrix."""
    if sp.issparse(X):
        kind = X.dtype.kind
        if kind not in "biuf":
            raise ValueError(f"X must be real-valued, got dtype {X.dtype}")
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D, got {X.ndim} dimensions")
        big_int = kind in "iu" and X.nnz and np.abs(X.data).max() > 2**53
        csr = sp.csr_matrix(X, dtype=np.float64, copy=True)
    else:
        arr = np.asarray(X)
        kind = arr.dtype.kind
        if kind not in "biuf":
            raise ValueError(f"X must be real-valued, got dtype {arr.dtype}")
        if arr.ndim != 2:
            raise ValueError(f"X must be 2-D, got shape {arr.shape}")
        big_int = kind in "iu" and arr.size and np.abs(arr).max() > 2**53
        csr = sp.csr_matrix(arr.astype(np.float64))
    if big_int:
        raise ValueError("X has integers larger than 2**53 that float64 cannot represent")
    csr.sum_duplicates()
    csr.eliminate_zeros()
    csr.sort_indices()
    if not np.isfinite(csr.data).all():
        raise ValueError("X contains non-finite values (nan or inf), which cannot be written")
    if csr.shape[0] == 0:
        raise ValueError("X has no rows; an empty file cannot be read back")
    return csr


def _as_vector(v: object, what: str) -> np.ndarray:
    arr = np.asarray(v)
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"{what} must be real-valued, got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise ValueError(f"{what} must be 1-D, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{what} is empty; an empty file cannot be read back")
    if arr.dtype.kind in "iu" and np.abs(arr).max() > 2**53:
        raise ValueError(f"{what} has integers larger than 2**53")
    out = arr.astype(np.float64)
    if not np.isfinite(out).all():
        raise ValueError(f"{what} contains non-finite values (nan or inf), which cannot be written")
    return out


def _format_rows(csr: sp.csr_matrix, labels: list[str] | None) -> Iterator[bytes]:
    """Yield the text of ``csr`` (optionally with a label column) in chunks of rows."""
    indptr = csr.indptr
    for start in range(0, csr.shape[0], _WRITE_CHUNK):
        stop = min(start + _WRITE_CHUNK, csr.shape[0])
        lo, hi = int(indptr[start]), int(indptr[stop])
        cols = (csr.indices[lo:hi].astype(np.int64) + 1).tolist()
        pairs = [f"{i}:{v:.17g}" for i, v in zip(cols, csr.data[lo:hi].tolist(), strict=True)]
        bounds = (indptr[start : stop + 1] - lo).tolist()
        rows = [" ".join(pairs[a:b]) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
        if labels is not None:
            rows = [
                f"{lab} {row}" if row else lab
                for lab, row in zip(labels[start:stop], rows, strict=True)
            ]
        yield ("\n".join(rows) + "\n").encode("ascii")


def _write_chunks(path: PathLike, chunks: Iterable[bytes]) -> None:
    """The one place that opens an output file (compressed by suffix) and writes to it.

    Atomic: the chunks go to a temporary file in the target's directory, which replaces the
    target only when complete; on any exception (``KeyboardInterrupt`` included) the
    temporary file is removed and the target is left as it was.
    """
    target = os.fsdecode(os.fspath(path))
    folder, name = os.path.split(os.path.abspath(target))
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".part", dir=folder)
    except OSError as exc:
        # name the file asked for, not the temporary one (as open(target, "w") would)
        raise type(exc)(exc.errno, exc.strerror, target) from None
    try:
        os.close(fd)
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)  # mkstemp's 0600 would leak into the target
        with _open_write(tmp, _compression(target)) as fh:
            for chunk in chunks:
                fh.write(chunk)
        os.replace(tmp, target)
    except BaseException:
        _remove_quietly(tmp)
        raise


def _remove_quietly(path: str) -> None:
    try:
        os.remove(path)
    except OSError:
        pass


def svmlin_to_labels(y: object) -> np.ndarray:
    """Convert SVMlin labels (``+1``, ``-1``, ``0`` = unlabeled) to semisup's coding.

    semisup estimators read ``-1`` as unlabeled, so SVMlin's negative class ``-1`` becomes
    class ``0``, its positive class ``+1`` stays class ``1`` and its unlabeled ``0`` becomes
    ``-1``.  Passing SVMlin's labels to ``fit`` unconverted would train on the unlabeled
    rows as a class and drop the negative examples.

    Parameters
    ----------
    y : array_like of shape (n,)
        Labels in {-1, 0, +1}, e.g. from :func:`read_svmlin_labels`.

    Returns
    -------
    numpy.ndarray of int64 of shape (n,)
        ``1`` (positive), ``0`` (negative) or ``-1`` (unlabeled).

    Raises
    ------
    ValueError
        If ``y`` is not 1-D or holds another value.
    """
    arr = _as_vector(y, "y")
    bad = ~np.isin(arr, (-1.0, 0.0, 1.0))
    if bad.any():
        raise ValueError(f"SVMlin labels must be -1, 0 or +1, got {arr[bad][0]!r}")
    return np.where(arr == 0, -1, (arr > 0).astype(np.int64)).astype(np.int64)


def labels_to_svmlin(y: object) -> np.ndarray:
    """Inverse of :func:`svmlin_to_labels`: semisup labels {1, 0, -1} to SVMlin's {+1, -1, 0}.

    Parameters
    ----------
    y : array_like of shape (n,)
        ``1`` (positive), ``0`` (negative) or ``-1`` (unlabeled).

    Returns
    -------
    numpy.ndarray of float64 of shape (n,)
        The SVMlin coding of ``y``.

    Raises
    ------
    ValueError
        If ``y`` is not 1-D or holds another value.
    """
    arr = _as_vector(y, "y")
    bad = ~np.isin(arr, (-1.0, 0.0, 1.0))
    if bad.any():
        raise ValueError(f"labels must be 1, 0 or -1 (unlabeled), got {arr[bad][0]!r}")
    return np.where(arr == -1, 0.0, np.where(arr > 0, 1.0, -1.0))


def _write_lines(path: PathLike, lines: list[str]) -> None:
    """Write one ASCII line per entry (labels and vector files)."""
    _write_chunks(path, [("\n".join(lines) + "\n").encode("ascii")])


def _write_examples(path: PathLike, X: object, y: object | None) -> None:
    """Writer core of the sparse formats: SVMlin examples (``y is None``) or SVMlight.

    Both write the non-zeros of each row as ``index:value`` pairs; SVMlight puts the label
    (``%.17g``) first.  ``X`` is validated before ``y``.
    """
    csr = _as_csr(X)
    label_text = None
    if y is not None:
        labels = _as_vector(y, "y")
        if labels.shape[0] != csr.shape[0]:
            raise ValueError(f"X has {csr.shape[0]} rows but y has {labels.shape[0]} entries")
        label_text = [f"{v:.17g}" for v in labels.tolist()]
    _write_chunks(path, _format_rows(csr, label_text))


def write_svmlin_examples(path: PathLike, X: object) -> None:
    """Write a matrix as an SVMlin examples file.

    Only non-zeros are written, as ``index:value`` pairs with 1-based indices and ``%.17g``
    values, so that :func:`read_svmlin_examples` gives back exactly the same matrix (pass
    ``n_features=X.shape[1]`` to also recover trailing all-zero columns).

    Parameters
    ----------
    path : str or os.PathLike
        Output file; ``.gz`` / ``.bz2`` suffixes compress.
    X : array_like or scipy sparse matrix, shape (n_examples, n_features)
        Finite real values; at least one row.

    Raises
    ------
    ValueError
        If ``X`` is not 2-D, not real, has non-finite values or no rows.
    """
    _write_examples(path, X, None)


def write_svmlin_labels(path: PathLike, y: object) -> None:
    """Write an SVMlin labels file (``1``, ``-1`` or ``0`` per line).

    Parameters
    ----------
    path : str or os.PathLike
        Output file; ``.gz`` / ``.bz2`` suffixes compress.
    y : array_like, shape (n_examples,)
        Labels in {-1, 0, +1}; 0 marks unlabeled examples.

    Raises
    ------
    ValueError
        If ``y`` is not 1-D, empty or has other values.
    """
    arr = _as_vector(y, "y")
    if not np.isin(arr, (-1.0, 0.0, 1.0)).all():
        bad = arr[~np.isin(arr, (-1.0, 0.0, 1.0))][0]
        raise ValueError(f"SVMlin labels must be -1, 0 or +1, got {bad!r}")
    _write_lines(path, [["-1", "0", "1"][int(v) + 1] for v in arr.tolist()])


def write_svmlight(path: PathLike, X: object, y: object) -> None:
    """Write an SVMlight / libsvm file (``label index:value ...`` per line).

    Labels and values are written with ``%.17g`` so that :func:`read_svmlight` recovers them
    exactly; only non-zeros of ``X`` are written.

    Parameters
    ----------
    path : str or os.PathLike
        Output file; ``.gz`` / ``.bz2`` suffixes compress.
    X : array_like or scipy sparse matrix, shape (n_examples, n_features)
        Finite real values; at least one row.
    y : array_like, shape (n_examples,)
        Finite real labels.

    Raises
    ------
    ValueError
        For invalid ``X`` or ``y`` or when their lengths differ.
    """
    _write_examples(path, X, y)


def write_vector(path: PathLike, v: object) -> None:
    """Write a vector one ``%.17g`` number per line (SVMlin ``.weights`` / ``.outputs``).

    Parameters
    ----------
    path : str or os.PathLike
        Output file; ``.gz`` / ``.bz2`` suffixes compress.
    v : array_like, shape (n,)
        Finite real values; at least one.

    Raises
    ------
    ValueError
        If ``v`` is not 1-D, empty or has non-finite values.
    """
    arr = _as_vector(v, "v")
    _write_lines(path, [f"{x:.17g}" for x in arr.tolist()])


def check_consistent(X: object, y: object, examples_path: PathLike, labels_path: PathLike) -> None:
    """Check that an examples file and a labels file describe the same number of examples.

    Parameters
    ----------
    X : matrix with ``shape`` attribute
        Examples as read from ``examples_path``.
    y : array_like, shape (n_labels,)
        Labels as read from ``labels_path``.
    examples_path, labels_path : str or os.PathLike
        The two files, used in the error message.

    Raises
    ------
    FileFormatError
        ("ragged labels file") naming both files when the numbers of rows differ.
    ValueError
        If ``X`` is not 2-D or ``y`` is not 1-D.
    """
    shape = X.shape if hasattr(X, "shape") else np.shape(X)
    if len(shape) != 2:
        raise ValueError(f"examples must be 2-D, got shape {tuple(shape)}")
    n_examples = int(shape[0])
    labels = np.asarray(y)
    if labels.ndim != 1:
        raise ValueError(f"labels must be 1-D, got shape {labels.shape}")
    n_labels = int(labels.shape[0])
    if n_labels != n_examples:
        ex = os.fsdecode(os.fspath(examples_path))
        lab = os.fsdecode(os.fspath(labels_path))
        raise FileFormatError(
            lab,
            None,
            f"ragged labels file: {n_labels} labels in {lab} but {n_examples} examples in {ex}",
            f"one label per line of {ex}",
        )
