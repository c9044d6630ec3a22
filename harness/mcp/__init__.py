"""Tools from MCP servers (lesson 14), on the official ``mcp`` SDK.

    from harness.mcp import MCPServer, load_mcp_config

    servers = load_mcp_config(".mcp.json")          # Claude Code's format
    agent = Agent(model, tools, mcp_servers=servers, permissions=Permissions(
        {"mcp__shop__get_order": "allow", "mcp__shop__issue_refund": "ask"}))

Each server's tools join every run as ``mcp__<server>__<tool>`` and take the one call
path (permissions by that name: the default still denies, hooks, caps, budget, cancel,
the call log). The list is read when the server starts and fixed for each run; a server
that says its list changed is read again before the next run (an ``mcp_server`` event
says what changed). A server that fails to start or dies leaves the run going without
its tools, and says why. The core of `harness` never imports this package.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..extend import Extension, register
from ..mechanism import Mechanism
from ..stack import Layer
from ..tools import Tool
from .config import load_mcp_config, servers_from
from .server import MCPServer, MCPServerError
from .tools import MCPTool, result_text, tools_of

__all__ = ["MCPServer", "MCPServerError", "MCPTool", "ServerTools", "check_servers",
           "load_mcp_config", "result_text", "servers_from"]


def check_servers(servers: list[Any]) -> None:
    """`Agent(mcp_servers=...)`: MCP servers with names that keep their tools apart."""
    seen: dict[str, str] = {}
    for server in servers:
        if not isinstance(server, MCPServer):
            raise TypeError(f"{server!r} is not an MCPServer (harness.mcp.MCPServer, or "
                            "load_mcp_config(path))")
        if server.prefix in seen:
            raise ValueError(f"MCP servers {seen[server.prefix]!r} and {server.name!r} would "
                             f"both name their tools {server.prefix}...; rename one")
        seen[server.prefix] = server.name


class ServerTools(Mechanism):
    """The run's tools from its servers, read once when the run starts. What happened to
    each server (started, changed, failed) is an ``mcp_server`` event, recorded before
    the run's first request."""

    def __init__(self, servers: Iterable[MCPServer], emit: Any, taken: Iterable[str] = ()) -> None:
        self.emit, self.pending, self.made = emit, [], []
        taken = set(taken)
        for server in servers:
            self.made += self._join(server, taken)

    def _join(self, server: MCPServer, taken: set[str]) -> list[Tool]:
        before = {t.name for t in server.listing}
        fresh = not server.running
        try:
            if fresh:
                server.start()
            changed = server.refresh()
        except Exception as exc:
            self.pending.append(dict(server=server.name, status="failed", tools=[],
                                     error=str(exc)[:500]))
            return []
        made, left = tools_of(server, taken)
        taken.update(t.name for t in made)
        now = {t.name for t in server.listing}
        if fresh or changed or left:
            status = "started" if fresh else "changed" if changed else "listed"
            self.pending.append(dict(server=server.name, status=status,
                                     tools=[t.name for t in made], left_out=left,
                                     added=sorted(now - before) if changed else [],
                                     removed=sorted(before - now) if changed else []))
        return made

    def tools(self) -> list[Tool]:
        return self.made

    def before_request(self, messages: list[dict]) -> list[dict]:
        while self.pending:  # after run_start, before the first request
            self.emit("mcp_server", **self.pending.pop(0))
        return messages


@dataclass(frozen=True)
class MCPSettings:
    """The `Agent` keyword of MCP servers."""

    mcp_servers: Iterable[Any] = ()
    """`MCPServer`s whose tools join every run (lesson 14); `Agent.close()` stops them."""


def servers_layer(agent: Any) -> Layer | None:
    """The servers' tools, for each run of an agent given servers (not of its sub-agents)."""
    servers = list(agent.options["mcp"].mcp_servers)
    if not servers:
        return None
    check_servers(servers)  # checked now, when the agent is made

    def make(door: Any) -> ServerTools | None:
        return None if door.depth else ServerTools(servers, door.emit, taken=agent.tools)

    def close() -> None:
        for server in servers:
            server.close()
    return Layer("mcp", make, order=30, later=tuple(s.prefix for s in servers), close=close)


register(Extension("mcp", settings=MCPSettings, layer=servers_layer, events={
    "mcp_server": "server, status (started, changed, listed, failed), tools, left_out, "
                  "added, removed, error"}))
