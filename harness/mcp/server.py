"""`MCPServer`: one MCP server, connected through the official SDK's `Client`.

    shop = MCPServer("shop", command="python", args=["tools/shop_server.py"], cwd=root)
    agent = Agent(model, mcp_servers=[shop])      # its tools: mcp__shop__get_order, ...

The SDK is asynchronous; the harness is not. Each server gets one thread with its own
event loop, where the SDK's `Client` lives from `start()` to `close()`. A call from the
run is handed to that loop and waited for here, with the run's clock and cancel:

    run thread:  tool.execute -> server.call(name, args, control) -- waits, checking
                                        |                              cancel / deadline
    server thread (asyncio):     client.call_tool(name, args) -> CallToolResult

A call that outlives the run's deadline, its cancel or the server's ``timeout`` stops
the server at once (its process group is killed): a server that hangs once cannot be
trusted with the next call, and one stopped mid-call must not go on writing. A start
waits at most ``connect_timeout``; a run waits for it within its own clock (ServerTools,
through its door) and, if the run stops first, stops the server (`kill`). Every way
a server can fail (it never starts, crashes, hangs, floods its output) ends as a
`ToolResult` the model reads, or as an ``mcp_server`` event: never as the run's end
(only the run's own deadline or cancel ends it). A stopped server starts again for the
next run.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import os
import shutil
import threading
import time
import weakref
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .. import browser
from ..tools import ToolResult
from ..workspace.process import child_env
from ..workspace.sandbox import Sandbox, contain

TRANSPORTS = ("stdio", "http", "sse")
MAX_TOOLS = 100  # tools taken from one server (a request may hold about 128 in all)
MAX_PAGES = 20  # pages of a tool listing read before giving up on the rest
# A server runs programs the person chose; give it room (Node reserves gigabytes of
# address space it never uses), keep everything else a tool process gets.
SERVER_SANDBOX = Sandbox(memory=64 << 30, processes=1024)
_open: weakref.WeakSet[MCPServer] = weakref.WeakSet()


class MCPServerError(RuntimeError):
    """A server could not be started or listed; the message says why and what to do."""


class MCPServer:
    """An MCP server: a command to start (stdio) or a URL (streamable HTTP, or SSE).

    ``env``: variables the server gets besides the allowlisted ones (process.py): a key
    it needs must be named here. ``cwd``: its working folder (writable in the sandbox;
    default: the harness's own). ``sandbox``: a `Sandbox` for its process, ``False``
    to run it unconfined (a server that must reach your home folder or the network).
    ``tools``: the names to keep (default: all it lists, up to ``max_tools``).
    ``timeout``: seconds one call may take. Use it with ``with`` or call `close()`;
    an `Agent` given it closes it with ``agent.close()``, and nothing outlives Python.
    """

    def __init__(self, name: str, command: str | None = None, args: Iterable[str] = (), *,
                 env: Mapping[str, str] | None = None, cwd: str | Path | None = None,
                 url: str | None = None, headers: Mapping[str, str] | None = None,
                 transport: str | None = None, sandbox: Sandbox | bool = True,
                 tools: Iterable[str] | None = None, max_tools: int = MAX_TOOLS,
                 timeout: float = 60.0, connect_timeout: float = 30.0) -> None:
        from .tools import server_prefix

        self.name, self.prefix = name, server_prefix(name)
        self.transport = transport or ("stdio" if command else "http")
        if self.transport not in TRANSPORTS:
            raise ValueError(f"MCP server {name!r}: transport {self.transport!r} is not one of "
                             f"{TRANSPORTS}")
        if (self.transport == "stdio") != bool(command) or (self.transport != "stdio") != bool(url):
            raise ValueError(f"MCP server {name!r}: give a command (stdio) or a url (http, sse), "
                             "one of the two")
        self.command, self.args = command, [str(a) for a in args]
        self.env, self.headers = dict(env or {}), dict(headers or {})
        self.cwd, self.url = (Path(cwd) if cwd is not None else None), url
        if sandbox is not False and not isinstance(sandbox, (Sandbox, bool)):
            raise TypeError(f"MCP server {name!r}: sandbox is a Sandbox, True or False")
        self.sandbox = SERVER_SANDBOX if sandbox is True else sandbox
        self.keep = None if tools is None else set(tools)
        self.max_tools, self.timeout, self.connect_timeout = max_tools, timeout, connect_timeout
        self.listing: list[Any] = []  # the SDK's Tool objects, as last listed
        self.left_out = 0  # tools listed past max_tools (or past the pages read)
        self.changed = False  # the server said its list changed since it was read
        self.error: str | None = None  # why it is not running, if it is not
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._client: Any = None
        self._process: Any = None
        self._stop: asyncio.Event | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        where = self.url if self.url else " ".join([self.command or "", *self.args])
        return f"MCPServer({self.name!r}, {where!r})"

    def __enter__(self) -> MCPServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive() and self._client is not None

    # -- starting and stopping ------------------------------------------------------

    def start(self) -> MCPServer:
        """Start (or connect to) the server and read its tools; raise `MCPServerError`
        with the reason if it cannot. Does nothing if it is running already."""
        if browser.IN_BROWSER:
            raise MCPServerError("MCP servers need a local install: this browser build "
                                 "cannot start programs or open connections for them")
        with self._lock:
            if self.running:
                return self
            self.close()
            self.error, ready = None, threading.Event()
            self._process = self._loop = self._stop = None  # nothing of a connection before
            self._thread = threading.Thread(target=self._main, args=(ready,), daemon=True,
                                            name=f"mcp-{self.name}")
            self._thread.start()
            if not ready.wait(self.connect_timeout):
                self._kill(f"it did not answer within {self.connect_timeout:g} s")
                self._join(2)
            if not self.running:
                boxed = (" It ran in the sandbox (no network, an empty home folder, a /tmp of "
                         "its own); if it needs more, start it with sandbox=False (\"sandbox\": "
                         "false in .mcp.json)." if self.sandbox and self.command else "")
                raise MCPServerError(f"MCP server {self.name!r} could not be started: "
                                     f"{self.error or 'it did not answer'}.{boxed}")
            _open.add(self)
            return self

    def close(self) -> None:
        """Stop the server (a stdio server's process ends); it may be started again."""
        thread, loop, stop = self._thread, self._loop, self._stop
        if thread is None:
            return
        if thread is threading.current_thread():  # from the server's own loop: ask only
            self._kill("it was closed")
            return
        if loop is not None and stop is not None and thread.is_alive():
            try:
                loop.call_soon_threadsafe(stop.set)
            except RuntimeError:  # the loop closed already
                pass
            thread.join(3)
        if thread.is_alive():
            self._kill("it did not stop when asked")
            thread.join(2)
        self._thread = self._client = None
        _open.discard(self)

    def kill(self, why: str) -> None:
        """Stop it now, from any thread, without waiting: a start or a call the run gave
        up on (a stdio server's process group is killed). ``why`` becomes its error."""
        self._kill(why)

    def _kill(self, why: str) -> None:
        self.error = self.error or f"the harness stopped it: {why}"
        if self._process is not None:
            self._process.kill(why)
        if self._loop is not None and self._stop is not None:
            try:
                self._loop.call_soon_threadsafe(self._stop.set)
            except RuntimeError:
                pass

    def _join(self, seconds: float) -> None:
        if self._thread is not None:
            self._thread.join(seconds)

    # -- the server's thread ------------------------------------------------------------

    def _main(self, ready: threading.Event) -> None:
        try:
            asyncio.run(self._serve(ready))
        except BaseException as exc:
            self.error = self.error or _why(exc, self._process)
        finally:
            self._client = None
            ready.set()

    async def _serve(self, ready: threading.Event) -> None:
        import anyio
        from mcp import Client

        self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
        async with Client(self._transport(), mode="auto",
                          message_handler=self._on_message) as client:
            self.listing, self.left_out = await self._list(client)
            self._client, self.changed = client, False
            ready.set()
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(self._watch, client)
                await self._stop.wait()
                tasks.cancel_scope.cancel()
        if self._process is not None and self._process.why:
            self.error = self.error or f"the harness stopped it: {self._process.why}"

    def _transport(self) -> Any:
        if self.transport == "stdio":
            from .transport import ServerProcess

            argv, cwd = [self.command, *self.args], self.cwd or Path.cwd()
            if self.sandbox:
                shown, writable = server_paths(argv, cwd)
                argv, _ = contain(argv, cwd.resolve(), self.sandbox, shown=shown,
                                  writable=writable)
            elif shutil.which(argv[0]):
                argv[0] = shutil.which(argv[0]) or argv[0]
            self._process = ServerProcess(argv, child_env(self.env), cwd, on_end=self._ended)
            return self._process.open()
        if self.transport == "sse":
            from mcp.client.sse import sse_client

            return sse_client(self.url, headers=self.headers)
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        http = httpx2.AsyncClient(headers=self.headers, timeout=httpx2.Timeout(30, read=300))
        return streamable_http_client(self.url, http_client=http)

    def _ended(self) -> None:
        """The server's output ended (it exited, or was stopped): the session is over."""
        if self._stop is not None:
            self._stop.set()

    async def _watch(self, client: Any) -> None:
        """Hear of a changed tool list: a stream of events from a 2026 server (an older
        one sends a notification instead: `_on_message`)."""
        try:
            async with client.listen(tools_list_changed=True) as events:
                async for _ in events:
                    self.changed = True
        except Exception:
            return

    async def _on_message(self, message: Any) -> None:
        import mcp_types as types

        if isinstance(message, types.ToolListChangedNotification):
            self.changed = True  # read again for the next run, never in the middle of one

    async def _list(self, client: Any) -> tuple[list[Any], int]:
        found, cursor = [], None
        for _ in range(MAX_PAGES):
            page = await client.list_tools(cursor=cursor, cache_mode="refresh")
            found += [t for t in page.tools if self.keep is None or t.name in self.keep]
            cursor = page.next_cursor
            if cursor is None or len(found) > self.max_tools:
                break
        more = len(found) - self.max_tools + (1 if cursor is not None else 0)
        return found[:self.max_tools], max(0, more)

    # -- what a run asks -----------------------------------------------------------------

    def refresh(self) -> bool:
        """Read the tool list again if the server said it changed; True if it was read."""
        if not (self.running and self.changed):
            return False
        listing = self._submit(self._list(self._client)).result(self.connect_timeout)
        self.listing, self.left_out = listing
        self.changed = False
        return True

    def call(self, name: str, arguments: dict, control: Any = None) -> Any:
        """Call one tool; return the SDK's `CallToolResult`, or a `ToolResult` that says
        why there is none (stopped, timed out, the server failed)."""
        if not self.running:
            return ToolResult(False, f"Error: MCP server '{self.name}' is not running "
                                     f"({self.error or 'it was closed'}); its tools come "
                                     "back in the next run.")
        future = self._submit(self._client.call_tool(name, arguments))
        limit = time.monotonic() + self.timeout
        while True:
            try:
                return future.result(timeout=0.05)
            except concurrent.futures.TimeoutError:
                reason = control.stop_reason() if control is not None else None
                if reason or time.monotonic() >= limit:
                    why = (f"the run's {'cancel' if reason == 'cancelled' else 'time limit'}"
                           if reason else f"no answer within {self.timeout:g} s")
                    future.cancel()
                    self._kill(f"a call to {name} was stopped ({why})")
                    self._join(1)
                    return ToolResult(False, f"Stopped: {why}. MCP server '{self.name}' was "
                                             "stopped; it starts again for the next run.")
            except Exception as exc:  # the server failed the call, or died under it
                if not self.running or (self._process and self._process.ended):
                    self._join(1)
                return ToolResult(False, f"Error: MCP server '{self.name}': "
                                         f"{_why(exc, self._process, self.error)}")

    def _submit(self, coroutine: Any) -> concurrent.futures.Future:
        assert self._loop is not None
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop)


def server_paths(argv: list[str], cwd: Path) -> tuple[list[str], list[str]]:
    """What a sandboxed server must see, though the sandbox hides homes and /tmp: its
    program's installation (the folder above its ``bin/``: a venv, a Python, a Node),
    the installation of each file it names (its venv or its ``node_modules``, else its
    folder), read-only; and each folder it names, writable (a git server's repository,
    a file server's root: the person gave it that folder)."""
    shown, writable = [], []
    program = shutil.which(argv[0]) or argv[0]
    for form in {program, os.path.realpath(program)}:
        if os.path.isabs(form) and os.path.basename(os.path.dirname(form)) in ("bin", ".bin"):
            shown.append(os.path.dirname(os.path.dirname(form)))
    for arg in argv[1:]:
        path = Path(arg) if os.path.isabs(arg) else cwd / arg
        if not arg or arg.startswith("-") or not path.exists():
            continue
        if path.is_dir():
            writable.append(str(path))
            continue
        shown.append(str(_installation(path.resolve())))
    return shown, writable


def _installation(file: Path) -> Path:
    """The folder a script belongs to: its ``node_modules``, its venv, else its folder."""
    for folder in file.parents:
        if folder.name == "node_modules" or (folder / "pyvenv.cfg").is_file():
            return folder
    return file.parent


def _why(exc: BaseException, process: Any = None, error: str | None = None) -> str:
    """One line: what went wrong, and what the server last wrote to stderr."""
    while getattr(exc, "exceptions", None):  # an exception group: its first
        exc = exc.exceptions[0]
    text = error or (f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)
    if process is not None:
        if process.why and not error:
            text = f"the harness stopped it: {process.why}"
        tail = process.stderr_tail()
        if tail:
            text += f" (its stderr ends: {' | '.join(tail.splitlines()[-3:])[-300:]})"
    return text


@atexit.register
def _close_all() -> None:
    """Nothing outlives Python: every server still open is stopped at exit."""
    for server in list(_open):
        server.close()

