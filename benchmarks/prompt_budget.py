"""What planning costs in the prompt: the size of every text the model reads because of it;
and the fixed part of every request of each lesson's main agent.

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

BUDGET_TOKENS = 450  # issue 29 (600 before; 522 measured then)
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


def fixed_parts() -> list[tuple[str, int, int, int]]:
    """(lesson's agent, system prompt, skills index in it, tool schemas), in estimated
    tokens: what its first request carries before the task, each agent built as its lesson
    builds it (offline; the MCP server of lesson 14 is left out: its schemas are its own)."""
    from harness import Agent, Permissions, ScriptedModel, Workspace, say, tool
    from harness.skills import Skills

    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    ws = Workspace.sample()
    read_only = Permissions({"read_file": "allow", "list_files": "allow",
                             "search_docs": "allow"})
    agents = {
        "01 the loop (one tool)": dict(tools=[add]),
        "02 the workspace's tools": dict(tools=ws.tools),
        "03 read-only permissions": dict(tools=ws.tools, permissions=read_only),
        "04-05 planning": dict(tools=ws.tools, planning=True),
        "06-07 planning, sub-agents": dict(tools=ws.tools, planning=True, subagents=True,
                                           subagent_tools=["search_docs", "read_file"]),
        "13 the same, a 4,000 window": dict(tools=ws.tools, planning=True, subagents=True,
                                            context_window=4000),
        "14 skills": dict(tools=ws.tools, skills=Skills(ws.root / "skills")),
    }
    rows = []
    for name, given in agents.items():
        model = ScriptedModel([say("ok")])
        Agent(model, given.pop("tools"), **given).run("the task")
        request = model.requests[0]
        system = request["messages"][0]["content"]
        index = system[system.find("Skills:"):] if "Skills:" in system else ""
        rows.append((name, estimate_tokens(len(system)), estimate_tokens(len(index)),
                     estimate_tokens(len(json.dumps(request["tools"])))))
    return rows


def main() -> int:
    print(f"{'main agent (lesson)':<30}{'system':>8}{'skills':>8}{'schemas':>9}{'fixed':>7}")
    for name, system, index, schemas in fixed_parts():
        print(f"{name:<30}{system:>8}{index:>8}{schemas:>9}{system + schemas:>7}")
    print("(estimated tokens each request carries before the conversation; skills: the")
    print(" index, inside the system prompt)\n")
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
