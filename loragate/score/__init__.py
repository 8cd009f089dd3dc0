"""Scoring orchestration (it writes results.jsonl and summary.json only; the report and
the page come from `loragate.evaluation`), its worker processes and the aggregate figures.

Above generation in the layer order; below episodes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loragate.common.faces import lazy_face

if TYPE_CHECKING:
    from loragate.score.scoring import ScoredRun, ScorerError, score_run, write_scored

__all__ = ["ScoredRun", "ScorerError", "score_run", "write_scored"]

if not TYPE_CHECKING:  # each name imported on first use (loragate.common.faces)
    __getattr__, __dir__ = lazy_face(__name__)
