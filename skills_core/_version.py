"""The package version (PEP 440), kept apart from protocol versions (see :mod:`skills_core.spec`)."""

from __future__ import annotations

__all__ = ["__version__"]

__version__ = "0.1.0.dev0"
