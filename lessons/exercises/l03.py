"""Checks for lesson 03 (hooks and permissions).

Each check runs your code in a real run: a `ScriptedModel` makes the calls, the tools
of a fresh copy of the sample workspace really execute, and the check looks at what
happened on disk and in the transcript.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable

from course import check

from harness import Agent, Event, Hooks, Permissions, RunResult, ScriptedModel, Workspace


def _call(name: str, **arguments: object) -> dict:
    return {"tool_calls": [{"type": "function",
                            "function": {"name": name, "arguments": json.dumps(arguments)}}]}


def _run(ws: Workspace, calls: list[dict], **options: object) -> list[tuple[bool, str]]:
    """Run one scripted call per turn; for each call: did the tool run, and what the model read."""
    model = ScriptedModel([*calls, {"content": "Done."}])
    result: RunResult = Agent(model, ws.tools, max_turns=len(calls) + 1, **options).run("Work.")
    if result.outcome != "completed":
        raise AssertionError(f"the run ended {result.outcome!r} ({result.error}); "
                             "a hook or approver must not stop the run")
    return [(e.status == "ok", e.output) for e in result.events if e.type == "tool_result"]


@check
def check_notes_only(notes_only: Callable) -> str:
    """Your ``pre_tool_use`` hook: write_file only inside notes/, every other call untouched."""
    with tempfile.TemporaryDirectory() as tmp:
        ws = Workspace.sample(tmp)
        readme, policy = ws.read_file("README.md"), ws.read_file("docs/policies/returns.md")
        cases = [
            ("notes/summary.md", True),
            ("notes/drafts/reply.md", True),
            ("docs/policies/returns.md", False),
            ("report.md", False),
            ("notes/../README.md", False),
            ("notes_backup/x.md", False),
        ]
        notes_only(Event("tool_call", data={"call_id": "probe", "tool_name": "write_file",
                                            "arguments": {"path": cases[0][0], "content": ""}}))
        hooks = Hooks()
        hooks.on("pre_tool_use", notes_only)
        calls = [_call("write_file", path=p, content="written by the agent\n") for p, _ in cases]
        calls.append(_call("read_file", path="docs/faq.md"))
        outputs = _run(ws, calls, hooks=hooks)
        for (path, allowed), (ran, output) in zip(cases, outputs[:-1], strict=True):
            if output.startswith("Blocked: a pre_tool_use hook failed"):
                raise AssertionError(f"your hook raised on write_file {path!r}: {output}")
            if allowed and not ran:
                raise AssertionError(f"write_file to {path!r} is inside notes/ but did not run; "
                                     f"the model read: {output!r}")
            if not allowed and ran:
                hint = {"notes/../README.md": " (normalise it first: posixpath.normpath)",
                        "notes_backup/x.md": " (compare with 'notes/', slash included)"}
                raise AssertionError(f"write_file to {path!r} ran, but that path is not inside "
                                     f"notes/{hint.get(path, '')}: your hook must return a "
                                     "non-empty string, the reason the model reads")
        if not ws.read_file("notes/drafts/reply.md").startswith("written"):
            raise AssertionError("notes/drafts/reply.md was not written")
        unchanged = (ws.read_file("README.md"), ws.read_file("docs/policies/returns.md"))
        if unchanged != (readme, policy):
            raise AssertionError("a file outside notes/ was changed")
        ran, output = outputs[-1]
        if output.startswith("Blocked: a pre_tool_use hook failed"):
            raise AssertionError(f"your hook raised on read_file: {output}")
        if not ran:
            raise AssertionError(f"read_file was blocked ({output!r}): only write_file "
                                 "should be checked; return None for every other call")
    return ("writes inside notes/ ran; writes to docs/, the root, notes/../ and "
            "notes_backup/ were blocked; read_file was left alone.")


@check
def check_research_permissions(research_permissions: Callable[[], Permissions]) -> str:
    """Your table: reads allowed, writes asked (yes only in notes/), everything else denied."""
    perms = research_permissions()
    if not isinstance(perms, Permissions):  # a hint for the learner, so AssertionError
        raise AssertionError(
            f"research_permissions() returned {type(perms).__name__}, not a Permissions table")
    expected = {"read_file": "allow", "list_files": "allow", "search_docs": "allow",
                "write_file": "ask", "edit_file": "ask", "run_shell": "deny",
                "delete_everything": "deny"}
    for name, decision in expected.items():
        got = perms.decide(name)
        if got != decision:
            what = "a tool not in the table" if name == "delete_everything" else name
            raise AssertionError(f"{what} is {got!r}, expected {decision!r}")
    if perms.approve is None:
        raise AssertionError("there is no approver, so every 'ask' is denied: pass approve=...")
    with tempfile.TemporaryDirectory() as tmp:
        ws = Workspace.sample(tmp)
        pricing = ws.read_file("src/pricing.py")
        cases = [
            ("read docs/faq.md", _call("read_file", path="docs/faq.md"), True),
            ("write notes/summary.md", _call("write_file", path="notes/summary.md",
                                             content="Returns: 30 days unopened.\n"), True),
            ("edit notes/summary.md", _call("edit_file", path="notes/summary.md",
                                            old="30 days", new="thirty days"), True),
            ("write src/pricing.py", _call("write_file", path="src/pricing.py",
                                           content="x"), False),
            ("edit src/pricing.py", _call("edit_file", path="src/pricing.py",
                                          old="def apply_discount", new="def broken"), False),
            ("write notes/../src/hack.py", _call("write_file", path="notes/../src/hack.py",
                                                 content="x"), False),
            ("run the shell", _call("run_shell", command="echo hello"), False),
        ]
        outputs = _run(ws, [c for _, c, _ in cases], permissions=perms)
        for (label, _, allowed), (ran, output) in zip(cases, outputs, strict=True):
            if allowed and not ran:
                raise AssertionError(f"{label}: should run, but the model read {output!r}")
            if not allowed and ran:
                raise AssertionError(f"{label}: should be refused, but it ran ({output!r})")
        if ws.read_file("notes/summary.md") != "Returns: thirty days unopened.\n":
            raise AssertionError("notes/summary.md does not hold the written and edited text")
        if ws.read_file("src/pricing.py") != pricing or ws.list_files("src/hack.py") != \
                "No files match 'src/hack.py'.":
            raise AssertionError("a file under src/ was changed")
    return ("reads ran, writes and edits in notes/ were approved, src/ and the shell "
            "were refused.")
