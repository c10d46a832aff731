"""Sphinx configuration of the semisup documentation (built in CI with -W)."""

import os
import sys
import warnings

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "src")))

import semisup  # noqa: E402

project = "semisup"
author = "the semisup developers"
copyright = "2026, the semisup developers"
release = semisup.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "myst_parser",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "auto_examples/*.ipynb", "auto_examples/*.py",
                    "auto_examples/*.md5", "auto_examples/*.codeobj.json"]
autosummary_generate = True
# _templates/autosummary/class.rst: every public method on a class page, inherited ones
# included (fit, predict, score... often live in a base class or mixin)
templates_path = ["_templates"]
autodoc_default_options = {
    "members": True,
    "inherited-members": False,
}


def _skip_request_setters(app, what, name, obj, skip, options):
    """scikit-learn's ``set_*_request`` setters document its own site, not ours."""
    if name.startswith("set_") and name.endswith("_request"):
        return True
    return None


def setup(app):
    app.connect("autodoc-skip-member", _skip_request_setters)
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
# every rendered docstring is validated; a failure is a warning, an error under -W (CI).
# Ignored as in tests/test_numpydoc.py (scikit-learn's policy); EX01 is enforced there,
# for every exported class and function, not on methods and helpers.
numpydoc_validation_checks = {"all", "GL01", "GL02", "RT02", "ES01", "SA01", "EX01"}
html_theme = "pydata_sphinx_theme"
html_title = f"semisup {release}"
html_theme_options = {"navigation_with_keys": False}
intersphinx_mapping = {}
nitpicky = False

sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "remove_config_comments": True,
    "abort_on_example_error": True,
    "plot_gallery": "True",
}

# examples run headless
warnings.filterwarnings("ignore", message="Matplotlib is currently using agg")
os.environ.setdefault("MPLBACKEND", "Agg")
