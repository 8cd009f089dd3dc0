"""Tool servers an episode calls: `pool` (the servers of a run, each started on first
use), `http` (JSON endpoints), `mcp` (MCP servers over stdio) and `base` (what their
connections share). Their configs are `loragate.formats.evalset`'s (`tool_servers` in
evalset.yaml).

Part of the episodes layer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loragate.common.faces import lazy_face

if TYPE_CHECKING:
    from loragate.episodes.servers.pool import ToolServers

__all__ = ["ToolServers"]

if not TYPE_CHECKING:  # each name imported on first use (loragate.common.faces)
    __getattr__, __dir__ = lazy_face(__name__)
