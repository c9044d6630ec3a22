"""The package's shape: a small core that needs only pydantic, sub-packages on demand.

The core is the .py files directly in harness/; the sub-packages (live, workspace, ui,
durable) are imported only by who uses them. Each import check runs in a fresh
interpreter, since this test process has long since imported everything.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "harness"
SUB_PACKAGES = ("live", "workspace", "ui", "durable", "context", "mcp", "skills", "waiting",
                "answers", "memory", "trace")
HEAVY = ("openai", "ipywidgets", "httpx")
CORE_MAX_LINES, CORE_FILE_MAX_LINES = 1900, 200
ALLOWED = ("pydantic", "pydantic_core", "typing_extensions", "annotated_types",
           "typing_inspection", "harness")


def run_python(code: str, cwd: Path = ROOT, *flags: str) -> str:
    """Run ``code`` in a fresh interpreter; return its stdout (stderr if it fails)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("HARNESS_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "PYTHONPATH")}
    done = subprocess.run([sys.executable, *flags, "-c", textwrap.dedent(code)], check=False,
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


# -- import harness loads nothing extra ---------------------------------------------------

def test_import_harness_loads_no_sub_package_and_no_heavy_dependency():
    out = run_python(f"""
        import json, sys
        import harness
        prefixes = tuple("harness." + name for name in {SUB_PACKAGES!r})
        loaded = sorted(m for m in sys.modules
                        if m.startswith(prefixes) or m.partition(".")[0] in {HEAVY!r})
        print(json.dumps([harness.__file__, loaded]))
    """)
    where, loaded = json.loads(out)
    assert Path(where).resolve().parent == PACKAGE
    assert loaded == []


# -- no import cycles -----------------------------------------------------------------------

def module_files() -> dict[str, Path]:
    """Every harness module name and its file: packages are folders with an __init__.py
    (so harness/sample_workspace, the learner's sample project, is not one)."""
    modules = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        folder = path.parent
        if not all((d / "__init__.py").exists()
                   for d in (folder, *folder.parents) if d.is_relative_to(PACKAGE)):
            continue
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def imported_modules(name: str, path: Path, known: set[str]) -> set[str]:
    """The harness modules that importing ``name`` runs, from every import in its file
    (module level, in functions, under ``if TYPE_CHECKING:``).

    Importing ``a.b.c`` runs ``a.b`` first; that implied edge is added unless ``a.b`` is a
    package ``name`` itself lives in (already imported by the time ``name`` runs).
    ``from P import y`` imports the submodule ``P.y`` when there is one; it reads ``P``
    itself (an explicit edge, even to a package ``name`` lives in) when ``y`` is not one.
    """
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    ancestors = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 1)}
    if path.name == "__init__.py":
        ancestors.add(name)
    targets: set[str] = set()

    def add(module: str, explicit: bool) -> None:
        parts = module.split(".")
        for i in range(1, len(parts) + 1):
            prefix = ".".join(parts[:i])
            last = i == len(parts)
            if prefix in known and ((last and explicit) or prefix not in ancestors):
                targets.add(prefix)

    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name, explicit=True)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            submodules = {f"{source}.{a.name}" for a in node.names} & known
            for module in submodules:
                add(module, explicit=True)
            # names that are not submodules are read from ``source`` itself
            add(source, explicit=len(submodules) < len(node.names))
    targets.discard(name)
    return targets


def import_graph() -> dict[str, set[str]]:
    files = module_files()
    known = set(files)
    return {name: imported_modules(name, path, known) for name, path in files.items()}


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each
    listed with one cycle through it."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return [one_cycle(graph, component) for component in components]


def one_cycle(graph: dict[str, set[str]], component: list[str]) -> list[str]:
    """A path from the component's first module back to itself, inside the component."""
    start, inside = component[0], set(component)
    paths = {start: [start]}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for nxt in sorted(graph[node] & inside):
            if nxt == start:
                return [*paths[node], start]
            if nxt not in paths:
                paths[nxt] = [*paths[node], nxt]
                queue.append(nxt)
    return component  # unreachable for a strongly connected component


def test_import_graph_sees_relative_absolute_and_implied_package_edges():
    graph = import_graph()
    edges = sum(len(targets) for targets in graph.values())
    assert edges > 30, graph
    assert {"harness.agent", "harness.live", "harness.ui"} <= set(graph)
    assert "harness.sample_workspace.src.pricing" not in graph
    assert "harness.agent" in graph["harness"]  # `from .agent import Agent`
    assert "harness.ui.cli" in graph["harness.__main__"]  # `from .ui.cli import main`
    assert "harness.ui" in graph["harness.__main__"]  # the package runs first
    assert "harness.live.openai_model" in graph["harness.live"]


def test_harness_modules_import_no_cycle():
    cycles = find_cycles(import_graph())

    assert cycles == [], "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


# -- the core stays small -------------------------------------------------------------------

def core_lines() -> tuple[dict[str, int], str]:
    counts = {path.name: path.read_bytes().count(b"\n") for path in sorted(PACKAGE.glob("*.py"))}
    table = "\n".join(f"{lines:6} {name}" + ("  <- over" if lines > CORE_FILE_MAX_LINES else "")
                      for name, lines in counts.items())
    total = sum(counts.values())
    return counts, f"core lines:\n{table}\n{total:6} total (target <= {CORE_MAX_LINES})"


def test_no_core_file_is_over_200_lines():
    counts, message = core_lines()
    assert max(counts.values()) <= CORE_FILE_MAX_LINES, message


@pytest.mark.xfail(strict=True, reason="issue 27: the core is about 2,550 lines with the door, "
                   "the stack and checked input (about 1,780 of code, 470 blank lines PEP 8 "
                   "keeps, 300 of docstrings), the target 1,900 (see the closing note); strict, "
                   "so meeting it fails this mark")
def test_core_files_total_at_most_1900_lines():
    counts, message = core_lines()
    assert sum(counts.values()) <= CORE_MAX_LINES, message


# -- the core runs with only pydantic -----------------------------------------------------

CORE_ONLY_RUN = """
    import importlib.machinery, importlib.util, json, os, sys
    sys.path.insert(0, {copy!r})
    ALLOWED = {allowed!r}
    STDLIB = [os.path.dirname(os.__file__), os.path.join(os.path.dirname(os.__file__),
                                                         "lib-dynload")]
    openai_installed = importlib.util.find_spec("openai") is not None

    def allowed(top):
        # sys.stdlib_module_names leaves out private platform modules of the standard
        # library's own folder, such as _sysconfigdata_*, which sysconfig imports
        return (top in sys.stdlib_module_names or top in ALLOWED
                or importlib.machinery.PathFinder.find_spec(top, STDLIB) is not None)

    class OnlyStdlibAndPydantic:
        @staticmethod
        def find_spec(name, path=None, target=None):
            if allowed(name.partition(".")[0]):
                return None  # the ordinary finders go on
            raise ModuleNotFoundError(f"blocked: {{name}}", name=name)

    sys.meta_path.insert(0, OnlyStdlibAndPydantic)
    try:
        import openai  # noqa: F401
        openai_blocked = False
    except ImportError:
        openai_blocked = True

    import harness
    from harness import Agent, ScriptedModel, say, tool, tool_call

    bumped = []

    @tool
    def bump(n: int) -> int:
        '''Return n + 1.'''
        bumped.append(n)
        return n + 1

    model = ScriptedModel([
        tool_call("todo_write", todos=[{{"content": "Bump 1", "status": "in_progress"}}],
                  id="p1"),
        tool_call("delegate_task", task="Bump 1 and say the result.", id="d"),
        tool_call("bump", n=1, id="b"),  # the sub-agent's first request
        say("2"),  # the sub-agent's answer
        tool_call("todo_write", todos=[{{"content": "Bump 1", "status": "completed"}}],
                  id="p2"),
        say("Done: 2."),
    ])
    agent = Agent(model, [bump], planning=True, subagents=True, subagent_tools=("bump",))
    result = agent.run("Bump 1.")
    extra = sorted(top for top in {{m.partition(".")[0] for m in sys.modules}} - PRELOADED
                   if not allowed(top))
    print(json.dumps({{
        "harness_file": harness.__file__, "openai_installed": openai_installed,
        "openai_blocked": openai_blocked, "outcome": result.outcome, "final": result.final,
        "plan": [item.status for item in result.plan], "bumped": bumped,
        "delegations": [(d.outcome, d.answer) for d in result.delegations], "extra": extra,
    }}))
"""


def test_copied_core_runs_a_planned_delegated_task_with_only_pydantic_importable(tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(PACKAGE, copy / "harness", ignore=shutil.ignore_patterns("__pycache__"))
    code = ("import sys\nPRELOADED = {m.partition('.')[0] for m in sys.modules}\n"
            + textwrap.dedent(CORE_ONLY_RUN.format(copy=str(copy), allowed=ALLOWED)))
    out = json.loads(run_python(code, tmp_path, "-I"))

    assert Path(out["harness_file"]).resolve().is_relative_to(copy.resolve())
    assert out["openai_installed"] and out["openai_blocked"]  # the blocker really blocks
    assert (out["outcome"], out["final"]) == ("completed", "Done: 2.")
    assert out["plan"] == ["completed"]
    assert out["bumped"] == [1]
    assert out["delegations"] == [["completed", "2"]]
    assert out["extra"] == []
