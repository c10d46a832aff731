"""Search backends for active search (chapter 8 of the thesis): ``search(query, k) -> ids, scores``.

The thesis reaches its unlabeled collection only through a search engine (Google in 2008,
Indri for the precision test).  Here the engine is a plug-in with a two-method interface
(:class:`SearchBackend`), and the default is an embedded on-disk BM25 index:
:class:`SQLiteIndex`, built on SQLite's FTS5 full-text extension from the Python standard
library (no server, no dependency).  FTS5 was preferred over an in-memory sparse BM25
(:class:`MemoryBM25Index`, kept as the reference and for small collections) because it is
persistent, streams documents to disk while indexing and answers a query by reading only
the posting lists of its terms; ``benchmarks/bench_active_search.py`` measures both.
:class:`HTTPSearchBackend` talks to an Elasticsearch/OpenSearch-style server.

Scores are Okapi BM25 (Robertson & Zaragoza 2009) with FTS5's constants ``k1 = 1.2``,
``b = 0.75`` and ``idf = log((N - n + 0.5) / (n + 0.5))`` floored at ``1e-6``.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import sqlite3
import tempfile
import unicodedata
import urllib.request
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np
import scipy.sparse as sp

logger = logging.getLogger("semisup.text.search")

INDEX_FORMAT = "semisup-fts5-bm25"
INDEX_VERSION = 1
_MARKER = "semisup-index.json"
_DB = "index.sqlite3"
BM25_K1 = 1.2
BM25_B = 0.75
_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)


def tokenize(text: str) -> list[str]:
    """Lower-cased alphanumeric runs with diacritics removed (FTS5's ``unicode61`` rules).

    The query generators and the index share this tokenizer, so a generated query term
    is always a term of the index vocabulary.
    """
    folded = unicodedata.normalize("NFKD", text.lower())
    folded = "".join(ch for ch in folded if not unicodedata.combining(ch))
    return _TOKEN.findall(folded)


def _query_terms(query) -> list[str]:
    if isinstance(query, str):
        terms = tokenize(query)
    else:
        terms = [t for q in query for t in tokenize(str(q))]
    if not terms:
        raise ValueError(f"query {query!r} has no searchable term: give at least one word "
                         "made of letters or digits")
    return list(dict.fromkeys(terms))


def _check_k(k) -> int:
    if not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be a positive integer (number of documents to return), "
                         f"got {k!r}")
    return int(k)


@runtime_checkable
class SearchBackend(Protocol):
    """What active search needs from a search engine.

    ``search`` returns the ids of the best ``k`` documents for a query (a string or a
    sequence of terms, combined with OR as a bag-of-words ranking) and their scores, best
    first; a query without any hit returns two empty arrays.  ``documents`` returns the
    texts of documents by id.
    """

    def search(self, query, k: int) -> tuple[list[str], np.ndarray]: ...

    def documents(self, ids: Sequence[str]) -> list[str]: ...


def _iter_folder(folder: Path, encoding: str, pattern: str):
    files = sorted(p for p in folder.rglob(pattern) if p.is_file())
    if not files:
        raise ValueError(f"folder {str(folder)!r} has no file matching {pattern!r}: point "
                         "documents at a folder of text files")
    for p in files:
        try:
            text = p.read_text(encoding=encoding)
        except UnicodeDecodeError as err:
            raise ValueError(f"file {str(p)!r} is not valid {encoding} ({err.reason} at byte "
                             f"{err.start}): pass encoding='latin-1' (or the file's encoding)"
                             ) from None
        yield p.relative_to(folder).as_posix(), text


def _iter_documents(documents, ids):
    if isinstance(documents, (str, bytes)):
        raise ValueError("documents must be an iterable of strings, of (id, text) pairs, or a "
                         "folder path given as pathlib.Path; got a single string")
    if ids is not None:
        ids = list(ids)
        documents = list(documents)
        if len(ids) != len(documents):
            raise ValueError(f"ids has {len(ids)} entries but there are {len(documents)} "
                             "documents: give one id per document")
        yield from zip((str(i) for i in ids), documents, strict=True)
        return
    for i, d in enumerate(documents):
        if isinstance(d, tuple):
            if len(d) != 2:
                raise ValueError(f"document {i} is a tuple of length {len(d)}; give (id, text)")
            yield str(d[0]), d[1]
        else:
            yield str(i), d


class SQLiteIndex:
    """On-disk BM25 index: SQLite FTS5 over a table of documents (ids and texts).

    Build it with :meth:`build` (from an iterable of strings or ``(id, text)`` pairs, or
    from a folder of text files), reopen it with :meth:`open` (no re-indexing).  The index
    is a folder holding ``index.sqlite3`` and a marker ``semisup-index.json``.

    Parameters
    ----------
    path : str or Path
        Index folder written by :meth:`build`.

    Attributes
    ----------
    path : Path
        The index folder.
    n_documents : int
        Number of indexed documents.

    Examples
    --------
    >>> import os, tempfile
    >>> from semisup.text import SQLiteIndex
    >>> docs = ["rocket launch orbit", "drug trial dose", "moon rocket landing", "patient drug"]
    >>> path = os.path.join(tempfile.mkdtemp(), "index")
    >>> with SQLiteIndex.build(path, docs) as index:
    ...     ids, scores = index.search("moon dose", k=3)
    >>> ids
    ['1', '2']
    """

    def __init__(self, path):
        self.path = Path(path)
        if not self.path.exists():
            raise FileNotFoundError(f"index folder {str(self.path)!r} does not exist: build "
                                    "it with SQLiteIndex.build(path, documents)")
        marker = self.path / _MARKER
        if not self.path.is_dir() or not marker.is_file():
            raise ValueError(f"{str(self.path)!r} is not a semisup search index (no {_MARKER}"
                             "): build one with SQLiteIndex.build(path, documents)")
        try:
            meta = json.loads(marker.read_text(encoding="utf-8"))
            ok = meta.get("format") == INDEX_FORMAT
        except (ValueError, UnicodeDecodeError, AttributeError):
            ok = False
        if not ok:
            raise ValueError(f"index marker {str(marker)!r} is corrupted or of another format: "
                             "rebuild the index with SQLiteIndex.build(path, documents, "
                             "overwrite=True)")
        if meta.get("version") != INDEX_VERSION:
            raise ValueError(f"index {str(self.path)!r} has format version "
                             f"{meta.get('version')!r}, this semisup reads {INDEX_VERSION}: "
                             "rebuild it")
        self._meta = meta
        db = self.path / _DB
        if not db.is_file():
            raise ValueError(f"index {str(self.path)!r} is corrupted: {_DB} is missing; "
                             "rebuild it with overwrite=True")
        self._con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, check_same_thread=False)
        try:
            n = self._con.execute("SELECT count(*) FROM docs").fetchone()[0]
            self._con.execute("SELECT rowid FROM fts WHERE fts MATCH 'a' LIMIT 1").fetchall()
        except sqlite3.DatabaseError as err:
            self._con.close()
            raise ValueError(f"index {str(self.path)!r} is corrupted ({err}): rebuild it with "
                             "SQLiteIndex.build(path, documents, overwrite=True)") from None
        if n != meta.get("n_documents"):
            self._con.close()
            raise ValueError(f"index {str(self.path)!r} is corrupted: {n} documents stored, "
                             f"the marker says {meta.get('n_documents')}; rebuild it")
        self.n_documents = int(n)

    @classmethod
    def open(cls, path) -> SQLiteIndex:
        """Reopen an index built by :meth:`build`.

        Parameters
        ----------
        path : str or os.PathLike
            The index folder given to :meth:`build`.

        Returns
        -------
        SQLiteIndex
            The opened index.
        """
        return cls(path)

    @classmethod
    def build(cls, path, documents, ids: Iterable | None = None, *, overwrite: bool = False,
              skip_empty: bool = False, encoding: str = "utf-8", pattern: str = "*",
              batch_size: int = 5000,
              preprocess: Callable[[str], str] | None = None) -> SQLiteIndex:
        """Index ``documents`` into the folder ``path`` and open the result.

        The index is written to a temporary folder beside ``path`` and renamed into place
        only when complete, so an interrupted build never leaves a half-written index.

        Parameters
        ----------
        path : str or Path
            Index folder to create.
        documents : iterable of str, iterable of (id, text), or Path
            The collection.  A :class:`pathlib.Path` to a folder indexes its files
            (recursively, matching ``pattern``); their ids are the paths relative to it.
        ids : iterable, optional
            Ids of the documents (default: their position, or the given pair ids).
        overwrite : bool, default=False
            Replace an existing index at ``path``.
        skip_empty : bool, default=False
            Skip documents without any searchable term instead of raising.
        encoding : str, default="utf-8"
            Encoding of the files of a folder (strict: undecodable bytes raise).
        pattern : str, default="*"
            Glob of the files to index in a folder.
        batch_size : int, default=5000
            Documents inserted per transaction batch.
        preprocess : callable, optional
            ``str -> str`` applied to every text before it is indexed and stored (what
            :meth:`documents` returns), e.g.
            :func:`semisup.text.corpora.strip_newsgroup_post` for raw Usenet posts.  A
            document it leaves without a term counts as empty.

        Returns
        -------
        SQLiteIndex
        """
        path = Path(path)
        if path.exists():
            if not overwrite:
                raise ValueError(f"{str(path)!r} already exists: pass overwrite=True to "
                                 "replace it, or open it with SQLiteIndex.open(path)")
            if not (path / _MARKER).is_file():
                raise ValueError(f"{str(path)!r} exists and is not a semisup index; refusing "
                                 "to overwrite it: choose another path")
        if isinstance(documents, Path):
            if not documents.is_dir():
                raise ValueError(f"documents folder {str(documents)!r} is not a directory")
            stream = _iter_folder(documents, encoding, pattern)
        else:
            stream = _iter_documents(documents, ids)
        if preprocess is not None:
            if not callable(preprocess):
                raise ValueError(f"preprocess must be a callable str -> str, got "
                                 f"{preprocess!r}")
            stream = ((i, preprocess(t) if isinstance(t, str) else t) for i, t in stream)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.building-", dir=path.parent))
        try:
            n = _write_index(tmp / _DB, stream, skip_empty, batch_size)
            meta = {"format": INDEX_FORMAT, "version": INDEX_VERSION, "n_documents": n,
                    "bm25": {"k1": BM25_K1, "b": BM25_B}}
            (tmp / _MARKER).write_text(json.dumps(meta), encoding="utf-8")
            if path.exists():
                old = Path(tempfile.mkdtemp(prefix=f".{path.name}.old-", dir=path.parent))
                os.replace(path, old / "index")
                os.replace(tmp, path)
                shutil.rmtree(old, ignore_errors=True)
            else:
                os.replace(tmp, path)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        logger.info("indexed %d documents into %s", n, path)
        return cls(path)

    def search(self, query, k: int = 100) -> tuple[list[str], np.ndarray]:
        """Top ``k`` documents for ``query`` (terms OR-ed) by BM25, best first.

        Parameters
        ----------
        query : str or sequence of str
            The query terms (a string is tokenized like the documents).
        k : int, default=100
            Number of documents to return at most.

        Returns
        -------
        ids : list of str
            Ids of the best documents, best first.
        scores : ndarray of float
            BM25 scores (higher is better); empty when no document matches.
        """
        k = _check_k(k)
        terms = _query_terms(query)
        expr = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
        try:
            rows = self._con.execute(
                "SELECT docs.doc_id, -bm25(fts) AS s FROM fts JOIN docs ON docs.rowid = "
                "fts.rowid WHERE fts MATCH ? ORDER BY bm25(fts), fts.rowid LIMIT ?",
                (expr, k)).fetchall()
        except sqlite3.DatabaseError as err:
            raise ValueError(f"index {str(self.path)!r} is corrupted ({err}): rebuild it") \
                from None
        if not rows:
            logger.info("query %r matched no document", terms)
        return [r[0] for r in rows], np.array([r[1] for r in rows], dtype=np.float64)

    def documents(self, ids: Sequence[str]) -> list[str]:
        """Return the texts of the documents ``ids`` (``KeyError`` for an unknown id).

        Parameters
        ----------
        ids : sequence of str
            Document ids.

        Returns
        -------
        list of str
            The text of each document, in the order of ``ids``.
        """
        out = []
        for i in ids:
            row = self._con.execute("SELECT text FROM docs WHERE doc_id = ?",
                                    (str(i),)).fetchone()
            if row is None:
                raise KeyError(f"no document with id {i!r} in the index")
            out.append(row[0])
        return out

    def ids(self) -> list[str]:
        """Return every document id, in indexing order.

        Returns
        -------
        list of str
            The ids.
        """
        return [r[0] for r in self._con.execute("SELECT doc_id FROM docs ORDER BY rowid")]

    def close(self) -> None:
        """Close the database connection."""
        self._con.close()

    def __len__(self) -> int:
        return self.n_documents

    def __enter__(self) -> SQLiteIndex:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __getstate__(self):
        return {"path": str(self.path)}

    def __setstate__(self, state):
        self.__init__(state["path"])


def _write_index(db: Path, stream, skip_empty: bool, batch_size: int) -> int:
    con = sqlite3.connect(db)
    try:
        con.execute("PRAGMA journal_mode=OFF")  # the temporary folder is the journal
        con.execute("PRAGMA synchronous=OFF")
        con.execute("CREATE TABLE docs (doc_id TEXT NOT NULL UNIQUE, text TEXT NOT NULL)")
        con.execute("CREATE VIRTUAL TABLE fts USING fts5(text, content='docs', "
                    "content_rowid='rowid', tokenize='unicode61 remove_diacritics 2')")
        n = 0
        batch = []
        for doc_id, text in stream:
            if not isinstance(text, str):
                raise ValueError(f"document {doc_id!r} is a {type(text).__name__}, not a str: "
                                 "decode bytes first (e.g. text.decode('latin-1'))")
            if not _TOKEN.search(text):
                if skip_empty:
                    logger.info("skipping empty document %r", doc_id)
                    continue
                raise ValueError(f"document {doc_id!r} is empty (no searchable term): remove "
                                 "it or pass skip_empty=True")
            batch.append((doc_id, text))
            if len(batch) >= batch_size:
                n += _insert(con, batch)
                batch = []
        if batch:
            n += _insert(con, batch)
        if n == 0:
            raise ValueError("no document to index: documents is empty")
        con.execute("INSERT INTO fts(rowid, text) SELECT rowid, text FROM docs")
        con.execute("INSERT INTO fts(fts) VALUES ('optimize')")
        con.commit()
        return n
    finally:
        con.close()


def _insert(con, batch) -> int:
    try:
        con.executemany("INSERT INTO docs(doc_id, text) VALUES (?, ?)", batch)
    except sqlite3.IntegrityError:
        seen = set()
        dup = next(d for d, _ in batch if d in seen or seen.add(d))
        raise ValueError(f"duplicate document id {dup!r}: ids must be unique") from None
    return len(batch)


class MemoryBM25Index:
    """In-memory BM25 over a sparse term-count matrix (same formula and tokenizer as FTS5).

    The reference implementation of the scores of :class:`SQLiteIndex` and a backend for
    collections that fit in memory.

    Parameters
    ----------
    documents : iterable of str or of (id, text)
        The collection.
    ids : iterable, optional
        Document ids (default: ``"0"``, ``"1"``, ... unless ``documents`` holds pairs).
    k1, b : float
        BM25 constants.

    Attributes
    ----------
    vocabulary_ : dict
        Term -> column of the count matrix.
    counts_ : csr_matrix
        Term counts, one row per document.

    Examples
    --------
    >>> import numpy as np
    >>> from semisup.text import MemoryBM25Index
    >>> docs = ["rocket launch orbit", "drug trial dose", "moon rocket landing", "patient drug"]
    >>> index = MemoryBM25Index(docs)
    >>> ids, scores = index.search("moon dose", k=3)
    >>> ids, np.round(scores, 3).tolist()
    (['1', '2'], [0.817, 0.817])
    >>> index.documents(["2"])
    ['moon rocket landing']
    """

    def __init__(self, documents, ids: Iterable | None = None, k1: float = BM25_K1,
                 b: float = BM25_B):
        self._ids, self._texts = [], []
        vocab: dict[str, int] = {}
        indptr, indices = [0], []
        for doc_id, text in _iter_documents(documents, ids):
            toks = tokenize(text)
            if not toks:
                raise ValueError(f"document {doc_id!r} is empty (no searchable term)")
            self._ids.append(doc_id)
            self._texts.append(text)
            indices.extend(vocab.setdefault(t, len(vocab)) for t in toks)
            indptr.append(len(indices))
        if not self._ids:
            raise ValueError("no document to index: documents is empty")
        X = sp.csr_matrix((np.ones(len(indices)), np.asarray(indices), np.asarray(indptr)),
                          shape=(len(self._ids), len(vocab)))
        X.sum_duplicates()
        self.vocabulary_ = vocab
        self.counts_ = X
        self.k1, self.b = float(k1), float(b)
        self._lengths = np.asarray(X.sum(axis=1)).ravel()
        self._position = {d: i for i, d in enumerate(self._ids)}
        df = np.bincount(X.indices, minlength=X.shape[1])
        n = X.shape[0]
        self._idf = np.maximum(np.log((n - df + 0.5) / (df + 0.5)), 1e-6)
        self._Xt = X.T.tocsr()

    def search(self, query, k: int = 100) -> tuple[list[str], np.ndarray]:
        """Top ``k`` documents by BM25 (ties by indexing order), as :meth:`SQLiteIndex.search`.

        Parameters
        ----------
        query : str or sequence of str
            The query terms (a string is tokenized), OR-ed.
        k : int, default=100
            Number of documents to return at most.

        Returns
        -------
        ids : list of str
            Ids of the best documents, best first.
        scores : ndarray of float
            Their scores (higher is better); empty when no document matches.
        """
        k = _check_k(k)
        cols = [self.vocabulary_[t] for t in _query_terms(query) if t in self.vocabulary_]
        scores = np.zeros(len(self._ids))
        hit = np.zeros(len(self._ids), dtype=bool)
        norm = self.k1 * (1 - self.b + self.b * self._lengths / self._lengths.mean())
        for c in cols:
            lo, hi = self._Xt.indptr[c], self._Xt.indptr[c + 1]
            docs, f = self._Xt.indices[lo:hi], self._Xt.data[lo:hi]
            scores[docs] += self._idf[c] * f * (self.k1 + 1) / (f + norm[docs])
            hit[docs] = True
        cand = np.flatnonzero(hit)
        order = cand[np.lexsort((cand, -scores[cand]))][:k]
        return [self._ids[i] for i in order], scores[order]

    def documents(self, ids: Sequence[str]) -> list[str]:
        """Return the texts of the documents ``ids``.

        Parameters
        ----------
        ids : sequence of str
            Document ids.

        Returns
        -------
        list of str
            The text of each document, in the order of ``ids``.
        """
        try:
            return [self._texts[self._position[str(i)]] for i in ids]
        except KeyError as err:
            raise KeyError(f"no document with id {err.args[0]!r} in the index") from None

    def __len__(self) -> int:
        return len(self._ids)


class HTTPSearchBackend:
    """Adapter for an Elasticsearch/OpenSearch-style HTTP search API.

    ``search`` posts ``{"query": {"match": {field: "t1 t2 ..."}}, "size": k}`` to
    ``{url}/{index}/_search`` and reads ``hits.hits[*]._id`` and ``_score``; ``documents``
    fetches ``{url}/{index}/_doc/{id}`` and reads ``_source[field]``.

    Parameters
    ----------
    url : str
        Server base URL, e.g. ``"http://localhost:9200"``.
    index : str
        Index name.
    field : str, default="text"
        Document field holding the text.
    timeout : float, default=30
        Seconds per request.
    """

    def __init__(self, url: str, index: str, field: str = "text", timeout: float = 30.0):
        if not str(url).startswith(("http://", "https://")):
            raise ValueError(f"url must start with http:// or https://, got {url!r}")
        self.url = str(url).rstrip("/")
        self.index = index
        self.field = field
        self.timeout = timeout
        self._cache: dict[str, str] = {}

    def _request(self, path: str, body: dict | None = None) -> dict:
        data = None if body is None else json.dumps(body).encode("utf-8")
        req = urllib.request.Request(f"{self.url}/{self.index}/{path}", data=data,
                                     headers={"Content-Type": "application/json"},
                                     method="GET" if body is None else "POST")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:  # noqa: S310
                return json.loads(resp.read().decode("utf-8"))
        except OSError as err:
            raise ConnectionError(f"search server {self.url!r} failed on {path!r}: {err}") \
                from err
        except ValueError as err:
            raise ValueError(f"search server {self.url!r} sent a reply that is not JSON") \
                from err

    def search(self, query, k: int = 100) -> tuple[list[str], np.ndarray]:
        """Top ``k`` hits of a ``match`` query (OR of the terms) and their scores.

        Parameters
        ----------
        query : str or sequence of str
            The query terms (a string is tokenized), OR-ed.
        k : int, default=100
            Number of documents to return at most.

        Returns
        -------
        ids : list of str
            Ids of the best documents, best first.
        scores : ndarray of float
            Their scores (higher is better); empty when no document matches.
        """
        k = _check_k(k)
        terms = _query_terms(query)
        reply = self._request("_search", {"query": {"match": {self.field: " ".join(terms)}},
                                          "size": k})
        try:
            hits = reply["hits"]["hits"]
            ids = [str(h["_id"]) for h in hits]
            scores = np.array([float(h["_score"]) for h in hits], dtype=np.float64)
            for h in hits:
                if self.field in h.get("_source", {}):
                    self._cache[str(h["_id"])] = h["_source"][self.field]
        except (KeyError, TypeError) as err:
            raise ValueError(f"search server {self.url!r} sent no hits.hits[*]._id/_score: "
                             "is it an Elasticsearch-compatible API?") from err
        return ids, scores

    def documents(self, ids: Sequence[str]) -> list[str]:
        """Return the texts of documents (from the hits already seen, else one GET each).

        Parameters
        ----------
        ids : sequence of str
            Document ids.

        Returns
        -------
        list of str
            The text of each document, in the order of ``ids``.
        """
        out = []
        for i in ids:
            i = str(i)
            if i not in self._cache:
                reply = self._request(f"_doc/{i}")
                try:
                    self._cache[i] = reply["_source"][self.field]
                except (KeyError, TypeError) as err:
                    raise KeyError(f"document {i!r} has no field {self.field!r}") from err
            out.append(self._cache[i])
        return out
