"""Reference solutions for lesson 12, bring your own."""

from __future__ import annotations

from pathlib import Path

from harness import Agent, CallLog, RunResult, ScriptedModel, Tool

PRESETS = {
    "openai": ("gpt-4o-mini", None, True),
    "deepseek": ("deepseek-chat", "https://api.deepseek.com", True),
    "glm": ("glm-4-flash", "https://open.bigmodel.cn/api/paas/v4/", True),
    "ollama": ("qwen2.5:7b", "http://localhost:11434/v1", False),
    "vllm": ("Qwen/Qwen2.5-7B-Instruct", "http://localhost:8000/v1", False),
}


def make_model(preset: str) -> dict:
    """The OpenAIModel settings of a provider preset, by name (any capitalisation)."""
    try:
        model, base_url, needs_key = PRESETS[preset.strip().lower()]
    except KeyError:
        raise ValueError(f"unknown preset {preset!r}; known: {', '.join(PRESETS)}") from None
    return {"model": model, "base_url": base_url, "needs_key": needs_key}


def replay(path: Path, tools: list[Tool]) -> RunResult:
    """Run the recorded task again: the recorded replies play back, read-only tools run
    for real, tools with side effects get their recorded result."""
    recorded = RunResult.load(path)
    agent = Agent(ScriptedModel.from_run(path), tools, system=recorded.messages[0]["content"])
    return agent.run(recorded.messages[1]["content"], call_log=CallLog.from_run(path))
