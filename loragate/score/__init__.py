"""Scoring orchestration (results.jsonl and summary.json), its worker processes and the
aggregate figures.

Above generation in the layer order; below episodes.
"""

from __future__ import annotations

__all__: list[str] = []
