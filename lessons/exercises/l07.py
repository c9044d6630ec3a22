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
from exercises.plan_progress import check_plan_moved_with_the_work

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
WARRANTY_WORK = [  # the work of each plan item, in order: (what it does, [(tool, path)])
    ("look up the order", [("read_file", "data/records/ORD-1001.json")]),
    ("find the warranty rules", [("search_docs", None),
                                 ("read_file", "docs/policies/warranty.md")]),
    ("save the note", [("write_file", "notes/ORD-1001.md")]),
]


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
    check_plan_moved_with_the_work(result.events, WARRANTY_WORK)
    if not CITATION.search(result.final or ""):
        raise AssertionError(f"the final answer cites no source: {result.final!r}. The task "
                             "says \"answer with sources\": end with reply, which quotes the "
                             "policy with its path:line")
    return ("each item was in_progress while its work ran, every plan update was accepted, "
            "the answer cites its source, and the panel shows 3/3 done, every item [x].")


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
