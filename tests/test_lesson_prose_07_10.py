"""Lessons 07 to 10: what their text says agrees with the harness, the outputs under it,
and the source articles it quotes (issue 33)."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LESSONS = ROOT / "lessons"
SEEDS = Path("/work/shared/seeds")
GEEKAGENT = "001_34bdcd9547a01ab1.txt"


def cells(stem: str) -> list[dict]:
    path = next(LESSONS.glob(f"{stem}_*.ipynb"))
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def markdown(stem: str) -> str:
    """All the markdown of a lesson, line breaks folded to spaces."""
    return " ".join(" ".join("".join(c["source"]).split())
                    for c in cells(stem) if c["cell_type"] == "markdown")


def output_of(stem: str, code: str) -> str:
    """The printed output of the one code cell whose source contains ``code``."""
    found = [c for c in cells(stem) if c["cell_type"] == "code" and code in "".join(c["source"])]
    assert len(found) == 1, f"{code!r} is in {len(found)} code cells of {stem}"
    return "".join("".join(o.get("text", "")) for o in found[0]["outputs"])


def outcome_rows(stem: str) -> dict[str, str]:
    """The outcome table: each outcome named in a row, and the lesson the row gives."""
    rows = {}
    for line in "".join(c for cell in cells(stem) if cell["cell_type"] == "markdown"
                        for c in cell["source"]).splitlines():
        parts = [p.strip() for p in line.strip().strip("|").split("|")]
        if len(parts) == 3 and parts[0].startswith("`"):
            for name in re.findall(r"`(\w+)`", parts[0]):
                rows[name] = parts[2]
    return rows


def test_l07_outcome_table_gives_model_error_to_lesson_01_where_the_loop_raises_it():
    rows = outcome_rows("07")
    assert rows["model_error"] == "01"
    assert "model_error" in "".join("".join(c["source"]) for c in cells("01"))
    assert rows["truncated"] == rows["refused"] == "12"


def test_l07_quotes_geekagents_panel_that_cuts_long_lines_and_says_ours_wraps():
    seed = (SEEDS / GEEKAGENT).read_text(encoding="utf-8")
    text = markdown("07")
    quoted = re.search(r"GeekAgent's panel cuts them: \"([^\"]+)\"", text)
    assert quoted, "lesson 07 no longer quotes GeekAgent on long panel lines"
    assert quoted.group(1) in seed, "the quote must be the article's own words"
    assert "按列宽截断" in quoted.group(1)
    assert "This panel wraps instead" in text


def test_l07_the_panel_it_prints_does_wrap_the_task_and_shorten_log_lines():
    panel = output_of("07", "broken_result, broken_panel = run_with_panel(broken)")
    task = panel.split("Task: ", 1)[1].splitlines()
    assert task[1].startswith("  ") and not task[1].startswith("  [")  # wrapped, indented
    assert any(line.startswith("  ✓ read_file:") and line.endswith("…")
               for line in panel.splitlines())


def test_l08_exercises_name_the_runs_that_tell_pushbacks_and_totals_apart():
    text = markdown("08")
    assert "an answer a stop hook refused (lesson 11), an answer cut off (lesson 12)" in text
    assert "a `stop` event is any answer, a push back only the stop gate's" in text
    assert "with a `total_tokens` that counts its reasoning too, more than " \
           "`prompt_tokens` + `completion_tokens` (lesson 12)" in text


def test_l09_shows_what_the_model_sees_in_the_request_after_a_refusal():
    text = markdown("09")
    assert "What the model sees is its last request" in text
    shown = output_of("09", "show_request(model.requests[-1]")
    assert shown.startswith("tools: lookup_order\ntool_choice: \"auto\"\n")
    assert re.search(r"\[5\] tool \(answers call_2_0\)\n\s+Error: tool 'lookup_order' is "
                     r"switched off\.", shown)
    assert "in the tool message `[5]`" in text


def test_l09_cancel_exercise_says_to_set_the_event_not_raise_keyboard_interrupt():
    text = markdown("09")
    assert "Set the `cancel` event you are given: raising `KeyboardInterrupt`" in text
    assert "`n=4` and `n=5`" in text


def test_l10_shows_what_the_model_sees_of_a_command_utf8_stderr_and_exit_status():
    text = markdown("10")
    assert "What the model sees: the exit status, stdout and stderr, as UTF-8" in text
    printed = output_of("10", "label_result.sent(2)[-1]")
    body, shown = printed.split("\n\n", 1)
    message = json.loads(body)
    assert message["role"] == "tool" and message["content"] == shown.rstrip("\n")
    assert shown.startswith("exit status 3\nstdout:\n")
    assert "Hauptstraße 5, 42,00 €" in shown and "\nstderr:\nwarning: ribbon low \ufffd" in shown


def test_l10_says_on_windows_only_the_process_itself_is_killed_and_shows_where():
    text = markdown("10")
    assert "on Windows only the process itself" in text
    assert "macOS and Windows only the process group" not in text
    assert "Windows has no process groups: kill the process itself" in \
        output_of("10", "show_source(harness.workspace.process._kill_group)")
    assert "output is UTF-8 text with stderr and the exit status" in text
