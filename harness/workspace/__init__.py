"""The workspace and tool processes (lessons 02 and 10): file tools confined to one
folder, search, processes with an allowlisted environment, the sandbox, the reaper and
command templates. Registered as the ``workspace`` extension: it lends every run's door
the ``files`` service, so a mechanism's files get the checks its file tools get."""

from ..extend import Extension, register
from .commands import CommandTool
from .files import EditError, Files, NotTextError, PathError, TooLargeError
from .folder import Workspace
from .sandbox import Sandbox

__all__ = ["CommandTool", "EditError", "NotTextError", "PathError", "Sandbox", "TooLargeError",
           "Workspace"]

register(Extension("workspace", services={"files": Files}))
