"""Issue 28 (hardening 4), the helper "misc": threads that carry the caller's context,
time limits a busy server cannot escape (doctor --live, a keep-alive stream), the call
log's replay recipe, and the site build's tools pinned with hashes.

Each test names its finding: 11 (site tools), 19 (deadlines), 20 (call log), 21 (context).
"""

from __future__ import annotations

import contextvars
import importlib.util
import re
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from harness import Agent, OpenAIModel, ScriptedModel, browser, say, tool, tool_call
from harness.hooks import Hooks
from harness.models import ModelError
from tests.fake_openai import FakeOpenAI, http_error, reply, slow, streamed

pytest_plugins = ("tests.fake_openai",)

ROOT = Path(__file__).resolve().parent.parent
KEY = "sk-test-hardening4-misc-0123456789"
REQUEST = contextvars.ContextVar("REQUEST", default="unset")  # e.g. a workflow id, a span


# -- a server that keeps the line busy and never answers ---------------------------------------

class BusyServer:
    """A chat-completions server on 127.0.0.1 that never answers: each request gets a 200
    and then only SSE keep-alive comments (``whole=True``: a JSON body of blank lines, as
    DeepSeek sends while it waits), every ``interval`` s, until the client leaves or
    `close` is called. Its handler threads are daemons: closing never waits for them."""

    def __init__(self, *, whole: bool = False, interval: float = 0.05) -> None:
        stop, busy = threading.Event(), b"\n" if whole else b": keep-alive\n\n"
        kind = "application/json" if whole else "text/event-stream"
        self.requests = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                server.requests += 1
                self.rfile.read(int(self.headers.get("content-length") or 0))
                self.send_response(200)
                self.send_header("content-type", kind)
                self.end_headers()
                try:
                    while not stop.is_set():
                        self.wfile.write(busy)
                        self.wfile.flush()
                        stop.wait(interval)
                except OSError:
                    pass  # the client left

            def log_message(self, *args: Any) -> None:
                pass

        self._stop = stop
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._http.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self._http.server_port}/v1"
        threading.Thread(target=self._http.serve_forever, daemon=True).start()

    def close(self) -> None:
        self._stop.set()
        self._http.shutdown()
        self._http.server_close()


@pytest.fixture
def busy() -> Iterator[Callable[..., BusyServer]]:
    servers: list[BusyServer] = []

    def start(**kwargs: Any) -> BusyServer:
        servers.append(BusyServer(**kwargs))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def finished_within(seconds: float, fn: Callable[[], Any]) -> tuple[bool, Any]:
    """Run ``fn`` in a daemon thread; (did it end within ``seconds``, its value or error).
    A call that never ends fails the test instead of hanging it."""
    box: list = []

    def target() -> None:
        try:
            box.append(fn())
        except BaseException as exc:  # handed to the test
            box.append(exc)

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(seconds)
    return not worker.is_alive(), (box[0] if box else None)


def model_for(url: str, **settings: Any) -> OpenAIModel:
    return OpenAIModel("m", base_url=url, api_key=KEY, max_retries=0, settings=settings or None)


# -- 21: every thread the harness starts carries the caller's context -------------------------

class Seen:
    """Where the caller's ContextVar was seen, and with which value."""

    def __init__(self) -> None:
        self.where: dict[str, list[str]] = {}

    def __call__(self, where: str) -> None:
        self.where.setdefault(where, []).append(REQUEST.get())


class Shown:
    """A tool's result whose text is made by its own code (in a thread, within the time left)."""

    def __init__(self, seen: Seen) -> None:
        self.seen = seen

    def __str__(self) -> str:
        self.seen("the result's text")
        return "shown"


def context_run(seen: Seen, **limits: Any) -> Any:
    """A run that meets the ContextVar in a model step, a tool, a tool_call hook and the
    text of a result; ``limits``: ``max_seconds`` or ``cancel``."""
    @tool
    def look() -> Any:
        """Look around."""
        seen("the tool")
        return Shown(seen)

    def step(answer: Any) -> Callable[[list], Any]:
        def run(messages: list) -> Any:
            seen("the model")
            return answer
        return run

    hooks = Hooks()
    hooks.on("tool_call", lambda event: seen("the tool_call hook"))
    model = ScriptedModel([step(tool_call("look")), step(say("done"))])
    cancel = limits.pop("cancel", None)
    agent = Agent(model, [look], hooks=hooks, **limits)
    return agent.run("Look", **({"cancel": cancel} if cancel is not None else {}))


@pytest.mark.parametrize("limits", [{"max_seconds": 30}, {"cancel": threading.Event()}],
                         ids=["max_seconds", "cancel"])
def test_21_a_context_var_set_by_the_caller_reaches_the_model_the_tool_and_the_hooks(
        limits: dict) -> None:
    seen = Seen()
    token = REQUEST.set("workflow-7")
    try:
        result = context_run(seen, **limits)
    finally:
        REQUEST.reset(token)

    assert result.outcome == "completed", result.error
    assert seen.where == {"the model": ["workflow-7"] * 2, "the tool": ["workflow-7"],
                          "the tool_call hook": ["workflow-7"],
                          "the result's text": ["workflow-7"]}


def test_21_each_run_sees_its_own_callers_context_not_a_neighbours() -> None:
    seen = {name: Seen() for name in ("a", "b")}

    def caller(name: str) -> None:
        REQUEST.set(f"workflow-{name}")
        context_run(seen[name], max_seconds=30)

    threads = [threading.Thread(target=contextvars.copy_context().run, args=(caller, name))
               for name in seen]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)

    for name, where in seen.items():
        assert set(where.where) >= {"the model", "the tool"}
        assert {value for values in where.where.values() for value in values} == \
            {f"workflow-{name}"}


@pytest.mark.parametrize("limits", [{}, {"max_seconds": 30}], ids=["no limit", "max_seconds"])
def test_21_the_stream_readers_thread_carries_the_context_to_the_request(limits: dict) -> None:
    opened: list[str] = []

    class Watched(OpenAIModel):
        def _open(self, request: dict) -> Any:  # runs in the stream reader's thread
            opened.append(REQUEST.get())
            return super()._open(request)

    token = REQUEST.set("span-42")
    try:
        with FakeOpenAI([streamed(reply(content="Hi there."))]) as server:
            model = Watched("m", base_url=server.base_url, api_key=KEY, max_retries=0)
            result = Agent(model, **limits).run("Hi")
    finally:
        REQUEST.reset(token)

    assert result.final == "Hi there."
    assert opened == ["span-42"]


def test_21_an_mcp_call_on_the_servers_own_loop_sees_the_callers_context(tmp_path) -> None:
    """A server's loop thread starts once and outlives runs; each call is handed to it in
    the context of the run that makes it (asyncio's ``call_soon_threadsafe`` copies it:
    a guard, it held before)."""
    import sys

    from harness import Permissions, Workspace
    from harness.mcp import MCPServer

    ws = Workspace.sample(tmp_path / "ws")
    seen: list[str] = []
    with MCPServer("shop", sys.executable, ["tools/shop_server.py"], cwd=ws.root) as shop:
        real = shop._client.call_tool

        async def watched(*args: Any, **kwargs: Any) -> Any:  # runs on the server's loop
            seen.append(REQUEST.get())
            return await real(*args, **kwargs)

        shop._client.call_tool = watched
        for value in ("run-1", "run-2"):
            token = REQUEST.set(value)
            try:
                result = Agent(ScriptedModel([
                    tool_call("mcp__shop__get_order", order_id="ORD-1002"), say("ok")]),
                    mcp_servers=[shop], max_seconds=20,
                    permissions=Permissions({"mcp__shop__get_order": "allow"})).run("look")
            finally:
                REQUEST.reset(token)
            assert result.outcome == "completed"
    assert seen == ["run-1", "run-2"]
    assert REQUEST.get() == "unset"


# -- 19: a busy server cannot hold a request, nor doctor --live --------------------------------

def test_19_doctor_live_ends_by_its_deadline_and_says_it_stopped(
        busy: Callable[..., BusyServer], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture) -> None:
    from harness.live import probe
    from harness.ui.doctor import doctor

    server = busy()
    monkeypatch.setattr(probe, "PROBE_TOTAL_SECONDS", 1.0)  # each request may take 30 s
    monkeypatch.setenv("HARNESS_MODEL", "m")
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.delenv("HARNESS_MODEL_SETTINGS", raising=False)
    started = time.monotonic()
    ended, report = finished_within(6, lambda: doctor(live=True))
    seconds = time.monotonic() - started

    assert ended, "doctor --live was still asking a server that never answers after 6 s"
    assert not isinstance(report, BaseException), report
    assert seconds < 4
    out = capsys.readouterr().out
    assert "stopped: the probe ran out of time" in out
    assert "streaming" in out and "?" in out


ECHOED = reply(tool_calls=[{"id": "c1", "type": "function",
                            "function": {"name": "echo", "arguments": '{"word": "ping"}'}}])


@pytest.mark.parametrize("named, forced", [(ECHOED, "named"),
                                           (http_error(400, "tool_choice: no named tool"),
                                            "required")], ids=["named accepted", "named refused"])
def test_19_the_probe_keeps_what_it_learnt_before_its_deadline(named: Any, forced: str) -> None:
    from harness.live.probe import probe

    with FakeOpenAI([ECHOED, named, slow(5, ECHOED)]) as server:  # "required" never comes
        started = time.monotonic()
        checks, settings = probe(model_for(server.base_url), total=1.0)
        seconds = time.monotonic() - started

    assert seconds < 2.5
    by_name = {check.name: check for check in checks}
    assert by_name["tool calls (auto)"].ok and by_name["named tool_choice"].finished
    assert [check.name for check in checks if not check.finished] == [
        'tool_choice "required"', "streaming", "usage in a stream", "reasoning field"]
    assert "1 s" in by_name["streaming"].note
    assert settings["stream"] is True and settings["stream_usage"] is True  # as they were
    assert settings["forced_tool_choice"] == forced  # never stronger than what was refused


@pytest.mark.parametrize("whole", [False, True], ids=["keep-alive comments", "blank lines"])
def test_19_in_a_browser_tab_a_busy_line_is_cut_by_the_models_limits(
        busy: Callable[..., BusyServer], monkeypatch: pytest.MonkeyPatch, whole: bool) -> None:
    server = busy(whole=whole)
    monkeypatch.setattr(browser, "IN_BROWSER", True)  # read inline, no reader thread
    limit = {"stream": False, "max_reply_seconds": 0.5} if whole else {"max_idle_seconds": 0.5}
    model = model_for(server.base_url, **limit)
    ended, error = finished_within(6, lambda: model.complete(
        [{"role": "user", "content": "Hi"}], []))

    assert ended, "the request was still reading a busy line after 6 s"
    name = "max_reply_seconds" if whole else "max_idle_seconds"
    assert isinstance(error, ModelError) and name in str(error), error


def test_19_in_a_browser_tab_cancel_reaches_a_stream_of_keep_alives(
        busy: Callable[..., BusyServer], monkeypatch: pytest.MonkeyPatch) -> None:
    server = busy()
    monkeypatch.setattr(browser, "IN_BROWSER", True)
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    ended, result = finished_within(6, lambda: Agent(model_for(server.base_url)).run(
        "Hi", cancel=cancel))

    assert ended, "cancel did not reach a request that only receives keep-alives"
    assert result.outcome == "cancelled"


def chunk(delta: dict | None = None, finish: str | None = None, **top: Any) -> dict:
    return {"choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish}], **top}


USAGE = {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}
NAMED_CALL = chunk({"tool_calls": [{"index": 0, "id": "c1", "type": "function",
                                    "function": {"name": "echo", "arguments": ""}}]})
NOTHING_NEW = {
    "the same usage again": ([chunk({"content": "Hi"})], chunk(usage=USAGE)),
    "the same finish_reason again": ([chunk({"content": "Hi"})], chunk({}, "stop")),
    "a tool-call piece without arguments": (
        [NAMED_CALL], chunk({"tool_calls": [{"index": 0, "type": "function",
                                             "function": {"arguments": ""}}]})),
    "a reasoning_details piece without text": (
        [chunk({"reasoning_details": [{"type": "reasoning.text", "index": 0, "text": "Hm"}]})],
        chunk({"reasoning_details": [{"type": "reasoning.text", "index": 0, "text": ""}]})),
}


@pytest.mark.parametrize("first, again", NOTHING_NEW.values(), ids=NOTHING_NEW)
def test_19_chunks_that_carry_nothing_new_are_keep_alives(first: list, again: dict) -> None:
    with FakeOpenAI([streamed(chunks=[*first, *[again] * 400], interval=0.02,
                              done=False)]) as server:
        started = time.monotonic()
        result = Agent(model_for(server.base_url, max_idle_seconds=0.4)).run("Hi")
        seconds = time.monotonic() - started

    assert result.outcome == "model_error" and "max_idle_seconds" in result.error, result.error
    assert seconds < 4


def test_19_a_run_without_a_deadline_still_has_a_keep_alive_limit() -> None:
    from harness.live.settings import ModelSettings

    limits = ModelSettings.resolve({})
    assert limits.max_idle_seconds is not None and limits.max_idle_seconds <= 300
    assert limits.max_reply_seconds is not None


# -- 20: the call log's replay recipe is the API --------------------------------------------

def recipe_in_docstring() -> str:
    """The indented code block of calllog.py's docstring that replays with from_run."""
    from harness.durable import calllog

    blocks = re.findall(r"(?:\n {6}\S.*)+", calllog.__doc__ or "")
    found = [textwrap_dedent(b) for b in blocks if "ScriptedModel.from_run" in b]
    assert found, "calllog.py's docstring shows no ScriptedModel.from_run replay to run"
    return found[0]


def textwrap_dedent(block: str) -> str:
    import textwrap

    return textwrap.dedent(block.strip("\n"))


def test_20_the_call_logs_replay_recipe_runs_and_repeats_no_side_effect(tmp_path: Path) -> None:
    from harness.durable import CallLog

    sent: list[str] = []

    @tool(side_effects=True)
    def send_mail(to: str) -> str:
        """Send a mail (a side effect: never twice)."""
        sent.append(to)
        return f"sent to {to}"

    path = tmp_path / "logs" / "run-42.jsonl"
    path.parent.mkdir()
    script = [tool_call("send_mail", to="ana@example.com"), say("Mail sent.")]
    first = Agent(ScriptedModel(script), [send_mail]).run("the task",
                                                          call_log=CallLog(path))
    assert (first.final, sent) == ("Mail sent.", ["ana@example.com"])

    recipe = recipe_in_docstring().replace('"logs/run-42.jsonl"', repr(str(path)))
    namespace = {"Agent": Agent, "ScriptedModel": ScriptedModel, "CallLog": CallLog,
                 "tools": [send_mail]}
    exec(compile(recipe.replace("Agent(", "replayed = Agent(", 1), "<docstring>", "exec"),
         namespace)

    assert namespace["replayed"].final == "Mail sent."
    assert sent == ["ana@example.com"], "the replay sent the mail again"


def test_20_the_docstring_no_longer_promises_a_replay_from_a_bare_path() -> None:
    from harness.durable import calllog

    assert "from_run(log_path)" not in (calllog.__doc__ or "")
    with pytest.raises(ValueError, match=r"CallLog\(path\)"):
        ScriptedModel.from_run(ROOT / "requirements-site.txt")  # not a saved run: says how


# -- 11: the site build's tools, the whole tree pinned with hashes ---------------------------

PINNED = r"[A-Za-z0-9][A-Za-z0-9._-]*==[A-Za-z0-9.+!-]+( ; .+)?"  # name==version ; marker


def requirement_entries(path: Path) -> list[str]:
    """The requirement lines of a requirements file, continuation lines joined."""
    text = path.read_text().replace("\\\n", " ")
    return [line.strip() for line in text.splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


def test_11_every_site_build_tool_is_pinned_with_its_hashes() -> None:
    entries = requirement_entries(ROOT / "requirements-site.txt")

    assert len(entries) > 50  # the whole tree, not the six asked for
    for entry in entries:
        spec = entry.partition(" --hash")[0].strip()
        assert re.fullmatch(PINNED, spec), f"not pinned as name==version: {entry[:80]}"
        assert re.findall(r"--hash=sha256:[0-9a-f]{64}", entry), f"no sha256 hash: {spec}"


def test_11_the_pins_asked_for_are_the_ones_locked() -> None:
    asked = dict(re.findall(r"^([A-Za-z0-9._-]+)==(\S+)$",
                            (ROOT / "requirements-site.in").read_text(), re.MULTILINE))
    locked = {}
    for entry in requirement_entries(ROOT / "requirements-site.txt"):
        name, version = entry.split(" ")[0].split("==")
        locked.setdefault(re.sub(r"[-_.]+", "-", name).lower(), set()).add(version)

    assert asked
    for name, version in asked.items():
        assert locked.get(re.sub(r"[-_.]+", "-", name).lower()) == {version}, name
    assert "requirements-site.in" in (ROOT / "requirements-site.txt").read_text().split("\n")[1]


def test_11_the_site_build_installs_its_tools_with_require_hashes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = importlib.util.spec_from_file_location("build_site_under_test",
                                                  ROOT / "scripts" / "build_site.py")
    build_site = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build_site)
    commands: list[list[str]] = []

    def run(*argv: object, **kwargs: Any) -> None:
        commands.append([str(a) for a in argv])
        if argv[1:3] == ("-m", "venv"):
            Path(str(argv[3])).mkdir(parents=True)

    monkeypatch.setattr(build_site, "run", run)
    build_site.build_tools(tmp_path)

    install = next(c for c in commands if "install" in c)
    assert "--require-hashes" in install
    assert install[install.index("-r") + 1] == str(ROOT / "requirements-site.txt")
    ci = (ROOT / ".ci" / "run").read_text()
    assert "python scripts/build_site.py" in ci  # CI builds the site, so it installs these so

