"""What a person sees (lessons 03, 07): the plan panel and its widget, the approval
prompt, one line per event, the terminal and doctor. Importing this imports no widget:
`PlanPanel` loads ipywidgets when it is made."""

from .approval import ask_on_stdin
from .display import escape, format_event, short
from .panel import PanelState

__all__ = ["PanelState", "PlanPanel", "ask_on_stdin", "escape", "format_event", "short"]


def __getattr__(name: str):  # noqa: ANN202
    if name == "PlanPanel":
        from .widget import PlanPanel
        return PlanPanel
    raise AttributeError(f"module 'harness.ui' has no attribute {name!r}")
