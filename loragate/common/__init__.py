"""Shared plumbing every other layer may use: typed errors, file reading and atomic writes,
JSON lines, YAML-to-model loading, folder locks, names, shipped resources, heaps, safe
regexes, text sanitising, data-file lists, entry-point plugins and the version.

The lowest layer (common < stats < formats < calls < judge < families < evalset <
runners < generate < score < episodes < results < run < sweep < training < cli): it
imports nothing of loragate above it.
"""

from __future__ import annotations

__all__: list[str] = []
