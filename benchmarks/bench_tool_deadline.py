"""How long a tool server that drips its answer keeps a call waiting, against the
configured deadline `timeout_s` (a benchmark, not a test: tests never time).

The servers are the hostile fixtures of the tests: `tests/_hostile_http.py` (raw
sockets: the status line and headers, or the body, one byte every 0.1 s for a minute)
and `tests/_hostile_mcp_server.py --mode drip` (the JSON-RPC answer one byte every
0.1 s). A per-read socket timeout would never fire on either: a byte arrives every
0.1 s. Each call goes through `ToolServers.call` as in a run; the figure is the wall
time from the call to its 504 result, and its overshoot beyond `timeout_s`. Prints
medians (and the maximum) over `--repeats` calls per deadline. Usage:

    python benchmarks/bench_tool_deadline.py [--repeats 5] [--deadlines 0.5,1,2,5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # the hostile fixtures of the tests

from loragate.episodes.servers.pool import ToolServers  # noqa: E402
from loragate.formats.evalset import HttpServerConfig, McpServerConfig  # noqa: E402
from tests._hostile_http import hostile_http  # noqa: E402
from tests._hostile_world import mcp_server  # noqa: E402

ARGS = {"ticket_id": "T-7"}


def _timed(servers: ToolServers, name: str) -> float:
    started = time.monotonic()
    reply = servers.call(name, "get_ticket", ARGS)
    spent = time.monotonic() - started
    assert reply.failed and json.loads(reply.text)["error"]["code"] == 504, reply
    return spent


def _row(kind: str, deadline: float, times: list[float]) -> str:
    median = statistics.median(times)
    return (
        f"| {kind} | {deadline:g} s | {median:.3f} s | +{(median - deadline) * 1000:.0f} ms | "
        f"{max(times):.3f} s |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--deadlines", default="0.5,1,2,5")
    args = parser.parse_args()
    deadlines = [float(d) for d in args.deadlines.split(",")]
    print("| server | timeout_s | call ended after (median) | overshoot | max |")
    print("|---|---|---|---|---|")
    with hostile_http() as url, tempfile.TemporaryDirectory() as tmp:
        for deadline in deadlines:
            table = {
                mode: HttpServerConfig(kind="http", url=f"{url}/{mode}", timeout_s=deadline)
                for mode in ("drip-headers", "drip-body")
            }
            with ToolServers(table, root=Path(tmp)) as servers:
                for mode in table:
                    times = [_timed(servers, mode) for _ in range(args.repeats)]
                    print(_row(f"HTTP {mode}", deadline, times), flush=True)
            mcp = McpServerConfig.model_validate(
                mcp_server("--mode", "drip", timeout_s=deadline) | {"reset": None}
            )
            times = []
            for _ in range(args.repeats):  # a fresh server each time: the last one drips on
                with ToolServers({"drip": mcp}, root=Path(tmp)) as servers:
                    servers.connection("drip")  # started before the clock runs
                    times.append(_timed(servers, "drip"))
            print(_row("MCP drip", deadline, times), flush=True)


if __name__ == "__main__":
    main()
