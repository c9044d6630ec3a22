"""The sample shop's refund agent as a DBOS workflow (lesson 15): a program of its own, so a
lesson can kill it with SIGKILL and let a new one finish the run.

    python durable_shop.py WORKSPACE start  RUN_ID [--ask] [--hang TOOL]
    python durable_shop.py WORKSPACE finish RUN_ID [--hang TOOL]
    python durable_shop.py WORKSPACE start  RUN_ID --returns MARKS ...   (exercise 2's agent)

WORKSPACE is a copy of the sample workspace (``Workspace.sample(folder)``); the run's record
is the SQLite file ``WORKSPACE/dbos.sqlite`` unless ``--db`` names another database.
``start`` runs the task as a new workflow, ``finish`` only launches DBOS, which finds the
runs this worker left unfinished and finishes them, and waits for the run. Both print what
this process did, and exit 0.

The world the tools act on is files in WORKSPACE: ``ran.log`` gets a line each time a tool's
body runs (what really ran), ``data/bank.jsonl`` the refunds the payment provider made
(one per idempotency key, like a real provider's), ``data/outbox.txt`` the emails sent.
``--hang TOOL``: that tool, after its effect and before it returns, writes
``in-flight-TOOL`` and waits to be killed: the lesson kills the process there.

The model is scripted (`ScriptedModel`): it reads the order's record, refunds 45 EUR,
emails the customer and answers from what the tools returned. The tools really run.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
TASK = "Ben Sample (ORD-1002) sent his headphones back: refund 45 EUR and tell him."
RETURN_TASK = "Ben Sample (ORD-1002) wants to return his headphones: arrange it."
RETURN_TOOLS = ("track_parcel", "book_pickup", "set_status", "add_note")
MARKS = ("read_only", "idempotent", "side_effects")


# -- the lesson's side: start a worker, kill it while a call is in flight --------------------

def worker(workspace: Path, *args: str) -> subprocess.Popen:
    """This script in a process of its own (its output: text on stdout)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DBOS")}
    return subprocess.Popen([sys.executable, str(HERE / "durable_shop.py"), str(workspace),
                             *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)


def kill_in_flight(proc: subprocess.Popen, workspace: Path, tool: str) -> int:
    """Wait until ``tool`` is in flight in ``proc`` (its marker file), then SIGKILL it."""
    marker = Path(workspace) / f"in-flight-{tool}"
    deadline = time.monotonic() + 60
    while not marker.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError(f"{tool} never ran: {proc.communicate()[1][-2000:]}")
        time.sleep(0.02)
    marker.unlink()
    proc.send_signal(signal.SIGKILL)  # kill -9: no clean-up, no last words
    proc.communicate()
    return proc.returncode


def finished(proc: subprocess.Popen) -> str:
    """What a worker printed, once it has exited (its error output if it failed)."""
    out, err = proc.communicate(timeout=120)
    if proc.returncode != 0:
        raise RuntimeError(f"the worker failed ({proc.returncode}):\n{err[-3000:]}")
    return out


def describe(report: dict) -> str:
    """A worker's report (its JSON) as lines to read."""
    def counts(steps: dict) -> str:
        return ", ".join(f"{name} x{n}" if n > 1 else name for name, n in steps.items()) or "-"

    def first_line(output: str) -> str:
        return (f"({len(output.splitlines())} lines of JSON)" if output.startswith("{")
                else textwrap.shorten(output, 70, placeholder=" ..."))

    def fill(text: str) -> str:
        return textwrap.fill(text, 96, initial_indent="  ", subsequent_indent="    ")

    lines = [f"run {report['run']}: {report['status']} ({report['outcome']}), "
             f"finished by worker {report['executor']!r}",
             fill(f"steps on record: {', '.join(report['steps'])}"),
             fill(f"answered from the record here: {counts(report['replayed'])}"),
             fill(f"run here: {counts(report['ran'])}")]
    for name, status, output in report["calls"]:
        lines.append(f"  {name:<15} {status:<8} {first_line(output)}")
    return "\n".join(lines)


def world(workspace: Path) -> str:
    """What the tools did to the world: each body that ran, the refunds and emails made."""
    def lines(name: str) -> list[str]:
        path = Path(workspace) / name
        return path.read_text(encoding="utf-8").splitlines() if path.exists() else []

    return "\n".join(["ran.log (a line each time a tool's body ran):",
                      *(f"  {line}" for line in lines("ran.log")),
                      f"refunds the payment provider made: {len(lines('data/bank.jsonl'))}",
                      f"emails sent: {len(lines('data/outbox.txt'))}"])


def two_workers(url: str, workspace: Path) -> str:
    """Lesson 15's Postgres run: worker-1 starts a refund and is killed in the middle of it;
    worker-2, another process on one database (another machine, in production), takes
    worker-1's runs over and finishes them. What it printed, as text."""
    run = "refund-ORD-1002-pg"
    first = worker(workspace, "start", run, "--db", url, "--executor", "worker-1",
                   "--hang", "issue_refund")
    code = kill_in_flight(first, workspace, "issue_refund")
    report = json.loads(finished(worker(workspace, "finish", run, "--db", url, "--executor",
                                        "worker-2", "--take-over", "worker-1")))
    return "\n".join([f"worker-1: exit {code} (SIGKILL while issue_refund was in flight)",
                      f"worker-2: took over worker-1's pending runs: {report['taken']}",
                      describe(report),
                      world(workspace)])


# -- the worker's side: the agent and its tools ------------------------------------------------

def shop_tools(workspace: Path, hang: str | None, marks: dict[str, str] | None) -> list:
    """The refund agent's tools (or, with ``marks``, exercise 2's return tools)."""
    from harness import Workspace, tool
    from harness.durable.dbos import idempotency_key, idempotent

    ws = Workspace(workspace)

    def ran(line: str) -> None:  # each time a tool's body runs: what the world saw
        with (workspace / "ran.log").open("a", encoding="utf-8") as f:
            f.write(line + "\n")

    def in_flight(name: str) -> None:
        if name == hang:  # the effect is done, the result not yet recorded: wait to be killed
            (workspace / f"in-flight-{name}").write_text(name, encoding="utf-8")
            time.sleep(3600)

    def provider(file: str, key: str | None, entry: dict) -> int:
        """An outside service that does a thing once per key (a payment provider's
        ``Idempotency-Key``, a courier's booking reference); no key: every time."""
        path = workspace / "data" / file
        done = [json.loads(line) for line in path.read_text().splitlines()] \
            if path.exists() else []
        for n, old in enumerate(done, 1):
            if key is not None and old["key"] == key:
                return n  # the same key again: nothing new happens
        with path.open("a", encoding="utf-8") as f:
            f.write(json.dumps({**entry, "key": key}) + "\n")
        return len(done) + 1

    read_file = next(t for t in ws.tools if t.name == "read_file")
    if marks is None:
        @idempotent
        @tool(side_effects=True)
        def issue_refund(order_id: str, amount_eur: float) -> str:
            """Refund an order through the payment provider. Cannot be undone."""
            key = idempotency_key()
            ran(f"issue_refund {order_id} {amount_eur} key={key}")
            number = provider("bank.jsonl", key, {"order": order_id, "eur": amount_eur})
            in_flight("issue_refund")
            return f"Refunded {amount_eur:.2f} EUR on {order_id} (refund re_{number})."

        @tool(side_effects=True)
        def email_customer(order_id: str, text: str) -> str:
            """Email the customer of an order. The mail server takes no key."""
            ran(f"email_customer {order_id}")
            with (workspace / "data" / "outbox.txt").open("a", encoding="utf-8") as f:
                f.write(f"to the customer of {order_id}: {text}\n")
            in_flight("email_customer")
            return f"Emailed the customer of {order_id}."

        return [read_file, issue_refund, email_customer]
    return return_tools(workspace, ran, in_flight, provider, marks)


def return_tools(workspace: Path, ran, in_flight, provider, marks: dict[str, str]) -> list:
    """Exercise 2's tools, each declared as ``marks`` says (read_only, idempotent, side_effects)."""
    from harness import tool
    from harness.durable.dbos import idempotency_key, idempotent

    record = workspace / "data" / "records" / "ORD-1002.json"

    def track_parcel(order_id: str) -> str:
        """Where the order's parcel is, from the courier."""
        ran(f"track_parcel {order_id}")
        in_flight("track_parcel")
        return f"{order_id}: delivered 2024-05-06, signed for by B. Sample."

    def book_pickup(order_id: str, day: str) -> str:
        """Book the courier to collect a parcel (one booking per idempotency key)."""
        ran(f"book_pickup {order_id} {day}")
        number = provider("pickups.jsonl", idempotency_key(), {"order": order_id, "day": day})
        in_flight("book_pickup")
        return f"Pickup PU-{number} booked for {order_id} on {day}."

    def set_status(order_id: str, status: str) -> str:
        """Set the status field of an order's record."""
        ran(f"set_status {order_id} {status}")
        data = json.loads(record.read_text(encoding="utf-8"))
        record.write_text(json.dumps({**data, "status": status}, indent=2) + "\n",
                          encoding="utf-8")
        in_flight("set_status")
        return f"{order_id} is now {status}."

    def add_note(order_id: str, note: str) -> str:
        """Add a line to the order's case notes."""
        ran(f"add_note {order_id}")
        with (workspace / "notes.md").open("a", encoding="utf-8") as f:
            f.write(f"- {order_id}: {note}\n")
        in_flight("add_note")
        return f"Noted on {order_id}."

    tools = []
    for fn in (track_parcel, book_pickup, set_status, add_note):
        mark = marks[fn.__name__]
        made = tool(side_effects=mark != "read_only")(fn)
        tools.append(idempotent(made) if mark == "idempotent" else made)
    return tools


def shop_agent(args: argparse.Namespace, ask: bool = False):
    """The refund agent (``ask``: a refund waits for a person's yes), or exercise 2's."""
    from harness import Agent, Permissions, ScriptedModel, say, tool_call

    def answer(messages: list[dict]) -> dict:  # the model says what the tools said
        said = [m["content"].splitlines()[0] for m in messages
                if m["role"] == "tool" and not m["content"].startswith("{")]
        return say(" ".join(said))

    marks = json.loads(args.returns) if args.returns else None
    tools = shop_tools(args.workspace, args.hang, marks)
    if marks is not None:
        model = ScriptedModel([tool_call("track_parcel", order_id="ORD-1002"),
                               tool_call("book_pickup", order_id="ORD-1002", day="Monday"),
                               tool_call("set_status", order_id="ORD-1002", status="returning"),
                               tool_call("add_note", order_id="ORD-1002",
                                         note="pickup booked for Monday"), answer])
        return Agent(model, tools)
    model = ScriptedModel([
        tool_call("read_file", path="data/records/ORD-1002.json"),
        tool_call("issue_refund", order_id="ORD-1002", amount_eur=45.0),
        tool_call("email_customer", order_id="ORD-1002",
                  text="Your refund of 45.00 EUR is on its way."),
        answer])
    asking = Permissions({"read_file": "allow", "issue_refund": "ask",
                          "email_customer": "allow"}, approve="pause")
    return Agent(model, tools, permissions=asking if ask else None)


def report(durables: list, result, run_id: str) -> dict:
    """What this process did for the run, as JSON."""
    from dbos import DBOS

    status = DBOS.retrieve_workflow(run_id).get_status()
    return {"run": run_id, "status": status.status, "executor": status.executor_id,
            "outcome": result.outcome, "final": result.final,
            "calls": [[e.tool_name, e.status, e.output] for e in result.events
                      if e.type == "tool_result"],
            "steps": [s["function_name"] for s in DBOS.list_workflow_steps(run_id)],
            "ran": dict(sum((d.ran for d in durables), Counter())),
            "replayed": dict(sum((d.replayed for d in durables), Counter()))}


def take_over(executor: str) -> list[str]:
    """Finish here the runs a worker that is gone left pending. At launch DBOS recovers only
    its own executor's runs; `DBOS.resume_workflow` queues another's, and this worker runs
    each from the start, every recorded step answered from the record. Only for a worker
    known to be gone: a live one would be running the same run."""
    from dbos import DBOS

    ids = [w.workflow_id for w in DBOS.list_workflows(status="PENDING", executor_id=executor)]
    for run_id in ids:
        DBOS.resume_workflow(run_id)
    return ids


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workspace", type=Path)
    parser.add_argument("mode", choices=["start", "finish"])
    parser.add_argument("run_id")
    parser.add_argument("--ask", action="store_true", help="a refund waits for a person")
    parser.add_argument("--hang", help="this tool waits to be killed, mid-call")
    parser.add_argument("--returns", help="exercise 2: the return tools, marked (JSON)")
    parser.add_argument("--db", help="the database (default: SQLite in WORKSPACE)")
    parser.add_argument("--executor", help="this worker's name (DBOS's executor id)")
    parser.add_argument("--take-over", metavar="EXECUTOR", help="finish that worker's runs")
    args = parser.parse_args(argv)
    args.workspace = args.workspace.resolve()

    from dbos import DBOS

    from harness.durable.dbos import DBOSAgent

    DBOS(config={"name": "lesson15-shop", "log_level": "ERROR",
                 "system_database_url": args.db or f"sqlite:///{args.workspace / 'dbos.sqlite'}",
                 "notification_listener_polling_interval_sec": 0.05,
                 **({"executor_id": args.executor} if args.executor else {})})
    # Every worker makes every durable agent, before launch: recovery finds a run's agent
    # by its name, and rebuilds the run with the same tools and the same permissions.
    durable = DBOSAgent(shop_agent(args), name="shop")
    asking = DBOSAgent(shop_agent(args, ask=True), name="shop-asks")
    DBOS.launch()
    taken = take_over(args.take_over) if args.take_over else []
    task = RETURN_TASK if args.returns else TASK
    if args.mode == "start":  # a new run: one left under this id (a cell run again) goes
        DBOS.delete_workflow(args.run_id)
    if args.mode == "start" and args.ask:  # the run waits for a person; this process ends
        asking.start(task, workflow_id=args.run_id)
        while not (pending := DBOSAgent.pending(args.run_id)):
            time.sleep(0.05)
        print(json.dumps({"run": args.run_id, "pending": pending}))
    elif args.mode == "start":
        result = durable.run(task, workflow_id=args.run_id)
        print(json.dumps(report([durable, asking], result, args.run_id)))
    else:
        result = DBOS.retrieve_workflow(args.run_id).get_result(polling_interval_sec=0.05)
        print(json.dumps({**report([durable, asking], result, args.run_id), "taken": taken}))
    sys.stdout.flush()
    os._exit(0)  # DBOS.destroy() would wait for its threads: nothing is left to do


if __name__ == "__main__":
    main(sys.argv[1:])
