"""Checks for lesson 11, checked results and the call log.

`check_cites_real_policy` writes a policy of a length it picks, so only a hook that reads
the workspace can tell a real line from one past the end. `check_order_tools` records a
run with your tools, changes the order's record, and replays the run with
`CallLog.from_run`: a read-only tool must show the change, a tool with side effects
must not act twice.
"""

from __future__ import annotations

import json
import random
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from course import check

from harness import (
    Agent,
    CallLog,
    CommandTool,
    Event,
    Hooks,
    RunResult,
    ScriptedModel,
    Tool,
    Workspace,
    say,
    tool_call,
)

__all__ = ["check_cites_real_policy", "check_order_tools"]

POLICY = "docs/policies/gift-cards.md"
VOUCHERS = "docs/policies/vouchers.md"  # no newline after its last line


def _gift_card_policy(lines: int) -> str:
    """A policy of exactly ``lines`` lines, ending in a newline."""
    body = [f"Rule {k}: gift cards are kept for {k * 6} months after the last use."
            for k in range(1, lines - 3)]
    return "\n".join(["# Gift cards", "", "Policy id: GFT-001 | Version: 1.0", *body,
                      "Gift cards never expire."]) + "\n"


def _voucher_policy(lines: int) -> str:
    """A policy of exactly ``lines`` lines, with no newline after the last one, and a line
    of spaces only (a blank line too) at line 4."""
    body = [f"Rule {k}: a voucher is worth {k * 5} EUR." for k in range(1, lines - 4)]
    return "\n".join(["# Vouchers", "", "Policy id: VCH-001 | Version: 1.0", " \t ", *body,
                      "Vouchers are valid for one year."])


def _answers_run(hook: Callable[[Event], Any], ws: Workspace,
                 answers: list[str]) -> tuple[RunResult, list[str]]:
    """Read the new policy, then answer each of ``answers`` in turn; your hook on stop.
    Returns the result and the reasons the model read for each refused answer."""
    errors: list[BaseException] = []

    def guarded(event: Event) -> Any:
        try:
            return hook(event)
        except Exception as exc:
            errors.append(exc)
            return None

    hooks = Hooks()
    hooks.on("stop", guarded)
    model = ScriptedModel([tool_call("read_file", path=POLICY), *map(say, answers)])
    result = Agent(model, ws.tools, hooks=hooks).run("Do gift cards expire? Cite the line.")
    if errors:
        raise errors[0]
    return result, [e.reason for e in result.events if e.type == "answer_refused"]


@check
def check_cites_real_policy(cites_real_policy: Callable[[Workspace], Callable]) -> str:
    """Your stop hook on answers whose citations are real, missing, past the end, or outside."""
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "outside.md").write_text("not in the workspace\n", encoding="utf-8")
        ws = Workspace.sample(Path(tmp) / "ws")
        n = random.SystemRandom().randint(8, 15)
        ws.write_file(POLICY, _gift_card_policy(n))
        m = random.SystemRandom().randint(7, 12)
        ws.write_file(VOUCHERS, _voucher_policy(m))
        hook = cites_real_policy(ws)
        good = f"Gift cards never expire ({POLICY}:{n})."
        cases = [  # (label, answer, the citation a refusal must name; None: accept it)
            ("a real line", good, None),
            ("two real lines", f"No ({POLICY}:{n}; see also docs/policies/returns.md:1).",
             None),
            ("a file that does not exist", f"Never ({POLICY[:-4]}.md:{n}).",
             f"{POLICY[:-4]}.md:{n}"),
            ("a line one past the end", f"Never ({POLICY}:{n + 1}).", f"{POLICY}:{n + 1}"),
            ("the last line of a file with no newline after it",
             f"A year ({VOUCHERS}:{m}).", None),
            ("one past the end of a file with no newline after its last line",
             f"A year ({VOUCHERS}:{m + 1}).", f"{VOUCHERS}:{m + 1}"),
            ("line 0", f"Never ({POLICY}:0).", f"{POLICY}:0"),
            ("a blank line", f"Never ({POLICY}:2).", f"{POLICY}:2"),
            ("a line of spaces only", f"A year ({VOUCHERS}:4).", f"{VOUCHERS}:4"),
            ("a real line, then a bad one",
             f"Never ({POLICY}:{n}), as the FAQ says (docs/faq.md:999).", "docs/faq.md:999"),
            ("a file outside the workspace", f"Never (../outside.md:1, {POLICY}:{n}).",
             "../outside.md:1"),
            ("no citation at all", "Gift cards never expire.", ""),
        ]
        for label, answer, bad in cases:
            result, reasons = _answers_run(hook, ws, [answer, good, good])
            if bad is None:
                assert not reasons, (f"{label}: {answer!r} was refused ({reasons[0]}), but "
                                     "every citation in it names a real line. Count lines as "
                                     "splitlines() does: a last line with no newline after it "
                                     "is a line too (text.count('\\n') is one short)")
            else:
                assert reasons, (f"{label}: {answer!r} was accepted; it must be refused. "
                                 "Rules: at least one citation; each path names a file in the "
                                 "workspace (ws.read_file reads it); each number is a line of "
                                 "that file (1 to its number of lines, as splitlines() "
                                 "counts them) that is not blank (spaces only are blank too)")
                assert bad in reasons[0], (f"{label}: the reason the model read does not "
                                           f"quote the bad citation {bad!r}; it was: "
                                           f"{reasons[0]!r}")
                assert len(reasons) == 1, (f"{label}: after {answer!r} was refused, the model "
                                           f"answered {good!r}, which cites a real line, but "
                                           f"that was refused too: {reasons[1]!r}")
            assert result.outcome == "completed", (
                f"{label}: the run ended {result.outcome!r} ({result.error})")
        stubborn = f"Never ({POLICY}:{n + 5})."
        result, reasons = _answers_run(hook, ws, [stubborn] * 3)
        assert result.outcome == "unverified" and len(reasons) == 2, (
            f"an agent that kept citing {POLICY}:{n + 5} ended {result.outcome!r} after "
            f"{len(reasons)} refusals; it should end 'unverified' after 2")
    return (f"real lines passed, the last line of a file with no final newline too; a missing "
            f"file, line {n + 1} of a file with {n} lines, line 0, a blank line, a line of "
            "spaces, a file outside the workspace and an answer without a citation "
            "were refused with a reason that names them; citing a bad line three times "
            "ended unverified.")


EXPORT_SCRIPT = """import sys
with open("exports.txt", "a", encoding="utf-8") as f:
    f.write(sys.argv[1] + "\\n")
print("exported", sys.argv[1])
"""
ORDER, RECORD = "ORD-1002", "data/records/ORD-1002.json"
EXPORT_TASK = "Check ORD-1002, then export it to the warehouse."
NEW_STATUSES = ("returned", "lost in transit", "held at customs", "refunded", "exchanged")


def _tools(order_tools: Callable[[Path], Sequence], root: Path) -> list[Tool]:
    """Your tools, as a list: a list, a tuple or any other sequence of tools will do."""
    tools = order_tools(root)
    if isinstance(tools, str | bytes | Mapping) or not isinstance(tools, Iterable):
        raise AssertionError(f"order_tools(root) should return the two tools (a list or a "
                             f"tuple), not {tools!r}")
    tools = list(tools)
    if not all(isinstance(t, Tool) for t in tools):
        raise AssertionError(f"order_tools(root) should return two tools, not {tools!r}")
    return tools


def _tools_by_name(order_tools: Callable[[Path], Sequence], root: Path) -> dict[str, Tool]:
    tools = _tools(order_tools, root)
    named = {t.name: t for t in tools}
    if len(tools) != 2 or sorted(named) != ["export_order", "lookup_order"]:
        raise AssertionError(f"your tools are named {[t.name for t in tools]}; return two "
                             "tools, lookup_order and export_order")
    for t in tools:
        if not isinstance(t, CommandTool):
            raise AssertionError(
                f"{t.name} is a {type(t).__name__}, not a CommandTool: make each one a "
                "CommandTool(name, description, template=..., params={'order_id': ...}, "
                "cwd=root), so the harness runs a fixed command and the model fills only "
                "order_id (a function that reads or writes the files itself is not the "
                "command the exercise names)")
    for t in tools:
        params = sorted(t.schema()["function"]["parameters"].get("properties", {}))
        if params != ["order_id"]:
            raise AssertionError(f"{t.name} takes {params}; the model should fill only "
                                 "order_id")
    return named


def _exports(ws: Workspace) -> list[str]:
    path = ws.root / "exports.txt"
    return path.read_text(encoding="utf-8").split() if path.exists() else []


@check
def check_order_tools(order_tools: Callable[[Path], Sequence]) -> str:
    """Record a run with your two tools, change the record, replay with CallLog.from_run."""
    with tempfile.TemporaryDirectory() as tmp:
        ws = Workspace.sample(Path(tmp) / "ws")
        (ws.root / "tools" / "export_order.py").write_text(EXPORT_SCRIPT, encoding="utf-8")
        tools = _tools_by_name(order_tools, ws.root)
        script = [tool_call("lookup_order", order_id=ORDER),
                  tool_call("export_order", order_id=ORDER), say(f"{ORDER} is exported.")]
        recorded = Agent(ScriptedModel(script), list(tools.values())).run(EXPORT_TASK)
        for e in recorded.events:
            if e.type == "tool_result" and not e.ok:
                raise AssertionError(f"{e.tool_name}({ORDER}) failed in a normal run: "
                                     f"{e.output[:300]}")
        looked_up = next(e.output for e in recorded.events
                         if e.type == "tool_result" and e.tool_name == "lookup_order")
        if f'"id": "{ORDER}"' not in looked_up:
            raise AssertionError(f"lookup_order({ORDER}) should print its record; it printed "
                                 f"{looked_up[:200]!r}")
        if _exports(ws) != [ORDER]:
            raise AssertionError(f"export_order({ORDER}) should run tools/export_order.py, "
                                 f"which adds the id to exports.txt; it holds {_exports(ws)}")
        saved = recorded.save(Path(tmp) / "run.json")
        status = random.SystemRandom().choice(NEW_STATUSES)
        record = json.loads(ws.read_file(RECORD))
        ws.write_file(RECORD, json.dumps({**record, "status": status}, indent=2) + "\n")
        replay = Agent(ScriptedModel.from_run(saved), _tools(order_tools, ws.root)).run(
            EXPORT_TASK, call_log=CallLog.from_run(saved))
        how = {e.tool_name: e for e in replay.events if e.type == "tool_result"}
        if _exports(ws) != [ORDER]:
            raise AssertionError(
                f"after the replay exports.txt lists {_exports(ws)}: the replay exported "
                f"{ORDER} again. export_order changes the world: give it side_effects=True "
                "(a CommandTool's default), so a replay answers it from the record")
        lookup = how["lookup_order"]
        if lookup.status != "ok" or status not in lookup.output:
            raise AssertionError(
                f"the check changed {ORDER}'s status to {status!r} before the replay, but the "
                f"replay's lookup_order was {lookup.status!r} and showed the recorded record: "
                "it did not run again. A lookup changes nothing: give it side_effects=False, "
                "so a replay runs it for real and a changed record shows up")
    return (f"the replay looked {ORDER} up again (status {status!r}, changed after the "
            "recording) and answered export_order from the record: exports.txt holds one line.")
