"""Reference solutions for lesson 03 (hooks and permissions)."""

from __future__ import annotations

import posixpath

from harness import Permissions
from harness.events import Event


def _in_notes(path: str) -> bool:
    return posixpath.normpath(path).startswith("notes/")


def notes_only(event: Event) -> str | None:
    """The one write policy: any call that writes a path outside notes/ is blocked."""
    path = event.get("writes")  # set for every tool that writes a path, whatever its name
    if path is None or _in_notes(path):
        return None
    return f"Blocked: {event.tool_name} may only write inside notes/, not {path!r}."


def research_permissions() -> Permissions:
    """Reads allowed, writes asked (yes only inside notes/), the shell denied."""

    def approve(tool_name: str, arguments: dict) -> bool:
        return tool_name in ("write_file", "edit_file") and _in_notes(arguments.get("path", ""))

    return Permissions(
        {"read_file": "allow", "list_files": "allow", "search_docs": "allow",
         "write_file": "ask", "edit_file": "ask", "run_shell": "deny"},
        default="deny", approve=approve,
    )
