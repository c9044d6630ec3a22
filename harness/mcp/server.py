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
the server at once (it and every process it started end: transport.py): a server that
hangs once cannot be trusted with the next call, and one stopped mid-call must not go on
writing. One message from a server is at most 4 MiB, on stdio and HTTP alike (http.py);
its resources and prompts are the person's, through the methods below (offers.py). A start
waits at most ``connect_timeout``; a run waits for it within its own clock (ServerTools,
through its door) and, if the run stops first, stops the server (`kill`). Every way
a server can fail (it never starts, crashes, hangs, floods its output, answers too much)
ends as a `ToolResult` the model reads, or as an ``mcp_server`` event: never as the
run's end (only the run's own deadline or cancel ends it). A stopped server starts again
for the next run.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import os
import re
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
OFFERS_WAIT = 1.0  # seconds a start waits to count the resources and prompts it offers
# A server's sandbox is a tool process's, with room for the programs a person chooses:
# 64 GiB of address space a process (reserved, not held: Node reserves 10 GiB for each
# WebAssembly memory, its own fetch included, and fails under 1 GiB), 1,024 processes
# (threads count too, not as root: a JVM or a browser a server drives starts hundreds)
# and 2 GiB held by its processes together, the watch that bounds its memory.
SERVER_SANDBOX = Sandbox(memory=2 << 30, address_space=64 << 30, processes=1024)
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
    ``read_only``: which tools only read, so a replay runs them again: ``False`` (none,
    whatever the server's ``readOnlyHint`` says), ``True`` (trust that hint) or a list of
    its tool names you vouch for.
    ``timeout``: seconds one call may take. Use it with ``with`` or call `close()`;
    an `Agent` given it closes it with ``agent.close()`` (or when it is collected, if no
    other agent uses it), and nothing outlives Python.
    """

    def __init__(self, name: str, command: str | None = None, args: Iterable[str] = (), *,
                 env: Mapping[str, str] | None = None, cwd: str | Path | None = None,
                 url: str | None = None, headers: Mapping[str, str] | None = None,
                 transport: str | None = None, sandbox: Sandbox | bool = True,
                 tools: Iterable[str] | None = None, max_tools: int = MAX_TOOLS,
                 read_only: bool | Iterable[str] = False,
                 timeout: float = 60.0, connect_timeout: float = 30.0) -> None:
        from .tools import read_only_names, server_prefix

        self.name, self.prefix = name, server_prefix(name)
        self.read_only = read_only_names(read_only, name)  # hints are not trusted unless so
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
        self.offers: dict[str, int | None] = {}  # resources, prompts: how many (offers.py)
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

        from .offers import counts

        self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
        async with Client(self._transport(), mode="auto",
                          message_handler=self._on_message) as client:
            self.listing, self.left_out = await self._list(client)
            self.offers = {}
            with anyio.move_on_after(OFFERS_WAIT):  # for the "started" event only
                self.offers = await counts(client)
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
            from .transport import ServerProcess, reaped

            argv, cwd = [self.command, *self.args], self.cwd or Path.cwd()
            if self.sandbox:
                shown, writable = server_paths(argv, cwd)
                argv, how = contain(argv, cwd.resolve(), self.sandbox, shown=shown,
                                    writable=writable)
            else:  # unconfined, but all it starts ends with it (under the reaper)
                argv, how = reaped(argv)
            self._process = ServerProcess(argv, child_env(self.env), cwd, on_end=self._ended,
                                          reaper=how == "reaper")
            return self._process.open()
        import httpx2

        from . import http  # answers read at most MAX_LINE bytes a message, as on stdio

        if self.transport == "sse":
            from mcp.client.sse import sse_client

            return sse_client(self.url, headers=self.headers, httpx_client_factory=http.client)
        from mcp.client.streamable_http import streamable_http_client

        session = http.client(headers=self.headers, timeout=httpx2.Timeout(30, read=300))
        return streamable_http_client(self.url, http_client=session,
                                      max_sse_event_size=http.MAX_LINE)

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
                if not self.running or (self._process and self._process.ended) or _lost(exc):
                    self._join(1)  # its thread ends: the next run starts it again
                return ToolResult(False, f"Error: MCP server '{self.name}': "
                                         f"{_why(exc, self._process, self.error)}")

    # -- what the person asks (offers.py: the model gets tools only) ----------------------

    def list_resources(self) -> list[Any]:
        """The server's resources (the SDK's `Resource`: ``uri``, ``name``, ``description``,
        ``mime_type``), every page. Starts the server if it is not running; waits at most
        ``timeout``; raises `MCPServerError` if the server cannot answer."""
        from .offers import listing

        return self._ask("resources", "list its resources",
                         lambda client: listing(client, "resources", MAX_PAGES))

    def read_resource(self, uri: str, max_chars: int | None = None) -> str:
        """The text of the resource at ``uri``, at most ``max_chars`` characters (default
        `offers.MAX_RESOURCE`; a binary part is named, not pasted). As `list_resources`."""
        from .offers import MAX_RESOURCE, resource_text

        result = self._ask("resources", f"read {uri}",
                           lambda client: client.read_resource(uri, cache_mode="bypass"))
        return resource_text(result, uri, MAX_RESOURCE if max_chars is None else max_chars)

    def list_prompts(self) -> list[Any]:
        """The server's prompts (the SDK's `Prompt`: ``name``, ``description``,
        ``arguments``), every page. As `list_resources`."""
        from .offers import listing

        return self._ask("prompts", "list its prompts",
                         lambda client: listing(client, "prompts", MAX_PAGES))

    def get_prompt(self, name: str, arguments: Mapping[str, str] | None = None) -> list[dict]:
        """The prompt ``name`` filled with ``arguments``, as wire-format messages
        (``[{"role": "user", "content": "..."}]``). As `list_resources`."""
        from .offers import prompt_messages

        result = self._ask("prompts", f"get its prompt {name!r}",
                           lambda client: client.get_prompt(name, dict(arguments or {})))
        return prompt_messages(result)

    def _ask(self, kind: str, what: str, ask: Any) -> Any:
        """Run ``ask(client)`` on the server's loop, waiting at most ``timeout``; any way it
        fails is an `MCPServerError` that says why."""
        self.start()  # nothing if it is running; MCPServerError if it cannot start
        client, head = self._client, f"MCP server {self.name!r} could not {what}"
        if client is None:
            raise MCPServerError(f"{head}: {self.error or 'it stopped'}")
        if getattr(client.server_capabilities, kind, None) is None:
            raise MCPServerError(f"{head}: it offers no {kind} (its capabilities say so)")
        future = self._submit(ask(client))
        try:
            return future.result(self.timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise MCPServerError(f"{head}: no answer within {self.timeout:g} s") from None
        except Exception as exc:
            if _lost(exc):
                self._join(1)
            raise MCPServerError(f"{head}: {_why(exc, self._process, self.error)}") from None

    def _submit(self, coroutine: Any) -> concurrent.futures.Future:
        """Hand ``coroutine`` to the server's loop. asyncio runs it in the caller's
        context (``call_soon_threadsafe`` copies it): a `ContextVar` set around the run
        (DBOS's workflow, OpenTelemetry's span) is what the call sees."""
        assert self._loop is not None
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop)


def server_paths(argv: list[str], cwd: Path) -> tuple[list[str], list[str]]:
    """What a sandboxed server must see, though the sandbox hides homes and /tmp, shown
    read-only: its program's installation (the folder above its ``bin/``: a venv, a
    Python, a Node) and what runs the program (the interpreter its ``#!`` line names, a
    venv's base Python: pyvenv.cfg's ``home``, as pyenv and uv keep them under a home
    folder), and the installation of each file it names (its venv or its
    ``node_modules``, else its folder). Each folder it names is the person's grant,
    writable whole, ``.git`` included (a git server's ``--repository``, a file server's
    root); a folder that is only its ``cwd`` is not."""
    shown, writable = _needs(shutil.which(argv[0]) or argv[0]), []
    for arg in argv[1:]:
        value = arg.partition("=")[2] if arg.startswith("-") else arg  # --root=/data too
        path = Path(value) if os.path.isabs(value) else cwd / value
        if not value or value.startswith("-") or not path.exists():
            continue
        if path.is_dir():
            writable.append(str(path))
            continue
        installation = _installation(path.resolve())
        shown += [str(installation), *_venv_base(installation)]
    return list(dict.fromkeys(shown)), writable


def _installation(file: Path) -> Path:
    """The folder a script belongs to: its ``node_modules``, its venv, else its folder."""
    for folder in file.parents:
        if folder.name == "node_modules" or (folder / "pyvenv.cfg").is_file():
            return folder
    return file.parent


def _needs(program: str) -> list[str]:
    """The installations ``program`` needs to start: the folder above its ``bin/`` at
    each link it follows, then the same for the interpreter its ``#!`` line names and
    for a venv's base Python (a console script names the venv's python)."""
    found: list[str] = []
    todo, seen = [program], set()
    while todo:
        path = todo.pop()
        if path in seen or not os.path.isabs(path):
            continue
        seen.add(path)
        for form in _links(path):
            if os.path.basename(os.path.dirname(form)) in ("bin", ".bin"):
                found.append(os.path.dirname(os.path.dirname(form)))
                todo += _venv_base(Path(found[-1]), executable=True)
        todo += _interpreter(path)
    return list(dict.fromkeys(found))


def _links(path: str) -> list[str]:
    """``path``, each link it leads through, and where it ends."""
    forms = [os.path.abspath(path)]
    while os.path.islink(forms[-1]) and len(forms) < 40:
        forms.append(os.path.join(os.path.dirname(forms[-1]), os.readlink(forms[-1])))
    return [*forms, os.path.realpath(path)]


def _venv_base(folder: Path, executable: bool = False) -> list[str]:
    """A venv's base Python, from its pyvenv.cfg: the installation above ``home`` (with
    ``executable``, that folder's python instead, to follow like a program)."""
    try:
        config = (folder / "pyvenv.cfg").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    homes = [value.strip() for key, _, value in (line.partition("=") for line in
                                                  config.splitlines())
             if key.strip().lower() == "home" and os.path.isabs(value.strip())]
    if executable:
        return [os.path.join(home, "python") for home in homes]
    return [os.path.dirname(form) if os.path.basename(form) == "bin" else form
            for home in homes for form in (home, os.path.realpath(home))]


def _interpreter(path: str) -> list[str]:
    """The program a script's ``#!`` line names (through ``env``: found on PATH; pip's
    ``#!/bin/sh`` launcher for a long path names it on the next line), if any."""
    try:
        with open(path, "rb") as f:
            lines = f.read(1024).split(b"\n")
    except OSError:
        return []
    if not lines[0].startswith(b"#!"):
        return []
    words = [os.fsdecode(w) for w in lines[0][2:].split()]
    launcher = re.match(rb"'''exec' \"?([^\" ]+)", lines[1]) if len(lines) > 1 else None
    if words and os.path.basename(words[0]) == "sh" and launcher:
        words = [os.fsdecode(launcher.group(1))]
    if words and os.path.basename(words[0]) == "env":
        names = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
        return [shutil.which(names[0]) or names[0]] if names else []
    return words[:1]


def _lost(exc: BaseException) -> bool:
    """The connection is gone (the process exited, a stream broke): not the tool's error."""
    from mcp_types import CONNECTION_CLOSED

    return getattr(exc, "code", None) == CONNECTION_CLOSED


def _why(exc: BaseException, process: Any = None, error: str | None = None) -> str:
    """One line: what went wrong, and the lines of the server's stderr that say why."""
    from .transport import cause

    while getattr(exc, "exceptions", None):  # an exception group: its first
        exc = exc.exceptions[0]
    text = error or (f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)
    if process is not None:
        if process.why and not error:
            text = f"the harness stopped it: {process.why}"
        said = cause(process.stderr_tail())
        if said:
            text += f" (its stderr says: {said})"
    return text


@atexit.register
def _close_all() -> None:
    """Nothing outlives Python: every server still open is stopped at exit."""
    for server in list(_open):
        server.close()

