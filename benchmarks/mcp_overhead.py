"""What the harness adds to a call to an MCP tool.

The shop's stdio server (the sample workspace's tools/shop_server.py), its read-only
``get_order``, called many times in one run of this script:

    floor     the SDK's own ``Client.call_tool``, awaited in its event loop
    harness   the same call down the harness's call path, from the ``tool_call`` event
              to the ``tool_result`` event: lookup, the schema check, hooks and
              permissions, the hop to the server's thread and back, the result as text

    python benchmarks/mcp_overhead.py [--calls 50] [--rounds 12]

Target (issue 19): the harness at most 1.2x the floor (medians, floor and harness
alternating). Also printed: where the rest goes (the thread hop alone, measured with
``MCPServer.call``), and a whole loop round (model request included) for scale.
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
ARGS = {"order_id": "ORD-1002"}


class Floor:
    """The SDK's own Client on the same server, in an event loop of this thread, held
    open between batches (so floor and harness batches can alternate)."""

    def __init__(self, root) -> None:
        from mcp import Client, StdioServerParameters

        self.params = StdioServerParameters(command=sys.executable,
                                            args=["tools/shop_server.py"], cwd=str(root))
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
                result = await self.client.call_tool("get_order", ARGS)
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

    script = [tool_call("mcp__shop__get_order", ARGS) for _ in range(calls + 10)] + [say("ok")]
    agent = Agent(ScriptedModel(script), mcp_servers=[server], observers=[clock],
                  permissions=Permissions({"mcp__shop__get_order": "allow"}),
                  max_turns=calls + 20, max_requests=None, max_tool_calls=None)
    result = agent.run("Look up the order, again and again.")
    if result.outcome != "completed" or not all(
            e.status == "ok" for e in result.events if e.type == "tool_result"):
        raise RuntimeError(f"the benchmark run went wrong: {result!r}")
    return path[10:], [b - a for a, b in pairwise(rounds[10:])]


def hop_calls(server: MCPServer, calls: int) -> list[float]:
    """``MCPServer.call`` alone: the SDK call plus the hop between threads."""
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        server.call("get_order", ARGS)
        times.append(time.perf_counter() - started)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=50, help="calls in one batch")
    parser.add_argument("--rounds", type=int, default=12, help="batches of each")
    options = parser.parse_args()
    ws = Workspace.sample()
    floor, path, hop, whole = [], [], [], []
    sdk = Floor(ws.root)
    with MCPServer("shop", sys.executable, ["tools/shop_server.py"], cwd=ws.root) as server:
        sdk.calls(10), hop_calls(server, 10)  # warm up both
        for _ in range(options.rounds):  # alternate: a noisy moment hits both
            floor += sdk.calls(options.calls)
            calls, rounds = harness_calls(server, options.calls)
            path += calls
            whole += rounds
            hop += hop_calls(server, options.calls)
    sdk.close()
    ms = {name: statistics.median(values) * 1000 for name, values in
          (("floor", floor), ("path", path), ("hop", hop), ("whole", whole))}
    ratio = ms["path"] / ms["floor"]
    print(f"{options.rounds} batches of {options.calls} calls each of get_order on the "
          "shop's stdio server, alternating (medians)")
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
