"""Command templates: the model picks a tool and fills in parameters, never a command.

From the controlled-execution article (lesson 00 lists the sources)::

    CommandTool("query_record", "Look up an order record.",
                template="python tools/query_record.py --id {record_id}",
                params={"record_id": "the order id, e.g. ORD-1001"})

The template is split into argv once, when the tool is made. Each value the model
sends must match a safe pattern, must not start with ``-``, and lands inside exactly one
argv element; no shell ever reads it, so ``; rm -rf /`` is just an odd id. The command
runs like `run_shell` (process.py): in the sandbox where there is one, with ``cwd`` as
its only writable folder (the harness's current folder when ``cwd`` is not given).
"""

from __future__ import annotations

import shlex
import string
import sys
from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, ConfigDict, Field, create_model

from ..control import RunControl
from ..tools import DEFAULT_MAX_OUTPUT, Tool, ToolResult
from .process import run_process
from .sandbox import Sandbox


# Letters, digits and ``_ .,:=/-``. Not ``@`` (``@notes.txt`` makes gcc, javac, and
# argparse programs with fromfile_prefix_chars read more options from a file) and not
# ``+`` (``+cmd`` is an option to vim, less and others).
SAFE_VALUE = r"[\w .,:=/-]{1,200}"


def _no_option(value: str) -> str:
    if value.startswith("-"):
        raise ValueError("must not start with '-' (it would read as an option)")
    return value


class CommandTool(Tool):
    """A tool that runs a fixed command template; the model supplies only parameters.

    ``params`` maps each ``{placeholder}`` of the template to a description. A template
    starting with ``python`` runs with the interpreter that runs the harness. Each value
    must match ``pattern`` (a safe character set by default), must not start with
    ``-`` (no smuggled flags), and replaces its placeholder inside one argv element.

    ``side_effects`` is True by default (a command may change anything): replaying a
    saved run returns its recorded result instead of running it again. Set it False for
    a pure lookup, so a replay runs it for real. ``sandbox``: its limits and network
    (`Sandbox`; by default no network and the default limits).
    """

    def __init__(self, name: str, description: str, *, template: str, params: dict[str, str],
                 cwd: str | Path | None = None, timeout: float = 30,
                 pattern: str = SAFE_VALUE, max_output: int = DEFAULT_MAX_OUTPUT,
                 side_effects: bool = True, sandbox: Sandbox | None = None) -> None:
        self.argv = shlex.split(template)
        if not self.argv:
            raise ValueError("a command template needs a program to run")
        if placeholders(self.argv[0], template):
            raise ValueError("the program of a command template must be fixed, not a parameter")
        # The program is fixed now; `python` means the interpreter running the harness.
        self.argv[0] = sys.executable if self.argv[0] == "python" else self.argv[0].format()
        used = [name for token in self.argv[1:] for name in placeholders(token, template)]
        unknown, unused = set(used) - set(params), set(params) - set(used)
        if unknown:
            raise ValueError(f"template {template!r} uses {sorted(unknown)}, which params "
                             f"does not describe: add them to params")
        if unused:
            raise ValueError(f"template {template!r} must use every parameter; it does not "
                             f"use {sorted(unused)}")
        fields = {p: (Annotated[str, AfterValidator(_no_option)],
                      Field(description=d, pattern=f"^(?:{pattern})$"))
                  for p, d in params.items()}
        args_model = create_model(f"{name}_args", __config__=ConfigDict(extra="forbid"), **fields)
        if "run_control" in params:
            raise ValueError("'run_control' is the harness's own argument; name the "
                             "placeholder otherwise")
        super().__init__(name, description, args_model, self._run, max_output=max_output,
                         side_effects=side_effects, control="run_control")
        self.cwd, self.timeout, self.sandbox = cwd, timeout, sandbox

    def _run(self, run_control: RunControl | None = None, **values: str) -> ToolResult:
        argv = [self.argv[0], *(token.format_map(values) for token in self.argv[1:])]
        return run_process(argv, cwd=self.cwd, timeout=self.timeout, max_output=self.max_output,
                           control=run_control, sandbox=self.sandbox)


def placeholders(token: str, template: str) -> list[str]:
    """The ``{name}`` placeholders of one argv token (``{{`` and ``}}`` are literal braces)."""
    try:
        parsed = list(string.Formatter().parse(token))
    except ValueError as exc:
        raise ValueError(f"template {template!r}: {exc}; write a literal brace as "
                         "{{ or }}") from None
    names = []
    for _, name, spec, conversion in parsed:
        if name is None:
            continue
        if not name.isidentifier() or spec or conversion:
            raise ValueError(f"template {template!r}: write each placeholder as a plain "
                             f"{{name}}, not {{{name}{'!' + conversion if conversion else ''}"
                             f"{':' + spec if spec else ''}}}")
        names.append(name)
    return names
