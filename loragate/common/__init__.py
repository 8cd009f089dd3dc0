"""Shared plumbing every other layer may use: typed errors, file reading and atomic writes,
JSON lines, YAML-to-model loading, folder locks, names, shipped resources, heaps, safe
regexes and text sanitising.

The lowest layer of the core (common < stats < formats < calls < judge < families <
evalset < runners < generate < score < episodes < results < run < sweep < cli): it
imports nothing of loragate above it.
"""

from __future__ import annotations

__all__: list[str] = []
