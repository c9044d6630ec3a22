"""What planning costs in the prompt: the size of every text the model reads because of it.

    python benchmarks/prompt_budget.py

Planning adds a system-prompt paragraph, two tool schemas (sent with every request), a
plan in each `todo_write` result, and now and then a reminder or a stop-gate push back.
Each is printed in characters and estimated tokens (`harness.models.estimate_tokens`,
about four characters a token). The total must stay under the budget while the texts
still state every rule the model has to follow.
"""

from __future__ import annotations

import json

from harness.models import estimate_tokens
from harness.reminder import REMINDER_TEXT, stop_gate_text
from harness.subagent import Subagents
from harness.todo import PLANNING_PROMPT, TodoList

BUDGET_TOKENS = 600
TYPICAL_PLAN = [
    {"content": "Find the return policy", "status": "completed"},
    {"content": "Check the warranty terms", "status": "in_progress"},
    {"content": "Draft the answer with sources", "status": "pending"},
    {"content": "Re-read the answer against the sources", "status": "pending"},
]


def typical_result() -> str:
    """The `todo_write` result the model reads after sending a 4-item plan."""
    plan = TodoList()
    todo_write = plan.as_tool()
    return todo_write.execute(todo_write.parse(json.dumps({"todos": TYPICAL_PLAN}))).output


def measured() -> dict[str, str]:
    """Every planning text, as the model receives it."""
    return {
        "planning prompt (system)": PLANNING_PROMPT,
        "todo_write schema": json.dumps(TodoList().as_tool().schema()),
        "delegate_task schema": json.dumps(Subagents([], 10).tool.schema()),
        "todo_write result (4 items)": typical_result(),
        "reminder": REMINDER_TEXT.format(rounds=3),
        "stop gate (2 open items)": stop_gate_text([item["content"] for item in TYPICAL_PLAN[2:]]),
    }


OVERHEAD = ("planning prompt (system)", "todo_write schema", "delegate_task schema",
            "todo_write result (4 items)", "reminder")


def main() -> int:
    texts = measured()
    print(f"{'text':<30}{'chars':>7}{'tokens':>8}")
    for name, text in texts.items():
        print(f"{name:<30}{len(text):>7}{estimate_tokens(len(text)):>8}")
    total = sum(estimate_tokens(len(texts[name])) for name in OVERHEAD)
    verdict = "PASS" if total <= BUDGET_TOKENS else "OVER"
    print(f"{'planning overhead':<30}{'':>7}{total:>8}  (prompt + schemas + result + reminder)")
    print(f"{verdict}: {total} of {BUDGET_TOKENS} estimated tokens")
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    raise SystemExit(main())
