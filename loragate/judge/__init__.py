"""The free-text judging library the families and the episode judge share: claims, answers,
questions and text utilities.

Above calls in the layer order; below the families.
"""

from __future__ import annotations

__all__: list[str] = []
