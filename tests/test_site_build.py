"""scripts/build_site.py, the parts that need no network: the lock, the content, the pins.

The whole build (PyPI, npm, jupyter lite) runs in .ci/run, and every lesson in the site it
builds runs in Chromium (tests/e2e/test_site_browser.py); these check its pieces here.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("build_site", ROOT / "scripts" / "build_site.py")
build_site = importlib.util.module_from_spec(spec)
spec.loader.exec_module(build_site)
sys.path.insert(0, str(ROOT / "lessons"))
import course  # noqa: E402


def wheel(folder: Path, name: str, version: str, requires: list[str] = (),
          modules: tuple[str, ...] = ()) -> Path:
    path = folder / f"{name}-{version}-py3-none-any.whl"
    meta = "\n".join([f"Name: {name}", f"Version: {version}",
                      *(f"Requires-Dist: {r}" for r in requires)])
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(f"{name}-{version}.dist-info/METADATA", meta + "\n")
        for module in modules or (name,):
            archive.writestr(f"{module}/__init__.py", "")
    return path


@pytest.fixture
def core(tmp_path: Path) -> Path:
    (tmp_path / "pyodide-lock.json").write_text(json.dumps(
        {"info": {"abi_version": "2026_0", "python": "3.14.2"}, "packages": {"numpy": {}}}))
    return tmp_path


def test_the_lock_lists_only_the_given_wheels_and_their_browser_dependencies(tmp_path, core):
    wheels = [wheel(tmp_path, "openai", "3.57.0", ["httpx2>=2", "truststore; sys_platform "
                    "!= 'emscripten'", "httpx2-jsfetch; sys_platform == 'emscripten'",
                    "rich; extra == 'cli'"]),
              wheel(tmp_path, "httpx2", "2.16.2"), wheel(tmp_path, "httpx2_jsfetch", "1.0")]
    build_site.write_lock(core, wheels, tmp_path / "lock.json")
    lock = json.loads((tmp_path / "lock.json").read_text())
    assert lock["info"]["abi_version"] == "2026_0"
    assert sorted(lock["packages"]) == ["httpx2", "httpx2-jsfetch", "openai"]  # no CDN entry
    openai = lock["packages"]["openai"]
    assert openai["depends"] == ["httpx2", "httpx2-jsfetch"]  # as Pyodide reads the markers
    assert openai["file_name"] == "openai-3.57.0-py3-none-any.whl"
    assert openai["imports"] == ["openai"] and len(openai["sha256"]) == 64


def test_a_dependency_the_site_does_not_carry_stops_the_build(tmp_path, core):
    wheels = [wheel(tmp_path, "ipywidgets", "8.1.9", ["comm>=0.1.3"])]
    with pytest.raises(SystemExit, match="needs comm"):
        build_site.write_lock(core, wheels, tmp_path / "lock.json")


def test_every_browser_wheel_is_pinned_with_its_hash():
    lines = [line for line in (ROOT / "requirements-browser.txt").read_text().splitlines()
             if line.strip() and not line.startswith("#")]
    assert lines and all(re.fullmatch(r"[\w.-]+==[\w.]+ --hash=sha256:[0-9a-f]{64}", line)
                         for line in lines), lines
    assert "pydantic_core==2.50.5" in " ".join(lines) and "jiter==0.19.0" in " ".join(lines)


def test_the_site_holds_the_lessons_and_what_they_import_but_not_the_solutions(tmp_path):
    build_site.content(tmp_path / "content", floor=False)
    names = {p.name for p in (tmp_path / "content").iterdir()}
    lessons = {p.name for p in (ROOT / "lessons").glob("[0-9][0-9]_*.ipynb")}
    assert lessons <= names and {"course.py", "exercises", "local_outputs.json"} <= names
    assert "solutions" not in names
    # every module a lesson imports from beside it (lesson 08 reads lesson 07's run)
    beside = {p.stem for p in (ROOT / "lessons").glob("*.py")}
    sources = ["".join(cell["source"]) for path in (ROOT / "lessons").glob("[0-9][0-9]_*.ipynb")
               for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]]
    imported = {name for text in sources
                for name in re.findall(r"^(?:import|from) (\w+)", text, re.M)}
    assert "headphones" in imported & beside
    assert {f"{name}.py" for name in imported & beside} <= names


def test_a_process_cell_shows_its_committed_output_in_the_browser():
    lesson = next((ROOT / "lessons").glob("02_*.ipynb"))
    saved = build_site.local_outputs(lesson)
    [cell] = [c for c in json.loads(lesson.read_text())["cells"]
              if "local_install_prints()" in "".join(c["source"])]
    printed = "".join("".join(o["text"]) for o in cell["outputs"] if o.get("name") == "stdout")
    assert saved == {course.cell_key("".join(cell["source"])): printed.rstrip("\n")}
    assert "timed out after 1 s" in printed
