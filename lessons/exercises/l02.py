"""Checks for lesson 02, tools. Each one judges behaviour: a real schema, real calls, real folders.

The temperatures and the folders are made when the check runs, so only a tool that
really converts, and a `confine` that really resolves paths, can pass.
"""

from __future__ import annotations

import os
import random
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from course import check

from harness import Agent, ScriptedModel, Tool, parallel, say, tool_call


def _check_schema(t: Tool) -> None:
    fn = t.schema()["function"]
    assert fn["name"] == "convert_temperature", (
        f"the tool is named {fn['name']!r}; name the function convert_temperature")
    assert fn["description"] and fn["description"] != "convert_temperature", (
        "the tool has no description: write a docstring, the model reads it")
    params = fn["parameters"]
    props = params.get("properties", {})
    assert set(props) == {"celsius", "to"}, (
        f"the parameters are {sorted(props)}; expected exactly celsius and to")
    assert props["celsius"].get("type") == "number", (
        "celsius should be a number in the schema: annotate it as float")
    assert set(props["to"].get("enum", ())) == {"fahrenheit", "kelvin"}, (
        "'to' should list its allowed values in the schema: annotate it as "
        "Literal[\"fahrenheit\", \"kelvin\"]")
    assert set(params.get("required", ())) == {"celsius", "to"}, (
        "both parameters should be required: give them no default value")
    missing = [name for name, prop in props.items() if not prop.get("description")]
    assert not missing, (
        f"no description for {missing}: add an Args: section to the docstring")


@check
def check_convert_temperature(convert_temperature: Any) -> str:
    """Judge a `@tool` converting Celsius to Fahrenheit or Kelvin: its schema and its calls."""
    if not isinstance(convert_temperature, Tool):
        convert_temperature(celsius=100.0, to="fahrenheit")  # an unfinished stub raises here
        raise AssertionError("convert_temperature is a plain function: decorate it with @tool")
    _check_schema(convert_temperature)
    rng = random.SystemRandom()
    c1, c2 = round(rng.uniform(-40, 120), 1), round(rng.uniform(-40, 120), 1)
    expected = {"t1": c1 * 9 / 5 + 32, "t2": c2 + 273.15}
    model = ScriptedModel([
        parallel(
            tool_call("convert_temperature", celsius=c1, to="fahrenheit", id="t1"),
            tool_call("convert_temperature", celsius=c2, to="kelvin", id="t2"),
            tool_call("convert_temperature", '{"celsius": "warm", "to": "kelvin"}', id="t3"),
            tool_call("convert_temperature", celsius=c1, to="rankine", id="t4"),
        ),
        lambda messages: say("Converted."),
    ])
    result = Agent(model, [convert_temperature]).run("Convert these temperatures.")
    answers = {m["tool_call_id"]: m["content"] for m in result.messages if m["role"] == "tool"}
    for call_id, want in expected.items():
        got = answers[call_id]
        assert not got.startswith("Error"), f"the call {call_id} failed: {got}"
        try:
            value = float(got)
        except ValueError:
            raise AssertionError(f"the tool returned {got!r}; return the number itself "
                                 "(a float)") from None
        assert abs(value - want) < 0.01, (
            f"{c1 if call_id == 't1' else c2} °C came back as {value}; expected {want:.2f}")
    returned = convert_temperature.fn(celsius=c1, to="fahrenheit")
    assert isinstance(returned, float), (
        f"convert_temperature(celsius={c1}, to='fahrenheit') returned {returned!r}, a "
        f"{type(returned).__name__}; return the number itself, a float (the harness turns it "
        "into the text the model reads)")
    for call_id, what in (("t3", "a text for celsius"), ("t4", "the unit 'rankine'")):
        assert answers[call_id].startswith("Error"), (
            f"a call with {what} was not refused: {answers[call_id]!r}")
    return "the schema tells the model what to send, and the calls convert correctly"


def _refuses(confine: Callable, root: Path, path: str) -> bool:
    try:
        confine(root, path)
    except ValueError:
        return True
    return False


def _roots(base: Path, root: Path, links: bool) -> list[tuple[Path, str]]:
    """The root as the check hands it over: as made, through a symlink, and relative."""
    roots = [(root, "")]
    if links:
        os.symlink(root, base / "ws-link", target_is_directory=True)
        roots.append((base / "ws-link", " (root was given as a symlink to the folder: resolve "
                                        "the root too, and compare real paths)"))
    try:
        relative = Path(os.path.relpath(root))
    except ValueError:  # another drive (Windows): no relative path to it
        return roots
    roots.append((relative, f" (root was given as the relative path {relative.as_posix()!r}: "
                            "resolve the root too, and compare real paths)"))
    return roots


@check
def check_confine(confine: Callable) -> str:
    """Judge ``confine(root, path) -> Path`` on a real folder with symlinks in and out; the
    root is given as it is, through a symlink, and as a relative path."""
    with tempfile.TemporaryDirectory() as base:
        base = Path(base)
        root, outside, evil = base / "ws", base / "outside", base / "ws-evil"
        for folder in (root / "notes", outside, evil):
            folder.mkdir(parents=True)
        (root / "notes" / "a.md").write_text("inside", encoding="utf-8")
        (outside / "secret.txt").write_text("secret", encoding="utf-8")
        (evil / "secret.txt").write_text("secret", encoding="utf-8")
        try:
            os.symlink(outside, root / "way_out")
            os.symlink(root / "notes", root / "shortcut")
        except OSError:  # no symlinks on this system (Windows without developer mode)
            links = False
        else:
            links = True
        real = root.resolve()
        for given, how in _roots(base, root, links):
            _judge(confine, given, how, real, outside, links)
    return ("normal paths resolve inside the root, however the root is given; '..', "
            "absolute paths and symlinks out are refused")


def _judge(confine: Callable, root: Path, how: str, real: Path, outside: Path,
           links: bool) -> None:
    for path, want in (("notes/a.md", real / "notes" / "a.md"),
                       ("notes/new.md", real / "notes" / "new.md"),
                       ("notes/2024/new.md", real / "notes" / "2024" / "new.md"),
                       ("notes/../notes/a.md", real / "notes" / "a.md"),
                       ("./notes//a.md", real / "notes" / "a.md"),
                       *((("shortcut/a.md", real / "notes" / "a.md"),
                          ("shortcut/new.md", real / "notes" / "new.md")) if links else ())):
        try:
            got = confine(root, path)
        except (ValueError, OSError) as exc:
            missing = " (a file about to be written need not exist, nor its folder)" if (
                isinstance(exc, FileNotFoundError) or not (root / path).parent.exists()) else ""
            raise AssertionError(f"confine(root, {path!r}) raised {type(exc).__name__}({exc}), "
                                 f"but that path is inside the root{missing or how}") from None
        assert isinstance(got, (str, Path)) and Path(got) == want, (
            f"confine(root, {path!r}) returned {got!r}; expected the real path "
            f"{want} (root/{want.relative_to(real).as_posix()}): return the resolved "
            f"path you checked, not the path joined to the root{how}")
    for path, why in (("../outside/secret.txt", "'..' climbs out of the root"),
                      ("notes/../../outside/secret.txt", "'..' climbs out of the root"),
                      (str(outside / "secret.txt"), "an absolute path leads outside"),
                      ("../ws-evil/secret.txt", "ws-evil only starts with the root's "
                       "name; compare paths, not strings"),
                      *((("way_out/secret.txt", "way_out is a symlink to a folder "
                          "outside; resolve the path before you compare"),) if links
                        else ())):
        assert _refuses(confine, root, path), (
            f"confine(root, {path!r}) was allowed, but {why}; raise ValueError{how}")
