"""The harness in a terminal (``python -m harness``).

    python -m harness demo [--save run.json]   offline: scripted model, real tools
    python -m harness run "task" [--save F]    the live model from HARNESS_MODEL & co.
    python -m harness replay run.json          re-run a saved run offline, tools for real
    python -m harness doctor [--live]          what is installed, which model is set;
                                               --live: what the endpoint can do

The demo is the counterpart of the AgentHub article's ``-demo``: the moves are scripted
(plan, search the sample workspace's policies, update the plan, answer), every tool
really runs, and the answer is built only from what the search returned, naming its
source. If the search finds no policy, the answer says the information is missing.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator

from ..agent import Agent
from ..durable.calllog import CallLog
from ..events import Event
from ..hooks import Permissions
from ..live.openai_model import OpenAIModel
from ..result import RunResult
from ..scripted import ScriptedModel, say, tool_call
from ..todo import TodoItem, progress, render
from ..workspace.folder import Workspace
from .approval import ask_on_stdin
from .display import escape, format_event
from .doctor import doctor

DEMO_TASK = ("A customer opened their in-ear headphones ten days ago and wants to return "
             "them. Can they? Answer from our policies and cite the source.")
DEMO_QUERY = "return opened in-ear headphones"
PLAN = ["Find the return rule for opened in-ear headphones in the policies",
        "Draft the answer from the passage found and check it cites its source"]


def _plan_step(*statuses: str) -> dict:
    todos = [{"content": c, "status": s} for c, s in zip(PLAN, statuses, strict=True)]
    return tool_call("todo_write", todos=todos)


def _search_output(messages: list[dict]) -> str:
    """The text search_docs really returned in this run (the model reads the same)."""
    ids = {c["id"] for m in messages if m["role"] == "assistant"
           for c in m.get("tool_calls") or () if c["function"]["name"] == "search_docs"}
    return next(m["content"] for m in messages if m.get("tool_call_id") in ids)


def _answer(messages: list[dict]) -> dict:
    """The final answer, built only from the best policy passage the search returned."""
    policies = [passage for passage in _search_output(messages).split("\n\n")
                if passage.startswith("docs/policies/")]  # an order record is no policy
    if not policies:
        return say("I could not find a return rule for opened headphones in our policies, "
                   "so I cannot answer from them: the information is missing.")
    source, _, passage = policies[0].partition("\n")
    path, _, line = source.rpartition(":")
    quoted = "\n".join(f"> {text}" for text in passage.strip().splitlines())
    return say(f"Our return policy covers this case ({path}, line {line}):\n\n"
               f"{quoted}\n\nSource: {path}")


def demo_script() -> list:
    """The scripted model's moves. Only the moves: every result comes from real tools."""
    return [
        _plan_step("in_progress", "pending"),
        tool_call("search_docs", query=DEMO_QUERY),
        _plan_step("completed", "in_progress"),
        _plan_step("completed", "completed"),
        _answer,
    ]


def print_event(event: Event, out: Callable[[str], None] = print) -> None:
    """As the run goes: each tool call with its arguments, each plan in full, and the
    panel's one-line summary of everything else worth seeing. Every line is escaped:
    nothing a model, a tool or a saved run wrote is obeyed by the terminal."""
    for line in _lines(event):
        out(escape(line, lines=True))


def _lines(event: Event) -> Iterator[str]:
    pad = "  " * event.depth
    if event.type == "run_start":
        task = f"\n{pad}      ".join(escape(line) for line in event.task.splitlines() or [""])
        yield f"{pad}task: {task}"
    elif event.type == "tool_call" and event.tool_name != "todo_write":
        arguments = json.dumps(event.arguments, ensure_ascii=False, default=str)
        call = f"{event.tool_name}({arguments[:120]})"
        yield f"{pad}-> {escape(call)}"  # the model's text is shown, never obeyed
    elif event.type == "plan_update":
        items = [TodoItem(**t) for t in event.todos]
        yield f"{pad}plan ({progress(items)}):"
        yield "\n".join(f"{pad}  {escape(line)}" for line in render(items).splitlines())
    elif event.type == "tool_result" and event.tool_name == "todo_write" and event.ok:
        return  # the plan was just printed in full
    elif event.type != "run_end":
        line = format_event(event)
        if line:
            yield line


class StreamPrinter:
    """`print_event`, plus a streaming model's text as it is written.

    The answer goes out word by word on a line of its own (``model: ...``), the
    reasoning on one before it (``thinking: ...``); the next event starts a new line.
    """

    def __init__(self, write: Callable[[str], object] | None = None) -> None:
        self.write = write or _write
        self.open: str | None = None  # the kind of streamed line being written
        self.answered = False  # some answer text was streamed

    def __call__(self, event: Event) -> None:
        if event.type != "model_delta":
            self.end_line()
            print_event(event, lambda line: self.write(line + "\n"))
            return
        kind = event.data["kind"]
        if kind not in ("text", "reasoning") or not event.data["text"]:
            return
        if kind != self.open:
            self.end_line()
            self.write("  " * event.depth + ("thinking: " if kind == "reasoning" else "model: "))
            self.open = kind
        self.write(escape(event.data["text"], lines=True))
        self.answered = self.answered or kind == "text"

    def end_line(self) -> None:
        if self.open:
            self.write("\n")
            self.open = None


def _write(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def _say(text: str, *, file: object = None) -> None:
    """Print for the CLI: escaped, whatever the text holds (newlines and tabs stay)."""
    print(escape(text, lines=True), file=file or sys.stdout)


def _report(result: RunResult, *, streamed: bool = False) -> None:
    if not streamed:  # a streamed answer has just been printed as it was written
        _say(f"\nanswer:\n{result.final}" if result.final else "\n(no answer)")
    usage = result.usage
    est = " (estimated)" if usage["estimated"] else ""
    _say(f"\noutcome: {result.outcome} after {result.turns} model requests; "
         f"{usage['total_tokens']} tokens{est}")
    if result.error:
        _say(f"error: {result.error}")


def _agent(model: object, workspace: Workspace, *, full: bool,
           observer: Callable[[Event], None] = print_event) -> Agent:
    """The demo agent (read-only tools), or the full one used by ``run`` and ``replay``:
    it also forces the first `todo_write` when the task's words ask for steps (lesson 05)."""
    ask = {"write_file": "ask", "edit_file": "ask", "run_shell": "ask"} if full else {}
    rules = {"read_file": "allow", "list_files": "allow", "search_docs": "allow", **ask}
    return Agent(model, workspace.tools, planning=True, subagents=full, max_turns=30,
                 plan_from_words=full,
                 max_seconds=1800 if full else None,  # a live run ends, whatever the server
                 subagent_tools=("read_file", "list_files", "search_docs"),
                 permissions=Permissions(rules, approve=ask_on_stdin),
                 observers=[observer])


def _saved_run(path: str) -> tuple[RunResult, Event]:
    """A saved run and its top agent's run_start event, or `ValueError` saying what is wrong."""
    try:
        saved = RunResult.load(path)
    except (KeyError, TypeError) as exc:
        raise ValueError(f"not a whole saved run ({type(exc).__name__}: {exc})") from None
    start = next((e for e in saved.events if e.type == "run_start" and e.depth == 0), None)
    if start is None:
        raise ValueError("the saved run has no run_start event")
    return saved, start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name, text, first in (("demo", "offline scripted demo", None),
                              ("run", "run a task on the live model", "task"),
                              ("replay", "replay a saved run offline", "path")):
        p = sub.add_parser(name, help=text)
        if first:
            p.add_argument(first)
        p.add_argument("--save", metavar="PATH", help="save the run as JSON (replay it later)")
    sub.add_parser("doctor", help="check the environment").add_argument(
        "--live", action="store_true", help="also ask the configured endpoint what it can do")
    args = parser.parse_args(argv)
    if hasattr(sys.stdout, "reconfigure"):  # a console that cannot show a symbol shows '?'
        sys.stdout.reconfigure(errors="replace")

    if args.command == "doctor":
        doctor(live=args.live)
        return 0
    workspace = Workspace.sample()
    if args.command == "demo":
        _say("Offline demo: the model's moves are scripted; the tools really run.\n")
        model, task, full, log = ScriptedModel(demo_script()), DEMO_TASK, False, None
    elif args.command == "replay":
        try:
            saved, start = _saved_run(args.path)
        except (OSError, ValueError) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            _say(f"Cannot replay {escape(args.path)}: {why}", file=sys.stderr)
            return 2
        _say(f"Replaying {escape(args.path)}: the recorded replies; read-only tools run again "
             "for real, tools with side effects answer from the record.\n")
        model, task, log = ScriptedModel.from_run(saved), start.task, CallLog.from_run(saved)
        full = "delegate_task" in start.get("tools", ["delegate_task"])  # as it was recorded
    else:
        try:
            model = OpenAIModel()
        except ValueError as exc:
            _say(f"Cannot start a live run: {exc}", file=sys.stderr)
            return 2
        _say(f"Live run on {escape(model.model)}; workspace: a fresh copy of the sample "
             "project.\n")
        task, full, log = args.task, True, None
    printer = StreamPrinter()
    result = _agent(model, workspace, full=full, observer=printer).run(task, call_log=log)
    printer.end_line()
    _report(result, streamed=printer.answered)
    if getattr(args, "save", None):
        _say(f"saved: {escape(str(result.save(args.save)))}")
    return 0 if result.outcome in ("completed", "open_items") else 1
