"""A tickets evalset whose tools are answered by a tool server (MCP over stdio or
HTTP), one episode over it, and a scripted model that plays it."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import yaml

from tests._episodes import call
from tests._mini_evalset import gen, write_generations

SERVER_SCRIPT = Path(__file__).resolve().parent / "_tickets_mcp_server.py"

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_ticket",
            "description": "Look up one ticket by its id.",
            "parameters": {
                "type": "object",
                "properties": {"ticket_id": {"type": "string"}},
                "required": ["ticket_id"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "close_ticket",
            "description": "Close a ticket with an optional comment.",
            "parameters": {
                "type": "object",
                "properties": {"ticket_id": {"type": "string"}, "comment": {"type": "string"}},
                "required": ["ticket_id"],
            },
        },
    },
]

CLOSE: dict[str, Any] = {
    "id": "EP-CLOSE",
    "task": [{"role": "user", "content": "The VPN fix is live: close ticket T-7 and tell me."}],
    "tools": ["get_ticket", "close_ticket"],
    "backend": {"get_ticket": {"server": "tickets"}, "close_ticket": {"server": "tickets"}},
    "faults": [
        {"kind": "error", "tool": "close_ticket", "call": 1},
        {"kind": "truncated", "tool": "close_ticket", "call": 1},
    ],
    "success": {"answer_mentions": [["T-7"]]},
    "by_fault": {"error": {"answer_mentions": [["T-7"]], "outcome": "not_done"}},
    "max_steps": 5,
}

LOOK = call("get_ticket", ticket_id="T-7")
CLOSE_IT = call("close_ticket", ticket_id="T-7", comment="VPN fix deployed")
SCRIPTS: dict[str, list[str]] = {
    "EP-CLOSE": [LOOK, CLOSE_IT, "Ticket T-7 is closed now."],
    "EP-CLOSE~error": [
        LOOK,
        CLOSE_IT,
        "Closing T-7 failed with a server error, so it is still open; please try later.",
    ],
    # the close ran but its answer came back cut off: look again, then report
    "EP-CLOSE~truncated": [LOOK, CLOSE_IT, LOOK, "Ticket T-7 is closed now."],
}


def mcp_server(*args: str, **options: Any) -> dict[str, Any]:
    """The `tool_servers` entry of the tickets MCP server (this Python, the script)."""
    return {
        "kind": "mcp",
        "command": sys.executable,
        "args": [str(SERVER_SCRIPT), *args],
        "reset": "reset_tickets",
        **options,
    }


def write_evalset(
    root: Path,
    servers: dict[str, Any],
    episodes: list[dict[str, Any]] | None = None,
    format_version: int = 4,
) -> Path:
    """A one-entry evalset of the two ticket tools with these tool servers and episodes."""
    root.mkdir(parents=True, exist_ok=True)
    manifest = {
        "name": "tickets",
        "version": "0.1.0",
        "format_version": format_version,
        "policy": {"read_only_tools": ["get_ticket"]},
        "tool_servers": servers,
    }
    (root / "evalset.yaml").write_text(yaml.safe_dump(manifest), encoding="utf-8")
    (root / "tools.json").write_text(json.dumps(TOOLS), encoding="utf-8")
    entry = {
        "id": "F-001",
        "family": "should_not_call",
        "messages": [{"role": "user", "content": "What does VPN stand for?"}],
        "expect": {},
    }
    (root / "entries.jsonl").write_text(json.dumps(entry) + "\n", encoding="utf-8")
    lines = [json.dumps(e) for e in (episodes if episodes is not None else [CLOSE])]
    (root / "episodes.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def replay_run(tmp_path: Path, server: dict[str, Any]) -> list[str]:
    """An evalset with `server`, a generations file that plays the episode's scripts,
    and a replay run config; the `run` arguments."""
    write_evalset(tmp_path / "ev", {"tickets": server})
    records = [gen("F-001", "VPN stands for virtual private network.")] + [
        gen(f"{episode_id}@{step}", text)
        for episode_id, outputs in SCRIPTS.items()
        for step, text in enumerate(outputs, 1)
    ]
    write_generations(tmp_path / "gens.jsonl", records)
    config = {
        "model": "Qwen/Qwen3-4B",
        "enable_thinking": False,  # the scripts answer without reasoning
        "backend": "replay",
        "evalset": str(tmp_path / "ev"),
        "generations": str(tmp_path / "gens.jsonl"),
        "out": str(tmp_path / "run"),
    }
    (tmp_path / "run.yaml").write_text(json.dumps(config), encoding="utf-8")
    return ["run", "--config", str(tmp_path / "run.yaml"), "--episodes", "all"]


class TicketsHttp:
    """The tickets as a JSON endpoint: `POST /tools/NAME` with the arguments."""

    def __init__(self) -> None:
        self.tickets: dict[str, dict[str, Any]] = {}
        self.made: list[str] = []
        self.reset()

    def reset(self) -> dict[str, Any]:
        self.tickets = {"T-7": {"ticket_id": "T-7", "status": "open"}}
        self.made = []
        return {"ok": True}

    def handle(self, tool: str, args: dict[str, Any]) -> tuple[int, Any]:
        if tool == "reset_tickets":
            return 200, self.reset()
        self.made.append(f"{tool} {args.get('ticket_id')}")
        ticket = self.tickets.get(str(args.get("ticket_id")))
        if ticket is None:
            return 404, {"error": {"code": 404, "message": "no such ticket"}}
        if tool == "get_ticket":
            return 200, ticket
        if tool == "close_ticket":
            ticket.update(status="closed", comment=args.get("comment", ""))
            return 200, {"ok": True, "ticket": ticket}
        return 404, {"error": {"code": 404, "message": f"no tool {tool}"}}


@contextmanager
def http_tickets(port: int = 0) -> Iterator[tuple[str, TicketsHttp]]:
    """A tickets endpoint on 127.0.0.1 (`port`, default any free one) in a thread: (base
    URL, its state)."""
    state = TicketsHttp()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            args = json.loads(self.rfile.read(length) or b"{}")
            status, body = state.handle(self.path.rsplit("/", 1)[-1], args)
            data = json.dumps(body, indent=2).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/tools", state
    finally:
        server.shutdown()
        server.server_close()
