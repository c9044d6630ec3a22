"""The workspace and tool processes (lessons 02 and 10): file tools confined to one
folder, search, processes with an allowlisted environment, the sandbox, the reaper and
command templates."""

from .commands import CommandTool
from .files import EditError, NotTextError, PathError, TooLargeError
from .folder import Workspace
from .sandbox import Sandbox

__all__ = ["CommandTool", "EditError", "NotTextError", "PathError", "Sandbox", "TooLargeError",
           "Workspace"]
