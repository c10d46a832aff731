"""What both command lines share: output checks before any work, one-line warnings."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import warnings
from collections.abc import Iterator


def folder_problem(folder: str) -> str | None:
    """Why no file can be created in ``folder`` (None when one can), tried for real: the
    permission bits say nothing for root or on a read-only mount."""
    if not os.path.exists(folder):
        return f"folder {folder} does not exist"
    if not os.path.isdir(folder):
        return f"{folder} is a file, not a folder"
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        return f"cannot create files in {folder} ({exc.strerror or type(exc).__name__})"
    return None


def output_problem(path: str) -> str | None:
    """Why ``path`` cannot be written (None when it can), without leaving anything there."""
    if os.path.isdir(path):
        return f"{path} is a folder; name a file"
    return folder_problem(os.path.dirname(path) or ".")


@contextlib.contextmanager
def one_line_warnings(prog: str) -> Iterator[None]:
    """Show every warning as ``prog: warning: message (Category)`` on one line of stderr,
    without Python's file name and source line (the entry points only: a library user
    keeps Python's own format)."""
    def show(message, category, filename, lineno, file=None, line=None):
        text = " ".join(str(message).split())
        print(f"{prog}: warning: {text} ({category.__name__})",
              file=sys.stderr if file is None else file)

    previous = warnings.showwarning
    warnings.showwarning = show
    try:
        yield
    finally:
        warnings.showwarning = previous
