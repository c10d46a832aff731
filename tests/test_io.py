"""Tests for semisup.io: SVMlin / SVMlight readers and writers."""

from __future__ import annotations

import bz2
import gzip
import pickle
import uuid
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from semisup.io import (
    FileFormatError,
    check_consistent,
    read_svmlight,
    read_svmlin_examples,
    read_svmlin_labels,
    read_vector,
    write_svmlight,
    write_svmlin_examples,
    write_svmlin_labels,
    write_vector,
)

DATA_DIR = Path(__file__).resolve().parents[2] / "shared" / "data"
PCMAC_DIR = DATA_DIR / "svmlin_example_pcmac"

SETTINGS = settings(max_examples=60, deadline=None)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("io")


def fresh(workdir: Path, suffix: str = "") -> Path:
    """A new file name inside ``workdir`` (hypothesis runs many examples per test)."""
    return workdir / f"{uuid.uuid4().hex}{suffix}"


# ----------------------------------------------------------------------------------------------
# strategies
# ----------------------------------------------------------------------------------------------

SPECIAL = [
    0.1,
    1 / 3,
    -2.5,
    5e-324,
    -5e-324,
    2.2250738585072014e-308,
    1e-300,
    -1e300,
    1.7976931348623157e308,
    -1.7976931348623157e308,
    123456789.123456789,
    2.0**53,
]
float_values = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False, width=64),
    st.sampled_from(SPECIAL),
    st.integers(-(10**9), 10**9).map(float),
)


@st.composite
def matrices(draw: st.DrawFn, max_rows: int = 10, max_cols: int = 25) -> np.ndarray:
    """Dense float64 or int64 matrices with mostly-zero entries and some empty rows."""
    n = draw(st.integers(1, max_rows))
    d = draw(st.integers(0, max_cols))
    integer = draw(st.booleans())
    dense = np.zeros((n, d), dtype=np.int64 if integer else np.float64)
    if d:
        for i in range(n):
            cols = draw(st.sets(st.integers(0, d - 1), max_size=min(d, 8)))
            for j in cols:
                if integer:
                    dense[i, j] = draw(st.integers(-(2**53), 2**53))
                else:
                    dense[i, j] = draw(float_values)
    return dense


def as_input(dense: np.ndarray, kind: str) -> object:
    if kind == "dense":
        return dense
    if kind == "list":
        return dense.tolist()
    if kind == "csr_matrix":
        return sp.csr_matrix(dense)
    if kind == "coo_array":
        return sp.coo_array(dense)
    return sp.csc_matrix(dense)


input_kinds = st.sampled_from(["dense", "list", "csr_matrix", "coo_array", "csc_matrix"])


def assert_same(X: sp.csr_matrix, dense: np.ndarray) -> None:
    assert sp.issparse(X) and X.format == "csr"
    assert X.dtype == np.float64
    assert X.shape == dense.shape
    expected = dense.astype(np.float64)
    assert np.array_equal(X.toarray(), expected)
    assert X.nnz == np.count_nonzero(expected)


# ----------------------------------------------------------------------------------------------
# round trips
# ----------------------------------------------------------------------------------------------


@SETTINGS
@given(dense=matrices(), kind=input_kinds, suffix=st.sampled_from(["", ".txt", ".gz", ".bz2"]))
def test_svmlin_examples_round_trip(workdir: Path, dense: np.ndarray, kind: str, suffix: str):
    path = fresh(workdir, suffix)
    write_svmlin_examples(path, as_input(dense, kind))
    assert_same(read_svmlin_examples(path, n_features=dense.shape[1]), dense)
    # without n_features the width is the largest index present
    X = read_svmlin_examples(str(path))
    nz_cols = np.flatnonzero(dense.any(axis=0))
    width = int(nz_cols[-1]) + 1 if nz_cols.size else 0
    assert X.shape == (dense.shape[0], width)
    assert np.array_equal(X.toarray(), dense[:, :width].astype(np.float64))


@SETTINGS
@given(dense=matrices(), kind=input_kinds, data=st.data())
def test_svmlight_round_trip(workdir: Path, dense: np.ndarray, kind: str, data: st.DataObject):
    n = dense.shape[0]
    y = np.array(
        data.draw(
            st.one_of(
                st.lists(float_values, min_size=n, max_size=n),
                st.lists(st.integers(-3, 10).map(float), min_size=n, max_size=n),
            )
        )
    )
    path = fresh(workdir, data.draw(st.sampled_from(["", ".gz", ".bz2"])))
    write_svmlight(path, as_input(dense, kind), y)
    X, y2 = read_svmlight(path, n_features=dense.shape[1])
    assert_same(X, dense)
    assert y2.dtype == np.float64
    assert np.array_equal(y2, y)


@SETTINGS
@given(y=st.lists(st.sampled_from([-1, 0, 1]), min_size=1, max_size=50))
def test_labels_round_trip(workdir: Path, y: list[int]):
    path = fresh(workdir)
    write_svmlin_labels(path, np.array(y))
    y2 = read_svmlin_labels(path)
    assert y2.dtype == np.float64
    assert np.array_equal(y2, np.array(y, dtype=np.float64))


@SETTINGS
@given(v=st.lists(float_values, min_size=1, max_size=50), suffix=st.sampled_from(["", ".gz"]))
def test_vector_round_trip(workdir: Path, v: list[float], suffix: str):
    path = fresh(workdir, suffix)
    write_vector(path, np.array(v))
    v2 = read_vector(path)
    assert v2.dtype == np.float64
    assert np.array_equal(v2, np.array(v))


@SETTINGS
@given(dense=matrices(max_rows=6), data=st.data())
def test_whitespace_variants_read_identically(
    workdir: Path, dense: np.ndarray, data: st.DataObject
):
    """Tabs, repeated blanks, CRLF and vertical tabs (slow path) give the same matrix."""
    seps = st.sampled_from([" ", "\t", "  ", " \t", "\x0b"])
    lines = []
    for row in dense.astype(np.float64):
        cols = np.flatnonzero(row)
        pairs = [f"{j + 1}:{float(row[j])!r}" for j in cols]
        text = data.draw(seps).join(pairs) if pairs else ""
        lines.append(data.draw(st.sampled_from(["", " ", "\t"])) + text)
    eol = data.draw(st.sampled_from(["\n", "\r\n"]))
    path = fresh(workdir)
    path.write_bytes((eol.join(lines) + eol).encode())
    assert_same(read_svmlin_examples(path, n_features=dense.shape[1]), dense)


# ----------------------------------------------------------------------------------------------
# rejection of malformed tokens, with the right line number
# ----------------------------------------------------------------------------------------------

# kind -> fragment that must occur in the error message
CORRUPTIONS = {
    "index0": "index 0",
    "negative_index": "negative index",
    "non_numeric_value": "non-numeric value",
    "missing_colon": "missing ':'",
    "missing_value": "missing value",
    "missing_index": "missing index",
    "decreasing": "decreasing index",
    "duplicate": "duplicate index",
    "nan": "non-finite",
    "inf": "non-finite",
    "overflow": "non-finite",
    "stray_word": "missing ':'",
    "double_colon": "more than one ':'",
    "float_index": "non-integer index",
    "qid": "unsupported",
}


def corrupt_pairs(tokens: list[str], kind: str, pos: int) -> list[str]:
    """Return ``tokens`` (valid index:value pairs) with one malformed token injected."""
    last = int(tokens[-1].split(":")[0]) if tokens else 0
    nxt = last + 1
    if kind == "index0":
        return ["0:1.5", *tokens]
    if kind == "negative_index":
        return ["-2:1", *tokens]
    if kind == "non_numeric_value":
        return [*tokens, f"{nxt}:abc"]
    if kind == "missing_colon":
        return [*tokens, f"{nxt}"]
    if kind == "missing_value":
        return [*tokens, f"{nxt}:"]
    if kind == "missing_index":
        return [*tokens, ":4"]
    if kind == "decreasing":
        return [*tokens, f"{nxt + 5}:1", f"{nxt + 2}:1"]
    if kind == "duplicate":
        return [*tokens, f"{nxt}:1", f"{nxt}:2"]
    if kind == "nan":
        return [*tokens, f"{nxt}:nan"]
    if kind == "inf":
        return [*tokens, f"{nxt}:-inf"]
    if kind == "overflow":
        return [*tokens, f"{nxt}:1e999"]
    if kind == "stray_word":
        pos = min(pos, len(tokens))
        return [*tokens[:pos], "hello", *tokens[pos:]]
    if kind == "double_colon":
        return [*tokens, f"{nxt}:1:2"]
    if kind == "float_index":
        return [*tokens, f"{nxt}.5:1"]
    if kind == "qid":
        return ["qid:3", *tokens]
    raise AssertionError(kind)


def matrix_lines(dense: np.ndarray) -> list[list[str]]:
    out = []
    for row in dense.astype(np.float64):
        out.append([f"{j + 1}:{float(row[j])!r}" for j in np.flatnonzero(row)])
    return out


@settings(max_examples=120, deadline=None)
@given(
    dense=matrices(),
    kind=st.sampled_from(sorted(CORRUPTIONS)),
    data=st.data(),
)
def test_svmlin_examples_rejects_first_bad_line(
    workdir: Path, dense: np.ndarray, kind: str, data: st.DataObject
):
    rows = matrix_lines(dense)
    bad = data.draw(st.integers(0, len(rows) - 1))
    pos = data.draw(st.integers(0, 10))
    rows[bad] = corrupt_pairs(rows[bad], kind, pos)
    path = fresh(workdir, data.draw(st.sampled_from(["", ".gz"])))
    text = "\n".join(" ".join(r) for r in rows) + "\n"
    path.write_bytes(gzip.compress(text.encode()) if path.suffix == ".gz" else text.encode())
    with pytest.raises(FileFormatError) as info:
        read_svmlin_examples(path)
    err = info.value
    assert err.line == bad + 1
    assert err.path == str(path)
    assert CORRUPTIONS[kind] in err.reason
    assert str(err).startswith(f"{path}:{bad + 1}: ")
    assert "; expected " in str(err)


@settings(max_examples=120, deadline=None)
@given(
    dense=matrices(),
    kind=st.sampled_from(sorted(CORRUPTIONS) + ["label_word", "label_missing", "label_nan"]),
    data=st.data(),
)
def test_svmlight_rejects_first_bad_line(
    workdir: Path, dense: np.ndarray, kind: str, data: st.DataObject
):
    """Like the SVMlin test, with labels, comment lines and blank lines interleaved."""
    body = matrix_lines(dense)
    labels = data.draw(st.lists(st.sampled_from(["1", "-1", "2", "0.5", "+3"]), min_size=1))
    bad = data.draw(st.integers(0, len(body) - 1))
    lines: list[str] = []
    bad_lineno = -1
    for i, pairs in enumerate(body):
        if data.draw(st.booleans()):
            lines.append(data.draw(st.sampled_from(["", "# a comment: 1:nan qid:1", "   "])))
        label = labels[i % len(labels)]
        if i == bad:
            if kind == "label_word":
                label = "abc"
            elif kind == "label_missing":
                label = ""
                pairs = pairs or ["1:1"]
            elif kind == "label_nan":
                label = "nan"
            else:
                pairs = corrupt_pairs(pairs, kind, data.draw(st.integers(0, 10)))
            bad_lineno = len(lines) + 1
        comment = data.draw(st.sampled_from(["", " # note", "#x"]))
        lines.append(" ".join([label, *pairs]).strip() + comment)
    path = fresh(workdir)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(FileFormatError) as info:
        read_svmlight(path)
    err = info.value
    assert err.line == bad_lineno, str(err)
    if kind in CORRUPTIONS:
        assert CORRUPTIONS[kind] in err.reason
    else:
        assert "label" in err.reason


@SETTINGS
@given(
    y=st.lists(st.sampled_from(["1", "-1", "+1", "0", "1.0", "-1.0", "0.0"]), min_size=1),
    bad_token=st.sampled_from(["2", "abc", "", "1 1", "nan", "0.5", "-2", "1:1", "+"]),
    data=st.data(),
)
def test_labels_rejects_first_bad_line(
    workdir: Path, y: list[str], bad_token: str, data: st.DataObject
):
    bad = data.draw(st.integers(0, len(y)))
    lines = [*y[:bad], bad_token, *y[bad:]]
    path = fresh(workdir)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(FileFormatError) as info:
        read_svmlin_labels(path)
    assert info.value.line == bad + 1


@SETTINGS
@given(
    v=st.lists(float_values, min_size=1, max_size=20),
    bad_token=st.sampled_from(["abc", "", "1 2", "nan", "-inf", "1e999", "1,5", "0x10"]),
    data=st.data(),
)
def test_vector_rejects_first_bad_line(
    workdir: Path, v: list[float], bad_token: str, data: st.DataObject
):
    lines = [repr(x) for x in v]
    bad = data.draw(st.integers(0, len(lines)))
    lines.insert(bad, bad_token)
    path = fresh(workdir)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(FileFormatError) as info:
        read_vector(path)
    assert info.value.line == bad + 1


FUZZ_ALPHABET = st.sampled_from(
    [*"0123456789", ":", ":", " ", "\n", ".", "e", "-", "+", "\t", "\r", "#", "n", " 3:", "\n1:"]
)


@SETTINGS
@given(text=st.lists(FUZZ_ALPHABET, min_size=1, max_size=40).map("".join))
def test_fast_path_agrees_with_line_parser(workdir: Path, text: str):
    """On arbitrary near-valid input the readers behave exactly like the line-by-line parser."""
    from semisup.io import _body, _parse_slow

    path = fresh(workdir)
    path.write_text(text)
    body, _ = _body(str(path), text.encode())
    for labelled, reader in [(False, read_svmlin_examples), (True, read_svmlight)]:
        try:
            expected = _parse_slow(str(path), body, labelled=labelled, n_features=None)
        except FileFormatError as exc:
            with pytest.raises(FileFormatError) as info:
                reader(path)
            assert (info.value.line, info.value.reason) == (exc.line, exc.reason)
            continue
        got = reader(path)
        X, y = got if labelled else (got, expected[1])
        assert X.shape == expected[0].shape
        assert (X != expected[0]).nnz == 0
        assert np.array_equal(y, expected[1])


# ----------------------------------------------------------------------------------------------
# explicit cases
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "reader", [read_svmlin_examples, read_svmlin_labels, read_svmlight, read_vector]
)
def test_empty_file(tmp_path: Path, reader):
    path = tmp_path / "empty"
    path.write_bytes(b"")
    with pytest.raises(FileFormatError, match="empty file") as info:
        reader(path)
    assert info.value.line is None
    assert str(info.value).startswith(f"{path}: empty file")


@pytest.mark.parametrize(
    "reader", [read_svmlin_examples, read_svmlin_labels, read_svmlight, read_vector]
)
def test_missing_file(tmp_path: Path, reader):
    path = tmp_path / "does_not_exist.gz"
    with pytest.raises(FileNotFoundError, match="does_not_exist"):
        reader(path)


def test_empty_lines_are_empty_examples(tmp_path: Path):
    path = tmp_path / "ex"
    path.write_text("\n2:1.5\n\n")
    X = read_svmlin_examples(path)
    assert X.shape == (3, 2)
    assert np.array_equal(X.toarray(), [[0, 0], [0, 1.5], [0, 0]])
    path.write_text("\n")
    assert read_svmlin_examples(path).shape == (1, 0)
    assert read_svmlin_examples(path, n_features=4).shape == (1, 4)


def test_trailing_empty_line_on_slow_path(tmp_path: Path):
    """A vertical tab forces the line-by-line parser; the final empty line is still a row."""
    path = tmp_path / "ex"
    path.write_bytes(b"1:1\x0b2:1\n\n")
    assert np.array_equal(read_svmlin_examples(path).toarray(), [[1, 1], [0, 0]])
    path.write_bytes(b"\x0b")
    assert read_svmlin_examples(path).shape == (1, 0)


def test_last_line_without_newline(tmp_path: Path):
    path = tmp_path / "ex"
    path.write_text("1:1\n3:2")
    assert np.array_equal(read_svmlin_examples(path).toarray(), [[1, 0, 0], [0, 0, 2]])


def test_explicit_zero_values_are_dropped(tmp_path: Path):
    path = tmp_path / "ex"
    path.write_text("1:0 2:-0.0 3:4\n5:0\n")
    X = read_svmlin_examples(path)
    assert X.shape == (2, 5)
    assert X.nnz == 1


@pytest.mark.parametrize("token", ["2", "abc", "0.5", "nan", "1:1"])
def test_labels_file_bad_value(tmp_path: Path, token: str):
    path = tmp_path / "labels"
    path.write_text(f"1\n-1\n{token}\n0\n")
    with pytest.raises(FileFormatError) as info:
        read_svmlin_labels(path)
    assert info.value.line == 3
    assert repr(token) in str(info.value)
    assert "expected one label per line" in str(info.value)


def test_labels_accepts_all_spellings(tmp_path: Path):
    path = tmp_path / "labels"
    path.write_text("+1\n1\n-1\n0\n1.0\n-1.0\n0.0\n-0\r\n  1  \n")
    y = read_svmlin_labels(path)
    assert np.array_equal(y, [1, 1, -1, 0, 1, -1, 0, 0, 1])
    assert not np.signbit(y[y == 0]).any()


def test_labels_blank_line_is_error(tmp_path: Path):
    path = tmp_path / "labels"
    path.write_text("1\n\n-1\n")
    with pytest.raises(FileFormatError, match="empty line") as info:
        read_svmlin_labels(path)
    assert info.value.line == 2


def test_check_consistent_ragged(tmp_path: Path):
    ex, lab = tmp_path / "train.examples", tmp_path / "train.labels"
    ex.write_text("1:1\n2:1\n3:1\n")
    lab.write_text("1\n-1\n")
    X, y = read_svmlin_examples(ex), read_svmlin_labels(lab)
    with pytest.raises(FileFormatError) as info:
        check_consistent(X, y, ex, lab)
    msg = str(info.value)
    assert "ragged labels file" in msg
    assert str(ex) in msg and str(lab) in msg
    assert "2 labels" in msg and "3 examples" in msg
    lab.write_text("1\n-1\n0\n")
    check_consistent(X, read_svmlin_labels(lab), ex, lab)
    with pytest.raises(ValueError):
        check_consistent(X, np.zeros((3, 1)), ex, lab)


def test_n_features_bound(tmp_path: Path):
    path = tmp_path / "ex"
    path.write_text("1:1 3:1\n2:1 7:2\n")
    assert read_svmlin_examples(path).shape == (2, 7)
    assert read_svmlin_examples(path, n_features=10).shape == (2, 10)
    with pytest.raises(FileFormatError, match="exceeds n_features=5") as info:
        read_svmlin_examples(path, n_features=5)
    assert info.value.line == 2
    svml = tmp_path / "svml"
    svml.write_text("1 1:1\n# c\n2 2:1 9:1\n")
    with pytest.raises(FileFormatError, match="exceeds n_features=8") as info:
        read_svmlight(svml, n_features=8)
    assert info.value.line == 3
    with pytest.raises(ValueError):
        read_svmlin_examples(path, n_features=-1)


def test_huge_index_rejected(tmp_path: Path):
    path = tmp_path / "ex"
    path.write_text("1:1\n99999999999:1\n")
    with pytest.raises(FileFormatError, match="too large") as info:
        read_svmlin_examples(path)
    assert info.value.line == 2


def test_comment_not_allowed_in_svmlin_examples(tmp_path: Path):
    path = tmp_path / "ex"
    path.write_text("1:1\n2:1 # hi\n")
    with pytest.raises(FileFormatError, match="comment") as info:
        read_svmlin_examples(path)
    assert info.value.line == 2


def test_svmlight_comments_blank_lines_and_labels(tmp_path: Path):
    path = tmp_path / "data.svm"
    path.write_text(
        "# header comment with weird stuff: qid:1 nan 0:0\n"
        "3 1:0.5 4:2 # trailing\n"
        "\n"
        "-1\n"
        "+2.5 2:1e-3\r\n"
    )
    X, y = read_svmlight(path)
    assert np.array_equal(y, [3, -1, 2.5])
    assert np.array_equal(X.toarray(), [[0.5, 0, 0, 2], [0, 0, 0, 0], [0, 1e-3, 0, 0]])


def test_svmlight_qid_unsupported(tmp_path: Path):
    path = tmp_path / "rank.svm"
    path.write_text("1 1:1\n2 qid:4 1:3 2:1\n")
    with pytest.raises(FileFormatError, match="qid.*unsupported") as info:
        read_svmlight(path)
    assert info.value.line == 2


def test_svmlight_only_comments(tmp_path: Path):
    path = tmp_path / "c.svm"
    path.write_text("# nothing\n\n")
    with pytest.raises(FileFormatError, match="no examples"):
        read_svmlight(path)


@pytest.mark.parametrize("suffix", [".gz", ".bz2", ".GZ"])
def test_compressed_files(tmp_path: Path, suffix: str):
    dense = np.array([[0.0, 1.25, 0.0], [0.0, 0.0, 0.0], [-3.0, 0.0, 0.25]])
    ex = tmp_path / f"examples{suffix}"
    write_svmlin_examples(ex, dense)
    raw = ex.read_bytes()
    opener = bz2 if suffix == ".bz2" else gzip
    assert opener.decompress(raw).decode() == "2:1.25\n\n1:-3 3:0.25\n"
    assert_same(read_svmlin_examples(ex), dense)
    lab = tmp_path / f"labels{suffix}"
    write_svmlin_labels(lab, [1, 0, -1])
    assert np.array_equal(read_svmlin_labels(lab), [1, 0, -1])
    svm = tmp_path / f"data{suffix}"
    write_svmlight(svm, sp.csr_matrix(dense), [1, 2, 3])
    X, y = read_svmlight(str(svm))
    assert_same(X, dense)
    assert np.array_equal(y, [1, 2, 3])
    vec = tmp_path / f"w.weights{suffix}"
    write_vector(vec, [0.5, -2.0])
    assert np.array_equal(read_vector(vec), [0.5, -2.0])


def test_reading_compressed_by_hand(tmp_path: Path):
    path = tmp_path / "ex.bz2"
    path.write_bytes(bz2.compress(b"1:2 5:3\n"))
    assert read_svmlin_examples(path).shape == (1, 5)


@pytest.mark.parametrize("suffix", [".gz", ".bz2"])
def test_corrupt_compressed_file(tmp_path: Path, suffix: str):
    path = tmp_path / f"ex{suffix}"
    path.write_bytes(b"1:1 2:2\n")  # not actually compressed
    with pytest.raises(FileFormatError, match="cannot decompress"):
        read_svmlin_examples(path)
    good = (gzip if suffix == ".gz" else bz2).compress(b"1:1 2:2\n" * 100)
    path.write_bytes(good[: len(good) // 2])  # truncated
    with pytest.raises(FileFormatError, match="cannot decompress"):
        read_svmlin_examples(path)


def test_writers_format(tmp_path: Path):
    path = tmp_path / "w"
    write_vector(path, np.array([0.1, -2, 1e300, 3]))
    assert path.read_text() == "0.10000000000000001\n-2\n1.0000000000000001e+300\n3\n"
    write_svmlin_labels(path, np.array([1.0, -1.0, 0.0, -0.0]))
    assert path.read_text() == "1\n-1\n0\n0\n"
    write_svmlight(path, np.array([[0, 2], [0, 0]]), np.array([1, -1]))
    assert path.read_text() == "1 2:2\n-1\n"


def test_writer_does_not_modify_input_and_canonicalises(tmp_path: Path):
    X = sp.csr_matrix(
        (np.array([1.0, 0.0, 2.0, 3.0]), np.array([2, 0, 2, 1]), np.array([0, 3, 4])),
        shape=(2, 3),
    )
    before = (X.data.copy(), X.indices.copy(), X.indptr.copy())
    path = tmp_path / "ex"
    write_svmlin_examples(path, X)
    assert path.read_text() == "3:3\n2:3\n"
    assert all(
        np.array_equal(a, b) for a, b in zip(before, (X.data, X.indices, X.indptr), strict=True)
    )


@pytest.mark.parametrize(
    ("writer", "args", "match"),
    [
        (write_svmlin_examples, (np.array([[1.0, np.nan]]),), "non-finite"),
        (write_svmlin_examples, (np.zeros((0, 3)),), "no rows"),
        (write_svmlin_examples, (np.zeros(3),), "2-D"),
        (write_svmlin_examples, (np.array([[1 + 1j]]),), "real"),
        (write_svmlin_examples, (np.array([[2**60]]),), "2\\*\\*53"),
        (write_svmlin_labels, (np.array([1, 2]),), "-1, 0 or \\+1"),
        (write_svmlin_labels, (np.array([]),), "empty"),
        (write_svmlight, (np.eye(2), np.array([1.0])), "rows"),
        (write_svmlight, (np.eye(2), np.array([1.0, np.inf])), "non-finite"),
        (write_vector, (np.array([np.nan]),), "non-finite"),
        (write_vector, (np.ones((2, 2)),), "1-D"),
    ],
)
def test_writers_reject_invalid_input(tmp_path: Path, writer, args, match):
    with pytest.raises(ValueError, match=match):
        writer(tmp_path / "out", *args)


def test_file_format_error_behaviour():
    err = FileFormatError(Path("a/b.txt"), 7, "bad thing", "good thing")
    assert isinstance(err, ValueError)
    assert str(err) == "a/b.txt:7: bad thing; expected good thing"
    assert (err.path, err.line, err.reason, err.expected) == (
        "a/b.txt",
        7,
        "bad thing",
        "good thing",
    )
    again = pickle.loads(pickle.dumps(err))
    assert str(again) == str(err)
    assert str(FileFormatError("f", None, "empty file", "at least one line")) == (
        "f: empty file; expected at least one line"
    )


def test_accepts_str_and_path(tmp_path: Path):
    path = tmp_path / "ex"
    path.write_text("1:1\n")
    assert read_svmlin_examples(str(path)).shape == read_svmlin_examples(path).shape == (1, 1)


def test_non_ascii_garbage(tmp_path: Path):
    path = tmp_path / "ex"
    path.write_bytes(b"1:1\n2:\xff\xfe\n")
    with pytest.raises(FileFormatError, match="non-numeric value") as info:
        read_svmlin_examples(path)
    assert info.value.line == 2


def test_larger_file_fast_path_matches(tmp_path: Path):
    rng = np.random.default_rng(0)
    X = sp.random(3000, 500, density=0.02, format="csr", random_state=rng)
    X.data = rng.standard_normal(X.nnz) * 10.0 ** rng.integers(-30, 30, X.nnz)
    path = tmp_path / "big"
    write_svmlin_examples(path, X)
    assert_same(read_svmlin_examples(path, n_features=500), X.toarray())
    # an error on the very last line is still found with its line number
    with path.open("a") as fh:
        fh.write("1:1 1:2\n")
    with pytest.raises(FileFormatError, match="duplicate index 1") as info:
        read_svmlin_examples(path)
    assert info.value.line == 3001


# ----------------------------------------------------------------------------------------------
# the real SVMlin example data
# ----------------------------------------------------------------------------------------------


def test_real_svmlin_example_pcmac():
    if not (PCMAC_DIR / "training_examples").exists():
        pytest.skip(f"real data not available: {PCMAC_DIR} is absent")
    X = read_svmlin_examples(PCMAC_DIR / "training_examples")
    y = read_svmlin_labels(PCMAC_DIR / "training_labels")
    assert X.shape == (1460, 7510)
    assert X.nnz == 79402
    assert X.dtype == np.float64
    assert (y == 1).sum() == 21
    assert (y == -1).sum() == 29
    assert (y == 0).sum() == 1410
    check_consistent(X, y, PCMAC_DIR / "training_examples", PCMAC_DIR / "training_labels")
    # every row has unit L2 norm (documented in SOURCE.md)
    assert np.allclose(np.sqrt(X.multiply(X).sum(axis=1)), 1.0)


# --------------------------------------------------------------------------------------------
# feature-dimension guard (issue 27): an index of 2**31 - 1 or 2e8 in a one-line file made
# training allocate 8-16 GiB
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("index", [2147483647, 200000000])
def test_feature_index_beyond_the_cap_names_line_and_index(tmp_path, index):
    svmlight = tmp_path / "big.svm"
    svmlight.write_text(f"1 1:1\n\n# a comment line\n-1 2:1 {index}:0.5\n1 3:1\n")
    with pytest.raises(FileFormatError, match=f"feature index {index} is above the limit") as e:
        read_svmlight(svmlight)
    assert e.value.line == 4 and "max_features" in str(e.value)
    examples = tmp_path / "big.ex"
    examples.write_text(f"1:1\n\n2:1 {index}:0.5\n")
    with pytest.raises(FileFormatError, match=f"feature index {index}") as e:
        read_svmlin_examples(examples)
    assert e.value.line == 3
    # the caller's say: a cap of its own, or none (the matrix itself stays small)
    assert read_svmlight(svmlight, max_features=None)[0].shape == (3, index)
    assert read_svmlin_examples(examples, max_features=index).shape == (3, index)
    with pytest.raises(FileFormatError, match="above the limit of 5 features"):
        read_svmlight(svmlight, max_features=5)
    # an explicit n_features decides the width; the guard is for widths read from the file
    assert read_svmlight(svmlight, n_features=index)[0].shape[1] == index


@pytest.mark.parametrize("bad", [0, -3, 1.5, True, "many"])
def test_max_features_is_validated(tmp_path, bad):
    path = tmp_path / "ok.svm"
    path.write_text("1 1:1\n")
    with pytest.raises(ValueError, match="max_features must be 'auto', None or an integer"):
        read_svmlight(path, max_features=bad)


def test_width_within_the_cap_is_checked_against_available_memory(tmp_path, monkeypatch):
    from semisup import io as semisup_io

    path = tmp_path / "wide.svm"
    path.write_text("1 1:1\n-1 50000000:1\n")
    monkeypatch.setattr(semisup_io, "available_memory", lambda: 2**30)
    with pytest.raises(FileFormatError, match=r"6\.0 GiB .* more than the 1\.0 GiB") as e:
        read_svmlight(path)
    assert e.value.line == 2
    monkeypatch.setattr(semisup_io, "available_memory", lambda: 2**40)
    assert read_svmlight(path)[0].shape == (2, 50_000_000)


def test_available_memory_sees_an_address_space_limit():
    import subprocess
    import sys

    probe = ("import resource; from semisup.io import available_memory as a; before = a(); "
             "import re; vm = int(re.search(r'VmSize:\\s+(\\d+)', open('/proc/self/status')"
             ".read()).group(1)) * 1024; resource.setrlimit(resource.RLIMIT_AS, "
             "(vm + 2**30, resource.RLIM_INFINITY)); after = a(); "
             "print(after <= 2**30 and (before is None or after <= before))")
    if not Path("/proc/self/status").exists():
        pytest.skip("needs Linux's /proc/self/status")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "True"


@pytest.mark.parametrize("command", ["fit", "svmlin"])
def test_wide_file_is_refused_under_a_memory_limit(tmp_path, command):
    """Under an address-space limit (1 GiB over what the process uses once started), a file
    whose one index is 5e7 (within the cap; 6 GiB of weight vectors) is refused with a
    one-line error, and nothing is written; without the guard training would fail with a
    MemoryError (or, without the limit, allocate the 6 GiB)."""
    import subprocess
    import sys

    if not Path("/proc/self/status").exists():
        pytest.skip("needs Linux's /proc/self/status")
    data = tmp_path / "wide.svm"
    data.write_text("1 1:1 3:1\n-1 2:1\n0 1:1 50000000:1\n0 2:1\n")
    model = tmp_path / "m.model"
    argv = (["fit", "L2SVM", str(data), "-m", str(model)] if command == "fit"
            else ["-A", "1", "-o", str(tmp_path), str(data)])
    entry = "semisup.cli.main" if command == "fit" else "semisup.cli.svmlin"
    probe = (f"import re, resource, sys; from {entry} import main; "
             "vm = int(re.search(r'VmSize:\\s+(\\d+)', open('/proc/self/status').read())"
             ".group(1)) * 1024; "
             "resource.setrlimit(resource.RLIMIT_AS, (vm + 2**30, resource.RLIM_INFINITY)); "
             f"sys.exit(main({argv!r}))")
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 2, run.stderr
    assert "wide.svm:3: feature index 50000000 would make training allocate" in run.stderr
    assert "Traceback" not in run.stderr and "MemoryError" not in run.stderr
    assert not model.exists() and not (tmp_path / "wide.svm.weights").exists()


# ----------------------------------------------------------------------------------------------
# the vectorised fast path converts numbers exactly as float() does
# ----------------------------------------------------------------------------------------------

_DIGITS = st.text("0123456789", min_size=1, max_size=25)
decimal_literals = st.builds(
    lambda sign, whole, frac, exp: sign + whole + frac + exp,
    st.sampled_from(["", "+", "-"]),
    _DIGITS,
    st.one_of(st.just(""), st.just("."), _DIGITS.map(lambda d: "." + d)),
    st.one_of(st.just(""), st.builds(lambda e, s, d: e + s + d, st.sampled_from("eE"),
                                     st.sampled_from(["", "+", "-"]),
                                     st.text("0123456789", min_size=1, max_size=4))),
) | st.floats(allow_nan=False, allow_infinity=False).map(repr)


@SETTINGS
@given(values=st.lists(decimal_literals, min_size=1, max_size=30))
def test_fast_path_values_equal_float(values: list[str]):
    """Every decimal literal (long mantissas, large exponents, signs, '.5', '5.') is read
    bit for bit as Python's float() reads it: the fast path's exact conversion or its
    float() fallback, never an approximation."""
    from semisup.io import _parse_fast

    line = " ".join(f"{i + 1}:{v}" for i, v in enumerate(values))
    parsed = _parse_fast(line.encode(), labelled=False)
    assert parsed is not None
    expected = np.array([float(v) for v in values])
    np.testing.assert_array_equal(parsed[0], expected)
    assert np.array_equal(np.signbit(parsed[0]), np.signbit(expected))


plain_decimals = st.builds(
    lambda sign, whole, frac: sign + whole + frac,
    st.sampled_from(["", "+", "-"]),
    _DIGITS,
    st.one_of(st.just(""), st.just("."), _DIGITS.map(lambda d: "." + d)),
) | st.builds(lambda sign, frac: sign + "." + frac, st.sampled_from(["", "-"]), _DIGITS)


@SETTINGS
@given(values=st.lists(plain_decimals, min_size=1, max_size=30), labelled=st.booleans())
def test_fast_path_plain_decimals_equal_float(values: list[str], labelled: bool):
    """Files without exponents (most real ones) take a shorter route: same values."""
    from semisup.io import _parse_fast

    pairs = " ".join(f"{i + 1}:{v}" for i, v in enumerate(values))
    parsed = _parse_fast(("-1 " + pairs if labelled else pairs).encode(), labelled=labelled)
    assert parsed is not None
    expected = np.array([float(v) for v in values])
    np.testing.assert_array_equal(parsed[0], expected)
    assert np.array_equal(np.signbit(parsed[0]), np.signbit(expected))
