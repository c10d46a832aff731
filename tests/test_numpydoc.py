"""numpydoc validation of the public API: every name in ``semisup.__all__``, in
:mod:`semisup.meta.sklearn_compat` and on the API reference pages (``docs/api.rst``), and
every public method of those classes that semisup defines.

Ignored checks (the policy of scikit-learn's own docstring test):

- ``GL01``, ``GL02``: where the summary starts relative to the quotes (style only).
- ``RT02``: the first line of a Returns entry may name the returned object (``self``).
- ``ES01`` (extended summary), ``SA01`` (See Also): optional; the summary line and the
  parameter and return descriptions are required instead.
- ``EX01`` (Examples) on methods, and on the helpers of the API pages that are not in
  ``semisup.__all__`` (result records, mixins, network and cluster backends): every
  exported class and function has a doctested Examples section
  (``tests/test_doctest_examples.py``); methods share their class's.
- ``PR02``/``GL08`` on properties, which numpydoc cannot parse as functions.
"""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path

import pytest

numpydoc_validate = pytest.importorskip("numpydoc.validate")

import semisup  # noqa: E402
from semisup.meta import sklearn_compat  # noqa: E402

IGNORED = {"GL01", "GL02", "RT02", "ES01", "SA01"}
API_RST = Path(__file__).resolve().parents[1] / "docs" / "api.rst"
# scikit-learn's plumbing, documented on its own site (also left off the API pages:
# docs/_templates/autosummary/class.rst)
PLUMBING = {"get_params", "set_params", "get_metadata_routing", "set_output"}


def _resolve(dotted: str):
    """``semisup.<dotted>``: the longest importable module prefix, then attributes."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module("semisup." + ".".join(parts[:i]))
        except ImportError:
            continue
        for part in parts[i:]:
            obj = getattr(obj, part)
        return obj
    return getattr(semisup, dotted)


def _api_page_names() -> list[str]:
    if not API_RST.exists():
        return []
    return re.findall(r"^   ([A-Za-z_][\w.]*)$", API_RST.read_text(), re.M)


def _methods(cls: type) -> list[str]:
    out = []
    for name in dir(cls):
        if name.startswith("_") or name in PLUMBING or (
                name.startswith("set_") and name.endswith("_request")):
            continue
        owner = next((k for k in cls.__mro__ if name in vars(k)), None)
        attr = vars(owner)[name] if owner is not None else None
        if owner is None or not owner.__module__.startswith("semisup") \
                or isinstance(attr, property) or not callable(getattr(cls, name, None)):
            continue
        out.append(name)
    return out


def _targets() -> list:
    exported = [getattr(semisup, n) for n in semisup.__all__]
    exported += [getattr(sklearn_compat, n) for n in sklearn_compat.__all__]
    objects = {id(o): (o, True) for o in exported}
    for dotted in _api_page_names():
        obj = _resolve(dotted)
        objects.setdefault(id(obj), (obj, False))
    out = []
    for obj, needs_example in objects.values():
        path = f"{obj.__module__}.{obj.__qualname__}"
        out.append(pytest.param(path, None, needs_example, id=obj.__qualname__))
        if isinstance(obj, type):
            out += [pytest.param(path, m, False, id=f"{obj.__qualname__}.{m}")
                    for m in _methods(obj)]
    return out


def _errors(path: str, method: str | None, needs_example: bool) -> list[tuple[str, str]]:
    target = path if method is None else f"{path}.{method}"
    errors = []
    for code, message in numpydoc_validate.validate(target)["errors"]:
        if code in IGNORED or (code == "EX01" and not needs_example):
            continue
        if method is not None and code in ("PR02", "GL08"):
            cls = numpydoc_validate.Validator._load_obj(path)
            if isinstance(inspect.getattr_static(cls, method), property):
                continue
        errors.append((code, message))
    return errors


def test_api_pages_are_covered():
    if not API_RST.exists():
        pytest.skip("docs/api.rst is not in this checkout")
    assert len(_api_page_names()) > 50


@pytest.mark.parametrize("path, method, needs_example", _targets())
def test_numpydoc_valid(path: str, method: str | None, needs_example: bool) -> None:
    errors = _errors(path, method, needs_example)
    where = path if method is None else f"{path}.{method}"
    assert not errors, f"{where}:\n" + "\n".join(f"  {c}: {m}" for c, m in errors)
