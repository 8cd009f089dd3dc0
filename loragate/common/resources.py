"""The data loragate ships: the bundled evalset, chat templates, gate policies, run
configs and training recipes.

In the repository they live in the top-level `evalsets/` and `configs/` folders; a
built wheel carries the same folders as package data (`loragate/evalsets`,
`loragate/configs`, mapped in pyproject.toml), found through `importlib.resources`.
`bundled` finds them either way, so `loragate run` works from any directory after
`pip install`.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

_SOURCE_ROOT = Path(__file__).resolve().parents[2]
"""The repository root, for a source checkout or an editable install."""


def bundled(relative: str | Path) -> Path | None:
    """The shipped file or folder `relative` (e.g. `evalsets/agent20`), or None."""
    rel = Path(relative)
    if rel.is_absolute() or ".." in rel.parts:
        return None
    installed = Path(str(resources.files("loragate"))) / rel
    if installed.exists():
        return installed
    source = _SOURCE_ROOT / rel
    return source if source.exists() else None


def user_or_bundled(text: str | Path) -> Path:
    """`text` as a path when it exists (relative to the working directory); else the
    shipped file of that name (`configs/gates/default.yaml` works anywhere); else the
    path as given, so the error names what the user typed."""
    path = Path(text).expanduser()
    if path.exists():
        return path
    shipped = bundled(path)
    return shipped if shipped is not None else path
