"""harness: a small, readable LLM agent harness, built step by step in the course.

    from harness import Agent, ScriptedModel, OpenAIModel, tool, tool_call, say
    from harness import TodoList, TodoItem, Hooks, Permissions, Workspace

The core depends only on ``pydantic`` (and ``openai`` once you make an `OpenAIModel`);
the plan panel needs ``ipywidgets`` and is imported from ``harness.panel``.
"""

from .agent import Agent
from .approval import ask_on_stdin
from .calllog import CallLog
from .commands import CommandTool
from .control import RunControl
from .doctor import doctor
from .events import Event
from .hooks import Hooks, Permissions
from .models import ChatModel, ModelError, ModelReply
from .openai_model import OpenAIModel
from .result import OUTCOMES, RunResult
from .scripted import RequestInfo, ScriptedModel, parallel, say, tool_call
from .todo import TodoItem, TodoList
from .tools import Tool, ToolResult, tool
from .workspace import Workspace

__all__ = [
    "OUTCOMES",
    "Agent",
    "CallLog",
    "ChatModel",
    "CommandTool",
    "Event",
    "Hooks",
    "ModelError",
    "ModelReply",
    "OpenAIModel",
    "Permissions",
    "RequestInfo",
    "RunControl",
    "RunResult",
    "ScriptedModel",
    "TodoItem",
    "TodoList",
    "Tool",
    "ToolResult",
    "Workspace",
    "ask_on_stdin",
    "doctor",
    "parallel",
    "say",
    "tool",
    "tool_call",
]
__version__ = "0.1.0"
