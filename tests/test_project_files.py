"""The project's own files agree with each other and with the README's two commands."""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from pathlib import Path

import pytest

from harness.live.openai_model import PROVIDER_VARIABLES

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent


def read(name: str) -> str:
    return (ROOT / name).read_text(encoding="utf-8")


def requirement_lines() -> list[str]:
    lines = (line.split("#", 1)[0].strip() for line in read("requirements.txt").splitlines())
    return [line for line in lines if line]


def requirement_name(line: str) -> str:
    return re.split(r"[<>=!~;\[ ]", line, maxsplit=1)[0].lower()


def pyproject() -> dict:
    return tomllib.loads(read("pyproject.toml"))


def environment_dependencies() -> list[str]:
    """The `dependencies:` block of environment.yml as its list items, nested ones included."""
    items: list[str] = []
    in_block = False
    for line in read("environment.yml").splitlines():
        text = line.split("#", 1)[0].rstrip()
        if not text:
            continue
        if not line.startswith(" "):
            in_block = text == "dependencies:"
            continue
        if in_block:
            items.append(text.strip().removeprefix("- ").strip())
    return items


def fenced_code_lines(markdown: str) -> list[str]:
    """Every line inside a ``` fence, stripped (fences indented in lists included)."""
    lines, inside = [], False
    for line in markdown.splitlines():
        if line.strip().startswith("```"):
            inside = not inside
        elif inside:
            lines.append(line.strip())
    return lines


def sanitize_patterns() -> list[tuple[str, str]]:
    # The same parse nbval applies to a --nbval-sanitize-with file.
    text = read("tests/nbval_sanitize.cfg")
    return re.findall(r"^regex: (.*)$\n^replace: (.*)$", text, flags=re.MULTILINE)


def sanitize(text: str) -> str:
    for regex, replace in sanitize_patterns():
        text = re.sub(regex, replace, text)
    return text


def test_environment_pins_python_311_and_installs_requirements_with_pip():
    assert environment_dependencies() == ["python=3.11", "pip", "pip:", "-r requirements.txt"]


def test_environment_lists_no_packages_of_its_own():
    conda_packages = [
        d for d in environment_dependencies() if d not in ("pip:", "-r requirements.txt")
    ]
    names = {re.split(r"[=<>]", d)[0] for d in conda_packages}
    assert names == {"python", "pip"}, "a package listed in environment.yml could conflict"


def test_requirements_cover_the_lessons_and_the_tests():
    names = {requirement_name(line) for line in requirement_lines() if not line.startswith("-")}
    needed = {
        "jupyterlab",
        "ipykernel",
        "ipywidgets",
        "openai",
        "pydantic",
        "nbformat",
        "nbclient",
        "nbval",
        "pytest",
        "hypothesis",
    }
    assert needed <= names, f"missing from requirements.txt: {sorted(needed - names)}"


def test_every_requirement_has_an_upper_bound():
    unbounded = [
        line
        for line in requirement_lines()
        if not line.startswith("-") and "<" not in line.split(";")[0]
    ]
    assert unbounded == []


def test_requirements_end_with_an_editable_install_of_the_repository():
    assert requirement_lines()[-1] == "-e ."


def test_package_depends_only_on_openai_and_pydantic():
    dependencies = pyproject()["project"]["dependencies"]
    assert sorted(requirement_name(d) for d in dependencies) == ["openai", "pydantic"]


def test_requirements_use_the_package_ranges_for_openai_and_pydantic():
    package = {requirement_name(d): d for d in pyproject()["project"]["dependencies"]}
    course = {requirement_name(line): line for line in requirement_lines()}
    assert course["openai"] == package["openai"]
    assert course["pydantic"] == package["pydantic"]


def test_panel_extra_adds_only_ipywidgets():
    extras = pyproject()["project"]["optional-dependencies"]
    assert [requirement_name(d) for d in extras["panel"]] == ["ipywidgets"]


def test_pytest_runs_notebooks_and_leaves_browser_checks_for_later():
    options = pyproject()["tool"]["pytest"]["ini_options"]
    assert options["testpaths"] == ["tests", "lessons"]
    assert "--nbval" in options["addopts"].split()
    assert '-m "not browser"' in options["addopts"]
    assert {"lessons/solutions", "tests/e2e/notebooks", ".ipynb_checkpoints"} <= set(
        options["norecursedirs"]
    )


def test_readme_gives_the_install_command():
    assert "pip install -r requirements.txt" in fenced_code_lines(read("README.md"))


def test_readme_gives_bare_pytest_as_the_test_command():
    assert "pytest" in fenced_code_lines(read("README.md"))


def test_readme_lists_every_lesson_notebook():
    readme = read("README.md")
    unlisted = [
        p.name
        for p in sorted((ROOT / "lessons").glob("[0-9][0-9]_*.ipynb"))
        if f"lessons/{p.name}" not in readme
    ]
    assert unlisted == []


def test_ci_script_is_executable_and_runs_pytest():
    script = ROOT / ".ci" / "run"
    assert os.access(script, os.X_OK)
    text = script.read_text(encoding="utf-8")
    assert "set -euo pipefail" in text
    assert "python -m pytest" in text


def test_ci_script_treats_no_tests_collected_as_a_failure():
    assert re.search(r'"\$code" -eq 5\b', read(".ci/run"))


def test_provider_variables_are_removed_before_tests_run():
    leaked = [name for name in PROVIDER_VARIABLES if name in os.environ]
    assert leaked == []


def test_nbval_uses_the_sanitize_file_from_any_folder(pytestconfig: pytest.Config):
    path = Path(pytestconfig.option.nbval_sanitize_with)
    assert path.is_absolute()
    assert path == ROOT / "tests" / "nbval_sanitize.cfg"


@pytest.mark.parametrize(
    ("printed", "expected"),
    [
        ("<Tool add at 0x7f3a2b1c9d50>", "<Tool add at 0xADDR>"),
        ("took 1.23 s", "took DURATION"),
        ("took 123 ms", "took DURATION"),
        ("took 45.6 µs", "took DURATION"),
        ("wrote /tmp/tmpab12cd/notes.txt", "wrote TMPPATH"),
        ("path='/tmp/run1/plan.md'", "path='TMPPATH'"),
    ],
)
def test_sanitize_file_masks_what_changes_between_runs(printed: str, expected: str):
    assert sanitize(printed) == expected


@pytest.mark.parametrize("printed", ["3 steps", "2 items in 1 list", "max_turns=10"])
def test_sanitize_file_leaves_ordinary_text_alone(printed: str):
    assert sanitize(printed) == printed


def test_the_provider_variables_are_listed_in_one_place():
    listed = [p.relative_to(ROOT).as_posix() for p in (*ROOT.glob("*.py"),
              *ROOT.glob("harness/**/*.py"), *ROOT.glob("scripts/*.py"),
              *ROOT.glob("tests/**/*.py"), ROOT / ".ci" / "run")
              if "OPENAI_" + "PROJECT_ID" in p.read_text(encoding="utf-8")]
    assert listed == ["harness/live/openai_model.py"]


@pytest.mark.parametrize("script", sorted((ROOT / "benchmarks").glob("*.py")),
                         ids=lambda p: p.stem)
def test_every_benchmark_still_imports_what_it_measures(script):
    # A benchmark is run by hand, so nothing else notices when a module it uses moves.
    spec = importlib.util.spec_from_file_location(f"benchmark_{script.stem}", script)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # a dataclass in it looks its module up there
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    assert callable(getattr(module, "main", None))


def test_the_package_holds_only_its_modules_and_the_sample_workspace():
    """A lesson once saved a run into harness/workspace/ (a loop variable reused a name)."""
    import subprocess

    tracked = subprocess.run(["git", "ls-files", "harness"], cwd=ROOT, capture_output=True,
                             text=True, check=True).stdout.split()
    strays = [p for p in tracked if not p.endswith(".py")
              and not p.startswith("harness/sample_workspace/")]
    on_disk = [p.relative_to(ROOT).as_posix() for p in (ROOT / "harness").rglob("*")
               if p.is_file() and p.suffix not in (".py", ".pyc")
               and "sample_workspace" not in p.parts]
    assert strays == [] and on_disk == []
