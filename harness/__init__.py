"""harness: a small, readable LLM agent harness, built step by step in the course.

    from harness import Agent, ScriptedModel, tool, tool_call, say, TodoList, Hooks, Permissions
    from harness import OpenAIModel, Workspace          # extensions, imported on first use

The core (the files in this folder) depends only on ``pydantic``. The sub-packages are
imported only by who uses them:

    harness/live/       OpenAIModel, its settings, provider quirks, streaming, the probe
    harness/workspace/  the workspace's file tools, search, processes, sandbox, templates
    harness/ui/         the plan panel, the approval prompt, event lines, the terminal
    harness/durable/    the call log (intent before each call, resume, replay), verification
"""

from importlib import import_module
from typing import Any

from .agent import Agent
from .control import Budget, RunControl
from .events import EVENTS, Event
from .hooks import Hooks, Permissions
from .mechanism import Answer, Mechanism, Note
from .models import ChatModel, ModelReply
from .outcomes import OUTCOMES, ModelError, RunOver
from .result import RunResult
from .scripted import RequestInfo, ScriptedModel, parallel, say, tool_call
from .settings import Settings
from .tools import Tool, ToolResult, tool

MOVED = {"verify": "durable.verify"}  # harness.verify, as lesson 11 reads it
LAZY = {"TodoItem": "harness.todo", "TodoList": "harness.todo"}  # the plan's pydantic models
EXTENSIONS = {  # name: the sub-package module that holds it, imported when first used
    "OpenAIModel": "harness.live.openai_model", "Workspace": "harness.workspace.folder",
    "CommandTool": "harness.workspace.commands", "CallLog": "harness.durable.calllog",
    "ask_on_stdin": "harness.ui.approval", "doctor": "harness.ui.doctor",
}


def __getattr__(name: str) -> Any:
    if name in EXTENSIONS or name in LAZY:
        return getattr(import_module({**LAZY, **EXTENSIONS}[name]), name)
    if name in ("planning", "reminder", "subagent", "todo", "verify"):  # harness.todo, ...
        return import_module(f"harness.{MOVED.get(name, name)}")
    raise AttributeError(f"module 'harness' has no attribute {name!r}")


__all__ = ["EVENTS", "OUTCOMES", "Agent", "Answer", "Budget", "ChatModel", "Event", "Hooks",
           "Mechanism", "ModelError", "ModelReply", "Note", "Permissions", "RequestInfo",
           "RunControl", "RunOver", "RunResult", "ScriptedModel", "Settings", "TodoItem",
           "TodoList", "Tool", "ToolResult", "parallel", "say", "tool", "tool_call",
           *EXTENSIONS]  # TodoItem, TodoList: built on first use (pydantic models cost ~60 ms)
__version__ = "0.2.0"
