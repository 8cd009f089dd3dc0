"""Shared plumbing every other layer may use: typed errors, file reading and atomic writes,
JSON lines, YAML-to-model loading, folder locks, names, shipped resources, heaps, safe
regexes, text sanitising, data-file lists, entry-point plugins and the version.

The lowest layer (common < stats < formats < calls < judge < families < evalset <
runners < generate < score < episodes < results < evaluation < sweep < training < cli): it
imports nothing of loragate above it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loragate.common.faces import lazy_face

if TYPE_CHECKING:
    from loragate.common.errors import (
        BadInput,
        LoragateError,
        MissingDependency,
        Problem,
        ServerUnreachable,
        did_you_mean,
    )
    from loragate.common.files import atomic_write_json, atomic_write_text, read_json, read_yaml
    from loragate.common.jsonl import ReadReport, read_objects
    from loragate.common.loading import load_yaml_model
    from loragate.common.locking import FolderBusy, writing
    from loragate.common.names import Name, check_name
    from loragate.common.version import __version__

__all__ = [
    "BadInput",
    "FolderBusy",
    "LoragateError",
    "MissingDependency",
    "Name",
    "Problem",
    "ReadReport",
    "ServerUnreachable",
    "__version__",
    "atomic_write_json",
    "atomic_write_text",
    "check_name",
    "did_you_mean",
    "load_yaml_model",
    "read_json",
    "read_objects",
    "read_yaml",
    "writing",
]

if not TYPE_CHECKING:  # each name imported on first use (loragate.common.faces)
    __getattr__, __dir__ = lazy_face(__name__)
