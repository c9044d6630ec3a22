"""Skills (harness.skills): the index in the prompt, the body only after load_skill."""

from __future__ import annotations

import pytest

from harness import Agent, Hooks, Permissions, ScriptedModel, Workspace, say, tool_call
from harness.skills import Skills, split_frontmatter


def skill(folder, name, description="Does a thing. Use it when asked.", body="# Body\n"):
    (folder / name).mkdir(parents=True, exist_ok=True)
    (folder / name / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description}\n---\n{body}", encoding="utf-8")


def transcript(result) -> str:
    return "\n".join(str(m.get("content")) for m in result.messages)


def test_the_body_enters_the_transcript_only_after_load_skill():
    ws = Workspace.sample()
    body = (ws.root / "skills/refund-note/SKILL.md").read_text().split("---", 2)[2].strip()
    marker = body.splitlines()[2]  # a step of the body, not in its description
    seen = []
    hooks = Hooks()
    hooks.on("tool_call", lambda e: seen.append(e.tool_name))
    model = ScriptedModel([
        tool_call("read_file", {"path": "README.md"}),
        tool_call("load_skill", {"name": "refund-note"}),
        tool_call("read_file", {"path": "skills/refund-note/template.md"}),
        say("done")])
    result = Agent(model, ws.tools, skills=ws.root / "skills", hooks=hooks,
                   permissions=Permissions({"read_file": "allow"})).run("Write a refund note")
    system = result.messages[0]["content"]
    assert "refund-note: How Larkspur support writes a refund note" in system
    assert "order-lookup:" in system and marker not in system
    for request in model.requests[:2]:  # before load_skill answered
        assert marker not in "\n".join(str(m.get("content")) for m in request["messages"])
    assert marker in str(model.requests[2]["messages"][-1]["content"])
    assert "skills/refund-note/template.md" in str(model.requests[2]["messages"][-1]["content"])
    assert "Refund note: {order id}" in str(model.requests[3]["messages"][-1]["content"])
    assert seen == ["read_file", "load_skill", "read_file"]  # on the one call path
    assert result.outcome == "completed"


def test_load_skill_is_allowed_by_default_and_can_be_denied(tmp_path):
    skill(tmp_path / "skills", "notes")
    steps = [tool_call("load_skill", {"name": "notes"}), say("ok")]
    ok = Agent(ScriptedModel(steps), skills=tmp_path / "skills",
               permissions=Permissions({})).run("x")
    assert [e.status for e in ok.events if e.type == "tool_result"] == ["ok"]
    denied = Agent(ScriptedModel(steps), skills=tmp_path / "skills",
                   permissions=Permissions({"load_skill": "deny"})).run("x")
    assert [e.status for e in denied.events if e.type == "tool_result"] == ["blocked"]


def test_an_unknown_skill_names_the_known_ones(tmp_path):
    skill(tmp_path / "skills", "notes")
    result = Agent(ScriptedModel([tool_call("load_skill", {"name": "nope"}), say("ok")]),
                   skills=tmp_path / "skills").run("x")
    out = next(e.output for e in result.events if e.type == "tool_result")
    assert "no skill named 'nope'" in out and "notes" in out


def test_a_long_body_is_capped_and_counts_against_the_budget(tmp_path):
    skill(tmp_path / "skills", "big", body="word " * 10_000)
    steps = [tool_call("load_skill", {"name": "big"}), tool_call("load_skill", {"name": "big"}),
             say("ok")]
    result = Agent(ScriptedModel(steps), skills=Skills(tmp_path / "skills", max_body=500),
                   max_tool_calls=1).run("x")
    outputs = [e.output for e in result.events if e.type == "tool_result"]
    assert "[cut: the body has 49,999 characters; the first 500 are shown]" in outputs[0]
    assert len(outputs[0]) < 800
    assert result.outcome == "tool_call_limit"


def test_the_body_is_read_when_loaded_not_when_found(tmp_path):
    skill(tmp_path / "skills", "fresh", body="old body")
    skills = Skills(tmp_path / "skills")
    (tmp_path / "skills/fresh/SKILL.md").write_text(
        "---\nname: fresh\ndescription: d\n---\nnew body", encoding="utf-8")
    assert "new body" in skills.load("fresh")


@pytest.mark.parametrize("text, problem", [
    ("no frontmatter", "no frontmatter"),
    ("---\nname: Bad_Name\ndescription: d\n---\n", "lower-case letters"),
    ("---\nname: other\ndescription: d\n---\n", "not its folder's name"),
    ("---\nname: s\n---\n", "no description"),
    ("---\nname: s\ndescription: " + "d" * 1100 + "\n---\n", "at most 1,024"),
])
def test_a_broken_skill_is_skipped_and_says_why(tmp_path, text, problem):
    (tmp_path / "skills/s").mkdir(parents=True)
    (tmp_path / "skills/s/SKILL.md").write_text(text, encoding="utf-8")
    skill(tmp_path / "skills", "good")
    skills = Skills(tmp_path / "skills")
    assert list(skills.skills) == ["good"]
    assert len(skills.problems) == 1 and problem in skills.problems[0]


def test_frontmatter_takes_quotes_and_folded_lines():
    fields, body = split_frontmatter('---\nname: "x"\ndescription: >\n  two\n  lines\n---\nB')
    assert fields == {"name": "x", "description": "two lines"} and body == "B"


def test_an_index_description_is_escaped(tmp_path):
    skill(tmp_path / "skills", "odd", description="Use it \u202e now \x1b[2J")
    index = Skills(tmp_path / "skills").index()
    assert "\u202e" not in index and "\x1b" not in index and "\\u202e" in index


def test_no_skills_no_tool_and_no_prompt(tmp_path):
    (tmp_path / "skills").mkdir()
    model = ScriptedModel([say("ok")])
    result = Agent(model, skills=tmp_path / "skills").run("x")
    assert model.requests[0]["tools"] in (None, [])
    assert "Skills" not in result.messages[0]["content"]


def test_a_skills_folder_that_is_not_there_is_an_error_not_silence(tmp_path):
    with pytest.raises(FileNotFoundError, match="no skills folder"):
        Agent(ScriptedModel([say("x")]), skills=tmp_path / "no-such-folder")
