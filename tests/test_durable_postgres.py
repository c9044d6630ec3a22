"""Durable runs on Postgres, two workers (harness/durable/dbos.py): a run started on worker 1
is killed there (SIGKILL) and finished by worker 2, another process with another executor id,
through the database they share; each finished step ran once, the call in flight follows
the rule of tests/test_durable_dbos.py, and any process reads the finished run.

The server: ``HARNESS_TEST_POSTGRES_URL`` (postgresql://USER:PASSWORD@HOST:PORT/DB; its role
makes a database ``harness_durable_<random>`` for this module and drops it after), else a
cluster of its own, started on 127.0.0.1 in a temporary folder when PostgreSQL's server
programs are installed (Debian: ``apt-get install postgresql``), else a skip that says so;
with ``HARNESS_REQUIRE_POSTGRES=1`` (CI) a failure instead of a skip.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("dbos")
psycopg = pytest.importorskip("psycopg")
from sqlalchemy import make_url  # noqa: E402  (dbos brings SQLAlchemy)

SHOP = Path(__file__).parent / "fixtures" / "durable" / "shop.py"
STEPS = ["model", "tool:look_up", "model", "intent:pay", "tool:pay", "model", "intent:email",
         "tool:email", "model"]
ENV = {k: v for k, v in os.environ.items() if not k.startswith(("DBOS", "OPENAI"))}
REQUIRED = os.environ.get("HARNESS_REQUIRE_POSTGRES") == "1"
HOW = ("set HARNESS_TEST_POSTGRES_URL=postgresql://USER:PASSWORD@HOST:PORT/DB (a role that "
       "may create databases), or install PostgreSQL's server programs (Debian: apt-get "
       "install postgresql) and the test starts its own on 127.0.0.1")


def unavailable(why: str) -> None:
    if REQUIRED:
        pytest.fail(f"HARNESS_REQUIRE_POSTGRES=1 but {why}")
    pytest.skip(f"{why}: to run it, {HOW}")


def server_programs() -> Path | None:
    """The folder of initdb and pg_ctl: Debian's newest (/usr/lib/postgresql/<version>/bin,
    not on PATH), else the one on PATH."""
    debian = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"),
                    key=lambda p: [int(n) for n in p.parts[-3].split(".") if n.isdigit()])
    initdb = debian[-1] if debian else shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def private_cluster(programs: Path) -> Iterator[str]:
    """A throwaway cluster on 127.0.0.1 (password auth), as .ci/run starts one; its URL."""
    folder = Path(tempfile.mkdtemp(prefix="harness-pg-"))
    password = secrets.token_hex(16)
    (folder / "password").write_text(password + "\n", encoding="utf-8")
    prefix = []
    if os.geteuid() == 0:  # initdb refuses to run as root: the cluster is the postgres user's
        prefix = ["runuser", "-u", "postgres", "--"]
        for path in (folder, folder / "password"):
            shutil.chown(path, "postgres", "postgres")
    data, log = folder / "data", folder / "log"

    def run(*command: object) -> str | None:
        done = subprocess.run([*prefix, *map(str, command)], cwd=folder, capture_output=True,
                              text=True, timeout=120, check=False)
        return None if done.returncode == 0 else (done.stderr or done.stdout).strip()

    try:
        if problem := run(programs / "initdb", "-D", data, "-U", "postgres", "-A",
                          "scram-sha-256", f"--pwfile={folder / 'password'}", "-E", "UTF8",
                          "--locale=C", "--no-sync"):
            unavailable(f"initdb failed: {problem}")
        for _ in range(3):  # a free port may be taken before the server binds it: another
            port = free_port()
            problem = run(programs / "pg_ctl", "-D", data, "-l", log, "-w", "-t", "60", "-o",
                          f"-h 127.0.0.1 -p {port} -k {folder}", "start")
            if problem is None:
                break
        else:
            unavailable(f"the cluster did not start: {problem}\n{log.read_text()[-2000:]}")
        yield f"postgresql://postgres:{password}@127.0.0.1:{port}/postgres"
    finally:
        run(programs / "pg_ctl", "-D", data, "-m", "fast", "stop")
        shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def server() -> Iterator[str]:
    """The URL of a server: the reader's (HARNESS_TEST_POSTGRES_URL) or a private one."""
    if url := os.environ.get("HARNESS_TEST_POSTGRES_URL"):
        yield url
        return
    programs = server_programs()
    if programs is None:
        unavailable("no Postgres server: HARNESS_TEST_POSTGRES_URL is not set and initdb "
                    "is not installed")
    with private_cluster(programs) as url:
        yield url


@pytest.fixture(scope="module")
def postgres() -> Iterator[str]:
    """The URL of a fresh database on the server, for this module's runs; dropped after."""
    with server() as url:
        admin = make_url(url).set(drivername="postgresql").render_as_string(False)
        name = f"harness_durable_{secrets.token_hex(4)}"
        try:
            c = psycopg.connect(admin, autocommit=True, connect_timeout=10)
        except psycopg.Error as exc:
            pytest.fail(f"cannot connect to {make_url(url)!r}: {exc}")
        try:
            with c:
                c.execute(f'CREATE DATABASE "{name}"')
        except psycopg.Error as exc:
            pytest.fail(f"cannot make a database on {make_url(url)!r} (the role in "
                        f"HARNESS_TEST_POSTGRES_URL needs CREATEDB): {exc}")
        try:
            yield make_url(url).set(database=name).render_as_string(False)
        finally:
            with psycopg.connect(admin, autocommit=True, connect_timeout=10) as c:
                c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def shop(folder: Path, url: str, mode: str, workflow_id: str, *flags: str,
         executor: str | None = None) -> subprocess.CompletedProcess:
    where = ["--url", url, *(["--executor", executor] if executor else [])]
    return subprocess.run([sys.executable, str(SHOP), str(folder), mode, workflow_id, *where,
                           *flags], capture_output=True, text=True, timeout=60, env=ENV,
                          check=False)


OTHER = {"worker-1": "worker-2", "worker-2": "worker-1"}


@dataclass
class HandedOver:
    """A run started on worker 1; each time its worker was killed, the other took it over."""

    codes: list[int]  # each process's exit code: -9 killed, 0 done
    workers: list[str]  # each process's executor id
    out: dict  # what the last process printed (result, steps, the workflows it took over)
    effects: list[str]  # one line each time a tool's body ran
    stats: list[dict]  # each process's steps: ran / replayed, by name
    read: dict  # a third process's reading of the workflow: status, executor, result

    def tool_results(self) -> list[tuple[str, str]]:
        return [(e["tool_name"], e["status"]) for e in self.out["result"]["events"]
                if e["type"] == "tool_result"]


def hand_over(folder: Path, url: str, workflow_id: str, *flags: str) -> HandedOver:
    done = shop(folder, url, "start", workflow_id, *flags, executor="worker-1")
    codes, workers = [done.returncode], ["worker-1"]
    while codes[-1] != 0 and len(codes) < 6:
        gone = workers[-1]  # SIGKILLed: nothing marked its run, which is PENDING on it
        done = shop(folder, url, "finish", workflow_id, "--take-over", gone, *flags,
                    executor=OTHER[gone])
        assert done.returncode in (0, -9), done.stderr
        codes.append(done.returncode)
        workers.append(OTHER[gone])
    read = shop(folder, url, "read", workflow_id)
    assert read.returncode == 0, read.stderr
    stats = [json.loads((folder / f"stats-{n}.json").read_text()) for n in range(len(codes))]
    return HandedOver(codes, workers, json.loads(done.stdout),
                      (folder / "effects").read_text().splitlines(), stats,
                      json.loads(read.stdout))


@pytest.fixture(scope="module")
def handed(postgres, tmp_path_factory) -> HandedOver:
    """One run killed inside each of its three tools, each time on the worker that ran it:
    look_up (read-only) on worker 1, pay (idempotent) on worker 2, email (side effects, no
    key) on worker 1 again; worker 2 finishes it."""
    return hand_over(tmp_path_factory.mktemp("shop"), postgres, "order-P1",
                     "--kill", "look_up,pay,email")


def test_a_run_killed_on_one_worker_is_finished_by_the_other(handed):
    assert handed.codes == [-9, -9, -9, 0]
    assert handed.workers == ["worker-1", "worker-2", "worker-1", "worker-2"]
    assert handed.out["taken"] == ["order-P1"]  # worker 2 found it pending on worker 1
    result = handed.out["result"]
    assert result["outcome"] == "completed"
    assert result["final"].startswith("A1: 2 mugs, 30 EUR | paid 30 EUR for A1 | Unknown:")
    assert handed.out["steps"] == STEPS


def test_each_finished_step_ran_once_across_the_workers(handed):
    ran = [Counter(s["ran"]) for s in handed.stats]
    assert sum(ran, Counter()) == Counter(STEPS)  # every step finished once, on some worker
    for n, stats in enumerate(handed.stats):  # a worker answers from the record all that
        assert Counter(stats["replayed"]) == sum(ran[:n], Counter())  # finished before it
    assert ran[0] == {"model": 1}  # worker 1 killed inside look_up: its step never finished
    assert ran[-1] == {"tool:email": 1, "model": 1}  # email's answer (unknown), the last reply


def test_the_call_in_flight_follows_the_rule_on_the_other_worker(handed):
    assert handed.effects.count("look_up A1") == 2  # read-only: runs again
    assert [e for e in handed.effects if e.startswith("pay")] == [
        "pay A1 30 order-P1:call_2_0"] * 2  # idempotent: runs again, the same key
    assert handed.effects.count("email ann@example.com") == 1  # neither: not run again
    assert handed.tool_results() == [("look_up", "ok"), ("pay", "ok"), ("email", "unknown")]
    assert handed.out["result"]["messages"][-2]["content"].startswith(
        "Unknown: it may have run; not retried.")


def test_a_third_process_reads_the_run_worker_2_finished(handed):
    assert handed.read["status"] == "SUCCESS"
    assert handed.read["executor"] == "worker-2"
    assert handed.read["result"] == handed.out["result"]
    assert handed.out["again"] == handed.out["result"]  # a finished workflow runs nothing


def test_an_approval_waits_in_postgres_while_no_worker_runs(postgres, tmp_path):
    folder, url = tmp_path, postgres
    started = shop(folder, url, "start", "order-P2", "--ask", executor="worker-1")
    assert started.returncode == -9  # paused at pay, then killed
    assert [p["tool_name"] for p in json.loads(started.stdout)["pending"]] == ["pay"]
    approved = shop(folder, url, "approve", "order-P2", "--tool", "pay")  # no worker runs it
    assert approved.returncode == 0, approved.stderr
    worker = subprocess.Popen([sys.executable, str(SHOP), str(folder), "finish", "order-P2",
                               "--ask", "--url", url, "--executor", "worker-2",
                               "--take-over", "worker-1"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    try:  # worker 2 goes on with pay and waits again, at email
        approved = shop(folder, url, "approve", "order-P2", "--tool", "email")
        assert approved.returncode == 0, approved.stderr
        out, err = worker.communicate(timeout=60)
    finally:
        worker.kill()
    assert worker.returncode == 0, err
    result = json.loads(out)["result"]
    assert result["outcome"] == "completed" and result["pending"] == []
    assert result["final"] == "A1: 2 mugs, 30 EUR | paid 30 EUR for A1 | sent to ann@example.com"
    assert (folder / "effects").read_text().splitlines() == [
        "look_up A1", "pay A1 30 order-P2:call_2_0", "email ann@example.com"]
    assert [e["approved"] for e in result["events"] if e["type"] == "approval_result"] == [
        True, True]
