"""What lessons 00 and 12 and the README say about the course's shape, the package's parts,
the browser edition and the source articles, against the files and the outputs committed
(issue 33; same approach as test_lesson_prose.py)."""

from __future__ import annotations

import re

from test_lesson_prose import ROOT, Lesson, said

from harness.planning import plan_in

PACKAGE = ROOT / "harness"
README = (ROOT / "README.md").read_text(encoding="utf-8")
NUMBERS = {"nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13}

# Article 004 (the controlled-execution article), the two sentences of its cost argument,
# exactly as the article has them.
HEAVY = "为了几个固定查询，就去麻烦一个完整的 Agent，我觉得有点重，也有点烧 token。"
SMALLER = ("通用性肯定比不上成熟的 Agent，但只做这个领域里的几件事，可以把流程收得更小，"
           "把成本和效率放在前面考虑。")


def sub_packages() -> set[str]:
    return {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}


def lines_of(files) -> int:
    return sum(f.read_text(encoding="utf-8").count("\n") for f in files)


def markdown(lesson: Lesson, starts: str) -> str:
    [cell] = [c for c in lesson.cells if c["cell_type"] == "markdown"
              and "".join(c["source"]).startswith(starts)]
    return "".join(cell["source"])


# -- the package's parts: counts and places the text states ------------------------------

def test_l00_counts_the_sub_packages_there_are():
    count = said(Lesson("00"), r"(\w+) sub-packages hold the rest").group(1).lower()
    assert NUMBERS[count] == len(sub_packages())


def test_l12_prints_every_part_and_its_size_as_committed():
    out = Lesson("12").output("package = Path(harness.__file__).parent")
    printed = dict(re.findall(r"^(\S+)\s+(\d+) lines  needs:", out, flags=re.M))
    actual = {"core": lines_of(PACKAGE.glob("*.py"))}
    actual |= {f"{name}/": lines_of((PACKAGE / name).glob("*.py")) for name in sub_packages()}
    assert {k: int(v) for k, v in printed.items()} == actual, (
        "re-execute lesson 12 (scripts/execute_notebooks.py)")


def test_l12_any_count_of_sub_packages_is_the_count_printed():
    l12 = Lesson("12")
    out = l12.output("package = Path(harness.__file__).parent")
    printed = len(re.findall(r"^\w+/\s", out, flags=re.M))
    for word in re.findall(r"\b(\w+) sub-packages\b", l12.text()):
        if word.lower() in NUMBERS or word.isdigit():
            assert NUMBERS.get(word.lower(), word) == printed, f"'{word} sub-packages'"


def test_l12_what_changed_says_which_modules_are_core_and_which_are_not():
    table = markdown(Lesson("12"), "## What changed in harness/")
    assert "the rest are core" not in table
    core, subs = table.split("In sub-packages", 1)
    names = re.compile(r"^\| (`[^|]+`) \|", re.M)
    in_core = [n for cell in names.findall(core) for n in re.findall(r"`([\w/]+\.py)`", cell)]
    in_subs = [n for cell in names.findall(subs.split("## Where to go")[0])
               for n in re.findall(r"`([\w/]+\.py)`", cell)]
    assert in_core and in_subs
    assert all("/" not in n and (PACKAGE / n).is_file() for n in in_core), in_core
    assert all("/" in n and (PACKAGE / n).is_file() for n in in_subs), in_subs


# -- a plan outlives its run ---------------------------------------------------------------

def test_l12_says_a_plan_outlives_its_run_and_how():
    text = Lesson("12").text()
    assert not re.search(r"plan (does not|doesn't|never) outlives? (its|the) run", text)
    said(Lesson("12"), r"so a plan outlives its run: the transcript holds it")
    said(Lesson("12"), r"`agent\.run\(task, messages=result\.messages\)` goes on with the plan")
    said(Lesson("12"), r"`run\(task, plan=\[\.\.\.\]\)`")


def test_the_transcript_holds_the_last_accepted_plan_as_lesson_12_says():
    from harness import Agent, ScriptedModel, say, tool_call

    plan = '{"todos": [{"content": "Find the policy", "status": "in_progress"}]}'
    model = ScriptedModel([tool_call("todo_write", plan), say("Done.")])
    result = Agent(model, planning=True).run("Plan it.")
    assert [item.content for item in plan_in(result.messages)] == ["Find the policy"]


# -- lesson 12 is about the model you bring ----------------------------------------------

def test_l12_every_goal_is_about_the_model_you_bring():
    goals = markdown(Lesson("12"), "## Goals")
    bullets = [b for b in goals.split("\n- ")[1:]]
    assert bullets
    for bullet in bullets:
        assert re.search(r"model|provider|endpoint|server", bullet, re.I), bullet


def test_l12_keeps_packaging_to_one_cell_and_the_checklist_in_the_readme():
    l12 = Lesson("12")
    code = ["".join(c["source"]) for c in l12.cells if c["cell_type"] == "code"]
    assert sum("Path(harness.__file__)" in c for c in code) == 1
    assert not any("def preflight" in c for c in code)
    assert "**Before you ship**" in README and "`README.md` (\"Before you ship\")" in " ".join(
        "".join(c["source"]) for c in l12.cells)


# -- the source articles -------------------------------------------------------------------

def test_l12_quotes_article_004s_cost_argument_exactly():
    l12 = Lesson("12")
    quoted = [line[2:] for c in l12.cells if c["cell_type"] == "markdown"
              for line in "".join(c["source"]).splitlines() if line.startswith("> ")]
    assert quoted == [HEAVY, SMALLER]


def test_l12_the_share_of_input_the_text_names_is_the_one_printed():
    l12 = Lesson("12")
    said(l12, r"Same answer, about a fifth of the input")
    out = l12.output("def cost_of(tools")
    everything, small = (int(n.replace(",", "")) for n in re.findall(r"~([\d,]+) input", out))
    assert 0.15 <= small / everything < 0.25


def test_l00_says_what_the_harnessx_lesson_shows_without_overstating_it():
    text = Lesson("00").text()
    assert "shows every request and reply" not in text
    said(Lesson("00"), r"HarnessX lesson\*\* \(JavaScript\): a teaching harness whose lesson "
                       r"follows one command through, with one example of each")
    said(Lesson("00"), r"controlled-execution article\*\*: a small domain agent, .*for cost "
                       r"\(lesson 12 quotes why\)")


# -- two tracks, with minutes --------------------------------------------------------------

def minutes(text: str) -> dict[str, int]:
    """Lesson number -> minutes, from table rows that start with the lesson's number."""
    return {m.group(1): int(m.group(2))
            for m in re.finditer(r"^\| (\d\d)\b.*\| (\d+) \|$", text, flags=re.M)}


def test_readme_and_l00_give_two_tracks_and_every_lessons_minutes():
    lessons = sorted(p.name[:2] for p in (ROOT / "lessons").glob("[0-9][0-9]_*.ipynb"))
    l00 = markdown(Lesson("00"), "## The idea")
    for where, text in (("README.md", README), ("lesson 00", l00)):
        table = minutes(text)
        assert sorted(table) == lessons, where
        one = sum(v for k, v in table.items() if k <= "07")
        two = sum(v for k, v in table.items() if k > "07")
        flat = " ".join(text.split())
        assert re.search(r"\*\*The harness\*\* \((?:lessons )?00(?:-| to )07, about 8 hours\)",
                         flat), where
        assert 7 * 60 <= one <= 9 * 60, (where, one)
        stated = re.search(r"\*\*Running it for real\*\* \((?:lessons )?08(?:-| to )16, about "
                           r"(\d+)(½)? hours\)", flat)
        assert stated, where
        hours = int(stated.group(1)) + (0.5 if stated.group(2) else 0)
        assert abs(two / 60 - hours) <= 0.5, (where, two)
        assert "The minutes are estimates" in flat, where
    assert minutes(README) == minutes(l00)


# -- the browser edition and the Quick start -------------------------------------------

def test_readme_first_line_gives_the_address_form_the_pages_workflow_publishes():
    intro = README.split("\n## ", 1)[0]
    workflow = (ROOT / ".github" / "workflows" / "pages.yml").read_text(encoding="utf-8")
    assert "actions/deploy-pages" in workflow and "scripts/build_site.py" in workflow
    assert "Open it in your browser" not in intro
    assert "`https://<owner>.github.io/<repository>/`" in intro
    edition = " ".join(README.split("\n## The browser edition\n", 1)[1]
                       .split("\n## ", 1)[0].split())
    assert "Settings, Pages, Source: GitHub Actions" in edition
    assert "https://<owner>.github.io/<repository>/lab/index.html?path=00_setup_and_tour.ipynb" \
        in edition


def test_readme_builds_and_serves_the_site_in_one_command():
    edition = README.split("\n## The browser edition\n", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"```bash\n(.*?)```", edition, re.S)
    one = [line for block in commands for line in block.splitlines()
           if "scripts/build_site.py site/" in line and "python -m http.server -d site/" in line]
    assert one, "one command line that builds the site and serves it"
    assert "8000" in one[0] and "http://localhost:8000/lab/index.html" in edition


def test_readme_says_how_long_pytest_takes():
    quick = README.split("\n## Quick start\n", 1)[1].split("\n## ", 1)[0]
    step = quick.split("2. ", 1)[1].split("```bash", 1)[0]
    assert re.search(r"about \d+ minutes", step)


def test_readme_layout_names_every_sub_package():
    layout = README.split("\n## Repository layout\n", 1)[1]
    named = set(re.findall(r"\b(\w+)/", layout.split("tests/")[0]))
    assert sub_packages() <= named, sorted(sub_packages() - named)
