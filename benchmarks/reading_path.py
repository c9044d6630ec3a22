"""How many lines of the core a learner reads to follow one run: the reading path.

The core is the ``.py`` files directly in ``harness/`` (not its sub-packages). A profiler
(`sys.setprofile`, and `threading.setprofile` for a run's threads) watches a scenario run
offline on the public API: its script, agent and run inside the traced region, its tools
made before (a learner's tool module; `@tool` is lesson 02's), each scenario in a fresh
interpreter. Counted, as a set of line numbers per file (so a
lambda inside a function entered is not counted twice):

- every function, method or lambda of the core entered, whole: from its first decorator
  or ``def`` line to its last line;
- each touched module's docstring; each touched class's decorators, ``class`` line,
  docstring and statements that are not methods (fields, constants). A class is touched
  when a method of it is entered or an instance of it (or of a subclass) is seen: the
  ``self`` of any call (a generated dataclass ``__init__`` too) or what a core function
  returns; a module when a function or class of it is.

What is on the page counts, ``wc -l`` style: blank and comment lines inside a counted
range too. Code run while a module is imported (imports, constants) is not counted::

    python benchmarks/reading_path.py
    python benchmarks/reading_path.py --functions   # the functions counted, biggest first

Targets (issue 27): one tool call and an answer at most 720 lines; a run with plan,
approval, hook, reminder, delegation, stop gate and a deadline at most 1,050 lines.
Exits 0 either way and prints PASS or FAIL (1 only if a scenario did not happen).
"""

from __future__ import annotations

import argparse
import ast
import subprocess
import sys
import threading
from collections import defaultdict
from functools import cache
from pathlib import Path
from typing import NamedTuple

import harness
from harness import Agent, Hooks, Permissions, ScriptedModel, say, tool, tool_call

CORE = Path(harness.__file__).resolve().parent


class Function(NamedTuple):
    qualname: str
    lines: range  # from its first decorator or ``def`` line to its last line
    owner: str | None  # the qualname of the class it is written in, if any


def span(node: ast.AST, start: int | None = None) -> range:
    return range(node.lineno if start is None else start, node.end_lineno + 1)


@cache
def layout(path: str) -> tuple[dict[tuple[int, str], Function], dict[str, set[int]], set[int]]:
    """A module's functions by ``(co_firstlineno, co_name)``, the class-level lines of each
    class by qualname, and the lines of its docstring, read with `ast`."""
    tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    functions, classes, methods = {}, {}, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)

    def visit(node: ast.AST, prefix: str, owner: str | None) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                name = getattr(child, "name", "<lambda>")
                start = min(d.lineno for d in [child, *getattr(child, "decorator_list", ())])
                functions.setdefault((start, name), Function(prefix + name, span(child, start),
                                                             owner))
                visit(child, f"{prefix}{name}.<locals>.", owner)
            elif isinstance(child, ast.ClassDef):
                qualname = prefix + child.name
                header = max([child.lineno] + [n.end_lineno for n in child.bases + child.keywords])
                lines = classes[qualname] = set(range(child.lineno, header + 1))
                for part in child.decorator_list + [s for s in child.body
                                                    if not isinstance(s, methods)]:
                    lines.update(span(part))
                visit(child, qualname + ".", qualname)
            else:
                visit(child, prefix, owner)

    visit(tree, "", None)
    docstring = ast.get_docstring(tree, clean=False) is not None
    return functions, classes, set(span(tree.body[0])) if docstring else set()


class Trace:
    """While open, the code objects of ``core`` entered and the types of objects seen."""

    def __init__(self, core: Path = CORE) -> None:
        self.core, self.known, self.codes, self.types = core.resolve(), {}, set(), set()
        self.importing: dict[int, int] = defaultdict(int)  # per thread: module frames open

    def file(self, filename: str | None) -> str | None:
        """The resolved path of ``filename`` if it is a core module, else None."""
        if filename not in self.known:
            path = Path(filename).resolve() if filename else None
            self.known[filename] = (str(path) if path and path.suffix == ".py"
                                    and path.parent == self.core else None)
        return self.known[filename]

    def profile(self, frame, event: str, arg) -> None:
        if event not in ("call", "return"):
            return
        code, thread = frame.f_code, threading.get_ident()
        if code.co_name == "<module>":  # an import: its code and all it calls are not counted
            self.importing[thread] = max(0, self.importing[thread] + (1 if event == "call" else -1))
        elif self.importing[thread]:
            return
        elif event == "call":
            if self.file(code.co_filename):
                self.codes.add(code)
            if code.co_argcount and code.co_varnames[0] == "self":
                self.types.add(type(frame.f_locals.get("self")))
        elif self.file(code.co_filename):
            self.types.add(type(arg))

    def __enter__(self) -> Trace:
        self.before = sys.getprofile(), threading.getprofile()
        threading.setprofile(self.profile)  # the threads a run with a deadline starts
        sys.setprofile(self.profile)
        return self

    def __exit__(self, *exc: object) -> None:
        sys.setprofile(self.before[0])
        threading.setprofile(self.before[1])


def reading_path(trace: Trace) -> tuple[dict[str, set[int]], list[tuple[str, int]]]:
    """The lines counted, per core file, and the outermost functions entered with their size."""
    lines, entered, touched = defaultdict(set), defaultdict(list), set()
    for code in trace.codes:
        path = trace.file(code.co_filename)
        function = layout(path)[0].get((code.co_firstlineno, code.co_name))
        if function:  # else a class body, or a comprehension inside what it belongs to
            entered[path].append(function)
            lines[path].update(function.lines)
            touched.add((path, function.owner))
    for cls in {c for t in trace.types for c in t.__mro__}:
        if path := trace.file(getattr(sys.modules.get(cls.__module__), "__file__", None)):
            touched.add((path, cls.__qualname__))
    for path, owner in touched:
        _, classes, docstring = layout(path)
        lines[path].update(docstring | classes.get(owner, set()))
    outermost = []  # a function inside another one entered is a part of it
    for path, functions in entered.items():
        end = 0
        for f in sorted(functions, key=lambda f: (f.lines.start, -f.lines.stop)):
            if f.lines.stop > end:
                outermost.append((f"{Path(path).name}:{f.lines.start} {f.qualname}",
                                  len(f.lines)))
                end = f.lines.stop
    return dict(lines), sorted(outermost, key=lambda item: (-item[1], item[0]))


@tool
def add(a: int, b: int) -> int:
    """Add two whole numbers."""
    return a + b


@tool
def read_file(path: str) -> str:
    """Read a file of the project."""
    return f"the text of {path}"


@tool
def write_file(path: str, text: str) -> str:
    """Write a file of the project."""
    return f"wrote {len(text)} characters to {path}"


def one_call() -> None:
    model = ScriptedModel([tool_call("add", a=2, b=3), say("5")])
    result = Agent(model, [add]).run("add 2 and 3")
    assert (result.outcome, result.final) == ("completed", "5"), result


def full_run() -> None:
    hooks = Hooks()  # the .env read is blocked; write_file asks, and is approved
    hooks.on("pre_tool_use", lambda e: "Blocked: private." if e.arguments.get("path") == ".env"
             else None)
    allow = Permissions({"write_file": "ask"}, default="allow", approve=lambda name, args: True)
    def plan(first: str, second: str) -> dict:  # a todo_write call: the two items' statuses
        return tool_call("todo_write", todos=[{"content": "Read the notes", "status": first},
                                              {"content": "Write it up", "status": second}])

    model = ScriptedModel([  # two rounds without a plan update (reminder_after=2): reminded
        plan("in_progress", "pending"), tool_call("read_file", path=".env"),
        tool_call("delegate_task", task="Say what notes.md is about."),  # the sub-agent:
        tool_call("read_file", path="notes.md"), say("notes.md is about the release."),
        plan("completed", "in_progress"),  # forced: a delegation's news updates the plan
        tool_call("write_file", path="summary.md", text="About the release."),
        say("Done."),  # an item is open: the stop gate pushes back once
        plan("completed", "completed"), say("summary.md is written.")])
    result = Agent(model, [read_file, write_file], planning=True, subagents=True,
                   subagent_tools=("read_file",), max_seconds=30, reminder_after=2,
                   permissions=allow, hooks=hooks).run("Summarise notes.md in summary.md.")
    seen = {e.type for e in result.events} | {
        f"{e.type} {e.status}" for e in result.events if e.type == "tool_result"}
    missing = {"reminder", "stop_gate", "approval_request", "subagent_start",
               "tool_result blocked"} - seen
    assert not missing and result.outcome == "completed", (missing, result)


SCENARIOS = {"one_call": ("one tool call and an answer", one_call, 720),
             "full_run": ("a run with plan, approval, hook, reminder, delegation, stop gate "
                          "and a deadline", full_run, 1050)}


def report(name: str, functions: bool) -> None:
    title, scenario, target = SCENARIOS[name]
    with Trace() as trace:
        scenario()
    lines, entered = reading_path(trace)
    total = sum(map(len, lines.values()))
    print(f"{'PASS' if total <= target else 'FAIL'}: {title}: {total} lines of the core "
          f"(target <= {target:,})")
    for path, counted in sorted(lines.items(), key=lambda item: -len(item[1])):
        print(f"    {Path(path).name:16} {len(counted):5}")
    if functions:
        print(f"  functions entered ({sum(n for _, n in entered)} lines; the rest are "
              "docstrings and class-level lines):")
        for qualname, n in entered:
            print(f"    {n:5}  {qualname}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--functions", action="store_true",
                        help="list the functions counted, biggest first")
    parser.add_argument("--scenario", choices=SCENARIOS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.scenario:  # the child: one scenario in this fresh interpreter
        report(args.scenario, args.functions)
        return 0
    failed = 0
    for name in SCENARIOS:
        command = [sys.executable, __file__, "--scenario", name]
        failed |= subprocess.run(command + ["--functions"] * args.functions).returncode
    return 1 if failed else 0  # a scenario that broke; a figure over its target is not


if __name__ == "__main__":
    sys.exit(main())
