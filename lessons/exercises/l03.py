"""Checks for lesson 03 (hooks and permissions).

Each check runs your code in a real run: a `ScriptedModel` makes the calls, the tools
of a fresh copy of the sample workspace really execute, and the check looks at what
happened on disk and in the transcript.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable

from course import check

from harness import (
    Agent,
    Event,
    Hooks,
    Permissions,
    RunResult,
    ScriptedModel,
    Tool,
    Workspace,
    say,
    tool,
    tool_call,
)

FAILED_HOOK = "Blocked: a tool_call hook failed"


def _run(ws: Workspace, calls: list[dict], tools: list[Tool] | None = None,
         **options: object) -> list[tuple[bool, str]]:
    """Run one scripted call per turn; for each call: did the tool run, and what the model read."""
    model = ScriptedModel([*calls, say("Done.")])
    agent = Agent(model, tools or ws.tools, max_turns=len(calls) + 1, **options)
    result: RunResult = agent.run("Work.")
    if result.outcome != "completed":
        raise AssertionError(f"the run ended {result.outcome!r} ({result.error}); "
                             "a hook or approver must not stop the run")
    return [(e.status == "ok", e.output) for e in result.events if e.type == "tool_result"]


def _draft_tool(ws: Workspace) -> Tool:
    """A writing tool of the check's own: its path argument is not called ``path``."""

    @tool(writes="filename")
    def save_draft(filename: str, text: str) -> str:
        """Save a reply draft as a file in the workspace.

        Args:
            filename: file path relative to the workspace root.
            text: the draft.
        """
        return ws.write_file(filename, text)

    return save_draft


NOTES_CASES = [  # (label, call, allowed, the hint if it ran anyway)
    ("write_file notes/summary.md",
     tool_call("write_file", path="notes/summary.md", content="Returns: 30 days.\n"), True, ""),
    ("write_file notes/drafts/reply.md",
     tool_call("write_file", path="notes/drafts/reply.md", content="written by the agent\n"),
     True, ""),
    ("edit_file notes/summary.md",
     tool_call("edit_file", path="notes/summary.md", old="30 days", new="thirty days"), True, ""),
    ("save_draft notes/draft.md",
     tool_call("save_draft", filename="notes/draft.md", text="Dear Ada,\n"), True, ""),
    ("write_file docs/policies/returns.md",
     tool_call("write_file", path="docs/policies/returns.md", content="x"), False, ""),
    ("write_file report.md", tool_call("write_file", path="report.md", content="x"), False, ""),
    ("write_file notes/../README.md",
     tool_call("write_file", path="notes/../README.md", content="x"), False,
     " (normalise the path first: posixpath.normpath)"),
    ("write_file notes_backup/x.md",
     tool_call("write_file", path="notes_backup/x.md", content="x"), False,
     " (compare with 'notes/', slash included)"),
    ("write_file src/notes/x.md",
     tool_call("write_file", path="src/notes/x.md", content="x"), False,
     " (the path must start with notes/, not just contain it)"),
    ("write_file ./notes/dot.md",
     tool_call("write_file", path="./notes/dot.md", content="inside\n"), True, ""),
    ("edit_file docs/policies/returns.md",
     tool_call("edit_file", path="docs/policies/returns.md", old="30 days", new="300 days"),
     False, ". A hook that looks only at write_file lets edit_file through: read "
     "event.get('writes'), which every tool that writes a path carries"),
    ("save_draft drafts/reply.md",
     tool_call("save_draft", filename="drafts/reply.md", text="Dear Ada,\n"), False,
     ". save_draft is a writing tool too; its path argument is called filename, so "
     "neither its name nor arguments['path'] finds it: event.get('writes') does"),
    ("read_file docs/faq.md", tool_call("read_file", path="docs/faq.md"), True, ""),
    ("list_files docs/*", tool_call("list_files", pattern="docs/*"), True, ""),
]


@check
def check_notes_only(notes_only: Callable) -> str:
    """Your ``tool_call`` hook: every write only inside notes/, every other call untouched."""
    notes_only(Event("tool_call", data={  # an unfinished stub raises here, not in the run
        "call_id": "probe", "tool_name": "write_file", "runnable": True,
        "arguments": {"path": "notes/summary.md", "content": ""}, "writes": "notes/summary.md"}))
    with tempfile.TemporaryDirectory() as tmp:
        ws = Workspace.sample(tmp)
        before = {p: ws.read_file(p) for p in ("README.md", "docs/policies/returns.md")}
        hooks = Hooks()
        hooks.on("tool_call", notes_only)
        outputs = _run(ws, [call for _, call, _, _ in NOTES_CASES],
                       [*ws.tools, _draft_tool(ws)], hooks=hooks)
        for (label, _, allowed, hint), (ran, output) in zip(NOTES_CASES, outputs, strict=True):
            if output.startswith(FAILED_HOOK):
                raise AssertionError(f"your hook raised on {label}: {output}")
            if allowed and not ran:
                where = "is inside notes/" if "notes/" in label else "writes nothing"
                raise AssertionError(f"{label} {where} but did not run; the model read: "
                                     f"{output!r}. Block only calls whose "
                                     "event.get('writes') is a path outside notes/")
            if not allowed and ran:
                raise AssertionError(f"{label} ran, but that path is not inside notes/{hint}. "
                                     "Your hook returned nothing for this call, so it ran: "
                                     "return the reason, as a string, for every write "
                                     "outside notes/")
        if ws.read_file("notes/summary.md") != "Returns: thirty days.\n":
            raise AssertionError("notes/summary.md does not hold the written and edited text")
        after = {p: ws.read_file(p) for p in before}
        if after != before or ws.list_files("drafts/*") != "No files match 'drafts/*'.":
            raise AssertionError("a file outside notes/ was changed")
    return ("writes and edits inside notes/ ran, with every tool that writes; docs/, the "
            "root, notes/../, notes_backup/ and drafts/ were blocked; reads were left alone.")


RESEARCH_TABLE = {"read_file": "allow", "list_files": "allow", "search_docs": "allow",
                  "write_file": "ask", "edit_file": "ask", "run_shell": "deny",
                  "delete_everything": "deny"}


def _approves(perms: Permissions, tool_name: str, path: str) -> object:
    return perms.approve(tool_name, {"path": path, "content": "x"})


@check
def check_research_permissions(research_permissions: Callable[[], Permissions]) -> str:
    """Your table: reads allowed, writes asked (yes only in notes/), everything else denied."""
    perms = research_permissions()
    if not isinstance(perms, Permissions):  # a hint for the learner, so AssertionError
        raise AssertionError(
            f"research_permissions() returned {type(perms).__name__}, not a Permissions table")
    for name, decision in RESEARCH_TABLE.items():
        got = perms.decide(name)
        if got != decision:
            what = "a tool not in the table" if name == "delete_everything" else name
            raise AssertionError(f"{what} is {got!r}, expected {decision!r}")
    if perms.approve is None:
        raise AssertionError("there is no approver, so every 'ask' is denied: pass approve=...")
    for name in ("write_file", "edit_file"):
        said = _approves(perms, name, "notes/summary.md")
        if said is not True:
            raise AssertionError(
                f"your approver returned {said!r} for {name} notes/summary.md. Only True "
                "approves: the harness treats anything else ('yes', 1, None) as a no, so a "
                "truthy answer can never approve by accident. Return True or False")
    with tempfile.TemporaryDirectory() as tmp:
        ws = Workspace.sample(tmp)
        pricing, src_files = ws.read_file("src/pricing.py"), ws.list_files("src/**/*.*")
        cases = [
            ("read docs/faq.md", tool_call("read_file", path="docs/faq.md"), True),
            ("write notes/summary.md", tool_call("write_file", path="notes/summary.md",
                                                 content="Returns: 30 days unopened.\n"), True),
            ("edit notes/summary.md", tool_call("edit_file", path="notes/summary.md",
                                                old="30 days", new="thirty days"), True),
            ("write src/pricing.py", tool_call("write_file", path="src/pricing.py",
                                               content="x"), False),
            ("edit src/pricing.py", tool_call("edit_file", path="src/pricing.py",
                                              old="def apply_discount", new="def broken"), False),
            ("write notes/../src/hack.py", tool_call("write_file", path="notes/../src/hack.py",
                                                     content="x"), False),
            ("write notes_backup/x.md", tool_call("write_file", path="notes_backup/x.md",
                                                  content="x"), False),
            ("write src/notes/x.md", tool_call("write_file", path="src/notes/x.md",
                                               content="x"), False),
            ("write ./notes/dot.md", tool_call("write_file", path="./notes/dot.md",
                                               content="x"), True),
            ("run the shell", tool_call("run_shell", command="echo hello"), False),
        ]
        outputs = _run(ws, [c for _, c, _ in cases], permissions=perms)
        for (label, _, allowed), (ran, output) in zip(cases, outputs, strict=True):
            if allowed and not ran:
                raise AssertionError(f"{label}: should run, but the model read {output!r}")
            if not allowed and ran:
                hint = {"notes/..": " (normalise the path first: posixpath.normpath)",
                        "notes_backup": " (compare with 'notes/', slash included)",
                        "src/notes": " (the path must start with notes/, not just contain it)",
                        }
                hint = next((h for k, h in hint.items() if k in label), "")
                raise AssertionError(f"{label}: should be refused, but it ran ({output!r})"
                                     f"{hint}")
        if ws.read_file("notes/summary.md") != "Returns: thirty days unopened.\n":
            raise AssertionError("notes/summary.md does not hold the written and edited text")
        if ws.read_file("src/pricing.py") != pricing or ws.list_files("src/**/*.*") != \
                src_files:
            raise AssertionError("a file under src/ was changed")
        if ws.list_files("notes_backup/*") != "No files match 'notes_backup/*'.":
            raise AssertionError("a file in notes_backup/ was written")
    return ("reads ran, writes and edits in notes/ were approved, src/ and the shell "
            "were refused.")
