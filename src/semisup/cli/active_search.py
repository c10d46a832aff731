"""``semisup active-search``: index a collection, then train a classifier by active search."""

from __future__ import annotations

import argparse
import json
import logging
import pickle
import sys
from pathlib import Path


def add_parser(sub) -> None:
    """Register the ``active-search`` subcommand on ``sub`` (argparse subparsers)."""
    p = sub.add_parser(
        "active-search",
        help="labeled documents -> queries -> retrieval from a BM25 index -> classifier",
        description="Semi-supervised text categorization by active search (thesis ch. 8). "
                    "Labeled documents are a folder with one sub-folder per class.")
    p.add_argument("--index", required=True, type=Path, help="index folder (SQLite FTS5)")
    p.add_argument("--build-from", type=Path, default=None,
                   help="first build the index from this folder of text files")
    p.add_argument("--overwrite", action="store_true", help="replace an existing index")
    p.add_argument("--encoding", default="utf-8", help="encoding of the text files")
    p.add_argument("--strip-usenet", action="store_true",
                   help="remove the header block (the Subject kept), quoted text and "
                        "signature of Usenet posts, in the index and the labeled documents")
    p.add_argument("--labeled", required=True, type=Path,
                   help="folder with one sub-folder of text files per class")
    p.add_argument("--generator", default="dqg", choices=["dqg", "tf", "tfidf", "or", "svm"])
    p.add_argument("--query-size", type=int, default=3)
    p.add_argument("--per-query", type=int, default=100)
    p.add_argument("--learner", default="cccp", choices=["cccp", "aux", "svm"])
    p.add_argument("--n-features", type=int, default=600)
    p.add_argument("--lam", type=float, default=0.01)
    p.add_argument("--gamma", type=float, default=0.01)
    p.add_argument("--model", type=Path, default=None, help="write the fitted pipeline (pickle)")
    p.add_argument("--report", type=Path, default=None, help="write the report (JSON)")
    p.set_defaults(run=run)


def _read_labeled(folder: Path, encoding: str, preprocess=None):
    if not folder.is_dir():
        raise ValueError(f"--labeled {str(folder)!r} is not a folder")
    texts, labels = [], []
    for cls in sorted(p for p in folder.iterdir() if p.is_dir()):
        for f in sorted(p for p in cls.iterdir() if p.is_file()):
            try:
                texts.append(f.read_text(encoding=encoding))
            except UnicodeDecodeError:
                raise ValueError(f"{str(f)!r} is not valid {encoding}: pass --encoding "
                                 "latin-1") from None
            labels.append(cls.name)
    if preprocess is not None:
        texts = [preprocess(t) for t in texts]
    if len(set(labels)) < 2:
        raise ValueError(f"--labeled {str(folder)!r} needs one sub-folder per class, with at "
                         "least two classes")
    return texts, labels


def run(args: argparse.Namespace) -> int:
    """Execute ``semisup active-search``."""
    import numpy as np

    from semisup.text import ActiveSearchPipeline, SQLiteIndex
    from semisup.text.corpora import strip_newsgroup_post

    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    strip = strip_newsgroup_post if args.strip_usenet else None
    try:
        if args.build_from is not None:
            index = SQLiteIndex.build(args.index, args.build_from, overwrite=args.overwrite,
                                      encoding=args.encoding, skip_empty=True,
                                      preprocess=strip)
        else:
            index = SQLiteIndex.open(args.index)
        texts, labels = _read_labeled(args.labeled, args.encoding, strip)
        pipe = ActiveSearchPipeline(index, generator=args.generator,
                                    query_size=args.query_size, per_query=args.per_query,
                                    learner=args.learner, n_features=args.n_features,
                                    lam=args.lam, gamma=args.gamma)
        pipe.fit(texts, np.array(labels))
    except (ValueError, FileNotFoundError) as err:
        print(f"semisup active-search: error: {err}", file=sys.stderr)
        return 2
    rep = json.loads(json.dumps(pipe.report_, default=str))
    for q in rep["queries"]:
        print(f"{q['label']}\t{' '.join(q['terms'])}\t{q['n_hits']} documents")
    print(f"retrieved {rep['n_retrieved']} ({rep['n_unique']} distinct); trained "
          f"{type(pipe.model_).__name__} on {rep['n_features']} terms")
    if args.report is not None:
        args.report.write_text(json.dumps(rep, indent=1))
    if args.model is not None:
        with open(args.model, "wb") as fh:
            pickle.dump(pipe, fh)
    return 0
