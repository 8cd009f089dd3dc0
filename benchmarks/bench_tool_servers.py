"""What a real tool backend costs an episode run (a benchmark, not a test).

Uses the tickets MCP server of the tests (`tests/_tickets_mcp_server.py`, the `mcp`
SDK's `MCPServer` over stdio) and the tests' tickets JSON endpoint (`http.server` on
127.0.0.1 in a thread), and times, through `loragate.episodes.servers.pool.ToolServers`:

- MCP: start (spawn, handshake, tool list) up to the first answered call, one call
  (`get_ticket`) once started, and stop (stdin closed, the server exits);
- HTTP: one call (`POST /tools/get_ticket`);
- the simulator: one simulated call (`get` effect on the record state), for scale.

Prints medians over `--repeats` starts and `--calls` calls each. Usage:

    python benchmarks/bench_tool_servers.py [--repeats 5] [--calls 200]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # tests/_tool_servers.py: the server and the endpoint

from loragate.episodes.definitions import Episode, EpisodeSpec  # noqa: E402
from loragate.episodes.servers.pool import ToolServers  # noqa: E402
from loragate.episodes.simulator import Simulator  # noqa: E402
from loragate.formats.evalset import HttpServerConfig, McpServerConfig, Policy  # noqa: E402
from tests._tool_servers import http_tickets, mcp_server  # noqa: E402

LOOK = {"ticket_id": "T-7"}


def per_call_ms(servers: ToolServers, calls: int) -> float:
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        servers.call("tickets", "get_ticket", LOOK)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def bench_mcp(repeats: int, calls: int, root: Path) -> tuple[float, float, float]:
    """Medians: (start up to the first answer s, one call ms, stop s)."""
    config = McpServerConfig.model_validate(mcp_server())
    starts, per_call, stops = [], [], []
    for _ in range(repeats):
        servers = ToolServers({"tickets": config}, root=root)
        start = time.perf_counter()
        servers.call("tickets", "get_ticket", LOOK)
        starts.append(time.perf_counter() - start)
        per_call.append(per_call_ms(servers, calls))
        start = time.perf_counter()
        servers.close()
        stops.append(time.perf_counter() - start)
    return statistics.median(starts), statistics.median(per_call), statistics.median(stops)


def bench_http(repeats: int, calls: int, root: Path) -> float:
    with http_tickets() as (url, _):
        config = HttpServerConfig(kind="http", url=url)
        with ToolServers({"tickets": config}, root=root) as servers:
            return statistics.median(per_call_ms(servers, calls) for _ in range(repeats))


def bench_simulated(repeats: int, calls: int) -> float:
    spec = EpisodeSpec.model_validate(
        {
            "id": "EP-B",
            "task": [{"role": "user", "content": "Look up T-7."}],
            "tools": ["get_ticket"],
            "state": {"tickets": [{"ticket_id": "T-7", "status": "open"}]},
            "backend": {
                "get_ticket": {
                    "effect": {"op": "get", "table": "tickets", "key": {"ticket_id": "ticket_id"}}
                }
            },
        }
    )
    runs = []
    for _ in range(repeats):
        sim = Simulator(Episode("EP-B", spec), Policy())
        start = time.perf_counter()
        for _ in range(calls):
            sim.call("get_ticket", LOOK, 1)
        runs.append((time.perf_counter() - start) / calls * 1000)
    return statistics.median(runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        start_s, mcp_ms, stop_s = bench_mcp(args.repeats, args.calls, root)
        http_ms = bench_http(args.repeats, args.calls, root)
    sim_ms = bench_simulated(args.repeats, args.calls)
    print(f"mcp over stdio: start to first answer {start_s:.2f} s, stop {stop_s:.2f} s")
    print(
        f"one call (median): mcp {mcp_ms:.2f} ms, http {http_ms:.2f} ms, simulated {sim_ms:.3f} ms"
    )


if __name__ == "__main__":
    main()
