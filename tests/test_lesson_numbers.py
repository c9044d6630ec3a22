"""More of what lessons 00, 02, 09, 10, 13 and 14 state, against their committed outputs and the
checks their exercises run (test_lesson_prose.py holds the rest; same approach)."""

from __future__ import annotations

import re
import sys

from test_lesson_prose import LESSONS, Lesson, said

WORDS = {"two": 2, "three": 3, "five": 5, "ten": 10, "twenty": 20}


def code_cell(lesson: Lesson, code: str) -> str:
    [cell] = [c for c in lesson.cells if c["cell_type"] == "code" and code in "".join(c["source"])]
    return "".join(cell["source"])


def test_l00_the_first_agent_is_as_short_as_the_text_says():
    l00 = Lesson("00")
    said(l00, r"a whole agent in under twenty lines")
    lines = [line for line in code_cell(l00, "def answer(messages):").splitlines()
             if line.strip()]
    assert len(lines) < 20


def test_l02_the_calls_that_reached_the_function_are_the_ones_the_text_names():
    l02 = Lesson("02")
    reached = WORDS[said(l02, r"(\w+) calls reached the function").group(1).lower()]
    never = WORDS[said(l02, r"The other (\w+) never ran").group(1)]
    out = l02.output("print(\"    ->\", call_tool(apply_discount, arguments))")
    results = re.findall(r"-> \((True|False), ['\"](.*?)['\"]\)", out)
    ran = [r for r in results if r[0] == "True" or r[1].startswith("Error: ValueError")]
    assert (len(ran), len(results) - len(ran)) == (reached, never)


def test_l09_the_delegations_and_the_parents_calls_add_up():
    l09 = Lesson("09")
    ran = WORDS[said(l09, r"(\w+) delegations ran").group(1).lower()]
    out = l09.output("print(\"the parent's calls:\"")
    assert f"delegations run: {ran}" in out
    ok = int(re.search(r"'ok': (\d+)", out).group(1))
    if ok != ran:  # any ok call that is not a delegation is explained
        said(l09, r"The parent's eleventh `ok` is its own second turn")
        assert ok == ran + 1


def test_l10_the_strict_query_tool_check_tries_what_the_text_says():
    sys.path.insert(0, str(LESSONS))
    from exercises import l10 as check

    l10 = Lesson("10")
    match = said(l10, r"a real run with (\w+) valid ids and (\w+) near misses")
    assert (WORDS[match.group(1)], WORDS[match.group(2)]) == (len(check.GOOD_IDS),
                                                               len(check.BAD_IDS))


def test_l14_the_refund_ledger_holds_the_one_approved_refund():
    l14 = Lesson("14")
    said(l14, r"the ledger holds exactly one line")
    out = l14.output("refunds.jsonl")
    ledger = out.split("refunds.jsonl:", 1)[1].strip().splitlines()
    assert len(ledger) == 1 and '"amount_eur": 45.0' in ledger[0]
    assert "89.0 EUR -> no" in out and "45.0 EUR -> yes" in out


def test_l14_the_body_enters_from_the_request_the_text_names():
    l14 = Lesson("14")
    first = int(said(l14, r"the body from request (\d+) on").group(1))
    out = l14.output("BODY_LINE =")
    rows = re.findall(r"request (\d+): the index in it, the body (in|not in) it", out)
    assert rows and all((int(n) >= first) == (where == "in") for n, where in rows)


def test_l14_the_description_is_cut_where_the_text_says():
    l14 = Lesson("14")
    said(l14, r"cut at 1,000 characters")
    out = l14.output("define's description as sent")
    assert "the first 1,000 are shown" in out


def test_l13_the_offloaded_file_is_the_page_to_the_character():
    l13 = Lesson("13")
    said(l13, r"the file holds the full page, to the character")
    said(l13, r"`result.sent\(n\)` rebuilds request `n`")
    out = l13.output("is the first case file:")
    assert re.search(r"context/\S+ is the first case file: True", out)
    assert "every request rebuilt from the result: True" in out
