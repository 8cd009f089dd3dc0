"""loragate's version (the package metadata says the same; this needs no install)."""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
