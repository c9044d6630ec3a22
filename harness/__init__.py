"""harness: a small, readable LLM agent harness, built step by step in the course. The core
(the files in this folder) needs only ``pydantic`` and imports no sub-package; the
sub-packages (live/, workspace/, context/, ...) are imported when first used: the names in
LAZY when read, the extensions in SHIPPED when the first `Agent` is made (extend.py)."""

from importlib import import_module
from typing import Any

from . import extend
from .agent import Agent
from .calls import Call
from .control import Budget, RunControl
from .events import EVENTS, Event
from .hooks import Hooks, Permissions
from .mechanism import Answer, Door, Mechanism, Note
from .models import ChatModel, ModelReply
from .outcomes import OUTCOMES, ModelError, RunOver
from .result import RunResult
from .scripted import RequestInfo, ScriptedModel, parallel, say, tool_call
from .settings import Settings
from .stack import Layer, Stack
from .tools import Tool, ToolResult, tool

LAZY = {  # name: its module. TodoItem, TodoList: pydantic models cost ~60 ms to build
    "TodoItem": "harness.todo", "TodoList": "harness.todo", "CallLog": "harness.durable.calllog",
    "OpenAIModel": "harness.live.openai_model", "Workspace": "harness.workspace.folder",
    "CommandTool": "harness.workspace.commands", "ask_on_stdin": "harness.ui.approval",
    "doctor": "harness.ui.doctor"}
MODULES = {"planning": "harness.planning", "reminder": "harness.reminder", "todo": "harness.todo",
           "subagent": "harness.subagent", "verify": "harness.durable.verify"}  # as lessons read
SHIPPED = ("harness.waiting", "harness.durable", "harness.context", "harness.workspace",
           "harness.live", "harness.skills", "harness.mcp", "harness.answers",
           "harness.memory")  # each registers itself (extend.py)
extend.SHIPPED.extend(SHIPPED)


def __getattr__(name: str) -> Any:
    if name in MODULES:
        return import_module(MODULES[name])
    if name in LAZY:
        return getattr(import_module(LAZY[name]), name)
    raise AttributeError(f"module 'harness' has no attribute {name!r}")


__all__ = ["EVENTS", "OUTCOMES", "Agent", "Answer", "Budget", "Call", "ChatModel", "Door",
           "Event", "Hooks", "Layer", "Mechanism", "ModelError", "ModelReply", "Note",
           "Permissions", "RequestInfo", "RunControl", "RunOver", "RunResult", "ScriptedModel",
           "Settings", "Stack", "Tool", "ToolResult", "parallel", "say", "tool", "tool_call",
           *LAZY]
__version__ = "0.2.0"
