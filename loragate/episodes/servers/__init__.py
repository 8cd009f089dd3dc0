"""Tool servers an episode calls: `pool` (the servers of a run, each started on first
use), `http` (JSON endpoints), `mcp` (MCP servers over stdio) and `base` (what their
connections share). Their configs are `loragate.formats.evalset`'s (`tool_servers` in
evalset.yaml).

Part of the episodes layer.
"""

from __future__ import annotations

__all__: list[str] = []
