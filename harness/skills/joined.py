"""What ``Agent(mcp_servers=..., skills=...)`` adds to every run (lesson 14), kept here so
the core imports neither package: `Agent` makes a `Joined` only when one of them is given
(and harness.mcp is imported only for servers)."""

from __future__ import annotations

from typing import Any

from ..mechanism import Mechanism
from ..tools import Tool
from . import skills_of


class Joined:
    """An agent's MCP servers and skills: checked when the agent is made, joined to each run."""

    def __init__(self, servers: list[Any], skills: Any = None) -> None:
        if servers:
            from ..mcp import check_servers

            check_servers(servers)
        self.servers = servers
        self.skills = None if skills is None else skills_of(skills)
        self.prefixes = tuple(server.prefix for server in servers)  # the names of their tools

    def mechanisms(self, emit: Any, taken: dict[str, Tool]) -> list[Mechanism]:
        """One run's: the servers' tools (started, or listed again, now) and the skill index."""
        found: list[Mechanism] = []
        if self.servers:
            from ..mcp import ServerTools

            found.append(ServerTools(self.servers, emit, taken=taken))
        if self.skills is not None:
            found.append(self.skills())
        return found

    def close(self) -> None:
        """Stop the servers (they start again if the agent runs again)."""
        for server in self.servers:
            server.close()
