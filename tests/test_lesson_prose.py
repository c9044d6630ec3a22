"""The numbers a lesson's text states agree with the outputs committed under it.

nbval checks that each output is what the code prints today; these tests check that the
sentences around the outputs say the same thing (a round, a count, a cap, a size), so a
change to the harness that moves a number cannot leave the text behind. Each test reads
the committed notebook, finds the sentence and the output it talks about, and compares.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LESSONS = ROOT / "lessons"


class Lesson:
    def __init__(self, stem: str) -> None:
        path = next(LESSONS.glob(f"{stem}_*.ipynb"))
        self.cells = json.loads(path.read_text(encoding="utf-8"))["cells"]

    def text(self) -> str:
        """All the markdown, as one string (line breaks folded to spaces)."""
        return " ".join(" ".join("".join(c["source"]).split())
                        for c in self.cells if c["cell_type"] == "markdown")

    def output(self, code: str) -> str:
        """The printed output of the one code cell whose source contains ``code``."""
        found = [c for c in self.cells if c["cell_type"] == "code" and code in "".join(c["source"])]
        assert len(found) == 1, f"{code!r} is in {len(found)} code cells"
        return "".join("".join(o.get("text", "")) for o in found[0]["outputs"])


def said(lesson: Lesson, pattern: str) -> re.Match:
    match = re.search(pattern, lesson.text())
    assert match, f"the lesson no longer says {pattern!r}: update this test with the text"
    return match


def test_l05_the_rounds_the_text_names_are_the_rounds_the_counter_printed():
    l05 = Lesson("05")
    rounds = said(l05, r"Counting by success reminds it after rounds (\d+) and (\d+)\.")
    printed = re.search(r"counting by success: \[(.*)\]", l05.output("reminders(broken_updates"))
    assert [int(n) for n in rounds.groups()] == [int(n) for n in printed.group(1).split(",")]


def test_l05_the_request_that_carries_the_reminder_is_the_one_printed():
    l05 = Lesson("05")
    request = int(said(l05, r"so request (\d+) arrives with the reminder as its last message")
                  .group(1))
    out = l05.output("print(mini_run(replies, plan_first=True))")
    carrying = re.search(r"request (\d+): .*\n\s+last message: <reminder>", out)
    assert carrying and int(carrying.group(1)) == request


def test_l05_the_budget_run_ends_after_the_requests_the_text_says():
    l05 = Lesson("05")
    budget = int(said(l05, r"the same replies with a budget of (\d+) requests").group(1))
    out = l05.output("print(mini_run(replies, max_turns=")
    assert max(int(n) for n in re.findall(r"request (\d+):", out)) == budget
    assert "turn_limit" in out


def test_l07_l08_turns_requests_and_tokens_in_the_text_match_the_run():
    l07, l08 = Lesson("07"), Lesson("08")
    turns = int(said(l08, r"run should give `completed`, (\d+) turns").group(1))
    assert f"completed after {turns} turns" in l07.output("result = agent.run(TASK, plan_first")
    assert f"completed after {turns} turns" in l08.output("headphones.run()")

    table = l08.output("for i, request in enumerate(model.requests, 1)")
    rows = [line.split() for line in table.splitlines()[1:] if line.strip()]
    forced = [int(row[0]) for row in rows if "todo_write" in " ".join(row)]
    sub = [int(row[0]) for row in rows if row[1] == "sub-agent"]
    first, second = said(l08, r"request (\d+) because of `plan_first=True`, request (\d+) "
                               r"because a delegation had just ended").groups()
    assert forced == [int(first), int(second)]
    assert sub == [int(n) for n in said(l08, r"The sub-agent's requests \((\d+) and (\d+)\)")
                   .groups()]

    usage = l08.output("for d in result.delegations:")
    last = int(re.search(r"context of the last request:\s+~([\d,]+)", usage).group(1)
               .replace(",", ""))
    total = int(re.search(r"all its requests together:\s+~([\d,]+)", usage).group(1)
                .replace(",", ""))
    said(l08, r"last request carried about 2,000 tokens of context, yet the main agent used "
              r"more than six times that")
    assert 1_500 <= last <= 2_500 and 6 <= total / last < 7


def test_l07_the_panel_log_keeps_the_number_of_lines_the_text_says():
    l07 = Lesson("07")
    kept = int(said(l07, r"\*\*Log\*\* keeps the last (\d+) lines").group(1))
    panel = l07.output("show_text(panel.text())")
    log = panel.split("Log:\n")[1].split("\nModel:")[0].splitlines()
    assert len(log) == kept


def test_l10_the_cap_the_text_states_is_the_length_the_model_got():
    l10 = Lesson("10")
    cap = int(said(l10, r"cut to at most `max_output` characters \(([\d,]+) by default")
              .group(1).replace(",", ""))
    got = re.search(r"the model got ([\d,]+)", l10.output("the tool returned"))
    assert int(got.group(1).replace(",", "")) == cap


def test_l12_the_usage_the_text_explains_is_the_usage_printed():
    l12 = Lesson("12")
    total, prompt, completion, reasoning = said(
        l12, r"`total_tokens` is the provider's ([\d,]+), more than ([\d,]+) \+ (\d+): its "
             r"(\d+) reasoning tokens").groups()
    out = l12.output('"reasoning_content": "The customer asks')
    number = {k: v.replace(",", "") for k, v in
              {"t": total, "p": prompt, "c": completion, "r": reasoning}.items()}
    assert (f"'prompt_tokens': {number['p']}, 'completion_tokens': {number['c']}, "
            f"'total_tokens': {number['t']}") in out
    assert f"'reasoning_tokens': {number['r']}" in out
    assert int(number["t"]) > int(number["p"]) + int(number["c"])


@pytest.mark.parametrize("row, message", [
    ("the name is not a tool", "Error: unknown tool"),
    ("the arguments are not valid JSON", "Error: arguments are not valid JSON"),
    ("two JSON values, or a value that is not an object", "Error: arguments must be one JSON "
                                                          "object;"),
    ("a field is unknown, missing or of the wrong type", "Error: invalid arguments:"),
])
def test_l02_the_error_table_gives_the_messages_the_lesson_prints(row, message):
    l02 = Lesson("02")
    assert f"| {row} | `{message}" in " ".join(
        "".join(c["source"]) for c in l02.cells if c["cell_type"] == "markdown")
    printed = " ".join(" ".join("".join(o.get("text", "")) for o in c.get("outputs", []))
                       for c in l02.cells if c["cell_type"] == "code")
    assert message in printed


def number(text: str) -> int:
    return int(text.replace(",", ""))


def test_l13_the_sizes_and_the_compaction_the_text_states_are_the_runs_printed():
    l13 = Lesson("13")
    rows = re.findall(r"request\s+(\d+): ([\d,]+) tokens .* sum ([\d,]+)",
                      l13.output("plain = Agent(plain_model"))
    last = said(l13, r"The 13th request carries ([\d,]+) tokens").group(1)
    total = said(l13, r"the run cost ([\d,]+) input tokens, more than eight times").group(1)
    assert rows[-1] == ("13", last, total)
    assert 8 <= number(total) / number(last) < 9

    request, before, after = said(
        l13, r"One compaction, before request (\d+): it would have carried ([\d,]+) tokens"
             r".* and request \d+ carried ([\d,]+) tokens").groups()
    printed = l13.output('show_events(result.events, types=("pre_compact", "compaction"))')
    assert f"before_tokens={number(before)}, after_tokens={number(after)}" in printed
    sizes = {int(n): number(size) for n, size in
             re.findall(r"request\s+(\d+):\s+([\d,]+) tokens", printed)}
    assert sizes[int(request)] == number(after) and sizes[int(request) - 1] < number(before)
    assert 0.4 < sizes[max(sizes)] / number(last) < 0.6  # "about half of the plain run's"

    share = said(l13, r"what the last request carried, (\d+)% of the window").group(1)
    panel = l13.output("state = PanelState()").split("...")[-1]  # its last lines
    assert f"of 4,000 ({share}%), last request" in panel


# -- issue 21: the numbers lessons 01, 05, 06 and 07 state -------------------------------

def test_l01_the_loop_has_the_number_of_lines_the_text_says():
    l01 = Lesson("01")
    words = said(l01, r"(\w+) lines under the docstring, the loop of \*Build it small\*").group(1)
    source = l01.output("show_source(harness.loop.Run.loop)").strip().splitlines()
    body = [line for line in source[2:] if line.strip()]  # after the def and the docstring
    assert source[1].strip().startswith('"""') and source[1].strip().endswith('"""')
    assert {"Four": 4, "Five": 5, "Six": 6, "Seven": 7}[words] == len(body)


def test_l01_the_all_delivered_answer_asks_for_the_word_the_check_wants():
    said(Lesson("01"), r'say so with the word "delivered", naming none')


def test_l05_the_check_asks_about_as_many_tasks_as_the_text_says():
    import sys

    sys.path.insert(0, str(LESSONS))
    from exercises.l05 import PLAN_TASKS

    stated = int(said(Lesson("05"), r"The check asks about (\d+) tasks").group(1))
    assert stated == len(PLAN_TASKS)


def test_l05_lists_every_trigger_word_of_the_geekagent_rule_and_its_sample_is_forced():
    from harness.reminder import asks_for_steps

    l05 = Lesson("05")
    rule = "/todo|任务清单|然后|最后|再.{0,12}(?:给出|总结|汇总)|并(?:给出|总结|汇总)/i"
    assert rule in l05.text()
    for word in ("并给出", "并总结", "并汇总", "任务清单", "然后", "最后"):
        assert word in l05.text()
    sample = said(l05, r"The article's own sample, \"([^\"]+)\"").group(1)
    assert asks_for_steps(sample) and "并给出" in sample
    printed = l05.output("for task in tasks:")
    assert f"forced  asks for steps: True   {sample}" in printed
    for line in printed.strip().splitlines():  # forced exactly when the words ask for steps
        assert line.startswith("forced") == ("asks for steps: True" in line)


def test_l05_says_geekagent_forces_after_a_delegation_by_name_and_ours_when_it_ran():
    l05 = Lesson("05")
    assert "the GeekAgent article does the same" not in l05.text()
    said(l05, r"The GeekAgent article forces here too, but by name")
    said(l05, r"Ours forces when the call \*ran\*")


def table_rows(output: str) -> list[list[str]]:
    return [line.split() for line in output.splitlines()[1:] if line.strip()]


def test_l06_requests_are_numbered_from_1_like_lesson_05_and_the_text_names_them():
    l06 = Lesson("06")
    rows = table_rows(l06.output("for i, request in enumerate(model.requests"))
    assert int(rows[0][0]) == 1
    forced = [int(row[0]) for row in rows if "todo_write" in " ".join(row)]
    first_sub = next(int(row[0]) for row in rows if row[1] == "sub-agent")
    assert forced == [int(said(l06, r"\*\*What the parent sent next\*\* \(request (\d+),")
                          .group(1))]
    assert first_sub == int(said(l06, r"on its first request \(request (\d+),").group(1))
    steps = [int(n) for n in re.findall(r"\| (\d+) \| (?:parent|sub-agent) \|", l06.text())]
    assert steps == [int(row[0]) for row in rows]  # step n answers request n
    l05 = Lesson("05")
    plan_first = l05.output("planning=True).run(TASK, plan_first=True)")
    assert plan_first.startswith("request 1: ")  # lesson 05 counts from 1 too


def test_l06_says_a_sub_agent_has_no_tools_by_default_as_settings_has_it():
    from harness import Settings

    l06 = Lesson("06")
    assert Settings().subagent_tools == ()
    said(l06, r"only the names in `subagent_tools`: none by default")
    said(l06, r"Ours has no tools by default either")
    assert "Why do ours have tools" not in l06.text()


def test_l06_exercise_text_says_what_the_check_refuses():
    said(Lesson("06"), r"It refuses a task that carries the parent's conversation as it is: "
                       r"the parent's system prompt, or the whole search result")


def test_l08_requests_are_numbered_from_1():
    rows = table_rows(Lesson("08").output("for i, request in enumerate(model.requests"))
    assert int(rows[0][0]) == 1


def test_l07_the_two_last_request_figures_are_explained_by_the_numbers_printed():
    l07 = Lesson("07")
    whole, sent, written = (number(n) for n in said(
        l07, r"\(~([\d,]+) = ~([\d,]+) sent \+ ~([\d,]+) written").groups())
    panel = l07.output("show_text(panel.text())")
    assert f"Tokens: ~{whole:,} last request" in panel
    assert f"Context: ~{sent:,} tokens, last request (main)" in panel
    assert whole == sent + written
    prompts = re.search(r"prompt tokens of each request: \[(.*)\]",  # lesson 08's replay of it
                        Lesson("08").output("for d in result.delegations:")).group(1)
    assert int(prompts.split(",")[-1]) == sent


def test_l07_exercise_1_text_names_every_rule_the_check_enforces():
    l07 = Lesson("07")
    said(l07, r"\*\*keep the plan current\*\*: each item `in_progress` while its work runs")
    said(l07, r"\*\*answer with sources\*\*: the final answer cites the policy as `path:line`")
