"""Lesson 16's exercise checks accept the reference solutions and reject the mistakes a
learner makes (a rule from one case, a found item without a source), each with a hint that
says what to change; and the lesson quotes the source article's words exactly."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "lessons"))

from exercises.l16 import ANSWERS, BATCHES, NAMES, check_kind_for, check_unsupported  # noqa: E402
from solutions import l16  # noqa: E402

# -- exercise 1: what the cited records support ----------------------------------------------


def test_kind_for_check_accepts_the_reference(capsys):
    assert check_kind_for(l16.kind_for) is True
    assert "PASS" in capsys.readouterr().out


def counts_cited_ids(cited, batch):  # two ids, two cases: the same record twice is a rule
    return "rule" if len(cited) >= 2 else "one-off" if cited else "refused"


def counts_distinct_ids(cited, batch):  # two records about one order make a rule
    records = {r.id: r for r in batch}
    if not cited or any(i not in records for i in cited):
        return "refused"
    return "rule" if len(set(cited)) >= 2 else "one-off"


def one_case_is_a_rule(cited, batch):  # any evidence at all makes a lasting rule
    return "refused" if l16.kind_for(cited, batch) == "refused" else "rule"


def ignores_failed_records(cited, batch):
    return l16.kind_for(cited, [r if r.ok else type(r)(**{**r.__dict__, "ok": True})
                                for r in batch])


def ignores_undos(cited, batch):
    return l16.kind_for(cited, [r for r in batch if r.action != "undo"])


def counts_failed_undos(cited, batch):
    records = {r.id: r for r in batch}
    undone = {r.undoes for r in batch if r.action == "undo"}
    if not cited or any(i not in records or not records[i].ok or i in undone for i in cited):
        return "refused"
    return "rule" if len({records[i].item for i in cited}) >= 2 else "one-off"


def undo_by_item(cited, batch):  # an undo about ORD-1002 voids every record of ORD-1002
    records = {r.id: r for r in batch}
    undone = {r.item for r in batch if r.action == "undo" and r.ok}
    if not cited or any(i not in records or not records[i].ok or records[i].item in undone
                        for i in cited):
        return "refused"
    return "rule" if len({records[i].item for i in cited}) >= 2 else "one-off"


def case_by_action(cited, batch):  # two outcomes are one kind of thing: one case
    records = {r.id: r for r in batch}
    if not cited or any(i not in records or not records[i].ok for i in cited):
        return "refused"
    return "rule" if len({records[i].action for i in cited}) >= 2 else "one-off"


def skips_unknown_records(cited, batch):  # counts what it can find, ignores the rest
    known = [i for i in cited if i in {r.id for r in batch}]
    return l16.kind_for(known, batch)


def crashes_on_unknown_records(cited, batch):
    records = {r.id: r for r in batch}
    undone = {r.undoes for r in batch if r.action == "undo" and r.ok}
    if not cited or any(not records[i].ok or i in undone for i in cited):
        return "refused"
    return "rule" if len({records[i].item for i in cited}) >= 2 else "one-off"


def answers_in_words(cited, batch):
    return {"rule": "a lasting rule", "one-off": "a one-off"}.get(l16.kind_for(cited, batch),
                                                                   "nothing")


@pytest.mark.parametrize("wrong, says", [
    (counts_cited_ids, "the same record twice is still one case"),
    (counts_distinct_ids, "count items, not records"),
    (one_case_is_a_rule, "one record is one case"),
    (ignores_failed_records, "op-5 did not succeed"),
    (ignores_undos, "op-8 undid op-3"),
    (counts_failed_undos, "the undo op-8 failed, so op-3 stands"),
    (undo_by_item, "not everything about its item"),
    (case_by_action, "two cases, whatever their actions"),
    (skips_unknown_records, "op-9 is not a record of this batch"),
    (crashes_on_unknown_records, "your code raised KeyError"),
    (answers_in_words, "return one of ('rule', 'one-off', 'refused')"),
])
def test_kind_for_check_rejects_a_plausible_mistake(capsys, wrong, says):
    assert check_kind_for(wrong) is False
    assert says in capsys.readouterr().out


def test_a_rule_from_one_case_is_shown_with_what_the_harness_said_to_it(capsys):
    assert check_kind_for(one_case_is_a_rule) is False
    out = capsys.readouterr().out
    assert "The harness, given your 'rule': Refused, memory unchanged: a lasting rule needs " \
           "more than one case" in out


# -- exercise 2: a found item without a source --------------------------------------------------


def test_unsupported_check_accepts_the_reference(capsys):
    assert check_unsupported(l16.unsupported) is True
    assert "PASS" in capsys.readouterr().out


def only_empty_sources(found, calls):
    return [i["claim"] for i in found if not i["sources"]]


def exists_is_enough(found, calls):  # a failed or blocked call is taken as evidence
    return [i["claim"] for i in found if not i["sources"] or any(s not in calls
                                                                 for s in i["sources"])]


def only_errors_fail(found, calls):  # a blocked call (status "blocked") passes
    return [i["claim"] for i in found
            if not i["sources"] or any(s not in calls or calls[s].status == "error"
                                       for s in i["sources"])]


def first_source_only(found, calls):
    def bad(item):
        call = calls.get(item["sources"][0]) if item["sources"] else None
        return call is None or call.status != "ok" or any(
            n not in call.output for n in NAMES.findall(item["claim"]))
    return [i["claim"] for i in found if bad(i)]


def status_of_the_first_source_only(found, calls):
    def bad(item):
        first = calls.get(item["sources"][0]) if item["sources"] else None
        shown = " ".join(calls[s].output for s in item["sources"] if s in calls)
        return first is None or first.status != "ok" or any(
            n not in shown for n in NAMES.findall(item["claim"]))
    return [i["claim"] for i in found if bad(i)]


def stops_at_the_first_flaw(found, calls):
    return l16.unsupported(found, calls)[:1]


def no_names_check(found, calls):  # any call that succeeded supports any claim
    return [i["claim"] for i in found
            if not i["sources"] or any(calls.get(s) is None or calls[s].status != "ok"
                                       for s in i["sources"])]


def names_in_every_source(found, calls):  # too strict: each source must show everything
    flawed = l16.unsupported(found, calls)
    strict = [i["claim"] for i in found if any(
        calls.get(s) is not None and n not in calls[s].output
        for s in i["sources"] for n in NAMES.findall(i["claim"]))]
    return [i["claim"] for i in found if i["claim"] in flawed or i["claim"] in strict]


def order_ids_only(found, calls):  # a wrong date goes through
    flawed = no_names_check(found, calls)
    return [i["claim"] for i in found if i["claim"] in flawed or any(
        n not in " ".join(calls[s].output for s in i["sources"] if s in calls)
        for n in re.findall(r"\b[A-Z]{3}-\d+\b", i["claim"]))]


def everything_when_one_is_flawed(found, calls):
    return [i["claim"] for i in found] if l16.unsupported(found, calls) else []


def crashes_on_a_made_up_id(found, calls):
    return [i["claim"] for i in found if not i["sources"]
            or any(calls[s].status != "ok" for s in i["sources"])]


def a_true_or_false(found, calls):
    return bool(l16.unsupported(found, calls))


@pytest.mark.parametrize("wrong, says", [
    (only_empty_sources, "for a source that is no call of the run, unsupported returned []"),
    (exists_is_enough, "for a source that failed"),
    (only_errors_fail, "for a source the permissions blocked"),
    (first_source_only, "for a claim with two sources, each showing part of it"),
    (status_of_the_first_source_only, "for a good source, then one that failed"),
    (stops_at_the_first_flaw, "for two flawed items"),
    (no_names_check, "for the wrong call cited"),
    (names_in_every_source, "for a claim with two sources, each showing part of it"),
    (order_ids_only, "for a date its source does not show"),
    (everything_when_one_is_flawed, "for a found item without sources, unsupported returned "
                                    "['ORD-1002 was delivered on 2024-05-06', 'Ben reported"),
    (crashes_on_a_made_up_id, "calls.get(source), not calls[source]"),
    (a_true_or_false, "return a list of claims"),
])
def test_unsupported_check_rejects_a_plausible_mistake(capsys, wrong, says):
    assert check_unsupported(wrong) is False
    assert says in capsys.readouterr().out


# -- the lesson quotes the article exactly ---------------------------------------------------

SEED = ROOT.parent / "shared" / "seeds" / "004_6effe4cacdf995cc.txt"
QUOTES = [  # copied from the seed: the found/inferred/missing rule, then the five memory rules
    "查到了什么、推测了什么、还缺什么，都需要分清楚，不能查到一个配置值，就说问题已经解决了。",
    "修改事项、调整状态、合并、撤销和处理结果这些操作记录，也可以作为来源，不必每次再补一段备注。",
    "操作本身未必说明原因。把某条事项标成“无需处理”，可能只是已经在线下做完了，"
    "不能直接记成“以后这类消息都不用管”。",
    "归档要结合本批记录判断，引用有效来源，区分一次性例外和长期经验，证据不足就保留原记忆。",
    "这些经验存在用户私有的上下文里。消息分析维护临时记忆，归档维护归档记忆，都可以查看和编辑。",
    "提示词、规则和标签仍由用户决定是否修改或采用。",
]


def lesson_text() -> str:
    [path] = (ROOT / "lessons").glob("16_*.ipynb")
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")


@pytest.mark.parametrize("quote", QUOTES, ids=range(len(QUOTES)))
def test_the_lesson_quotes_the_articles_rules_word_for_word(quote):
    assert quote in lesson_text()
    if SEED.exists():  # the seed sits beside the repository in the course's workspace
        assert quote in SEED.read_text(encoding="utf-8").replace("\n", "")


def test_the_exercises_say_how_many_cases_their_checks_try():
    text = " ".join(lesson_text().split())
    words = {"ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14}
    batches = re.search(r"The check hands your function (\w+) batches", text).group(1)
    answers = re.search(r"The scripted model gives (\w+) answers", text).group(1)
    assert (words[batches], words[answers]) == (len(BATCHES), len(ANSWERS))


# -- issue 33: a rule half applied, an order the check's data never had -----------------------


def last_cited_only(cited, batch):  # checks the last cited record, counts every item
    records = {r.id: r for r in batch}
    undone = {r.undoes for r in batch if r.action == "undo" and r.ok}
    last = cited[-1] if cited else None
    if last is None or last not in records or not records[last].ok or last in undone:
        return "refused"
    items = {records[i].item for i in cited if i in records}
    return "rule" if len(items) >= 2 else "one-off"


def test_kind_for_check_rejects_checking_only_the_last_cited_record(capsys):
    assert check_kind_for(last_cited_only) is False
    assert "check every cited record, not only the last one" in capsys.readouterr().out


def sorted_claims(found, calls):  # the right claims, in alphabetical order
    return sorted(l16.unsupported(found, calls))


def test_unsupported_check_rejects_claims_in_another_order(capsys):
    assert check_unsupported(sorted_claims) is False
    assert "in the answer's order" in capsys.readouterr().out
