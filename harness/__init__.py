"""harness: a small, readable LLM agent harness, built step by step in the course.

    from harness import Agent, ScriptedModel, OpenAIModel, tool
    from harness import TodoList, TodoItem, Hooks, Permissions, Workspace

The core depends only on ``pydantic`` (and ``openai`` once you make an `OpenAIModel`);
the plan panel needs ``ipywidgets`` and is imported from ``harness.panel``.
"""

from .control import RunControl
from .doctor import doctor
from .events import Event
from .hooks import Hooks, Permissions, ask_on_stdin
from .loop import Agent
from .models import ChatModel, ModelError, ModelReply, OpenAIModel, ScriptedModel
from .result import OUTCOMES, RunResult
from .todo import TodoItem, TodoList
from .tools import Tool, ToolResult, tool
from .workspace import Workspace

__all__ = [
    "OUTCOMES",
    "Agent",
    "ChatModel",
    "Event",
    "Hooks",
    "ModelError",
    "ModelReply",
    "OpenAIModel",
    "Permissions",
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
    "tool",
]
__version__ = "0.1.0"
