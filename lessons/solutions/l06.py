"""Reference solutions for lesson 06, the sub-agent."""

from __future__ import annotations

from harness.subagent import SUBAGENT_SYSTEM


def write_task(messages: list[dict]) -> str:
    """A self-contained task: the customer's question and the file the search found."""
    question = messages[1]["content"]
    path = messages[-1]["content"].splitlines()[0].split(":")[0]
    return (f"A customer asks: {question}\n"
            f"Read {path} and the customer's order record, then quote the section of "
            f"the policy that applies.")


def build_subagent_request(parent_messages: list[dict], task: str) -> list[dict]:
    """The sub-agent starts from its own prompt and the task: nothing of the parent's."""
    return [{"role": "system", "content": SUBAGENT_SYSTEM},
            {"role": "user", "content": task}]
