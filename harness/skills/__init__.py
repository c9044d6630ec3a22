"""Skills (lesson 14): know-how the model loads when it needs it, not before.

    skills/
      refund-note/
        SKILL.md            ---
                            name: refund-note
                            description: How to write a refund note. Use when ...
                            ---
                            (the body: steps, rules, examples, in markdown)
        template.md         more files the body may point to

Only the index (each skill's name and description) goes in the system prompt. The
body enters the conversation when the model calls ``load_skill(name)``, a tool on the
one call path like any other (capped, counted in the budget, seen by hooks); files
beside it are read with the workspace's file tools. `Agent(..., skills=folder)`.

A skill is read only from regular files inside its folder, as ``read_file`` reads
(harness/workspace/files.py): no link followed at any step, never a FIFO or a device,
at most `MAX_FILE` bytes. `load_skill` reads through the run's door (door.py), within
the run's clock; a file it may not read is a result the model reads, and the index
made when the agent is made skips it and says why in ``problems``.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from ..extend import Extension, register
from ..mechanism import Mechanism
from ..stack import Layer
from ..tools import Tool, ToolResult, tool
from ..workspace.files import Files
from ..workspace.person import keep_read_only

NAME = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")
MAX_NAME, MAX_DESCRIPTION = 64, 1_024  # as the Agent Skills format has them
MAX_BODY = 12_000  # characters of a body load_skill returns
MAX_FILE = 1_000_000  # bytes a SKILL.md may hold: a bigger one is not read
MAX_SKILLS = 50  # skills in the index
MAX_FILES = 20  # files named beside a body
MAX_LOOKED_AT = 1_000  # names looked at to find them


@dataclass(frozen=True)
class Skill:
    """One skill: its name and description (the index), and where its SKILL.md is."""

    name: str
    description: str
    path: Path

    @property
    def folder(self) -> Path:
        return self.path.parent

    @property
    def file(self) -> str:
        """Its SKILL.md, relative to the skills folder."""
        return f"{self.folder.name}/SKILL.md"


class Skills:
    """The skills in a folder, found when made (``problems`` lists what was skipped).

    >>> skills = Skills(workspace.root / "skills")
    >>> agent = Agent(model, workspace.tools(), skills=skills)
    """

    def __init__(self, folder: str | Path, *, root: str | Path | None = None,
                 max_body: int = MAX_BODY) -> None:
        self.folder = Path(folder)
        self.root = Path(root) if root is not None else self.folder.parent
        self.max_body = max_body
        self.skills: dict[str, Skill] = {}
        self.problems: list[str] = []
        if not self.folder.is_dir():
            raise FileNotFoundError(f"no skills folder at {self.folder}: it holds one folder "
                                    "per skill, each with a SKILL.md")
        keep_read_only(self.folder)  # the person's: never the model's to write (person.py)
        for name in skill_folders(self.folder, self.problems):
            self._add(name)

    def _add(self, name: str) -> None:
        """Read ``name/SKILL.md`` into the index, or say in ``problems`` why not."""
        where = f"{name}/SKILL.md"
        try:
            text = Files.read_text(self.folder, where, MAX_FILE)
            skill = read_skill(text, self.folder / where)
        except ValueError as exc:
            self.problems.append(f"{where}: {refused(self.folder, where, exc)}")
            return
        if len(self.skills) >= MAX_SKILLS:
            self.problems.append(f"{name}: past the {MAX_SKILLS} skills an index may hold")
            return
        self.skills[skill.name] = skill

    def __repr__(self) -> str:
        return f"Skills({self._shown(self.folder)!r}: {', '.join(self.skills) or 'none'})"

    def __call__(self) -> Mechanism:
        """The mechanism for one run (`Agent` makes one per run)."""
        return SkillIndex(self)

    def index(self) -> str:
        """The paragraph the system prompt gets: every skill's name and description."""
        if not self.skills:
            return ""
        lines = [f"- {s.name}: {s.description}" for s in self.skills.values()]
        return ("Skills: instructions for particular kinds of task. When a task matches "
                "one, call load_skill with its name before you start, and follow it.\n"
                + "\n".join(lines))

    def load(self, name: str, door: Any = None) -> str:
        """A skill's body, read from disk now, and the files beside it; `ValueError` says
        why not. ``door``: a run's (read within its clock); without, the same checks."""
        skill = self.skills.get(name)
        if skill is None:
            known = ", ".join(self.skills) or "none"
            raise ValueError(f"no skill named {name[:64]!r}; the skills are: {known}")
        door = door or NO_RUN
        try:
            text = door.read_file(self.folder, skill.file, limit=MAX_FILE)
        except ValueError as exc:
            raise ValueError(f"the skill {name!r} cannot be loaded: "
                             f"{refused(self.folder, skill.file, exc)}") from None
        body = split_frontmatter(text)[1].strip()
        if len(body) > self.max_body:
            body = (f"{body[:self.max_body]}\n[cut: the body has {len(body):,} characters; "
                    f"the first {self.max_body:,} are shown]")
        more = self._beside(skill, door)
        return f"Skill {skill.name} ({self._shown(skill.path)}):\n\n{body}{more}"

    def _beside(self, skill: Skill, door: Any) -> str:
        """The line naming the files beside a body: regular files inside its folder."""
        try:
            files, more = door.within_clock(lambda: Files.list_files(
                self.folder, skill.folder.name, MAX_LOOKED_AT))
        except ValueError:  # the folder became a link since its SKILL.md was read
            return ""
        files = [f for f in files if f != "SKILL.md"]
        listed = [self._shown(skill.folder / f) for f in files[:MAX_FILES]]
        if len(files) > MAX_FILES or more:
            listed.append(f"... and {len(files) - MAX_FILES} more" if len(files) > MAX_FILES
                          else "... and more")
        return ("\n\nFiles of this skill (read them with read_file when the body points "
                "to them): " + ", ".join(listed)) if listed else ""

    def _shown(self, path: Path) -> str:
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return path.name


class _NoRun:
    """What `Skills.load` reads through outside a run: the door's checks, no clock."""

    @staticmethod
    def read_file(root: str | os.PathLike, path: str, *, limit: int) -> str:
        return Files.read_text(root, path, limit)

    @staticmethod
    def within_clock(fn: Any) -> Any:
        return fn()


NO_RUN = _NoRun()


def skill_folders(folder: Path, problems: list[str]) -> list[str]:
    """The names of the folders in ``folder`` that hold a SKILL.md (of any kind: reading
    it checks it), sorted; a link in ``folder`` is not followed, and ``problems`` says so."""
    names = []
    with os.scandir(folder) as entries:
        for entry in sorted(entries, key=lambda entry: entry.name)[:MAX_LOOKED_AT]:
            if entry.is_symlink():
                problems.append(f"{entry.name}: a link, not followed: a skill is a folder "
                                "inside the skills folder")
            elif entry.is_dir(follow_symlinks=False) and os.path.lexists(
                    os.path.join(entry.path, "SKILL.md")):
                names.append(entry.name)
    return names


def refused(folder: Path, where: str, exc: ValueError) -> str:
    """Why ``folder/where`` was not read, in words for whoever put a link there (the
    file check says a link appeared while it was used: true of a race, not of a link)."""
    path = folder
    for part in PurePosixPath(where).parts:
        path = path / part
        try:
            is_link = stat.S_ISLNK(os.lstat(path).st_mode)
        except OSError:
            break
        if is_link:
            return (f"'{where}' goes through a link ('{part}'), not followed: a skill is "
                    "read only from regular files inside its folder")
    return str(exc)


def read_skill(text: str, path: Path) -> Skill:
    """The name and description of the SKILL.md at ``path`` holding ``text``, checked;
    `ValueError` says what is wrong."""
    fields, _ = split_frontmatter(text)
    if not fields:
        raise ValueError("no frontmatter: start the file with ---, a name: line, a "
                         "description: line, and --- again")
    name, description = fields.get("name", "").strip(), " ".join(
        fields.get("description", "").split())
    if not NAME.fullmatch(name) or len(name) > MAX_NAME:
        raise ValueError(f"name {name[:80]!r}: use lower-case letters, digits and single "
                         f"hyphens, at most {MAX_NAME} characters")
    if name != path.parent.name:
        raise ValueError(f"name {name!r} is not its folder's name {path.parent.name!r}")
    if not description:
        raise ValueError("no description: say what the skill does and when to use it")
    if len(description) > MAX_DESCRIPTION:
        raise ValueError(f"the description has {len(description):,} characters; at most "
                         f"{MAX_DESCRIPTION:,}")
    return Skill(name, _printable(description), path)


def split_frontmatter(text: str) -> tuple[dict[str, str], str]:
    """``(fields, body)`` of a file that starts with a ``---`` block of ``key: value``
    lines (quoted values, indented continuation lines and ``>``/``|`` blocks too)."""
    lines = text.lstrip("\ufeff").splitlines()
    if not lines or lines[0].strip() != "---":
        return {}, text
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        return {}, text
    fields: dict[str, list[str]] = {}
    key = None
    for line in lines[1:end]:
        match = re.match(r"([A-Za-z0-9_-]+):\s*(.*)$", line)
        if match and not line[:1].isspace():
            key, value = match.group(1), match.group(2).strip()
            fields[key] = [] if value in (">", "|", ">-", "|-") else [_unquote(value)]
        elif key is not None and line.strip():
            fields[key].append(line.strip())
    return {k: " ".join(v) for k, v in fields.items()}, "\n".join(lines[end + 1:])


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _printable(text: str) -> str:
    from ..ui.display import escape

    return escape(text)


class SkillIndex(Mechanism):
    """One run's skills: the index in the system prompt, and the ``load_skill`` tool,
    which reads through the run's door."""

    def __init__(self, skills: Skills) -> None:
        self.skills = skills

    def prompt(self) -> str:
        return self.skills.index()

    def tools(self) -> list[Tool]:
        if not self.skills.skills:
            return []
        index = self

        @tool(max_output=self.skills.max_body + 2_000)
        def load_skill(name: str) -> str | ToolResult:
            """Load a skill's instructions by name (the skills are listed in the system
            prompt). Call it when a task matches a skill, before you start.

            Args:
                name: the skill's name, exactly as listed.
            """
            return index.load(name)

        load_skill.harness_tool = True  # made by the harness for the run: allowed
        return [load_skill]

    def load(self, name: str) -> str | ToolResult:
        """`Skills.load` through the door; what it refuses is a result the model reads."""
        try:
            return self.skills.load(name, self.door)
        except ValueError as exc:
            return ToolResult(False, f"Error: {exc}")


def skills_of(value: Any) -> Skills:
    """`Agent(skills=...)` takes a `Skills` or the folder that holds them."""
    return value if isinstance(value, Skills) else Skills(value)


@dataclass(frozen=True)
class SkillSettings:
    """The `Agent` keyword of skills."""

    skills: Any = None
    """A `Skills`, or the folder that holds them (lesson 14); None: no skills."""


def skills_layer(agent: Any) -> Layer | None:
    """The skill index of each run of an agent given skills (not of its sub-agents)."""
    given = agent.options["skills"].skills
    if given is None:
        return None
    found = skills_of(given)  # checked now, when the agent is made
    return Layer("skills", lambda door: None if door.depth else found(), order=40,
                 tools=("load_skill",))


register(Extension("skills", settings=SkillSettings, layer=skills_layer, tools=("load_skill",)))
