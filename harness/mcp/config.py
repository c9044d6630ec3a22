"""`load_mcp_config`: the ``.mcp.json`` a person already has, read as Claude Code reads it.

    {"mcpServers": {
        "shop":   {"command": "python", "args": ["tools/shop_server.py"],
                   "env": {"SHOP_DB": "${SHOP_DB:-data/shop.db}"}},
        "remote": {"type": "http", "url": "https://example.com/mcp",
                   "headers": {"Authorization": "Bearer ${API_TOKEN}"}}}}

``type`` is ``stdio`` (the default with a ``command``), ``http`` (also spelled
``streamable-http``; the default with a ``url``) or ``sse``. ``${VAR}`` and
``${VAR:-default}`` are read from the environment in ``command``, ``args``, ``env``,
``url`` and ``headers``: that is how a key reaches a server, and only the server whose
config names it. A stdio server runs in the config file's folder unless it says ``cwd``.
Fields this harness adds: ``cwd``, ``timeout`` (seconds a call may take), ``tools`` (the
names to keep), ``sandbox`` (``false`` runs the server unconfined), ``read_only``
(``true`` trusts the server's ``readOnlyHint``, or a list of the tools you vouch only
read: a replay runs those again; by default none).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .server import MCPServer

KNOWN = {"type", "command", "args", "env", "url", "headers", "cwd", "timeout", "tools",
         "sandbox", "read_only"}
KINDS = {"stdio": "stdio", "http": "http", "streamable-http": "http",
         "streamable_http": "http", "sse": "sse"}
VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def load_mcp_config(path: str | Path, *, environ: Mapping[str, str] | None = None
                    ) -> list[MCPServer]:
    """The servers of a ``.mcp.json`` file (``{"mcpServers": {name: {...}}}``), not yet
    started. Raises `ValueError` naming the server and the field that is wrong."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(f"no MCP config at {path}") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path.name} is not valid JSON: {exc}") from None
    return servers_from(data, base=path.resolve().parent, environ=environ, source=path.name)


def servers_from(data: Any, *, base: Path | None = None, environ: Mapping[str, str] | None = None,
                 source: str = "the MCP config") -> list[MCPServer]:
    """The same, from the parsed JSON (a dict holding ``mcpServers``)."""
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        raise ValueError(f'{source} has no "mcpServers" object: expected '
                         '{"mcpServers": {"name": {"command": ...} or {"url": ...}}}')
    env = os.environ if environ is None else environ
    return [_server(name, entry, base, env, source) for name, entry in servers.items()]


def _server(name: str, entry: Any, base: Path | None, environ: Mapping[str, str],
            source: str) -> MCPServer:
    where = f"{source}: server {name!r}"
    if not isinstance(entry, dict):
        raise ValueError(f"{where} is not an object")
    unknown = sorted(set(entry) - KNOWN)
    if unknown:
        raise ValueError(f"{where} has unknown fields {unknown}; known: {sorted(KNOWN)}")
    kind = entry.get("type") or ("stdio" if "command" in entry else "http")
    if kind not in KINDS:
        raise ValueError(f"{where}: type {kind!r} is not one of {sorted(KINDS)}")

    def text(value: Any, field: str) -> str:
        if not isinstance(value, str):
            raise ValueError(f"{where}: {field} must be a string, not {type(value).__name__}")
        return expand(value, environ, f"{where}: {field}")

    def table(field: str) -> dict[str, str]:
        value = entry.get(field) or {}
        if not isinstance(value, dict):
            raise ValueError(f"{where}: {field} must be an object of strings")
        return {str(k): text(v, f"{field}.{k}") for k, v in value.items()}

    args = entry.get("args") or []
    if not isinstance(args, list):
        raise ValueError(f"{where}: args must be a list of strings")
    cwd = entry.get("cwd")
    cwd = Path(text(cwd, "cwd")) if cwd is not None else base
    if cwd is not None and base is not None and not cwd.is_absolute():
        cwd = base / cwd
    timeout = entry.get("timeout", 60)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        raise ValueError(f"{where}: timeout must be a positive number of seconds")
    tools = entry.get("tools")
    if tools is not None and not (isinstance(tools, list)
                                  and all(isinstance(t, str) for t in tools)):
        raise ValueError(f"{where}: tools must be a list of tool names")
    sandbox = entry.get("sandbox", True)
    if not isinstance(sandbox, bool):
        raise ValueError(f"{where}: sandbox must be true or false")
    read_only = entry.get("read_only", False)
    if not isinstance(read_only, bool) and not (
            isinstance(read_only, list) and all(isinstance(t, str) for t in read_only)):
        raise ValueError(f"{where}: read_only must be true (trust the server's readOnlyHint), "
                         "false (the default) or a list of the tool names that only read")
    common = dict(tools=tools, timeout=float(timeout), sandbox=sandbox,
                  transport=KINDS[kind], read_only=read_only)
    if KINDS[kind] == "stdio":
        if "command" not in entry:
            raise ValueError(f"{where}: a stdio server needs a command")
        return MCPServer(name, text(entry["command"], "command"),
                         [text(a, f"args[{i}]") for i, a in enumerate(args)],
                         env=table("env"), cwd=cwd, **common)
    if "url" not in entry:
        raise ValueError(f"{where}: an {kind} server needs a url")
    return MCPServer(name, url=text(entry["url"], "url"), headers=table("headers"), **common)


def expand(value: str, environ: Mapping[str, str], where: str) -> str:
    """``${VAR}`` and ``${VAR:-default}`` from the environment; a variable that is not
    set and has no default is an error that names it."""
    def one(match: re.Match) -> str:
        name, default = match.group(1), match.group(2)
        if environ.get(name):  # as in the shell: an empty value takes the default
            return environ[name]
        if default is not None:
            return default
        if name in environ:
            return ""
        raise ValueError(f"{where} uses ${{{name}}}, which is not set; set it, or write "
                         f"${{{name}:-default}}")

    return VARIABLE.sub(one, value)
