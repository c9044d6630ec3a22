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
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..extend import Extension, register
from ..mechanism import Mechanism
from ..stack import Layer
from ..tools import Tool, tool

NAME = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")
MAX_NAME, MAX_DESCRIPTION = 64, 1_024  # as the Agent Skills format has them
MAX_BODY = 12_000  # characters of a body load_skill returns
MAX_SKILLS = 50  # skills in the index
MAX_FILES = 20  # files named beside a body


@dataclass(frozen=True)
class Skill:
    """One skill: its name and description (the index), and where its SKILL.md is."""

    name: str
    description: str
    path: Path

    @property
    def folder(self) -> Path:
        return self.path.parent


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
        for path in sorted(self.folder.glob("*/SKILL.md")):
            try:
                skill = read_skill(path)
            except ValueError as exc:
                self.problems.append(f"{path.parent.name}/SKILL.md: {exc}")
                continue
            if len(self.skills) >= MAX_SKILLS:
                self.problems.append(f"{path.parent.name}: past the {MAX_SKILLS} skills "
                                     "an index may hold")
                continue
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

    def load(self, name: str) -> str:
        """A skill's body, read from disk now, and the files beside it."""
        skill = self.skills.get(name)
        if skill is None:
            known = ", ".join(self.skills) or "none"
            raise ValueError(f"no skill named {name[:64]!r}; the skills are: {known}")
        body = split_frontmatter(skill.path.read_text(encoding="utf-8"))[1].strip()
        if len(body) > self.max_body:
            body = (f"{body[:self.max_body]}\n[cut: the body has {len(body):,} characters; "
                    f"the first {self.max_body:,} are shown]")
        files = sorted(p for p in skill.folder.rglob("*") if p.is_file() and p != skill.path)
        listed = [self._shown(p) for p in files[:MAX_FILES]]
        if len(files) > MAX_FILES:
            listed.append(f"... and {len(files) - MAX_FILES} more")
        more = ("\n\nFiles of this skill (read them with read_file when the body points "
                "to them): " + ", ".join(listed)) if listed else ""
        return f"Skill {skill.name} ({self._shown(skill.path)}):\n\n{body}{more}"

    def _shown(self, path: Path) -> str:
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return path.name


def read_skill(path: Path) -> Skill:
    """A SKILL.md's name and description, checked; `ValueError` says what is wrong."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot be read ({exc})") from None
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
    """One run's skills: the index in the system prompt, and the ``load_skill`` tool."""

    def __init__(self, skills: Skills) -> None:
        self.skills = skills

    def prompt(self) -> str:
        return self.skills.index()

    def tools(self) -> list[Tool]:
        if not self.skills.skills:
            return []
        skills = self.skills

        @tool(max_output=skills.max_body + 2_000)
        def load_skill(name: str) -> str:
            """Load a skill's instructions by name (the skills are listed in the system
            prompt). Call it when a task matches a skill, before you start.

            Args:
                name: the skill's name, exactly as listed.
            """
            return skills.load(name)

        load_skill.harness_tool = True  # made by the harness for the run: allowed
        return [load_skill]


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
