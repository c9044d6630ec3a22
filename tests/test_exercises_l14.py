"""Lesson 14's exercise checks accept the reference solutions and reject plausible mistakes,
each with a hint that says what to change."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

LESSONS = Path(__file__).resolve().parent.parent / "lessons"
sys.path.insert(0, str(LESSONS))

from exercises.l14 import check_result_text, check_shop_permissions  # noqa: E402
from solutions import l14  # noqa: E402

from harness import Permissions  # noqa: E402

SHOP = {"mcp__shop__get_order": "allow", "mcp__shop__list_orders": "allow",
        "mcp__shop__issue_refund": "ask"}


# -- exercise 1 ---------------------------------------------------------------------------

def test_shop_permissions_accepts_the_reference(capsys):
    pytest.importorskip("mcp")
    assert check_shop_permissions(l14.shop_permissions)
    assert "PASS" in capsys.readouterr().out


@pytest.mark.parametrize("wrong, hint", [
    (lambda approve: Permissions(SHOP, default="allow", approve=approve), "must be denied"),
    (lambda approve: Permissions({**SHOP, "mcp__shop__issue_refund": "allow"}, approve=approve),
     "a person must be asked"),
    (lambda approve: Permissions({**SHOP, "mcp__shop__list_orders": "ask"}, approve=approve),
     "read-only tools must be allowed"),
    (lambda approve: Permissions(SHOP), "no one can answer"),
    (lambda approve: Permissions({**SHOP, "write_file": "allow"}, approve=approve),
     "must be denied"),
    (lambda approve: Permissions({**SHOP, "mcp__rogue__wipe_disk": "ask"}, approve=approve),
     "must be denied"),
    (lambda approve: Permissions(SHOP, approve=lambda name, args: True), "the approver was asked"),
    (lambda approve: Permissions(SHOP, approve=lambda name, args: approve(name, {})),
     "the call's own arguments"),
    (lambda approve: dict(SHOP), "return a harness Permissions"),
    (lambda approve: Permissions(SHOP, approve=lambda name, args: bool(approve(name, args))),
     "only True approves"),
    (lambda approve: Permissions(SHOP, approve=lambda name, args: approve(name, args) == True),  # noqa: E712
     "only True approves"),
    (lambda approve: Permissions(SHOP, approve=lambda name, args: not not approve(name, args)),
     "only True approves"),
])
def test_shop_permissions_rejects_mistakes(capsys, wrong, hint):
    pytest.importorskip("mcp")
    assert not check_shop_permissions(wrong)
    out = capsys.readouterr().out
    assert hint in out, out


def test_shop_permissions_stub_says_not_done(capsys):
    def stub(approve):
        raise NotImplementedError

    assert not check_shop_permissions(stub)
    assert "not done" in capsys.readouterr().out


# -- exercise 2 ---------------------------------------------------------------------------

def test_result_text_accepts_the_reference(capsys):
    assert check_result_text(l14.result_text)
    assert "PASS" in capsys.readouterr().out


def only_text(result):
    return (not result.get("isError", False),
            "\n".join(b["text"] for b in result["content"] if b["type"] == "text"))


def ok_always(result):
    return True, l14.result_text(result)[1]


def pasted(result):
    return (not result.get("isError", False),
            "\n".join(b.get("text") or b.get("data", "") for b in result["content"]))


def always_structured(result):
    ok, text = only_text(result)[0], l14.result_text({**result, "structuredContent": None})[1]
    if result.get("structuredContent") is not None:
        text += "\n" + json.dumps(result["structuredContent"])
    return ok, text


def structured_only_without_text(result):
    """The rule lesson 14 taught before: it hides what only the structured content says."""
    ok, text = l14.result_text({**result, "structuredContent": None})
    has_text = any(b["type"] == "text" for b in result["content"])
    if result.get("structuredContent") is not None and not has_text:
        text += "\n" + json.dumps(result["structuredContent"])
    return ok, text.strip("\n")


def error_text_is_an_error(result):
    ok, text = l14.result_text(result)
    return ok and not text.startswith("Error"), text


def joined_without_newline(result):
    ok, text = l14.result_text(result)
    return ok, text.replace("\n", " ")


def reversed_blocks(result):
    ok, _ = l14.result_text(result)
    blocks = list(reversed(result["content"]))
    return l14.result_text({**result, "content": blocks})[0] and ok, l14.result_text(
        {**result, "content": blocks})[1]


def text_only_string(result):
    return l14.result_text(result)[1]


@pytest.mark.parametrize("wrong, hint", [
    (only_text, "name each image or audio block by its mimeType"),
    (ok_always, "ok should be False"),
    (pasted, "base64"),
    (always_structured, "there twice"),
    (structured_only_without_text, "carrier"),
    (error_text_is_an_error, "ok should be True"),
    (joined_without_newline, "two text blocks"),
    (reversed_blocks, "two text blocks"),
    (text_only_string, "return (ok, text)"),
])
def test_result_text_rejects_mistakes(capsys, wrong, hint):
    assert not check_result_text(wrong)
    out = capsys.readouterr().out
    assert hint in out, out


def test_shop_permissions_in_the_browser_checks_the_table_and_says_what_it_skipped(
        capsys, monkeypatch):
    import exercises.l14 as check

    monkeypatch.setattr(check, "IN_BROWSER", True)
    assert check.check_shop_permissions(l14.shop_permissions)
    assert "local install" in capsys.readouterr().out
    assert not check.check_shop_permissions(
        lambda approve: Permissions(SHOP, default="allow", approve=approve))
    assert "must be denied" in capsys.readouterr().out


def test_result_text_rejects_comparing_the_json_as_a_string(capsys):
    import json

    def as_string(result):  # the same JSON laid out otherwise is taken for new content
        ok, _ = l14.result_text(result)
        texts = [b["text"] for b in result.get("content", []) if b["type"] == "text"]
        parts = [b["text"] if b["type"] == "text" else f"[{b['type']}: {b.get('mimeType')}]"
                 for b in result.get("content", [])]
        said = result.get("structuredContent")
        if said is not None and json.dumps(said) not in texts:
            parts.append(json.dumps(said))
        return ok, "\n".join(parts)

    assert not check_result_text(as_string)
    assert "however it is laid out" in capsys.readouterr().out
