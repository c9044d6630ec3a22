"""Checks for lesson 07, the whole harness: each one runs the real harness on a scripted model.

`run_with_panel` is the run of exercise 1; the learner can call it too, to look at the
panel's text while fixing the script. Exercise 2 is judged against two runs whose shape
is known: which agent made which tool calls, and which of them were refused or failed.
(Lesson 08's checks read finished runs: `exercises/l08.py`.)
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable
from typing import Any

from course import check
from exercises.plan_progress import check_plan_moved_with_the_work, plan_at_work

from harness import (
    Agent,
    Permissions,
    RunResult,
    ScriptedModel,
    Workspace,
    parallel,
    say,
    tool_call,
)
from harness.events import Event
from harness.ui.panel import PanelState

WARRANTY_TASK = ("Ada Example (order ORD-1001) asks how long her warranty lasts and how to "
                 "claim it. Plan three steps, keep the plan current, save a note in "
                 "notes/ORD-1001.md, and answer with sources.")
ITEM = re.compile(r"^  (\[.\]) (.+)$")  # a plan line of panel.text()
CITATION = re.compile(r"[\w./-]+\.md:\d+")  # a source, as search_docs gives it: path:line
WARRANTY_WORK = [  # the work of each plan item, in order: (what it does, [(tool, path)]);
    # every call of an item is its work (a path of None: any arguments)
    ("look up the order", [("read_file", "data/records/ORD-1001.json")]),
    ("find the warranty rules", [("search_docs", None),
                                 ("read_file", "docs/policies/warranty.md")]),
    ("save the note", [("write_file", "notes/ORD-1001.md")]),
]
POLICY = "docs/policies/warranty.md"  # the source the answer must cite
NOTE = "notes/ORD-1001.md"  # where the note goes


def run_with_panel(steps: list, task: str = WARRANTY_TASK) -> tuple[RunResult, PanelState]:
    """Run ``steps`` with planning on a fresh sample workspace, watched by a text panel.

    ``PanelState`` is the plan panel without the widget: ``panel.text()`` is the same text.
    """
    panel = PanelState()
    with tempfile.TemporaryDirectory() as tmp:
        agent = Agent(ScriptedModel(steps), Workspace.sample(tmp).tools, planning=True,
                      max_turns=20, observers=[panel])
        result = agent.run(task, plan_first=True)
    return result, panel


@check
def check_fixed_script(fixed_script: Callable[[], list]) -> str:
    """Your script, run with the panel: 3 items all [x], every update accepted, completed."""
    steps = fixed_script()
    if not isinstance(steps, list) or not steps:
        raise AssertionError(f"fixed_script() must return a non-empty list of steps, "
                             f"not {steps!r}")
    result, panel = run_with_panel(steps)
    text = panel.text()
    calls = [e for e in result.events if e.type == "tool_call" and e.depth == 0]
    if not calls or calls[0].tool_name != "todo_write":
        raise AssertionError("the first step should be a todo_write call: plan_first=True "
                             "forces it, and a real model would have to obey")
    refused = [e for e in result.events if e.type == "tool_result"
               and e.tool_name == "todo_write" and not e.ok]
    if refused:
        raise AssertionError(f"a plan update was refused ({refused[0].output}); the panel "
                             "log shows it as '✗ todo_write failed'")
    if result.outcome != "completed":
        why = {"open_items": " The model answered twice while the plan had open items: mark "
                             "every item completed with todo_write before the final answer.",
               "model_error": f" {result.error}"}.get(result.outcome, "")
        raise AssertionError(f"the run ended {result.outcome!r}.{why}")
    items = [m.groups() for m in map(ITEM.match, text.splitlines()) if m]
    if len(items) != 3:
        raise AssertionError(f"the panel shows {len(items)} plan items; plan three")
    if any(mark != "[x]" for mark, _ in items) or "Progress: 3/3 done" not in text:
        raise AssertionError(f"not every item is [x] on the panel:\n{text}")
    failed = [e for e in result.events if e.type == "tool_result" and e.depth == 0 and not e.ok]
    if failed:
        raise AssertionError(f"the call to {failed[0].tool_name} failed ({failed[0].output}); "
                             "every step of the work should succeed")
    pushed = [e for e in result.events if e.type == "stop_gate"]
    if pushed:
        raise AssertionError(f"the stop gate pushed back an answer: the model answered while "
                             f"{len(pushed[0].open_items)} plan item(s) were open. Mark every "
                             "item completed with todo_write before the model answers: one "
                             "answer, at the end")
    check_plan_moved_with_the_work(result.events, WARRANTY_WORK)
    _check_all_the_work(result.events)
    _check_note(result.events)
    _check_sources(result.final or "")
    return ("each item was in_progress while its work ran, every plan update was accepted, "
            "the answer cites its source, and the panel shows 3/3 done, every item [x].")


def _check_all_the_work(events: list[Event]) -> None:
    """Every call of each item's work made, while that item (and no other) was in_progress."""
    for i, (what, calls) in enumerate(WARRANTY_WORK):
        found = plan_at_work(events, [(what, [one]) for one in calls])
        for (name, path), (event, plan) in zip(calls, found, strict=True):
            call = f"{name}{f' with path {path!r}' if path else ''}"
            if event is None:
                work = " and ".join(f"{n}{f' {p}' if p else ''}" for n, p in calls)
                raise AssertionError(f"your script never called {call}: the work of item "
                                     f"{i + 1} ({what}) is {work}, every call of it")
            busy = [k + 1 for k, t in enumerate(plan) if t["status"] == "in_progress"]
            if busy != [i + 1]:
                raise AssertionError(
                    f"when you called {call} (to {what}, the work of item {i + 1}), the item "
                    f"in_progress was {busy or 'none'}, not {i + 1}: keep item {i + 1} "
                    "in_progress until every call of its work is made")


def _check_note(events: list[Event]) -> None:
    """The note holds what the work found: the warranty rules, not a placeholder."""
    notes = [e.arguments.get("content") for e in events if e.type == "tool_call"
             and e.depth == 0 and e.tool_name == "write_file"
             and isinstance(e.arguments, dict) and e.arguments.get("path") == NOTE]
    if not any(isinstance(n, str) and "warranty" in n.lower() for n in notes):
        raise AssertionError(f"the note you saved in {NOTE} ({str(notes[-1])[:60]!r}) says "
                             "nothing of the warranty: save what the work found (save_note "
                             "writes the search's result)")


def _check_sources(final: str) -> None:
    """The answer cites the warranty policy, and every path:line it cites is a real line."""
    cited = CITATION.findall(final)
    if not cited:
        raise AssertionError(f"the final answer cites no source: {final!r}. The task says "
                             "\"answer with sources\": end with reply, which quotes the policy "
                             "with its path:line")
    with tempfile.TemporaryDirectory() as tmp:
        root = Workspace.sample(tmp).root
        for source in cited:
            path, line = source.rsplit(":", 1)
            file = root / path
            lines = file.read_text(encoding="utf-8").splitlines() if file.is_file() else []
            if not 1 <= int(line) <= len(lines):
                raise AssertionError(
                    f"the answer cites {source}, which is no line of the shop's files: cite "
                    "the path:line a tool gave (search_docs starts each passage with it), "
                    "never one written by hand")
    if not any(source.startswith(f"{POLICY}:") for source in cited):
        raise AssertionError(f"the answer cites {', '.join(cited)}, but the warranty rules "
                             f"are in {POLICY}: quote that policy, with its path:line")


def _delegating_runs() -> list[tuple[list, dict]]:
    """Two runs with sub-agents, each with calls that were refused or failed: (script,
    Agent settings). Main and sub steps interleave."""
    search = tool_call("search_docs", query="warranty claim", max_results=1)
    read = tool_call("read_file", path="docs/policies/warranty.md")
    one = [search,
           parallel(tool_call("grep", pattern="warranty"),                # unknown tool
                    tool_call("search_docs", query="warranty", limit=2),  # bad arguments
                    tool_call("run_shell", command="cat docs/*"),         # denied
                    tool_call("read_file", path="docs/claims.md")),       # fails: no file
           tool_call("delegate_task", task="Quote how to claim the warranty."),
           search,                                                        # main.sub1
           tool_call("read_file", path="docs/warranty.md"),               # main.sub1: fails
           tool_call("write_file", path="notes/claim.md", content="x"),   # main.sub1: unknown
           read, say("Email warranty@larkspur-audio.example."),           # main.sub1
           tool_call("read_file", path="data/records/ORD-1001.json"), say("Done.")]

    def plan(*statuses: str) -> dict:
        steps = ("Ask about returns", "Ask about shipping")
        return tool_call("todo_write", todos=[{"content": c, "status": s}
                                              for c, s in zip(steps, statuses, strict=True)])

    refunds = "Quote the refund rule in docs/policies/returns.md."
    two = [plan("in_progress", "pending"),
           tool_call("delegate_task", task=refunds),
           read, say("Refunds take 5 business days."),                    # main.sub1
           plan("in_progress", "in_progress"),                            # refused
           plan("completed", "in_progress"),
           tool_call("delegate_task", task="Quote the shipping times in docs/policies/."),
           search, tool_call("list_files", pattern="docs/*"),             # main.sub2
           read, say("3-5 days."),                                        # main.sub2
           tool_call("delegate_task", task=" "),                          # bad arguments
           plan("completed", "completed"), say("Both answered.")]
    settings = {"subagents": True, "subagent_tools": ("read_file", "search_docs", "list_files"),
                "permissions": Permissions({"run_shell": "deny"}, default="allow")}
    return [(one, settings), (two, {**settings, "planning": True})]


def _run_watched(counter: Any, steps: list, settings: dict) -> RunResult:
    """Run with your observer attached. The harness only warns about an observer that
    raises; here the first error is raised again, so the check can report it."""
    errors: list[Exception] = []

    def watch(event: Event) -> None:
        try:
            counter.on_event(event)
        except Exception as exc:
            errors.append(exc)

    with tempfile.TemporaryDirectory() as tmp:
        agent = Agent(ScriptedModel(steps), Workspace.sample(tmp).tools, observers=[watch],
                      **settings)
        result = agent.run("Answer the customer's questions.")
    if errors:
        raise errors[0]
    return result


def _per_agent(events: list[Event], counted: Callable[[Event], bool]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for e in events:
        if counted(e):
            counts[e.agent_id] = counts.get(e.agent_id, 0) + 1
    return counts


COUNTER_MISTAKES = [  # (what a counter that gets it wrong counted, the hint)
    (lambda e: e.type == "tool_result" and e.ok,
     "you counted only the calls that succeeded. A call to an unknown tool, one with bad "
     "arguments, one a permission blocked and one whose tool failed are tool calls too: "
     "every call the model makes gets one tool_call event, count those"),
    (lambda e: e.type == "tool_result" and e.ran,
     "you counted only the calls that ran. A call the harness refused or a permission "
     "blocked was still made by the model: count every tool_call event"),
    (lambda e: e.type == "tool_call" and e.runnable,
     "you left out the calls the harness refused itself (an unknown tool, bad arguments: "
     "their tool_call event says runnable=False). The model made them all the same: "
     "count every tool_call event"),
    (lambda e: e.type == "tool_call" and e.tool_name not in ("todo_write", "delegate_task"),
     "you left out the harness's own tools: todo_write and delegate_task calls count too"),
]


@check
def check_tool_call_counter(counter_class: Callable[[], Any]) -> str:
    """Attach a fresh counter to two runs with sub-agents and refused calls; compare with
    their tool_call events."""
    for steps, settings in _delegating_runs():
        counter = counter_class()
        result = _run_watched(counter, steps, settings)
        expected = _per_agent(result.events, lambda e: e.type == "tool_call")
        counts = getattr(counter, "counts", None)
        if not isinstance(counts, dict):
            raise AssertionError(f"counter.counts should be a dict, not {counts!r}")
        if counts == expected:
            continue
        keys = sorted(map(str, counts))
        if any(isinstance(k, int) for k in counts):
            raise AssertionError(f"your keys are {keys}: key the counts by event.agent_id "
                                 "('main', 'main.sub1'), not by depth")
        missing = sorted(set(expected) - set(counts))
        if missing:
            raise AssertionError(f"no count for {missing}: the sub-agents' events reach your "
                                 "observer too, each with its own agent_id")
        if all(counts.get(k) == 2 * n for k, n in expected.items()):
            raise AssertionError("every count is doubled: count one event per call "
                                 "(tool_call), not tool_call and tool_result")
        for counted, hint in COUNTER_MISTAKES:
            if counts == _per_agent(result.events, counted):
                raise AssertionError(f"expected {expected}, your counter has {counts}: {hint}")
        raise AssertionError(f"expected {expected}, your counter has {counts}")
    return ("your observer counted every tool call per agent, the refused and failed ones "
            "too, in two runs with sub-agents.")
