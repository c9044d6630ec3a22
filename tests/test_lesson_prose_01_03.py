"""Lessons 01-03: what the text says agrees with the outputs under it, and with the
articles where the lessons touch them (issue 33)."""

from __future__ import annotations

import re

import harness
from tests.test_lesson_prose import Lesson, said


def _code(lesson: Lesson) -> str:
    return "\n".join("".join(c["source"]) for c in lesson.cells if c["cell_type"] == "code")


def test_l03_the_alias_list_has_claude_codes_four_and_the_context_extensions_post_compact():
    l03 = Lesson("03")
    four = said(l03, r"`ALIASES` holds the core's (\w+); `post_compact` is not among them: "
                     r"the context extension \(`harness/context/`, lesson 13\) registers it "
                     r"with its `compaction` event, so the output below has a (\w+) line")
    assert four.groups() == ("four", "fifth") and len(harness.hooks.ALIASES) == 4
    printed = l03.output("harness.hooks.ALIASES.items()").split("\n\n")[0].splitlines()
    assert len(printed) == 5 and printed[-1].startswith("post_compact")
    assert "(the context extension's)" in printed[-1]
    assert harness.hooks.event_of("post_compact") == "compaction"
    said(l03, r"the context extension \(`harness/context/`, lesson 13\) adds `post_compact` "
              r"for its `compaction` event")  # beside the hook table too


def test_l03_says_how_harnessx_stop_hook_differs_and_prints_its_counts():
    l03 = Lesson("03")
    said(l03, r"The HarnessX lesson's `Stop` hook prints counts of the run, `turns=\.\.\., "
              r"tool_calls=\.\.\., blocked=0`\. Our `stop` event carries the answer \(`final`\) "
              r"and `turns`, and with a plan \(lesson 07\) `open_items` and `pushbacks`; it does "
              r"not count tool calls or blocked calls\.")
    hooks = l03.output("agent = Agent(model, ws.tools, hooks=print_hooks(), permissions=perms)")
    stop = re.search(r"\[HOOK\] stop turns=(\d+) ", hooks)
    results = re.findall(r"\[HOOK\] tool_result \S+ (\w+) ", hooks)
    line = re.search(r"HarnessX's Stop line: turns=(\d+), tool_calls=(\d+), blocked=(\d+)",
                     l03.output('print(f"HarnessX\'s Stop line'))
    assert stop and line and results
    assert int(line.group(1)) == int(stop.group(1))
    assert int(line.group(2)) == len(results)
    assert int(line.group(3)) == results.count("blocked") == 1


def test_l02_teaches_that_empty_arguments_read_as_an_empty_object():
    l02 = Lesson("02")
    said(l02, r"The first line reads empty arguments as `\{\}`: some providers send `\"\"`")
    out = l02.output("def shop_hours()")
    for shown in ("''     -> Mon-Fri", "None   -> Mon-Fri", "'{}'   -> Mon-Fri"):
        assert shown in out
    assert "'null' -> ToolArgumentError" in out
    assert '(arguments or "").strip() or "{}"' in l02.output("show_source(harness.Tool.parse)")


def test_l01_exercise_names_every_rule_its_check_enforces():
    text = Lesson("01").text()
    for rule in ("the arguments are not valid JSON, or do not fit the function, or the "
                 "function raises",
                 "`json.loads` goes inside the `try`",
                 'json.loads(arguments or "{}")',
                 "put `str(output)` there",
                 "a reply can hold text *and* calls"):
        assert rule in text, f"lesson 01's exercise no longer says {rule!r}"


def test_l01_to_l03_keep_harnessx_lesson_format():
    """The task, the request body, the response, what the human sees, what the model sees."""
    for stem in ("01", "02", "03"):
        lesson = Lesson(stem)
        text, code = lesson.text(), _code(lesson)
        assert re.search(r"\*\*What the human sees\.?\*\*", text), stem
        assert re.search(r"\*\*What the model sees\.?\*\*", text), stem
        assert "show_request(" in code and ".run(" in code, stem
        assert "show_messages(" in code or "show_events(" in code, stem


def test_l02_the_plain_function_and_the_tool_keep_their_own_names():
    code = _code(Lesson("02"))
    assert '@tool(name="apply_discount")\ndef apply_discount_tool(' in code
    assert code.count("def apply_discount(") == 1


def test_l02_confine_exercise_names_the_roots_and_folders_its_check_uses():
    text = Lesson("02").text()
    assert "The file need not exist yet, nor its folder" in text
    assert "as a relative path, and as a symlink to the real folder" in text


def test_l03_teaches_one_table_for_what_the_model_sees_and_what_runs():
    """Issue 33: implemented (loop.py: one dict of tools gives the schemas and the call path)
    but never taught; the article's sentence quoted exactly."""
    from pathlib import Path

    quote = "模型看到的工具说明与后续分发使用同一份运行期工具表。"
    said(Lesson("03"), r"One table for what the model sees and what runs\.")
    assert quote in "".join("".join(c["source"]) for c in Lesson("03").cells)
    seed = Path(__file__).resolve().parents[2] / "shared" / "seeds" / "000_d2f6747941ee44cd.txt"
    if seed.exists():
        assert quote in seed.read_text(encoding="utf-8")
    from harness import Agent, Permissions, ScriptedModel, say, tool

    @tool
    def shown(x: str) -> str:
        """Echo."""
        return x

    model = ScriptedModel([say("ok")])
    agent = Agent(model, [shown], planning=True, permissions=Permissions({"shown": "allow"}))
    agent.run("hi")
    offered = [t["function"]["name"] for t in model.requests[0]["tools"]]
    assert offered == ["shown", "todo_write"]
