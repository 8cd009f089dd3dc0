"""A hostile HTTP tool endpoint for the hostile-input matrix, on raw sockets (so it can
send what no HTTP library would).

`POST /MODE/TOOL` answers according to MODE; `reset_tickets` is always answered
plainly. Modes: `plain` (a ticket), `drip-headers` (the status line and headers one
byte every 0.1 s, for a minute), `drip-body` (headers at once, then the body one byte
every 0.1 s), `deep` (JSON nested 100,000 levels), `surrogate` (an escaped lone
surrogate), `not-utf8` (bytes that are not UTF-8), `huge` (a 20 MB body), `redirect`
(302 to another host), `status500`, `short-body` (a Content-Length of 1000 and 10
bytes, then the connection closes), `not-json` (plain text), `not-http` (an answer
that is not HTTP at all), `reset` (the connection is closed without an answer),
`big-number` (an integer of 5,000 digits).
"""

from __future__ import annotations

import socket
import socketserver
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress

TICKET = b'{"ticket_id": "T-7", "status": "open"}'


def _response(body: bytes, status: str = "200 OK", extra: str = "") -> bytes:
    head = (
        f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n{extra}\r\n"
    )
    return head.encode() + body


def _drip(sock: socket.socket, data: bytes, seconds: float = 60.0) -> None:
    end = time.monotonic() + seconds
    for byte in data:
        if time.monotonic() > end:
            return
        sock.sendall(bytes([byte]))
        time.sleep(0.1)


class _Handler(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        sock: socket.socket = self.request
        with suppress(OSError):
            self._answer(sock)

    def _read_request(self, sock: socket.socket) -> tuple[str, bytes]:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        length = 0
        for line in lines[1:]:
            name, _, value = line.partition(":")
            if name.strip().lower() == "content-length":
                length = int(value.strip())
        while len(body) < length:
            chunk = sock.recv(65536)
            if not chunk:
                break
            body += chunk
        path = lines[0].split(" ")[1] if lines and " " in lines[0] else "/"
        return path, body

    def _answer(self, sock: socket.socket) -> None:
        path, _ = self._read_request(sock)
        parts = path.strip("/").split("/")
        mode, tool = (parts[0], parts[-1]) if len(parts) >= 2 else ("plain", parts[-1])
        if tool == "reset_tickets" or mode == "plain":
            sock.sendall(_response(b'{"ok": true}' if tool == "reset_tickets" else TICKET))
        elif mode == "drip-headers":
            _drip(sock, _response(TICKET))
        elif mode == "drip-body":
            body = TICKET * 100
            sock.sendall(_response(body)[: -len(body)])
            _drip(sock, body)
        elif mode == "deep":
            sock.sendall(_response(b"[" * 100_000 + b"]" * 100_000))
        elif mode == "surrogate":
            sock.sendall(_response(b'{"ticket_id": "T-7", "note": "broken \\ud800 text"}'))
        elif mode == "not-utf8":
            sock.sendall(_response(b'{"ticket_id": "T-7", "note": "caf\xe9\xff"}'))
        elif mode == "huge":
            sock.sendall(_response(b'"' + b"x" * 20_000_000 + b'"'))
        elif mode == "redirect":
            sock.sendall(_response(b"", "302 Found", "Location: http://example.invalid/x\r\n"))
        elif mode == "status500":
            sock.sendall(_response(b'{"detail": "internal error"}', "500 Internal Server Error"))
        elif mode == "short-body":
            sock.sendall(_response(b"x" * 1000)[:-990])
        elif mode == "not-json":
            sock.sendall(_response(b"ticket T-7 is open", extra="X-Note: text\r\n"))
        elif mode == "not-http":
            sock.sendall(b"SSH-2.0-OpenSSH_9.2\r\n")
        elif mode == "reset":
            sock.setsockopt(
                socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00"
            )
        elif mode == "big-number":
            sock.sendall(_response(b'{"n": ' + b"9" * 5000 + b"}"))
        else:
            sock.sendall(_response(b'{"error": "unknown mode"}', "404 Not Found"))


class _Server(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True


@contextmanager
def hostile_http() -> Iterator[str]:
    """The endpoint on 127.0.0.1 in a thread; yields its base URL (`http://127.0.0.1:PORT`)."""
    server = _Server(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
