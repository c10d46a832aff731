"""Search backends: BM25 against a direct computation, index round trip, bad input, HTTP stub."""

import json
import math
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import numpy as np
import pytest

from semisup.text.search import (
    HTTPSearchBackend,
    MemoryBM25Index,
    SearchBackend,
    SQLiteIndex,
    tokenize,
)

DOCS = ["the cat sat on the mat", "dogs and cats", "a bird in the hand",
        "the the cat cat cat", "mat mat dog", "Café au lait, CAFE noir"]


def direct_bm25(docs, terms, k1=1.2, b=0.75):
    """BM25 written out term by term (Robertson & Zaragoza 2009; FTS5's idf floor)."""
    toks = [tokenize(d) for d in docs]
    n = len(docs)
    avgdl = sum(len(t) for t in toks) / n
    scores = {}
    for i, t in enumerate(toks):
        s, hit = 0.0, False
        for q in terms:
            f = t.count(q)
            if not f:
                continue
            hit = True
            df = sum(q in u for u in toks)
            idf = max(math.log((n - df + 0.5) / (df + 0.5)), 1e-6)
            s += idf * f * (k1 + 1) / (f + k1 * (1 - b + b * len(t) / avgdl))
        if hit:
            scores[str(i)] = s
    return scores


@pytest.fixture
def index(tmp_path):
    ix = SQLiteIndex.build(tmp_path / "idx", DOCS)
    yield ix
    ix.close()


@pytest.mark.parametrize("query", ["cat", "cat mat", "dog bird", "hand the", "cafe"])
def test_bm25_matches_direct_computation(index, query):
    expected = direct_bm25(DOCS, tokenize(query))
    for backend in (index, MemoryBM25Index(DOCS)):
        ids, scores = backend.search(query, 10)
        assert set(ids) == set(expected)
        np.testing.assert_allclose(scores, [expected[i] for i in ids], rtol=1e-9)
        assert np.all(np.diff(scores) <= 0)


def test_protocol_and_top_k(index):
    assert isinstance(index, SearchBackend)
    ids, scores = index.search(["cat", "mat"], 2)
    assert len(ids) == 2 and scores[0] >= scores[1]
    assert index.documents(["1"]) == ["dogs and cats"]


def test_round_trip_reopen(tmp_path):
    ix = SQLiteIndex.build(tmp_path / "idx", list(zip("abcdef", DOCS, strict=True)))
    before = [ix.search(q, 5) for q in ("cat", "mat dog", "cafe")]
    ix.close()
    again = SQLiteIndex.open(tmp_path / "idx")
    assert len(again) == len(DOCS)
    for q, (ids, s) in zip(("cat", "mat dog", "cafe"), before, strict=True):
        ids2, s2 = again.search(q, 5)
        assert ids2 == ids and np.array_equal(s, s2)
    assert again.ids() == list("abcdef")
    again.close()


def test_build_from_folder_and_encoding(tmp_path):
    folder = tmp_path / "docs"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.txt").write_text("alpha beta", encoding="utf-8")
    (folder / "sub" / "b.txt").write_text("beta gamma", encoding="utf-8")
    ix = SQLiteIndex.build(tmp_path / "idx", folder)
    assert ix.search("gamma", 5)[0] == ["sub/b.txt"]
    ix.close()
    (folder / "c.txt").write_bytes(b"caf\xe9 latin-1")
    with pytest.raises(ValueError, match="not valid utf-8.*latin-1"):
        SQLiteIndex.build(tmp_path / "idx2", folder)
    assert not (tmp_path / "idx2").exists()
    ix = SQLiteIndex.build(tmp_path / "idx2", folder, encoding="latin-1")
    assert ix.search("cafe", 5)[0] == ["c.txt"]
    ix.close()


def test_no_hit_returns_empty(index):
    ids, scores = index.search("zebra", 5)
    assert ids == [] and scores.size == 0


def test_bad_queries_and_documents(index, tmp_path):
    with pytest.raises(ValueError, match="no searchable term"):
        index.search("  ,;! ", 5)
    with pytest.raises(ValueError, match="k must be a positive integer"):
        index.search("cat", 0)
    with pytest.raises(KeyError, match="no document"):
        index.documents(["nope"])
    with pytest.raises(ValueError, match="empty"):
        SQLiteIndex.build(tmp_path / "e", ["fine text", "   "])
    assert not (tmp_path / "e").exists()
    ix = SQLiteIndex.build(tmp_path / "e", ["fine text", "   "], skip_empty=True)
    assert len(ix) == 1
    ix.close()
    with pytest.raises(ValueError, match="no document to index"):
        SQLiteIndex.build(tmp_path / "none", [])
    with pytest.raises(ValueError, match="duplicate document id"):
        SQLiteIndex.build(tmp_path / "dup", [("a", "x y"), ("a", "z")])
    with pytest.raises(ValueError, match="single string"):
        SQLiteIndex.build(tmp_path / "s", "just one string")


def test_not_an_index_and_corrupt(tmp_path, index):
    (tmp_path / "plain").mkdir()
    with pytest.raises(ValueError, match="not a semisup search index"):
        SQLiteIndex.open(tmp_path / "plain")
    with pytest.raises(FileNotFoundError):
        SQLiteIndex.open(tmp_path / "missing")
    with pytest.raises(ValueError, match="not a semisup index; refusing"):
        SQLiteIndex.build(tmp_path / "plain", DOCS, overwrite=True)
    with pytest.raises(ValueError, match="already exists"):
        SQLiteIndex.build(index.path, DOCS)
    # corrupt the database file
    bad = tmp_path / "bad"
    SQLiteIndex.build(bad, DOCS).close()
    db = bad / "index.sqlite3"
    raw = bytearray(db.read_bytes())
    raw[:100] = b"\x00" * 100
    db.write_bytes(bytes(raw))
    with pytest.raises(ValueError, match="corrupted"):
        SQLiteIndex.open(bad)
    # corrupt the marker
    bad2 = tmp_path / "bad2"
    SQLiteIndex.build(bad2, DOCS).close()
    (bad2 / "semisup-index.json").write_text("{not json")
    with pytest.raises(ValueError, match="corrupted"):
        SQLiteIndex.open(bad2)


def test_interrupted_build_leaves_nothing(tmp_path):
    def stream():
        yield "first document"
        yield "second document"
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        SQLiteIndex.build(tmp_path / "idx", stream())
    assert list(tmp_path.iterdir()) == []
    # an interrupted rebuild keeps the old index intact
    SQLiteIndex.build(tmp_path / "idx", DOCS).close()
    with pytest.raises(KeyboardInterrupt):
        SQLiteIndex.build(tmp_path / "idx", stream(), overwrite=True)
    assert [p.name for p in tmp_path.iterdir()] == ["idx"]
    with SQLiteIndex.open(tmp_path / "idx") as ix:
        assert len(ix) == len(DOCS)


def test_overwrite_and_pickle(tmp_path):
    import pickle

    SQLiteIndex.build(tmp_path / "idx", DOCS).close()
    ix = SQLiteIndex.build(tmp_path / "idx", ["only one"], overwrite=True)
    assert len(ix) == 1
    ix2 = pickle.loads(pickle.dumps(ix))
    assert ix2.search("one", 3)[0] == ["0"]
    ix.close()
    ix2.close()
    assert sorted(p.name for p in Path(tmp_path).iterdir()) == ["idx"]


class _Stub(BaseHTTPRequestHandler):
    """An Elasticsearch-like server answering from MemoryBM25Index."""

    backend = MemoryBM25Index(DOCS)

    def log_message(self, *args):
        pass

    def _send(self, obj, code=200):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        ids, scores = self.backend.search(req["query"]["match"]["text"], req["size"])
        hits = [{"_id": i, "_score": s, "_source": {"text": t}}
                for i, s, t in zip(ids, scores, self.backend.documents(ids), strict=True)]
        self._send({"hits": {"hits": hits}})

    def do_GET(self):
        doc = self.path.rsplit("/", 1)[-1]
        self._send({"_id": doc, "_source": {"text": self.backend.documents([doc])[0]}})


def test_http_backend_against_stub():
    server = HTTPServer(("127.0.0.1", 0), _Stub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        http = HTTPSearchBackend(f"http://127.0.0.1:{server.server_port}", "docs")
        ids, scores = http.search(["cat", "mat"], 3)
        ref_ids, ref_scores = MemoryBM25Index(DOCS).search(["cat", "mat"], 3)
        assert ids == ref_ids
        np.testing.assert_allclose(scores, ref_scores)
        assert http.documents([ids[0], "1"]) == MemoryBM25Index(DOCS).documents([ids[0], "1"])
    finally:
        server.shutdown()
    with pytest.raises(ConnectionError):
        HTTPSearchBackend(f"http://127.0.0.1:{server.server_port}", "docs", timeout=1).search(
            "cat", 3)
    with pytest.raises(ValueError, match="http"):
        HTTPSearchBackend("localhost:9200", "docs")
