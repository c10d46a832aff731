"""Raw-text corpora of the shared data directory, read straight from their archives.

20 Newsgroups (bydate), Reuters-21578 (ModApte-style stories with TOPICS="YES"), OHSUMED
(single-label 23 categories) and WebKB course (full text): the local stand-ins for the Web
collection of chapter 8.  Each loader yields :class:`Document` records with a corpus-unique
id; labels are the corpus's categories (a tuple: Reuters stories may have several).
"""

from __future__ import annotations

import re
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from semisup.datasets import shared_data_dir

CORPORA = ("20ng", "reuters", "ohsumed", "webkb")


@dataclass(frozen=True)
class Document:
    """One document: ``id`` (``"<corpus>/<name>"``), ``text``, ``labels`` and ``split``."""

    id: str
    text: str
    labels: tuple
    split: str


def _folder(data_dir, name: str) -> Path:
    base = Path(data_dir) if data_dir is not None else shared_data_dir()
    if base is None:
        raise FileNotFoundError("shared data directory not found: set SEMISUP_DATA")
    path = base / name if (base / name).is_dir() else base
    return path


def _members(path: Path):
    with tarfile.open(path) as tf:
        for m in tf.getmembers():
            if m.isfile():
                yield m.name, tf.extractfile(m).read()


def load_20newsgroups(data_dir=None) -> Iterator[Document]:
    """20 Newsgroups bydate: label = group, split = train/test."""
    for name, raw in _members(_folder(data_dir, "20newsgroups_bydate") / "20news-bydate.tar.xz"):
        parts = name.split("/")
        if len(parts) < 3:
            continue
        split = "train" if parts[-3].endswith("train") else "test"
        yield Document(f"20ng/{split}/{parts[-2]}/{parts[-1]}", raw.decode("latin-1"),
                       (parts[-2],), split)


def load_reuters(data_dir=None, topics_only: bool = False) -> Iterator[Document]:
    """Reuters-21578 stories with a text body; ``topics_only``: ModApte (TOPICS="YES", a topic).

    Labels are the story's topics (possibly none); split is LEWISSPLIT lower-cased.
    """
    sgm = "".join(raw.decode("latin-1") for name, raw in
                  sorted(_members(_folder(data_dir, "reuters21578") / "reuters21578.tar.xz"))
                  if name.endswith(".sgm"))
    for attrs, body in re.findall(r"<REUTERS ([^>]*)>(.*?)</REUTERS>", sgm, re.S):
        topics = tuple(re.findall(r"<D>(.*?)</D>", re.search(r"<TOPICS>(.*?)</TOPICS>", body,
                                                              re.S)[1]))
        split = re.search(r'LEWISSPLIT="([\w-]+)"', attrs)[1].lower()
        if topics_only and (not topics or 'TOPICS="YES"' not in attrs
                            or split not in ("train", "test")):
            continue
        if "<TEXT" not in body:
            continue
        text = re.sub(r"<[^>]+>|&#\d+;|&lt;", " ", body.split("<TEXT", 1)[1])
        if not re.search(r"\w", text):
            continue
        newid = re.search(r'NEWID="(\d+)"', attrs)[1]
        yield Document(f"reuters/{newid}", text, topics, split)


def load_ohsumed(data_dir=None) -> Iterator[Document]:
    """OHSUMED single-label: label = MeSH category C01..C23."""
    for name, raw in _members(_folder(data_dir, "ohsumed_single23") / "ohsumed_single_23.tar.xz"):
        parts = name.split("/")
        split = "train" if parts[-3] == "training" else "test"
        yield Document(f"ohsumed/{parts[-3]}/{parts[-2]}/{parts[-1]}", raw.decode("latin-1"),
                       (parts[-2],), split)


def load_webkb(data_dir=None) -> Iterator[Document]:
    """WebKB course vs non-course, full-text view (HTML tags stripped)."""
    path = _folder(data_dir, "webkb_course_cotrain") / "course-cotrain-data.tar.xz"
    for name, raw in _members(path):
        parts = name.split("/")
        if parts[-3] != "fulltext":
            continue
        text = re.sub(r"<[^>]+>", " ", raw.decode("latin-1"))
        if not re.search(r"\w", text):
            continue
        yield Document(f"webkb/{parts[-2]}/{parts[-1]}", text, (parts[-2],), "all")


LOADERS = {"20ng": load_20newsgroups, "reuters": load_reuters, "ohsumed": load_ohsumed,
           "webkb": load_webkb}


def load_corpora(names=CORPORA, data_dir=None) -> Iterator[Document]:
    """Documents of several corpora, one after the other."""
    for n in names:
        if n not in LOADERS:
            raise ValueError(f"unknown corpus {n!r}: choose from {CORPORA}")
        yield from LOADERS[n](data_dir)
