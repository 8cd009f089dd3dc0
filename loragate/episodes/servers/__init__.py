"""Tool servers an episode calls: HTTP and in-process servers and the MCP stdio client.

Part of the episodes layer.
"""

from __future__ import annotations

__all__: list[str] = []
