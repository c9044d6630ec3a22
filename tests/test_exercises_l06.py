"""Lesson 06 exercise checks: each accepts the reference solution and rejects a wrong one."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "lessons"))

from exercises.l06 import check_build_subagent_request, check_write_task
from solutions import l06 as solution


def test_write_task_check_accepts_the_reference():
    assert check_write_task(solution.write_task) is True


def test_write_task_check_rejects_a_hard_coded_task_that_ignores_the_messages(capsys):
    def hard_coded(messages: list[dict]) -> str:
        return ("A customer asks: Order ORD-1002: I opened my new headphones and they work "
                "fine, but I do not like the fit. Can I return them?\n"
                "Read docs/policies/returns.md and the customer's order record, then quote "
                "the section of the policy that applies.")

    assert check_write_task(hard_coded) is False
    assert "not a fixed one" in capsys.readouterr().out


def test_write_task_check_rejects_a_policy_path_that_is_always_the_same(capsys):
    def returns_policy_always(messages: list[dict]) -> str:
        return (f"A customer asks: {messages[1]['content']}\n"
                "Read docs/policies/returns.md and the order record, then quote the rule.")

    assert check_write_task(returns_policy_always) is False
    assert "warranty.md" in capsys.readouterr().out


def test_write_task_check_rejects_a_task_without_the_path():
    def question_only(messages: list[dict]) -> str:
        return f"A customer asks: {messages[1]['content']} Quote the policy that applies."

    assert check_write_task(question_only) is False


def test_write_task_check_rejects_a_task_that_points_at_the_parents_context():
    def refers_back(messages: list[dict]) -> str:
        return "Read the file the search above found and answer the user's question."

    assert check_write_task(refers_back) is False


def test_write_task_check_rejects_a_task_without_the_question():
    def path_only(messages: list[dict]) -> str:
        path = messages[-1]["content"].split(":")[0]
        return f"Read {path} and quote the section that applies."

    assert check_write_task(path_only) is False


def test_write_task_check_rejects_the_last_policy_path_of_the_search_result(capsys):
    def last_policy(messages):
        path = re.findall(r"docs/policies/\w+\.md", messages[-1]["content"])[-1]
        return f"A customer asks: {messages[1]['content']}\nRead {path} and quote the rule."

    assert check_write_task(last_policy) is False
    assert "take the path of the first passage" in capsys.readouterr().out


def test_write_task_check_rejects_the_path_of_the_last_passage(capsys):
    def last_passage(messages):
        heads = [line for line in messages[-1]["content"].splitlines()
                 if re.fullmatch(r"[\w./-]+:\d+", line)]
        return (f"A customer asks: {messages[1]['content']}\n"
                f"Read {heads[-1].split(':')[0]} and quote the rule.")

    assert check_write_task(last_passage) is False


def test_write_task_check_rejects_a_policy_guessed_from_the_question():
    def by_keyword(messages):
        question = messages[1]["content"]
        path = ("docs/policies/returns.md" if "return" in question.lower()
                else "docs/policies/warranty.md")
        return f"A customer asks: {question}\nRead {path} and quote the rule."

    assert check_write_task(by_keyword) is False


def test_build_subagent_request_check_accepts_the_reference():
    assert check_build_subagent_request(solution.build_subagent_request) is True


def test_build_subagent_request_check_rejects_the_parents_system_prompt():
    def reuses_parent_system(parent_messages: list[dict], task: str) -> list[dict]:
        return [parent_messages[0], {"role": "user", "content": task}]

    assert check_build_subagent_request(reuses_parent_system) is False


def test_build_subagent_request_check_rejects_the_parents_history():
    def forwards_history(parent_messages: list[dict], task: str) -> list[dict]:
        return [*parent_messages, {"role": "user", "content": task}]

    assert check_build_subagent_request(forwards_history) is False


def test_write_task_check_rejects_dumping_the_whole_conversation(capsys):
    def dump(messages):
        return json.dumps(messages)

    assert check_write_task(dump) is False
    assert "the parent's system prompt" in capsys.readouterr().out


def test_write_task_check_rejects_pasting_the_search_result_under_the_question(capsys):
    def question_and_search(messages):
        return f"{messages[1]['content']}\n\nWhat the search found:\n{messages[-1]['content']}"

    assert check_write_task(question_and_search) is False
    assert "the whole search result" in capsys.readouterr().out


def test_write_task_check_rejects_the_path_with_the_query_instead_of_the_question():
    def query_not_question(messages):
        query = json.loads(messages[2]["tool_calls"][0]["function"]["arguments"])["query"]
        path = messages[-1]["content"].splitlines()[0].split(":")[0]
        return f"Read {path} and answer: {query}"

    assert check_write_task(query_not_question) is False


def test_write_task_check_accepts_the_path_with_its_line_number():
    def with_line(messages):
        where = messages[-1]["content"].splitlines()[0]
        return f"A customer asks: {messages[1]['content']}\nRead {where} and quote the rule."

    assert check_write_task(with_line) is True


def test_build_subagent_request_check_says_the_system_prompt_is_missing(capsys):
    def task_only(parent_messages, task):
        return [{"role": "user", "content": task}]

    assert check_build_subagent_request(task_only) is False
    out = capsys.readouterr().out
    assert "system prompt is missing" in out and "parent's history" not in out


def test_build_subagent_request_check_rejects_the_customer_question_before_the_task(capsys):
    def with_question(parent_messages, task):
        return [solution.build_subagent_request(parent_messages, task)[0], parent_messages[1],
                {"role": "user", "content": task}]

    assert check_build_subagent_request(with_question) is False
    assert "None of the parent's history" in capsys.readouterr().out


def test_build_subagent_request_check_rejects_a_task_with_a_prefix(capsys):
    def prefixed(parent_messages, task):
        system, _ = solution.build_subagent_request(parent_messages, task)
        return [system, {"role": "user", "content": f"Task: {task}"}]

    assert check_build_subagent_request(prefixed) is False
    assert "the task text exactly" in capsys.readouterr().out


def test_build_subagent_request_check_rejects_the_task_as_a_system_message():
    def as_system(parent_messages, task):
        system, _ = solution.build_subagent_request(parent_messages, task)
        return [system, {"role": "system", "content": task}]

    assert check_build_subagent_request(as_system) is False
