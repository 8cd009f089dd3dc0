"""Episodes: definitions, the simulator and its faults, the trajectory judge, the final-
reply judge, the episode loop and run, episode statistics; `servers/` holds the tool
servers.

Above scoring in the layer order; below results.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loragate.common.faces import lazy_face

if TYPE_CHECKING:
    from loragate.episodes.definitions import EpisodeSet, EpisodeSpec
    from loragate.episodes.episodes_file import load_episodes
    from loragate.episodes.simulator import Simulator
    from loragate.episodes.stage import rescore_episodes, run_episode_set

__all__ = [
    "EpisodeSet",
    "EpisodeSpec",
    "Simulator",
    "load_episodes",
    "rescore_episodes",
    "run_episode_set",
]

if not TYPE_CHECKING:  # each name imported on first use (loragate.common.faces)
    __getattr__, __dir__ = lazy_face(__name__)
