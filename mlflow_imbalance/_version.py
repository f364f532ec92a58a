"""The package version (one place; read by the package, the summary and the report)."""

__version__ = "0.1.0"
