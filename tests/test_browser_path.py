"""The browser edition's path, under CPython: no thread started, no process started.

A browser tab (JupyterLite, Pyodide) can start neither: ``Thread.start()`` raises
``RuntimeError: can't start new thread`` and ``subprocess`` raises ``OSError`` (errno 138).
The `browser_tab` fixture makes this interpreter the same for the harness: the flag
``harness.browser.IN_BROWSER`` is on, the harness modules that start threads get a
``threading`` whose ``Thread`` and ``Timer`` refuse to start, and ``subprocess.Popen``
refuses to run. Each test then checks that a run still does what it says: deadlines and
cancel between steps and chunks, a panel that redraws as it goes, a tool that would run a
program answering with a sentence the model can read.
"""

from __future__ import annotations

import importlib
import subprocess
import threading
import time
import types

import pytest

from harness import Agent, ScriptedModel, say, tool, tool_call
from harness import browser
from harness.ui.throttle import Throttle
from harness.workspace.commands import CommandTool
from harness.workspace.folder import Workspace
from tests.fake_openai import FakeOpenAI, reply, streamed

pytest_plugins = ("tests.fake_openai",)

THREADED = ("harness.waiting", "harness.ui.throttle",
            "harness.live.stream_reader", "harness.workspace.process")
CANNOT = "this browser build cannot run programs"


class _NoThread:
    """A thread a browser tab cannot start (Pyodide's threading, as measured)."""

    started = 0  # how many the harness tried to start: every test expects none

    def __init__(self, *args: object, **kwargs: object) -> None:
        pass

    def start(self) -> None:
        _NoThread.started += 1
        raise RuntimeError("can't start new thread")


NO_THREADS = types.SimpleNamespace(Thread=_NoThread, Timer=_NoThread, Lock=threading.Lock,
                                   RLock=threading.RLock, Event=threading.Event)


def _no_process(*args: object, **kwargs: object) -> None:
    raise OSError(138, "emscripten does not support processes")


def _refuse_threads_and_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    _NoThread.started = 0
    for name in THREADED:
        monkeypatch.setattr(importlib.import_module(name), "threading", NO_THREADS)
    monkeypatch.setattr(subprocess, "Popen", _no_process)


@pytest.fixture
def browser_tab(monkeypatch: pytest.MonkeyPatch):
    """This interpreter, as a browser tab: the flag on, no threads, no processes."""
    _refuse_threads_and_processes(monkeypatch)
    monkeypatch.setattr(browser, "IN_BROWSER", True)
    yield
    assert _NoThread.started == 0, "the harness tried to start a thread"


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def test_without_the_browser_path_a_deadline_would_need_a_thread(monkeypatch):
    # The check itself: with threads refused but the flag off, the old path fails.
    _refuse_threads_and_processes(monkeypatch)
    model = ScriptedModel([say("Hello.")])
    with pytest.raises(RuntimeError, match="can't start new thread"):
        Agent(model, max_seconds=30).run("Hi", cancel=threading.Event())


def test_a_run_with_a_deadline_and_a_cancel_completes_without_a_thread(browser_tab):
    model = ScriptedModel([tool_call("add", a=2, b=3), say("5")])
    result = Agent(model, [add], max_seconds=30).run("2 + 3?", cancel=threading.Event())
    assert (result.outcome, result.final) == ("completed", "5")


def test_cancel_is_seen_between_steps(browser_tab):
    cancel = threading.Event()

    @tool
    def press_stop() -> str:
        """Press the stop button."""
        cancel.set()
        return "pressed"

    model = ScriptedModel([tool_call("press_stop"), say("never sent")])
    result = Agent(model, [press_stop]).run("Stop", cancel=cancel)
    assert result.outcome == "cancelled"
    assert len(model.requests) == 1  # the second request was never sent


def test_a_deadline_is_seen_between_steps(browser_tab):
    @tool
    def slow() -> str:
        """Take a while."""
        time.sleep(0.3)
        return "done"

    model = ScriptedModel([tool_call("slow"), say("never sent")])
    result = Agent(model, [slow], max_seconds=0.2).run("Go")
    assert result.outcome == "time_limit"
    assert len(model.requests) == 1


def test_a_result_is_turned_into_text_inline_within_a_deadline(browser_tab):
    @tool
    def listing() -> list:
        """A structured result (converted by its own code, usually in a thread)."""
        return [{"name": "a.txt", "size": 3}]

    model = ScriptedModel([tool_call("listing"), lambda messages: say(messages[-1]["content"])])
    result = Agent(model, [listing], max_seconds=30).run("List")
    assert result.final == '[{"name": "a.txt", "size": 3}]'


def test_the_throttle_draws_the_last_change_at_the_next_request_or_the_flush(browser_tab):
    draws = []
    throttle = Throttle(lambda: draws.append(time.monotonic()), interval=0.05)
    throttle.request()  # quiet before: drawn at once
    throttle.request()  # within the interval: no timer to draw it later
    assert len(draws) == 1
    time.sleep(0.06)
    throttle.request()  # the interval is up: drawn (with the change before it)
    throttle.request()
    assert len(draws) == 2
    throttle.flush()  # the run's end: the last change is drawn
    assert len(draws) == 3


def test_the_plan_panel_redraws_during_a_run_not_only_at_its_end(browser_tab):
    pytest.importorskip("ipywidgets")
    from harness.ui.widget import PlanPanel

    panel, seen = PlanPanel(interval=0.0), []
    plan = [{"content": "Add", "status": "in_progress"}]
    done = [{"content": "Add", "status": "completed"}]

    def look(messages: list) -> dict:  # what the widget showed while the run was going
        seen.append((panel.header.value, panel.plan.value))
        return tool_call("todo_write", todos=done)

    model = ScriptedModel([tool_call("todo_write", todos=plan), look, say("Done.")])
    Agent(model, planning=True, observers=[panel.on_event]).run("Plan it")
    header, items = seen[0]
    assert "running" in header and "Add" in items  # drawn mid-run, not only at the end
    assert "completed" in panel.header.value


def test_run_shell_answers_that_the_browser_cannot_run_programs(browser_tab, tmp_path):
    workspace = Workspace(tmp_path)
    model = ScriptedModel([tool_call("run_shell", command="echo hi"),
                           lambda messages: say(messages[-1]["content"])])
    result = Agent(model, workspace.tools).run("Say hi")
    [event] = [e for e in result.events if e.type == "tool_result"]
    assert not event.ok
    assert CANNOT in event.output and "Traceback" not in event.output
    assert result.outcome == "completed"  # the model read it, and answered


def test_a_command_template_answers_the_same(browser_tab, tmp_path):
    lookup = CommandTool("lookup", "Look up a record.", template="python lookup.py {id}",
                         params={"id": "the record id"}, cwd=tmp_path)
    result = lookup.execute(lookup.parse('{"id": "ORD-1"}'))
    assert not result.ok and CANNOT in result.output


def test_file_tools_still_work(browser_tab, tmp_path):
    workspace = Workspace(tmp_path)
    workspace.write_file("notes.txt", "hello")
    assert workspace.read_file("notes.txt") == "hello"


def test_the_sandbox_line_says_no_programs_run_here(browser_tab):
    from harness.workspace.sandbox import status

    assert "a browser tab runs no programs" in status()


def _model(server: FakeOpenAI):
    from harness import OpenAIModel

    return OpenAIModel("m", base_url=server.base_url, api_key="sk-test-browser-0123456789",
                       max_retries=0)


def test_a_streamed_reply_is_read_inline_chunk_by_chunk(browser_tab):
    deltas = []
    with FakeOpenAI([streamed(reply(content="The sum is five."))]) as server:
        result = Agent(_model(server), max_seconds=30,
                       observers=[lambda e: e.type == "model_delta" and deltas.append(e.text)]
                       ).run("2 + 3?", cancel=threading.Event())
    assert result.final == "The sum is five."
    assert deltas == ["The ", "sum ", "is ", "five."]


def test_cancel_stops_a_stream_between_its_chunks(browser_tab):
    cancel = threading.Event()

    def press(event) -> None:
        if event.type == "model_delta" and event.text == "word2 ":
            cancel.set()

    words = " ".join(f"word{i}" for i in range(50))
    with FakeOpenAI([streamed(reply(content=words))]) as server:
        model = _model(server)
        result = Agent(model, observers=[press]).run("Count", cancel=cancel)
    assert result.outcome == "cancelled"
    assert model.partial.content.startswith("word0 word1 word2")
    assert len(model.partial.content) < len(words) // 2


def test_doctor_reports_the_browser_edition(browser_tab, capsys):
    from harness.ui.doctor import doctor

    report = doctor()
    out = capsys.readouterr().out
    assert report["browser"] is True
    assert "browser edition" in out and "MISSING" not in out
    assert "a browser tab runs no programs" in out


def test_openai_model_makes_its_client_without_httpx2s_browser_warning(monkeypatch):
    """In the browser edition httpx2 warns that its transport options are ignored (the
    browser pools connections itself): lesson 12 printed it to stderr."""
    import warnings

    import httpx2

    from harness import OpenAIModel

    real = httpx2.HTTPTransport.__init__

    def warning_init(self, *args, **kwargs):
        warnings.warn("The following transport option(s) are not supported on Emscripten "
                      "and will be ignored: limits.", UserWarning, stacklevel=2)
        real(self, *args, **kwargs)

    monkeypatch.setattr(httpx2.HTTPTransport, "__init__", warning_init)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        OpenAIModel("m", base_url="http://localhost:11434/v1")
