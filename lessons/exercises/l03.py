"""Checks for lesson 03 (hooks and permissions).

Each check runs your code in a real run: a `ScriptedModel` makes the calls, the tools
of a fresh copy of the sample workspace really execute, and the check looks at what
happened on disk and in the transcript.
"""

from __future__ import annotations

import secrets
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


def _more_writers(ws: Workspace) -> list[Tool]:
    """Two more writing tools, each naming its path argument its own way: a hook that
    lists the writers it knows by name, or reads one argument name, misses one."""

    @tool(writes="target")
    def store_summary(target: str, body: str) -> str:
        """Store a summary as a file in the workspace.

        Args:
            target: file path relative to the workspace root.
            body: the summary.
        """
        return ws.write_file(target, body)

    @tool(writes="dest")
    def file_note(dest: str, body: str) -> str:
        """File a note in the workspace.

        Args:
            dest: file path relative to the workspace root.
            body: the note.
        """
        return ws.write_file(dest, body)

    return [store_summary, file_note]


def _writer_cases(writer: Tool) -> list[tuple[str, dict, bool, str]]:
    """A write inside notes/ and one outside, with ``writer``."""
    inside, outside = "notes/filed.md", "docs/filed.md"
    return [(f"{writer.name} {inside}", tool_call(writer.name, **{writer.writes: inside,
                                                                  "body": "kept\n"}), True, ""),
            (f"{writer.name} {outside}", tool_call(writer.name, **{writer.writes: outside,
                                                                   "body": "x"}), False,
             f". {writer.name} writes a path too, in its argument {writer.writes!r}: a hook "
             "that names the writers it knows, or reads one argument name, misses it; "
             "event.get('writes') finds it")]


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
        writers = _more_writers(ws)
        cases = [*NOTES_CASES, *(case for w in writers for case in _writer_cases(w))]
        outputs = _run(ws, [call for _, call, _, _ in cases],
                       [*ws.tools, _draft_tool(ws), *writers], hooks=hooks)
        for (label, _, allowed, hint), (ran, output) in zip(cases, outputs, strict=True):
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
        if ws.read_file("notes/filed.md") != "kept\n":
            raise AssertionError("notes/filed.md, written with "
                                 f"{' and '.join(w.name for w in writers)}, is not there")
        if after != before or ws.list_files("drafts/*") != "No files match 'drafts/*'." or \
                ws.list_files("docs/filed.md") != "No files match 'docs/filed.md'.":
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
    note = f"notes/{secrets.token_hex(3)}.md"  # drawn now: an approver must read the path
    dot = f"./notes/{secrets.token_hex(3)}.md"
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
        said = _approves(perms, name, note)
        if said is not True:
            raise AssertionError(
                f"your approver returned {said!r} for {name} {note}. Only True "
                "approves: the harness treats anything else ('yes', 1, None) as a no, so a "
                "truthy answer can never approve by accident. Return True or False")
    with tempfile.TemporaryDirectory() as tmp:
        ws = Workspace.sample(tmp)
        pricing, src_files = ws.read_file("src/pricing.py"), ws.list_files("src/**/*.*")
        cases = [
            ("read docs/faq.md", tool_call("read_file", path="docs/faq.md"), True),
            (f"write {note}", tool_call("write_file", path=note,
                                                 content="Returns: 30 days unopened.\n"), True),
            (f"edit {note}", tool_call("edit_file", path=note,
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
            (f"write {dot}", tool_call("write_file", path=dot,
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
        if ws.read_file(note) != "Returns: thirty days unopened.\n":
            raise AssertionError(f"{note} does not hold the written and edited text")
        if ws.read_file("src/pricing.py") != pricing or ws.list_files("src/**/*.*") != \
                src_files:
            raise AssertionError("a file under src/ was changed")
        if ws.list_files("notes_backup/*") != "No files match 'notes_backup/*'.":
            raise AssertionError("a file in notes_backup/ was written")
    return ("reads ran, writes and edits in notes/ were approved, src/ and the shell "
            "were refused.")
