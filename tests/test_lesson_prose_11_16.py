"""Lessons 11 to 16 (issue 33): the text agrees with the outputs under it, credits what it
builds on to the lesson that taught it, shows what the model saw (the lesson format of the
HarnessX article), and a cell that cannot run in the browser edition says why truly.

Each test reads the committed notebook (as tests/test_lesson_prose.py does) and pins the
corrected sentence against the output it talks about.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from tests.test_lesson_prose import Lesson, said

LESSONS = Path(__file__).resolve().parent.parent / "lessons"


def code(lesson: Lesson) -> list[str]:
    return ["".join(c["source"]) for c in lesson.cells if c["cell_type"] == "code"]


# -- 13: a quarter of the window, and what makes it up ------------------------------------------


def test_l13_the_quarter_of_the_window_is_the_messages_and_the_tool_schemas():
    l13 = Lesson("13")
    out = l13.output("panel_model.steps +=")
    context = int(re.search(r"Context: ~([\d,]+) tokens of 4,000 \(25%\)", out).group(1)
                  .replace(",", ""))
    messages = int(re.search(r"in all\s+~\s*(\d+) tokens", out).group(1))
    schemas = int(re.search(r"and the tool schemas ~(\d+)", out).group(1))
    assert messages + schemas == context  # the table plus what it leaves out is the line
    text = said(l13, r"at a quarter of the window, ~([\d,]+) tokens\. The table under it is "
                     r"what the model saw in that request \(`second\.sent\(1\)`\): its "
                     r"messages, ~(\d+) tokens\. The rest, ~(\d+), is the tool schemas")
    assert [int(g.replace(",", "")) for g in text.groups()] == [context, messages, schemas]


def test_l13_before_request_is_shown_as_an_outline_of_the_functions_it_calls():
    l13 = Lesson("13")
    assert not any("show_source(Compaction.before_request)" in c for c in code(l13))
    outline = said(l13, r"Its `before_request\(messages\)`, the one method the loop calls, in "
                        r"outline.*?1\. At the first request, `check_fixed`.*?2\. `sync`.*?"
                        r"3\. `due`.*?4\. Over it: a `pre_compact` event, then `compact`.*?"
                        r"5\. No smaller than before\? `restore`.*?6\. A `compaction` event")
    assert outline
    source = (LESSONS.parent / "harness" / "context" / "compaction.py").read_text()
    body = source[source.index("    def before_request"):source.index("    def compact(")]
    for name in ("check_fixed", "self.sync", "self.due", "self.compact", "self.restore"):
        assert name in body, f"the outline names {name}, which before_request no longer calls"


# -- 14: the escaping is lesson 03's -----------------------------------------------------------


def test_l14_credits_the_escaping_to_lesson_03s_approval_prompt():
    l14 = Lesson("14")
    said(l14, r"shown with its invisible characters escaped \(the `\\uXXXX` form of lesson "
              r"03's approval prompt, `ask_on_stdin`\)")
    assert "lesson 07's panel" not in l14.text()
    said(Lesson("03"), r"shown escaped, `\\u202e`")  # where it is taught


# -- 11, 13, 14: what the model sees -------------------------------------------------------------


@pytest.mark.parametrize("stem, call", [("11", "result.sent(4)"), ("13", "second.sent(1)"),
                                        ("14", "skill_run.sent(2)"),
                                        ("15", "refused.sent(refused.turns)")])
def test_the_lesson_shows_what_the_model_saw_in_a_request(stem, call):
    lesson = Lesson(stem)
    assert re.search(r"[Ww]hat the model (sees|saw)", lesson.text())
    assert f"`{call}`" in lesson.text()
    assert any(call in c for c in code(lesson))
    shown = lesson.output(call)
    assert re.search(r"^\[\d+\] (user|tool|assistant)", shown, re.M), shown[:200]


def test_l11_what_the_model_saw_holds_the_reason_its_answer_was_refused():
    out = Lesson("11").output("result.sent(4)")
    assert "<verification>Your answer was not accepted" in out
    assert "docs/policies/returns.md:71" in out


def test_l14_what_the_model_saw_after_load_skill_is_the_skills_body():
    out = Lesson("14").output("skill_run.sent(2)")
    assert "load_skill" in out and "Never promise a refund the policy does not allow" in out


# -- 11, 13: the exercises say the edges their checks try ------------------------------------


def test_l11_exercise_says_how_lines_are_counted_and_what_is_blank():
    l11 = Lesson("11")
    said(l11, r"a last line with no newline after it is a line too")
    said(l11, r"a line of spaces only is blank")
    said(l11, r"two `CommandTool`s \(in a list or a tuple\)")


def test_l13_exercise_says_a_user_message_mid_run_starts_no_round():
    l13 = Lesson("13")
    said(l13, r"only an assistant message starts a round")
    said(l13, r"the reminder of lesson 05, and the stop gate's push-back")


def test_l14_exercise_says_only_true_approves():
    said(Lesson("14"), r"none of them is `True`, so none may approve \(lesson 03\)")


# -- the browser edition: why a cell does not run there --------------------------------------


@pytest.fixture
def course(monkeypatch):
    monkeypatch.syspath_prepend(str(LESSONS))
    import IPython

    import course as module
    cell = "if IN_BROWSER:\n    local_install_prints()"
    shell = type("Shell", (), {"user_ns": {"In": [cell]}})()
    monkeypatch.setattr(IPython, "get_ipython", lambda: shell)
    monkeypatch.chdir(LESSONS.parent)  # no local_outputs.json here
    return module


def test_local_install_prints_says_a_program_by_default(course, capsys):
    course.local_install_prints()
    out = " ".join(capsys.readouterr().out.split())
    assert "a browser tab cannot start one" in out
    assert "package" not in out


def test_local_install_prints_names_the_package_a_cell_needs(course, capsys):
    with course.needs_package("DBOS (dbos)"):
        course.local_install_prints()
    out = " ".join(capsys.readouterr().out.split())
    assert "it needs DBOS (dbos), a package the browser edition does not have" in out
    assert "cannot start" not in out
    course.local_install_prints()  # the reason lasts as long as its block
    assert "a browser tab cannot start one" in " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize("stem, marker", [("14", "show_source(MCPTool.__init__)"),
                                          ("14", "show_source(MCPServer.call)"),
                                          ("14", "load_mcp_config(ws.root"),
                                          ("15", "show_source(DBOSAgent._execute)")])
def test_a_cell_that_needs_a_package_says_so_and_keeps_the_call_the_site_build_finds(stem,
                                                                                    marker):
    [source] = [c for c in code(Lesson(stem)) if marker in c]
    assert "with needs_package(" in source
    assert "local_install_prints()" in source  # scripts/build_site.py finds it by this text


def test_a_cell_that_starts_a_program_keeps_the_default_reason():
    [source] = [c for c in code(Lesson("15")) if "kill_in_flight(first" in c]
    assert "local_install_prints()" in source and "needs_package" not in source


if __name__ == "__main__":
    sys.exit(pytest.main([__file__]))


def test_l12_and_l16_name_what_the_model_sees():
    """Issue 33: HarnessX's "what the model sees" in each later lesson at least once."""
    said(Lesson("12"), r"The cost is easy to see in what the model sees: every request sends "
                       r"the system prompt and the schema of every tool the agent has")
    l16 = Lesson("16")
    said(l16, r"reads her line in its system prompt \(what the model sees: printed first below\)")
    shown = l16.output('sent = model.requests[0]["messages"][0]["content"]')
    assert shown.startswith("Memory: what earlier runs kept") and "(Dana)" in shown
