"""Tool servers of `kind: http`: a call is `POST {url}/{tool}` with the arguments as a
JSON object, the response body is the result. No redirect is followed and no proxy is
used; every call has a timeout.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from loragate.common.errors import BadInput
from loragate.episodes.servers.base import (
    ToolReply,
    ToolServerError,
    is_error_result,
    result_text,
    timeout_reply,
)
from loragate.evalset.faults import error_text
from loragate.formats.evalset import HttpServerConfig

MAX_RESPONSE_BYTES = 1 << 20
"""An HTTP tool's response is read up to this size (results are cut far shorter)."""


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


class HttpConnection:
    """Calls of one `kind: http` server (stateless: nothing to start or stop)."""

    def __init__(self, name: str, config: HttpServerConfig) -> None:
        self.name = name
        self.config = config
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), _NoRedirect)

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        headers.update(self.config.headers)
        for header, var in self.config.headers_from_env.items():
            value = os.environ.get(var)
            if value is None:
                raise BadInput(
                    f"tool server {self.name!r}: ${var} is not set",
                    fix=f"export {var}=... (header {header} of the tool server)",
                )
            headers[header] = value
        return headers

    def call(self, tool: str, arguments: dict[str, Any]) -> ToolReply:
        url = self.config.url.rstrip("/") + "/" + urllib.parse.quote(tool, safe="")
        body = json.dumps(arguments, ensure_ascii=False).encode("utf-8")
        request = urllib.request.Request(url, data=body, headers=self._headers(), method="POST")
        try:
            with self._opener.open(request, timeout=self.config.timeout_s) as response:
                status = int(response.status)
                raw = response.read(MAX_RESPONSE_BYTES)
        except urllib.error.HTTPError as exc:  # 4xx/5xx (and unfollowed redirects)
            status, raw = exc.code, exc.read(MAX_RESPONSE_BYTES)
        except TimeoutError:
            return timeout_reply(self.config.timeout_s)
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            if isinstance(reason, TimeoutError):
                return timeout_reply(self.config.timeout_s)
            raise ToolServerError(
                f"tool server {self.name!r}: could not reach {url}: {reason}",
                fix="start the server, or correct `url` under tool_servers in evalset.yaml",
            ) from None
        text = result_text(raw.decode("utf-8", errors="replace"))
        if not text.strip() and status >= 400:
            text = error_text(status, "http_error", f"HTTP {status}")
        return ToolReply(text, status >= 400 or is_error_result(text))

    def close(self) -> None:
        return None


__all__ = ["MAX_RESPONSE_BYTES", "HttpConnection"]
