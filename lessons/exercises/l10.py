"""Checks for lesson 10, processes and command templates. Each one runs the real harness on a
scripted model, and the tools start real processes.

`check_report_env` writes a small report script into a copy of the sample shop, puts two
secrets into the harness's environment for the length of the run (and takes them out
again, whatever happens), and reads what the script saw: the region, and no secret. It
also notes every program the tool starts, so a shell shows up even when the script got
what it needed.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from course import IN_BROWSER, check

from harness import (
    Agent,
    CommandTool,
    Event,
    ScriptedModel,
    Tool,
    Workspace,
    parallel,
    say,
    tool_call,
)

GOOD_IDS = ("ORD-1001", "ORD-1002", "ORD-1003")  # ids with a record: it is printed
UNKNOWN_IDS = ("ORD-9999", "ORD-0000", "ORD-2024")  # order ids without one: the script says so
BAD_IDS = (  # (value, why it must be refused)
    ("ORD-1001; rm -rf /", "a second command"),
    ("$(whoami)", "command substitution"),
    ("`id`", "backticks"),
    ("ORD-1001\nORD-1002", "a newline"),
    ("-h", "an option"),
    ("ORD-1001 --verbose", "a smuggled flag after a space"),
    ("../records/ORD-1001", "a path"),
    ("ORD-10011", "five digits: exactly four, {4}"),
    ("ORD-100", "three digits: exactly four, {4}"),
    ("ord-1001", "lower case: only capital ORD-, no case-insensitive flag"),
    ("Ord-1001", "mixed case: only capital ORD-, no case-insensitive flag"),
    ("ABC-1001", "another prefix: only ORD-, not any capitals"),
    ("ORD_1001", "an underscore for the dash: a '.' in a pattern matches any character"),
    ("ORD1001", "no dash"),
    ("ORD-\u0661\u0662\u0663\u0664", "Arabic-Indic digits: \\d matches any Unicode digit, "
     "[0-9] only 0 to 9"),
    ("ORD-\uff11\uff10\uff10\uff11", "full-width digits: \\d matches any Unicode digit, "
     "[0-9] only 0 to 9"),
    ("ORD-1001\n", "a trailing newline"),
    ("ORD-1001 ", "a trailing space"),
    ("xORD-1001", "text before the id"),
    ("order ORD-1001 please", "the id inside longer text"),
)


@check
def check_strict_query_tool(make_query_tool: Callable[[Path], Tool]) -> str:
    """Give your tool valid ids and injection attempts through a real run."""
    values = GOOD_IDS + UNKNOWN_IDS + tuple(value for value, _ in BAD_IDS)
    with tempfile.TemporaryDirectory() as tmp:
        ws = Workspace.sample(tmp)
        query = make_query_tool(ws.root)
        assert isinstance(query, CommandTool), (
            f"return a CommandTool, not {type(query).__name__}: its template is split into "
            "argv once, when the tool is made, and the model fills in values, never a command "
            "(a @tool function of your own checks nothing of that)")
        assert query.name == "query_record", f"name the tool 'query_record', not {query.name!r}"
        params = sorted(query.schema()["function"]["parameters"]["properties"])
        assert params == ["record_id"], f"the model should fill only record_id, not {params}"
        calls = [tool_call("query_record", record_id=v, id=f"call_{i}")
                 for i, v in enumerate(values)]
        model = ScriptedModel([  # a few calls a reply: a reply may hold at most 10
            *(parallel(*calls[k:k + 8]) for k in range(0, len(calls), 8)),
            say("Done."),
        ])
        with _programs_started() as started:
            result = Agent(model, [query]).run("Look up these orders.")
    results = {e.call_id: e for e in result.events if e.type == "tool_result"}
    for i, value in enumerate(GOOD_IDS):
        event = results[f"call_{i}"]
        assert event.ok and f'"id": "{value}"' in event.output, (
            f"{value} should print its record, but got: {event.output[:200]}")
    for i, value in enumerate(UNKNOWN_IDS, start=len(GOOD_IDS)):
        event = results[f"call_{i}"]
        assert event.status != "invalid_arguments", (
            f"{value} is an order id (ORD- and four digits) and your pattern refused it: "
            "accept every order id, not only the ones the shop has now. The script answers "
            "for an id it has no record of ('no record with id ...')")
        assert f"no record with id {value}" in event.output, (
            f"{value} should reach the script, which says it has no such record, but got: "
            f"{event.output[:200]}")
    shell = _shell_in(started)
    assert shell is None, (
        f"your tool started a shell ({shell!r}): a shell reads every character of its "
        "command line. Make the template the script's own command line, "
        "python tools/query_record.py --id {record_id}, which runs without one")
    for i, (value, why) in enumerate(BAD_IDS, start=len(GOOD_IDS) + len(UNKNOWN_IDS)):
        event = results[f"call_{i}"]
        assert event.status == "invalid_arguments", (
            f"{value!r} ({why}) got past your pattern and was stopped only later "
            f"({event.status}: {(event.output.splitlines() or [''])[-1][:120]!r}). Refuse it "
            "before anything runs, with a pattern that accepts only ORD- and four digits "
            "from 0 to 9, and nothing before or after them")
    return (f"{len(GOOD_IDS)} valid ids printed their records, {len(UNKNOWN_IDS)} without a "
            f"record reached the script; all {len(BAD_IDS)} injection attempts and near-miss "
            "ids were refused before any process started.")


REGION = "eu"
SECRETS = {  # in the harness's environment while the check runs; a tool process sees none
    "SHOP_DB_URL": "postgres://support:hunter2@db.larkspur.example/orders",
    "SHOP_PAYMENTS_KEY": "pk-course-example-not-a-real-key",
}
REPORT = "tools/shipping_report.py"
SEEN = "tools/shipping_report.seen.json"  # what the script saw, written for the check
SLOW = "tools/shipping_report.slow"  # when it exists, the script takes 4 s
DEADLINE = 1.0  # max_seconds of the check's second run, in which the script is slow
REPORT_SCRIPT = '''\
"""The shipping report of the shop's region: SHOP_REGION=eu python tools/shipping_report.py

The region is a setting of the deployment, read from the environment, as a deployed
program reads its settings. (The check that wrote this script also has it note the
environment it got, in shipping_report.seen.json.)
"""

import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
(HERE / "shipping_report.seen.json").write_text(json.dumps(dict(os.environ)), encoding="utf-8")
if (HERE / "shipping_report.slow").exists():  # the check's second run: a slow database
    time.sleep(4)
region = os.environ.get("SHOP_REGION")
if not region:
    print("error: SHOP_REGION is not set (the region to report on: eu or us)", file=sys.stderr)
    sys.exit(2)
orders = [json.loads(p.read_text(encoding="utf-8"))
          for p in sorted((HERE.parent / "data" / "records").glob("ORD-*.json"))]
print(f"Shipping report, region {region}: {len(orders)} orders")
for order in orders:
    print(f"  {order['id']}  {order['status']}")
'''
SHELLS = {"sh", "bash", "dash", "zsh", "ksh", "fish", "cmd", "cmd.exe", "powershell", "pwsh"}


@contextmanager
def _secrets_set() -> Iterator[None]:
    """The harness's environment with `SECRETS` in it; afterwards exactly as it was."""
    before = dict(os.environ)
    os.environ.update(SECRETS)
    try:
        yield
    finally:
        for name in set(os.environ) - set(before):
            del os.environ[name]
        for name, value in before.items():
            if os.environ.get(name) != value:
                os.environ[name] = value


@contextmanager
def _programs_started() -> Iterator[list[list[str]]]:
    """Every command line started meanwhile (``subprocess.Popen`` starts them all)."""
    started: list[list[str]] = []
    real = subprocess.Popen

    class Watched(real):
        def __init__(self, args, *rest, **kwargs) -> None:
            argv = [args] if isinstance(args, str | bytes | os.PathLike) else list(args)
            started.append((["sh"] if kwargs.get("shell") else []) + [os.fsdecode(a) for a in argv])
            super().__init__(args, *rest, **kwargs)

    subprocess.Popen = Watched
    try:
        yield started
    finally:
        subprocess.Popen = real


def _shell_in(started: list[list[str]]) -> str | None:
    """The first command line that runs a shell, from the shell on; or None. The
    sandbox's own first step (``sh -c 'exec "$@" 9<"$0"' FILTER bwrap ...``: it opens its
    seccomp filter, then becomes bwrap) reads no word of the command: looked past."""
    for argv in started:
        if argv[1:3] == ["-c", 'exec "$@" 9<"$0"']:
            argv = argv[4:]
        for i, word in enumerate(argv):
            if Path(word).name.lower() in SHELLS:
                return " ".join(argv[i:])[:120]
    return None


@check
def check_report_env(make_report_tool: Callable[[Path], Tool]) -> str:
    """Run your tool in a real run with secrets in the harness's environment; read what
    the script saw."""
    with tempfile.TemporaryDirectory() as tmp:
        ws = Workspace.sample(tmp)
        (ws.root / REPORT).write_text(REPORT_SCRIPT, encoding="utf-8")
        report = make_report_tool(ws.root)
        assert isinstance(report, Tool), (f"return a tool (a @tool function), not "
                                          f"{type(report).__name__}")
        assert report.name == "shipping_report", (f"name the tool 'shipping_report', not "
                                                  f"{report.name!r}")
        params = sorted(report.schema()["function"]["parameters"]["properties"])
        assert not params, (
            f"the model fills in {params}: it should fill in nothing. The region is your "
            "setting, not the model's choice: with a parameter, any reply (or a sentence in "
            "a document it read) picks the region. Set SHOP_REGION in your code")
        if IN_BROWSER:  # the run below starts the script: a program
            return ("the tool's name and parameters are right (on a local install this check "
                    "also runs it and reads what the script saw; a browser tab cannot start "
                    "a program)")
        model = ScriptedModel([tool_call("shipping_report"), say("Here is the report.")])
        with _secrets_set(), _programs_started() as started:
            result = Agent(model, [report]).run("Send me the shipping report.")
        [event] = [e for e in result.events if e.type == "tool_result"]
        seen_file = ws.root / SEEN
        seen = json.loads(seen_file.read_text(encoding="utf-8")) if seen_file.exists() else None
    first = (event.output.splitlines() or [""])[-1][:160]
    assert seen is not None, (
        f"the script never ran ({event.status}: {first!r}). Run "
        f"[sys.executable, {REPORT!r}] in root (cwd=root)")
    leaked = sorted(name for name, value in seen.items()
                    if name in SECRETS or any(s in value for s in SECRETS.values()))
    if leaked:
        missed = ("; a filter of secret-looking names (KEY, TOKEN, ...) lets a password inside "
                  "a URL through" if "SHOP_PAYMENTS_KEY" not in leaked else "")
        raise AssertionError(
            f"the script saw the harness's secrets: {', '.join(leaked)}{missed}. Start it with "
            "run_process, whose environment is the allowlist plus what you pass as env=, and "
            f"pass only {{'SHOP_REGION': {REGION!r}}}: os.environ, or a copy of it with the "
            "region added, is every variable the harness has")
    assert "SHOP_REGION" in seen, (
        f"the script saw no SHOP_REGION and said: {first!r}. The allowlist keeps out every "
        "variable it does not name, yours too (setting it in os.environ does not get it "
        f"through): pass env={{'SHOP_REGION': {REGION!r}}} to run_process")
    assert seen["SHOP_REGION"] == REGION, (
        f"SHOP_REGION was {seen['SHOP_REGION']!r}: the report is for {REGION!r}")
    shell = _shell_in(started)
    assert shell is None, (
        f"your tool started a shell ({shell!r}). The region got through, but a shell reads "
        "every character of its command line, which is what run_process and command "
        "templates avoid: run the script's argv itself with run_process, and give it the "
        "region as env=")
    assert "PATH" in seen, (
        f"the script started without PATH (it saw only {sorted(seen)}): you replaced its "
        "environment instead of adding to the allowlisted one, and a process started without "
        "run_process gets neither its sandbox nor its timeout. Start it with "
        "run_process(argv, cwd=root, env=...)")
    assert event.ok and f"region {REGION}" in event.output, (
        f"the tool's result should be the report the script printed, not {first!r}: return "
        "what run_process returns")
    took, stopped = _slow_run(make_report_tool)
    assert took < DEADLINE + 1.5, (
        f"with max_seconds={DEADLINE:g}, the run's deadline passed while the report ran, but "
        f"its process went on ({took:.1f} s in all: {stopped.output[:80]!r}). Give "
        "shipping_report a parameter control: RunControl | None = None (the call path fills "
        "it in; the model never sees it) and pass it on, run_process(..., control=control), "
        "so the process is killed when the run stops (lesson 09)")
    return (f"the script got SHOP_REGION={REGION} and none of the harness's secrets, without "
            "a shell, the model read its report, and a slow report stopped with the run.")


def _slow_run(make_report_tool: Callable[[Path], Tool]) -> tuple[float, Event]:
    """A run with a deadline in which the script takes longer: (seconds, its tool_result)."""
    with tempfile.TemporaryDirectory() as tmp:
        ws = Workspace.sample(tmp)
        (ws.root / REPORT).write_text(REPORT_SCRIPT, encoding="utf-8")
        (ws.root / SLOW).write_text("", encoding="utf-8")
        model = ScriptedModel([tool_call("shipping_report"), say("Here is the report.")])
        started = time.monotonic()
        result = Agent(model, [make_report_tool(ws.root)], max_seconds=DEADLINE).run(
            "Send me the shipping report.")
        took = time.monotonic() - started
    [event] = [e for e in result.events if e.type == "tool_result"]
    return took, event
