"""The Examples sections of the public API run, and print what they say.

Each name in ``semisup.__all__`` and in :mod:`semisup.meta.sklearn_compat` must carry at
least one doctest in its own docstring; the other objects of the API reference pages
(``docs/api.rst``) run theirs when they have one.  One test per object, with
``NORMALIZE_WHITESPACE`` and ``ELLIPSIS``; examples stay tiny (toy data, fixed
``random_state``) so that the whole file takes seconds.
"""

from __future__ import annotations

import doctest
import inspect
import warnings

import numpy as np
import pytest
from test_numpydoc import _api_page_names, _resolve

import semisup
from semisup.meta import sklearn_compat

FLAGS = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS


def _doctests(obj: object, name: str) -> list:
    """The doctests of ``obj``'s own docstring, run in its module's namespace (as
    ``--doctest-modules`` would); methods share their class's Examples."""
    module = inspect.getmodule(obj)
    globs = dict(vars(module)) if module is not None else {}
    finder = doctest.DocTestFinder(recurse=False)
    return [t for t in finder.find(obj, name, globs=globs) if t.examples]


def _public() -> list:
    # exported names are always listed (and fail without examples); the other objects of
    # the API pages only when they have examples
    out = [pytest.param(name, getattr(semisup, name), id=name) for name in semisup.__all__]
    out += [pytest.param(name, getattr(sklearn_compat, name), id=f"sklearn_compat.{name}")
            for name in sklearn_compat.__all__]
    seen = {id(p.values[1]) for p in out}
    for dotted in _api_page_names():
        obj = _resolve(dotted)
        if id(obj) not in seen and _doctests(obj, dotted):
            seen.add(id(obj))
            out.append(pytest.param(dotted, obj, id=dotted))
    return out


@pytest.mark.parametrize("name, obj", _public())
def test_examples_run(name: str, obj: object) -> None:
    tests = _doctests(obj, name)
    assert tests, f"{name} has no runnable Examples section (>>> lines) in its docstring"
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    failures: list[str] = []
    printed = np.get_printoptions()
    try:
        # a test elsewhere may leave other print options behind
        np.set_printoptions(legacy=False, precision=8, suppress=False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # warnings are not part of the examples
            for test in tests:
                runner.run(test, out=failures.append)
    finally:
        np.set_printoptions(**printed)
    assert runner.failures == 0, "".join(failures)
