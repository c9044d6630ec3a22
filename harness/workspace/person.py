"""Folders that are the person's: the model reads them and never writes them.

A skills folder is one (harness/skills/): whatever a ``SKILL.md`` says goes into every
later agent's system prompt, so a skill the model wrote for itself would be an
instruction it gave its own future runs. ``Skills(folder)`` keeps its folder here; the
file tools refuse to write inside it (folder.py) and the sandbox binds it read-only
(sandbox.py), so ``run_shell`` cannot write there either. A person adds a skill by hand.
A memory folder is another (harness/memory/): only its ``remember`` tool writes there.
"""

from __future__ import annotations

import os

READ_ONLY: set[str] = set()  # real paths, for every workspace of this process
SKILLS = ("(a skills folder): the model reads it and never writes it; a person adds a "
          "skill by hand")
WHY: dict[str, str] = {}  # a folder's reason, as the model reads it when a write is refused


def keep_read_only(folder: str | os.PathLike, why: str = SKILLS) -> None:
    """Make ``folder`` (and everything in it) read-only to the model's tools; ``why`` ends
    the refusal the model reads ("... is inside a folder that is the person's {why}")."""
    READ_ONLY.add(os.path.realpath(folder))
    WHY[os.path.realpath(folder)] = why


def read_only_at(path: str | os.PathLike) -> str | None:
    """The person's folder ``path`` is in (or is), or None."""
    real = os.path.realpath(path)
    for folder in READ_ONLY:
        if real == folder or real.startswith(folder.rstrip(os.sep) + os.sep):
            return folder
    return None


def read_only_inside(root: str | os.PathLike) -> list[str]:
    """The person's folders that exist inside ``root`` (for the sandbox to bind)."""
    top = os.path.realpath(root).rstrip(os.sep) + os.sep
    return sorted(f for f in READ_ONLY if f.startswith(top) and os.path.isdir(f))
