"""Every public estimator documents all of its parameters and its fitted attributes."""

import inspect

import pytest
from numpydoc.docscrape import ClassDoc

import semisup


def _public_classes():
    out = []
    for name in semisup.__all__:
        obj = getattr(semisup, name)
        if isinstance(obj, type) and hasattr(obj, "get_params"):
            out.append(obj)
    return out


@pytest.mark.parametrize("cls", _public_classes(), ids=lambda c: c.__name__)
def test_parameters_and_attributes_documented(cls):
    doc = ClassDoc(cls)
    documented = set()
    for param in doc["Parameters"]:
        documented.update(n.strip() for n in param.name.split(","))
    params = [p for p in inspect.signature(cls.__init__).parameters if p != "self"]
    missing = [p for p in params if p not in documented]
    assert not missing, f"{cls.__name__} does not document parameters {missing}"
    extra = sorted(documented - set(params) - {"**kwargs", "*args"})
    assert not extra, f"{cls.__name__} documents parameters it does not have: {extra}"
    assert doc["Attributes"], f"{cls.__name__} has no Attributes section"
