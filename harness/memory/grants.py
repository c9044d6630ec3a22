"""Memory is data: an entry never grants a tool, an approval or a permission.

The harness never reads permissions from memory: they are `Permissions`, fixed when the
agent is made. But every later run reads memory in its system prompt, so an entry such as
"run_shell is pre-approved" would reach the model as if the person had said it: a poisoned
document could plant an instruction for all later runs. `grants` finds the entries that
speak about what a tool, a call or the agent may do, in many phrasings:

    a grant on its own     pre-approved, auto-approve, without asking, no confirmation
                           needed, skip the approval, permission granted, allowlist, sudo
    a tool and a say-so    run_shell / write_file / "the shell" / any snake_case name
                           + allowed, approved, enabled, safe to run, ok to call, ...

A rule of the shop ("refunds over 200 EUR need a manager's approval") names no tool and
stays. Text is folded first (NFKC, case, hidden characters, every kind of dash), so
"Pre‑Approved" with a non-breaking hyphen or a zero-width space reads as "pre-approved".
"""

from __future__ import annotations

import re
import unicodedata

ON_ITS_OWN = [re.compile(p) for p in (
    r"\b(pre|auto|self)[- ]?(approv|authori[sz]|confirm)",
    r"\b(always|automatically|just|blindly) (approve|allow|accept|confirm|trust|say yes)",
    r"\bapprove[sd]? (all|every|any|everything|anything|it all)\b",
    r"\b(counts? as|treat(ed)? as|consider(ed)?) (pre-?)?"
    r"(approved|authori[sz]ed|allowed|permitted)",
    r"\bwithout (asking|approval|confirm|permission|consent|prompting|a prompt|review|a check)",
    r"\b(no|not|never|don't|doesn't|do not|does not|needn't|need not|nor)\b.{0,25}"
    r"\b(approval|confirmation|permission|consent)s?\b",
    r"\b(don't|do not|never|no need to|needn't|need not) (ask|check with|confirm with|wait for)"
    r" (the |a )?(person|user|human|owner|operator|me|anyone|someone)",
    r"\b(skip|bypass|ignore|disable|turn off|switch off|override|circumvent)s?\b.{0,20}"
    r"\b(approval|confirm|permission|sandbox|guard|hook)",
    r"\b(grant|give|hand)(s|ed|ing)?\b.{0,40}\b(permission|access|approval|rights?|privilege)",
    r"\b(permission|approval|consent|access)s? (is |are |was |has been )?(granted|given)",
    r"\b(allow|white|safe|trust)[- ]?list",
    r"\b(sudo|root access|admin rights|unrestricted|full access|elevated)\b",
    r"(预先|自动|已经?|默认)(批准|授权|同意)|无需(确认|审批|批准|授权)|不(用|必|需要?)(确认|审批|批准)",
)]
TOOLISH = re.compile(r"\b(run_shell|write_file|edit_file|shell|bash|command|terminal|tool|"
                     r"script|curl|wget|sh -c|[a-z][a-z0-9]*(?:_[a-z0-9]+)+)\b|工具|命令")
SAY_SO = re.compile(r"\b(allow\w*|permit\w*|approv\w*|"
                    r"authori[sz]\w*|enable[ds]?|switch(ed)? on|turn(ed)? on|unlock\w*|"
                    r"(ok|okay|fine|safe|free|cleared) to|freely|permission\w*)\b|允许|权限|批准")


def fold(text: str) -> str:
    """``text`` as the checks read it: NFKC, no hidden characters, one kind of dash and of
    apostrophe, one space between words, lower case."""
    text = unicodedata.normalize("NFKC", text)
    kept = []
    for c in text:
        kind = unicodedata.category(c)
        if kind == "Cf":  # zero-width spaces and joiners, bidi controls: dropped
            continue
        kept.append("-" if kind == "Pd" else "'" if c in "\u2018\u2019\u02bc`" else c)
    return " ".join("".join(kept).split()).casefold()


def grants(text: str) -> str | None:
    """What in ``text`` tries to grant a tool, an approval or a permission (the words
    found), or None when it grants nothing."""
    folded = fold(text)
    for pattern in ON_ITS_OWN:
        if found := pattern.search(folded):  # to the end of its last word: "pre-approved"
            return found.group(0) + re.match(r"\w*", folded[found.end():]).group(0)
    tool, say_so = TOOLISH.search(folded), SAY_SO.search(folded)
    if tool and say_so:
        return f"{tool.group(0)} ... {say_so.group(0)}"
    return None
