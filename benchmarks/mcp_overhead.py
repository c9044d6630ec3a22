"""What the harness adds to a call to an MCP tool.

Two stdio servers, one fast tool each, called many times in one run of this script: the
shop's (the sample workspace's tools/shop_server.py, ``get_order``) and one nobody here
wrote, ``mcp-server-time`` from PyPI (``get_current_time``):

    floor     the SDK's own ``Client.call_tool``, awaited in its event loop
    harness   the same call down the harness's call path, from the ``tool_call`` event
              to the ``tool_result`` event: lookup, the schema check, hooks and
              permissions, the hop to the server's thread and back, the result as text

    python benchmarks/mcp_overhead.py [--calls 50] [--rounds 12] [--server shop|time|all]

Target (issues 19 and 29): the harness at most 1.2x the floor, on each server (medians,
floor and harness alternating). Also printed: where the rest goes (the thread hop alone,
measured with ``MCPServer.call``), and a whole loop round (model request included).
Prints PASS or FAIL; exits 0 either way.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from itertools import pairwise

from harness import Agent, Permissions, ScriptedModel, Workspace, say, tool_call
from harness.mcp import MCPServer

TARGET = 1.2
# name -> (argv after python, the tool, its arguments)
SERVERS = {"shop": (["tools/shop_server.py"], "get_order", {"order_id": "ORD-1002"}),
           "time": (["-m", "mcp_server_time", "--local-timezone", "UTC"], "get_current_time",
                    {"timezone": "Europe/Paris"})}


class Floor:
    """The SDK's own Client on the same server, in an event loop of this thread, held
    open between batches (so floor and harness batches can alternate)."""

    def __init__(self, root, name: str) -> None:
        from mcp import Client, StdioServerParameters

        argv, self.tool, self.args = SERVERS[name]
        self.params = StdioServerParameters(command=sys.executable, args=argv, cwd=str(root))
        self.Client, self.loop = Client, asyncio.new_event_loop()
        self.ready, self.client = None, None
        self.holder = self.loop.create_task(self.hold())
        self.loop.run_until_complete(self.ready_event())

    async def ready_event(self) -> None:
        while self.client is None:
            await asyncio.sleep(0.01)

    async def hold(self) -> None:
        self.stop = asyncio.Event()
        async with self.Client(self.params) as client:
            await client.list_tools()
            self.client = client
            await self.stop.wait()

    def calls(self, n: int) -> list[float]:
        async def batch() -> list[float]:
            times = []
            for _ in range(n):
                started = time.perf_counter()
                result = await self.client.call_tool(self.tool, self.args)
                times.append(time.perf_counter() - started)
                assert not result.is_error
            return times

        return self.loop.run_until_complete(batch())

    def close(self) -> None:
        self.stop.set()
        self.loop.run_until_complete(self.holder)
        self.loop.close()


def harness_calls(server: MCPServer, calls: int) -> tuple[list[float], list[float]]:
    """The call path, event to event; and each whole round (request included)."""
    opened, path, rounds = {}, [], []

    def clock(event):
        now = time.perf_counter()
        if event.type == "tool_call":
            opened[event.call_id] = now
        elif event.type == "tool_result":
            path.append(now - opened.pop(event.call_id))
        elif event.type == "model_request":
            rounds.append(now)

    _, tool, args = SERVERS[server.name]
    name = f"mcp__{server.name}__{tool}"
    script = [tool_call(name, args) for _ in range(calls + 10)] + [say("ok")]
    agent = Agent(ScriptedModel(script), mcp_servers=[server], observers=[clock],
                  permissions=Permissions({name: "allow"}),
                  max_turns=calls + 20, max_requests=None, max_tool_calls=None)
    result = agent.run("Look up the order, again and again.")
    if result.outcome != "completed" or not all(
            e.status == "ok" for e in result.events if e.type == "tool_result"):
        raise RuntimeError(f"the benchmark run went wrong: {result!r}")
    return path[10:], [b - a for a, b in pairwise(rounds[10:])]


def hop_calls(server: MCPServer, calls: int) -> list[float]:
    """``MCPServer.call`` alone: the SDK call plus the hop between threads."""
    _, tool, args = SERVERS[server.name]
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        server.call(tool, args)
        times.append(time.perf_counter() - started)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=50, help="calls in one batch")
    parser.add_argument("--rounds", type=int, default=12, help="batches of each")
    parser.add_argument("--server", choices=[*SERVERS, "all"], default="all")
    options = parser.parse_args()
    for name in SERVERS if options.server == "all" else [options.server]:
        measure(name, options.calls, options.rounds)


def measure(name: str, batch: int, batches: int) -> None:
    ws = Workspace.sample()
    floor, path, hop, whole = [], [], [], []
    sdk = Floor(ws.root, name)
    argv, tool, _ = SERVERS[name]
    with MCPServer(name, sys.executable, argv, cwd=ws.root) as server:
        sdk.calls(10), hop_calls(server, 10)  # warm up both
        for _ in range(batches):  # alternate: a noisy moment hits both
            floor += sdk.calls(batch)
            calls, rounds = harness_calls(server, batch)
            path += calls
            whole += rounds
            hop += hop_calls(server, batch)
    sdk.close()
    ms = {key: statistics.median(values) * 1000 for key, values in
          (("floor", floor), ("path", path), ("hop", hop), ("whole", whole))}
    ratio = ms["path"] / ms["floor"]
    print(f"{batches} batches of {batch} calls each of {tool} on the {name} stdio server, "
          "alternating (medians)")
    print(f"  floor: the SDK's Client.call_tool        {ms['floor']:.3f} ms")
    print(f"  harness: tool_call -> tool_result        {ms['path']:.3f} ms  "
          f"= {ratio:.2f}x the floor (target at most {TARGET}x): "
          f"{'PASS' if ratio <= TARGET else 'FAIL'}")
    print("where the rest goes:")
    print(f"  MCPServer.call (SDK call + thread hop)    {ms['hop']:.3f} ms  "
          f"(+{ms['hop'] - ms['floor']:.3f} ms over the floor)")
    print(f"  the call path around it                   {ms['path'] - ms['hop']:.3f} ms "
          "(schema check, events, hooks, permissions, result text)")
    print(f"  a whole loop round, for scale             {ms['whole']:.3f} ms "
          "(the scripted model's request included)")


if __name__ == "__main__":
    main()
