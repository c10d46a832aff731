"""The one place that states the version (pyproject.toml reads it from here)."""

__version__ = "0.2.0.dev0"
