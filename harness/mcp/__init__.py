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

The model gets a server's tools only: its resources and prompts are the person's to use
(offers.py: ``server.list_resources()``, ``read_resource(uri)``, ``list_prompts()``,
``get_prompt(name, arguments)``). ``agent.close()`` stops an agent's servers; an agent
dropped without it (a notebook cell run again) stops those no other agent uses when it is
collected, and at exit every server stops.

Like every extension it uses nothing but its run's door (door.py): starting a server
and reading its list happen within the run's clock (a server that hangs at its start
cannot hold a run past ``max_seconds`` or its cancel: it is stopped, and the run ends),
and the ``mcp_server`` events go out through ``door.emit``.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..extend import Extension, register
from ..mechanism import Mechanism
from ..outcomes import RunOver
from ..stack import Layer
from ..tools import Tool
from .config import load_mcp_config, servers_from
from .server import MCPServer, MCPServerError
from .tools import MCPTool, result_text, tools_of

__all__ = ["MCPServer", "MCPServerError", "MCPTool", "ServerTools", "check_servers",
           "load_mcp_config", "result_text", "servers_from"]
_users: weakref.WeakKeyDictionary[MCPServer, int] = weakref.WeakKeyDictionary()  # its agents


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
    """The run's tools from its servers, read once when the run starts, within the run's
    clock. What happened to each server (started, changed, failed) is an ``mcp_server``
    event, recorded before the run's first request; a run that stopped while a server
    started (its deadline, its cancel) ends there."""

    def __init__(self, servers: Iterable[MCPServer], door: Any, taken: Iterable[str] = ()) -> None:
        self.door = door  # the run sets it again; starting the servers needs it now
        self.pending: list[dict] = []
        self.made: list[Tool] = []
        self.over: RunOver | None = None  # the run stopped while a server was starting
        taken = set(taken)
        for server in servers:
            if self.over is None:
                self.made += self._join(server, taken)

    def _join(self, server: MCPServer, taken: set[str]) -> list[Tool]:
        before = {t.name for t in server.listing}
        fresh = not server.running
        try:
            changed = self.door.within_clock(lambda: _ready(server, fresh))
        except RunOver as over:  # out of time or cancelled: the server must not linger
            self.over = over
            server.kill(f"the run stopped ({over.outcome}) while it was starting")
            return self._failed(server, f"the run stopped ({over.outcome}) before it was "
                                        "ready; the harness stopped it")
        except Exception as exc:
            return self._failed(server, str(exc))
        made, left = tools_of(server, taken)
        taken.update(t.name for t in made)
        now = {t.name for t in server.listing}
        if fresh or changed or left:
            status = "started" if fresh else "changed" if changed else "listed"
            offers = server.offers if fresh else {}  # resources, prompts: the person's
            self.pending.append(dict(server=server.name, status=status,
                                     tools=[t.name for t in made], left_out=left,
                                     added=sorted(now - before) if changed else [],
                                     removed=sorted(before - now) if changed else [],
                                     **{k: n for k, n in offers.items() if n}))
        return made

    def _failed(self, server: MCPServer, error: str) -> list[Tool]:
        self.pending.append(dict(server=server.name, status="failed", tools=[],
                                 error=error[:1500]))
        return []

    def tools(self) -> list[Tool]:
        return self.made

    def before_request(self, messages: list[dict]) -> list[dict]:
        while self.pending:  # after run_start, before the first request
            self.door.emit("mcp_server", **self.pending.pop(0))
        if self.over is not None:
            raise self.over
        return messages


def _ready(server: MCPServer, fresh: bool) -> bool:
    """Start ``server`` if it is not running, and read its list again if it changed
    (True if it was read again). Its own waits are bounded too (``connect_timeout``)."""
    if fresh:
        server.start()
    return server.refresh()


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
        return None if door.depth else ServerTools(servers, door, taken=agent.tools)

    for server in servers:
        _users[server] = _users.get(server, 0) + 1
    dropped = weakref.finalize(agent, _dropped, servers)  # holds the servers, not the agent
    dropped.atexit = False  # at exit, every server stops anyway (server.py)

    def close() -> None:
        if dropped.detach():
            _release(servers)
        for server in servers:
            server.close()
    return Layer("mcp", make, order=30, later=tuple(s.prefix for s in servers), close=close)


def _release(servers: list[MCPServer]) -> list[MCPServer]:
    """One agent no longer uses ``servers``: those no other agent uses."""
    unused = []
    for server in servers:
        _users[server] = _users.get(server, 1) - 1
        if _users[server] <= 0:
            unused.append(server)
    return unused


def _dropped(servers: list[MCPServer]) -> None:
    """An agent was collected without ``close()`` (a notebook cell run again): the
    servers no other agent uses stop, at once and without waiting (the collector may
    run this in any thread, the server's own too)."""
    for server in _release(servers):
        if server.running:
            server.kill("its Agent was dropped without close()")


register(Extension("mcp", settings=MCPSettings, layer=servers_layer, events={
    "mcp_server": "server, status (started, changed, listed, failed), tools, left_out, "
                  "added, removed, error, resources, prompts"}))
