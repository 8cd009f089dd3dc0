"""Scoring orchestration (it writes results.jsonl and summary.json only; the report and
the page come from `loragate.evaluation`), its worker processes and the aggregate figures.

Above generation in the layer order; below episodes.
"""

from __future__ import annotations

__all__: list[str] = []
