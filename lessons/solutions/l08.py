"""Reference solutions for lesson 08, reading a run."""

from __future__ import annotations

from harness import RunResult


def summarize(result: RunResult) -> dict:
    """The shape of a run, from its result and its events (sub-agents' events included)."""
    results = [e for e in result.events if e.type == "tool_result"]
    return {
        "outcome": result.outcome,
        "turns": result.turns,
        "tool_calls_ok": sum(e.ok for e in results),
        "tool_calls_failed": sum(not e.ok for e in results),
        "reminders": sum(e.type == "reminder" for e in result.events),
        "pushbacks": sum(e.type == "stop_gate" for e in result.events),
        "delegations": len(result.delegations),
    }


def tokens_by_agent(result: RunResult) -> dict[str, int]:
    """Each agent's own tokens: the total_tokens of its model replies, added up."""
    tokens: dict[str, int] = {}
    for e in result.events:
        if e.type == "model_reply":
            tokens[e.agent_id] = tokens.get(e.agent_id, 0) + e.usage["total_tokens"]
    return tokens
