"""What a person sees (lessons 03, 07): the plan panel and its widget, the approval
prompt, one line per event, the terminal and doctor. Importing this imports no widget
library: `PlanPanel` loads ipywidgets when one is made."""

from .approval import ask_on_stdin
from .display import escape, format_event, short
from .panel import PanelState
from .widget import PlanPanel

__all__ = ["PanelState", "PlanPanel", "ask_on_stdin", "escape", "format_event", "short"]
