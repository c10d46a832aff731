"""Row partitions read where they will live: the client never holds the matrix.

* :func:`from_svmlight_files` / :func:`from_svmlin_files`: one partition per file (a list
  or a glob), each read by the worker that keeps it, with the single-machine readers of
  :mod:`semisup.io`.  A partition lost with its worker is read again from its file.
* :func:`from_dask_array` / :func:`from_dask_dataframe`: one partition per row chunk of a
  dask collection, computed on the cluster and kept on the worker that computed it (the
  design's block goes to that worker).  A lost chunk is recomputed by the scheduler from
  the collection's graph (a chunk that was scattered from a client, not computed, is lost).

Only file names (the glob is expanded here, so the workers must see the same paths) and
dask keys pass through the client.
"""

from __future__ import annotations

import glob as _glob
import os
from collections.abc import Sequence
from functools import partial

import numpy as np

from semisup.distributed.design import DistributedDesign

_LABELS = ("svmlin", "semisup")


def _paths(paths, what: str) -> list[str]:
    """A glob pattern (sorted matches) or a sequence of paths, as a list of strings."""
    if isinstance(paths, (str, os.PathLike)):
        text = os.fspath(paths)
        found = sorted(_glob.glob(text)) if _glob.has_magic(text) else [text]
        if not found:
            raise FileNotFoundError(f"{what}: the pattern {text!r} matches no file")
        return found
    try:
        found = [os.fspath(p) for p in paths]
    except TypeError:
        raise TypeError(f"{what} must be a glob pattern or a sequence of paths, got "
                        f"{type(paths).__name__}") from None
    if not found:
        raise ValueError(f"{what} is empty: give at least one file")
    return found


def _check_labels(labels: str) -> None:
    if labels not in _LABELS:
        raise ValueError(f"labels must be 'svmlin' (+1/-1, 0 = unlabeled) or 'semisup' "
                         f"(class labels, -1 = unlabeled), got {labels!r}")


def _code(y: np.ndarray, labels: str) -> np.ndarray:
    from semisup.io import svmlin_to_labels

    return svmlin_to_labels(y) if labels == "svmlin" else y


def read_svmlight_part(path: str, n_features: int | None, labels: str) -> tuple:
    """Worker side: ``(X, y)`` of one SVMlight file, labels in semisup's coding."""
    from semisup.io import read_svmlight

    X, y = read_svmlight(path, n_features=n_features)
    return X, _code(y, labels)


def read_svmlin_part(examples: str, labels_path: str | None, n_features: int | None) -> tuple:
    """Worker side: ``(X, y)`` of one SVMlin examples file and its labels file (``None``:
    every row unlabeled)."""
    from semisup.io import read_svmlin_examples, read_svmlin_labels

    X = read_svmlin_examples(examples, n_features=n_features)
    if labels_path is None:
        return X, np.full(X.shape[0], -1, dtype=np.int64)
    y = _code(read_svmlin_labels(labels_path), "svmlin")
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"{labels_path}: {y.shape[0]} labels for the {X.shape[0]} rows of "
                         f"{examples}; give one label per example")
    return X, y


def from_svmlight_files(client, paths, n_features: int | None = None,
                        labels: str = "svmlin", **kwargs) -> DistributedDesign:
    """A :class:`DistributedDesign` whose partitions are SVMlight files read by the workers.

    Parameters
    ----------
    client : distributed.Client
        Client of the cluster whose workers hold the partitions.
    paths : str, os.PathLike or sequence of them
        A glob pattern (its sorted matches give the row order) or the files in row order;
        one partition per file.  The workers must see the same paths (a shared file system).
    n_features : int, optional
        Columns; by default the largest feature index over all files.
    labels : {"svmlin", "semisup"}, default="svmlin"
        How the files code labels: SVMlin's ``+1``/``-1`` with ``0`` for unlabeled rows
        (converted by :func:`semisup.io.svmlin_to_labels`), or semisup's class labels with
        ``-1`` for unlabeled rows.
    **kwargs
        Passed to :class:`DistributedDesign` (``workers``, ``timeout``, ...).

    Returns
    -------
    DistributedDesign
        Fit it as ``est.fit(design, design.labels)``; it equals the fit on the files'
        rows stacked in one process.
    """
    _check_labels(labels)
    files = _paths(paths, "paths")
    parts = [partial(read_svmlight_part, f, n_features, labels) for f in files]
    return DistributedDesign(client, parts, n_features=n_features, **kwargs)


def from_svmlin_files(client, examples, labels=None, n_features: int | None = None,
                      **kwargs) -> DistributedDesign:
    """A :class:`DistributedDesign` from SVMlin shards read by the workers.

    Each shard is an examples file and a labels file.

    Parameters
    ----------
    client : distributed.Client
        Client of the cluster whose workers hold the partitions.
    examples : str, os.PathLike or sequence of them
        Glob pattern or list of SVMlin examples files (``index:value`` rows, no label), one
        partition each, in row order.
    labels : str, os.PathLike, sequence of them, or None
        The matching labels files (``+1``/``-1``, ``0`` = unlabeled), as a glob or a list
        of the same length; ``None``: every row is unlabeled except where a labels file is
        given (pass a list with ``None`` entries for label-free shards).
    n_features : int, optional
        Columns; by default the largest feature index over all files.
    **kwargs
        Passed to :class:`DistributedDesign`.

    Returns
    -------
    DistributedDesign
        One partition per examples file, read on the workers.
    """
    ex = _paths(examples, "examples")
    if labels is None:
        labs: Sequence = [None] * len(ex)
    elif isinstance(labels, (str, os.PathLike)):
        labs = _paths(labels, "labels")
    else:
        labs = [None if p is None else os.fspath(p) for p in labels]
    if len(labs) != len(ex):
        raise ValueError(f"labels: {len(labs)} labels files for {len(ex)} examples files; "
                         f"give one per examples file (None for an unlabeled shard)")
    parts = [partial(read_svmlin_part, e, lab, n_features) for e, lab in zip(ex, labs,
                                                                           strict=True)]
    return DistributedDesign(client, parts, n_features=n_features, **kwargs)


def from_dask_array(client, X, y, **kwargs) -> DistributedDesign:
    """A :class:`DistributedDesign` over the row chunks of dask arrays, left on the cluster.

    Parameters
    ----------
    client : distributed.Client
        Client of the cluster whose workers hold the partitions.
    X : dask.array.Array of shape (n_samples, n_features)
        Dense or ``scipy.sparse`` chunks; chunked by rows (column chunks are merged on the
        workers).  One partition per row chunk.
    y : dask.array.Array of shape (n_samples,)
        Labels, ``-1`` for unlabeled rows; rechunked to ``X``'s row chunks.
    **kwargs
        Passed to :class:`DistributedDesign`.

    Returns
    -------
    DistributedDesign
        One partition per row chunk of ``X``, held by the worker that computed it.

    Notes
    -----
    Each chunk is computed (or found already in memory, for a persisted array) on a worker
    and the block stays on that worker; nothing is gathered to the client.  After a worker
    loss the scheduler recomputes the lost chunks from the arrays' graph.
    """
    import dask.array as da

    if not isinstance(X, da.Array) or X.ndim != 2:
        raise TypeError(f"X must be a 2-D dask array, got {type(X).__name__}"
                        f"{'' if not hasattr(X, 'ndim') else f' with {X.ndim} dimensions'}; "
                        f"use DistributedDesign.from_arrays for numpy/scipy matrices")
    if not isinstance(y, da.Array):
        y = da.from_array(np.asarray(y), chunks=(X.chunks[0],))
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise ValueError(f"y has shape {y.shape}; expected ({X.shape[0]},), one label per row "
                         f"of X")
    if any(np.isnan(c) for c in X.chunks[0]):
        raise ValueError("X has unknown chunk sizes: call X.compute_chunk_sizes() first")
    if len(X.chunks[1]) > 1:
        X = X.rechunk({1: -1})
    y = y.rechunk((X.chunks[0],))
    from distributed import wait

    xs = client.compute(list(X.to_delayed().ravel()))
    ys = client.compute(list(y.to_delayed().ravel()))
    # computed before placement: each block then goes where its chunk already is
    wait(xs + ys, timeout=kwargs.get("timeout", 600.0))
    return DistributedDesign(client, list(zip(xs, ys, strict=True)), **kwargs)


def from_dask_dataframe(client, df, label_column: str, **kwargs) -> DistributedDesign:
    """A :class:`DistributedDesign` over the partitions of a dask dataframe.

    The partitions are left on the cluster (see :func:`from_dask_array`).

    Parameters
    ----------
    client : distributed.Client
        Client of the cluster whose workers hold the partitions.
    df : dask.dataframe.DataFrame
        Numeric columns; one partition of the design per dataframe partition.
    label_column : str
        The column of labels (``-1`` for unlabeled rows); every other column is a feature
        (as float64).
    **kwargs
        Passed to :class:`DistributedDesign`.

    Returns
    -------
    DistributedDesign
        One partition per dataframe partition, as built by :func:`from_dask_array`.
    """
    if label_column not in df.columns:
        raise ValueError(f"label_column {label_column!r} is not a column of df (columns: "
                         f"{list(df.columns)})")
    features = df.drop(columns=[label_column]).astype("float64")
    X = features.to_dask_array(lengths=True)
    y = df[label_column].to_dask_array(lengths=True)
    return from_dask_array(client, X, y, **kwargs)
