"""A small MCP server over stdio for the tool-server tests: tickets in memory.

Tools: `get_ticket`, `close_ticket`, `reset_tickets` (the state as at start), `calls`
(the tool calls since the last reset, so a test can see whether a call was made) and
`pid`. `get_ticket("SLOW")` sleeps for a minute (a call that times out). Started with
`--hang PIDFILE` it writes its pid there and never speaks MCP (a server that hangs
at start); with `--crash` it writes
to stderr and exits at once; with `--noisy` it prints a line that is not JSON-RPC on
stdout first.
"""

from __future__ import annotations

import copy
import os
import sys
import time
from typing import Any

if "--crash" in sys.argv:
    print("boom: the ticket database is locked", file=sys.stderr, flush=True)
    sys.exit(3)
if "--hang" in sys.argv:  # `--hang PIDFILE`: say who we are, then never answer
    with open(sys.argv[sys.argv.index("--hang") + 1], "w", encoding="utf-8") as f:
        f.write(str(os.getpid()))
    time.sleep(3600)

try:
    from mcp.server.mcpserver import MCPServer
except ImportError:  # mcp 1.x
    from mcp.server.fastmcp import FastMCP as MCPServer  # type: ignore[no-redef]

START: dict[str, dict[str, Any]] = {
    "T-7": {"ticket_id": "T-7", "status": "open", "title": "VPN drops every hour"},
    "T-8": {"ticket_id": "T-8", "status": "open", "title": "Printer jam"},
}
tickets = copy.deepcopy(START)
made: list[str] = []
app = MCPServer("tickets")


@app.tool()
def get_ticket(ticket_id: str) -> dict[str, Any]:
    """Look up one ticket by its id."""
    made.append(f"get_ticket {ticket_id}")
    if ticket_id == "SLOW":
        time.sleep(60)
    if ticket_id not in tickets:
        return {"error": {"code": 404, "message": f"no ticket {ticket_id}"}}
    return tickets[ticket_id]


@app.tool()
def close_ticket(ticket_id: str, comment: str = "") -> dict[str, Any]:
    """Close a ticket with an optional comment."""
    made.append(f"close_ticket {ticket_id}")
    if ticket_id not in tickets:
        return {"error": {"code": 404, "message": f"no ticket {ticket_id}"}}
    tickets[ticket_id].update(status="closed", comment=comment)
    return {"ok": True, "ticket": tickets[ticket_id]}


@app.tool()
def reset_tickets() -> dict[str, Any]:
    """Put every ticket back as it was at start."""
    tickets.clear()
    tickets.update(copy.deepcopy(START))
    made.clear()
    return {"ok": True}


@app.tool()
def pid() -> int:
    """This server's process id."""
    return os.getpid()


@app.tool()
def calls() -> dict[str, Any]:
    """The tool calls since the last reset."""
    return {"calls": list(made)}


if __name__ == "__main__":
    print("tickets server starting", file=sys.stderr, flush=True)
    if "--noisy" in sys.argv:  # a stray line on stdout, where only JSON-RPC belongs
        print("debug: tickets loaded", flush=True)
    app.run()
