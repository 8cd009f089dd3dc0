"""A hostile MCP server over stdio for the hostile-input matrix: raw JSON-RPC written by
hand (no SDK, so it starts in milliseconds and can send what no SDK would).

Tools: `get_ticket`, `close_ticket`, `reset_tickets`, `pid`. `--mode MODE` picks how a
call of `get_ticket` or `close_ticket` is answered (`reset_tickets` and `pid` always
answer plainly):

- `plain`: a normal ticket; `deep`: a text block holding JSON nested 100,000 levels;
  `rpc-deep`: the JSON-RPC line itself nested 100,000 levels; `surrogate`: a text with
  an escaped lone surrogate; `huge`: a 4 MB text; `giant`: a 20 MB text (a line longer
  than loragate reads); `not-utf8`: bytes that are not UTF-8
  inside the text; `image`: an image block only; `is-error`: `isError` true;
  `rpc-error`: a JSON-RPC error; `drip`: the answer one byte every 0.1 s; `hang`: no
  answer (with `--marker FILE`: its pid written there first); `crash`: the process
  exits during the call; `crash-once`: exits during its
  first call when `--marker FILE` does not exist yet (then creates it), so a restarted
  server answers; `endless-line`: writes bytes without a newline for ever;
  `garbage`: a line that is not JSON-RPC, then the answer.

Start-up modes: `--start crash` (exits at once, a message on stderr), `--start hang`
(never answers the handshake), `--start slow-list` (answers `tools/list` after 60 s).
`--lacks TOOL` leaves a tool out of `tools/list`. `--child PIDFILE` starts a
grandchild (`sleep`) at start and writes its pid to PIDFILE; `--pidfile FILE` writes
the server's own pid.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any


def arg(name: str, default: str | None = None) -> str | None:
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


MODE = arg("--mode", "plain")
START = arg("--start", "ok")
LACKS = arg("--lacks")
OUT = sys.stdout.buffer

TOOLS = [
    {
        "name": name,
        "description": f"{name} (hostile fixture)",
        "inputSchema": {"type": "object", "properties": {"ticket_id": {"type": "string"}}},
    }
    for name in ("get_ticket", "close_ticket", "reset_tickets", "pid")
    if name != LACKS
]


def send_raw(data: bytes) -> None:
    OUT.write(data)
    OUT.flush()


def send(message: dict[str, Any]) -> None:
    send_raw(json.dumps(message).encode() + b"\n")


def text_result(rid: Any, text: str, *, is_error: bool = False) -> dict[str, Any]:
    content = [{"type": "text", "text": text}]
    return {"jsonrpc": "2.0", "id": rid, "result": {"content": content, "isError": is_error}}


def answer_call(rid: Any, name: str, args: dict[str, Any]) -> None:
    ticket = {"ticket_id": args.get("ticket_id", "T-7"), "status": "open"}
    if name == "close_ticket":
        ticket["status"] = "closed"
    if name == "reset_tickets":
        send(text_result(rid, '{"ok": true}'))
        return
    if name == "pid":
        send(text_result(rid, str(os.getpid())))
        return
    plain = text_result(rid, json.dumps(ticket))
    if MODE == "plain":
        send(plain)
    elif MODE == "deep":
        send(text_result(rid, "[" * 100_000 + "]" * 100_000))
    elif MODE == "rpc-deep":
        head = f'{{"jsonrpc": "2.0", "id": {json.dumps(rid)}, "result": {{"content": [], "x": '
        send_raw(head.encode() + b"[" * 100_000 + b"]" * 100_000 + b"}}\n")
    elif MODE == "surrogate":
        # json.dumps writes the lone surrogate as the escape \ud800
        send(text_result(rid, json.dumps({**ticket, "note": "broken \ud800 text"})))
    elif MODE == "huge":
        send(text_result(rid, "x" * 4_000_000))
    elif MODE == "giant":
        send(text_result(rid, "x" * 20_000_000))
    elif MODE == "not-utf8":
        line = json.dumps(text_result(rid, "caf@@ ticket")).encode()
        send_raw(line.replace(b"@@", b"\xe9\xff") + b"\n")
    elif MODE == "image":
        image = {"type": "image", "data": "AAAA", "mimeType": "image/png"}
        send({"jsonrpc": "2.0", "id": rid, "result": {"content": [image]}})
    elif MODE == "is-error":
        send(text_result(rid, "the ticket store is read-only", is_error=True))
    elif MODE == "rpc-error":
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32000, "message": "no tickets"}})
    elif MODE == "drip":
        for byte in json.dumps(plain).encode() + b"\n":
            send_raw(bytes([byte]))
            time.sleep(0.1)
    elif MODE == "hang":
        if arg("--marker"):  # say that the call arrived, then never answer
            with open(str(arg("--marker")), "w", encoding="utf-8") as fh:
                fh.write(str(os.getpid()))
        time.sleep(3600)
    elif MODE == "crash":
        print("crashing in the middle of a call", file=sys.stderr, flush=True)
        os._exit(9)
    elif MODE == "crash-once":
        marker = arg("--marker")
        assert marker is not None
        if not os.path.exists(marker):
            with open(marker, "w", encoding="utf-8") as fh:
                fh.write(str(os.getpid()))
            print("crashing once", file=sys.stderr, flush=True)
            os._exit(9)
        send(plain)
    elif MODE == "endless-line":
        while True:
            send_raw(b"x" * 65536)
    elif MODE == "garbage":
        send_raw(b"this is not JSON-RPC\n")
        send(plain)
    else:
        raise SystemExit(f"unknown mode {MODE}")


def main() -> None:
    if arg("--pidfile"):
        with open(str(arg("--pidfile")), "w", encoding="utf-8") as fh:
            fh.write(str(os.getpid()))
    if arg("--child"):
        child = subprocess.Popen(["sleep", "3600"])
        with open(str(arg("--child")), "w", encoding="utf-8") as fh:
            fh.write(str(child.pid))
    print("hostile server starting", file=sys.stderr, flush=True)
    if START == "crash":
        print("boom: cannot open the ticket store", file=sys.stderr, flush=True)
        sys.exit(3)
    if START == "hang":
        time.sleep(3600)
    for raw in sys.stdin.buffer:
        message = json.loads(raw)
        method, rid = message.get("method"), message.get("id")
        if rid is None:
            continue  # a notification
        if method == "initialize":
            version = message["params"]["protocolVersion"]
            result = {
                "protocolVersion": version,
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "hostile", "version": "1"},
            }
            send({"jsonrpc": "2.0", "id": rid, "result": result})
        elif method == "tools/list":
            if START == "slow-list":
                time.sleep(60)
            send({"jsonrpc": "2.0", "id": rid, "result": {"tools": TOOLS}})
        elif method == "tools/call":
            params = message.get("params") or {}
            answer_call(rid, params.get("name"), params.get("arguments") or {})
        elif method == "ping":
            send({"jsonrpc": "2.0", "id": rid, "result": {}})
        else:
            send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no"}})


if __name__ == "__main__":
    main()
