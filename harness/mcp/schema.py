"""A server's input schema: shown to the model as data, used to check with limits.

A schema is the server's words, like its descriptions, and the harness does two things
with it on the run's thread. Neither may raise out of a run, outlast the run's clock,
or reach beyond the schema itself:

    listed schema --shown()---->  what the model reads: what only describes
         |                         (description, title, examples, default, $comment, an
         |                         unknown keyword) escaped and capped; what it must send
         |                         back exactly (enum, const, property names, patterns)
         |                         never rewritten: a tool that needs it is left out
         +--Checker()---------->  every $ref inside the schema, landing somewhere;
                                   a validator that retrieves nothing (no http, no file)
    arguments --Checker.check()->  refused unread past 64 levels; patterns matched with
                                   `regex` under a timeout; the whole check stopped after
                                   a second; whatever goes wrong, a refusal the model reads

Python's `re` holds the interpreter for a whole match, so no clock can stop a pattern
that backtracks for ever (``^(a|a)*$``): patterns go to `regex`, which takes a timeout.
Without `regex` installed the harness does not check patterns at all (the server does:
it checks its own input anyway), and never hands them to `re`.
"""

from __future__ import annotations

import contextvars
import functools
import time
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urljoin

from ..tools import ToolArgumentError
from ..ui.display import escape

try:
    import regex
except ImportError:  # patterns are then the server's to check (see `_search`)
    regex = None

MAX_FIELD_DESCRIPTION = 300  # characters of each describing text inside a schema
MAX_EXACT = 256  # characters of a value the model must send back as written (enum, a name)
MAX_PATTERN = 1_000  # ...and of a pattern
MAX_DEPTH = 64  # levels of nesting, of a schema and of a call's arguments
PATTERN_SECONDS = 0.5  # one pattern against one string
CHECK_SECONDS = 1.0  # one call's whole check

DESCRIBING = {"title", "description", "$comment", "default", "examples"}
SUBSCHEMA = {"additionalItems", "additionalProperties", "contains", "contentSchema", "else",
             "if", "items", "not", "propertyNames", "then", "unevaluatedItems",
             "unevaluatedProperties", "allOf", "anyOf", "oneOf", "prefixItems"}  # (or a list)
NAMED = {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas",
         "dependencies"}  # names -> schemas (``dependencies``: or lists of names)
IDENTIFIERS = {"$id", "id", "$schema", "$anchor", "$dynamicAnchor", "$recursiveAnchor",
               "$vocabulary"}
REFERENCES = ("$ref", "$dynamicRef", "$recursiveRef")
_deadline: contextvars.ContextVar[float] = contextvars.ContextVar("deadline",
                                                                  default=float("inf"))


class TooSlow(ToolArgumentError):
    """A check that ran out of time: the server's schema is at fault, not the arguments."""


def capped(text: str | None, limit: int) -> str:
    """A server's text as the model may read it: escaped, at most ``limit`` characters
    and a note that says it was cut."""
    text = escape(text or "", lines=True).strip()
    if len(text) <= limit:
        return text
    return (f"{text[:limit].rstrip()} [cut: the server's description has {len(text):,} "
            f"characters; the first {limit:,} are shown]")


def too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether ``value`` nests more than ``limit`` lists and objects deep (counted without
    recursion: the count itself cannot overflow the stack)."""
    stack = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (dict, list)):
            if depth >= limit:
                return True
            stack.extend((item, depth + 1)
                         for item in (node.values() if isinstance(node, dict) else node))
    return False


def subschemas(node: Any, base: str = "", id_of: Callable[[Any], str | None] = lambda n: None
               ) -> Iterator[tuple[dict, str]]:
    """Every schema in ``node``, itself first, with the base URI its ``$ref``s start from
    (``id_of`` reads a schema's own ``$id``). Boolean schemas hold nothing."""
    if not isinstance(node, dict):
        return
    base = urljoin(base, id_of(node) or "")
    yield node, base
    for key, value in node.items():
        if key in SUBSCHEMA:
            for item in value if isinstance(value, list) else [value]:
                yield from subschemas(item, base, id_of)
        elif key in NAMED and isinstance(value, dict):
            for item in value.values():
                yield from subschemas(item, base, id_of)


# -- what the model reads -------------------------------------------------------------------

def shown(schema: Any) -> dict:
    """The schema as the model reads it, or `ValueError` saying why the tool is left out.

    What only describes is escaped and capped; what the check uses is shown as it is,
    since the model must send those values back exactly: a tool whose such strings hold
    hidden characters, or are longer than `MAX_EXACT`, is left out."""
    import jsonschema

    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        raise ValueError("its input schema is not a JSON object schema")
    if too_deep(schema):
        raise ValueError(f"its input schema nests deeper than {MAX_DEPTH} levels")
    keywords = set(jsonschema.validators.validator_for(
        schema, jsonschema.Draft202012Validator).VALIDATORS) | IDENTIFIERS
    return _shown(schema, keywords)


def _shown(node: Any, keywords: set[str]) -> Any:
    if not isinstance(node, dict):
        return node  # a boolean schema (anything else fails check_schema)
    out = {}
    for key, value in node.items():
        if key in ("description", "title") and isinstance(value, str):
            out[key] = capped(value, MAX_FIELD_DESCRIPTION)
        elif key in SUBSCHEMA:
            out[key] = ([_shown(v, keywords) for v in value] if isinstance(value, list)
                        else _shown(value, keywords))
        elif key in NAMED and isinstance(value, dict):  # names the model sends back
            limit = MAX_PATTERN if key == "patternProperties" else MAX_EXACT
            out[key] = {_exact(name, key, limit): _exact(item, key) if isinstance(item, list)
                        else _shown(item, keywords) for name, item in value.items()}
        elif key in keywords and key not in DESCRIBING:
            out[key] = _exact(value, key, MAX_PATTERN if key == "pattern" else MAX_EXACT)
        else:  # describing only (title, examples, default, an unknown keyword)
            out[_described(key)] = _described(value)
    return out


def _exact(value: Any, keyword: str, limit: int = MAX_EXACT) -> Any:
    """``value`` as it is, if every string in it reads as it is and is at most ``limit``
    characters long; else `ValueError` naming the keyword."""
    if isinstance(value, str):
        if escape(value, lines=True) != value:
            raise ValueError(f"its schema's {keyword} value {escape(value)[:80]!r} holds "
                             "hidden or control characters, which the model cannot send "
                             "back as written")
        if len(value) > limit:
            raise ValueError(f"its schema's {keyword} value {value[:40]!r}... is "
                             f"{len(value):,} characters long (at most {limit:,})")
    elif isinstance(value, dict):
        for name, item in value.items():
            _exact(name, keyword, limit)
            _exact(item, keyword, limit)
    elif isinstance(value, list):
        for item in value:
            _exact(item, keyword, limit)
    return value


def _described(value: Any) -> Any:
    """A describing value with every string in it (names too) escaped and capped."""
    if isinstance(value, str):
        return capped(value, MAX_FIELD_DESCRIPTION)
    if isinstance(value, dict):
        return {_described(name): _described(item) for name, item in value.items()}
    if isinstance(value, list):
        return [_described(item) for item in value]
    return value


# -- what the arguments are checked with -----------------------------------------------------

class Checker:
    """The server's schema (with ``additionalProperties: false`` unless it says otherwise,
    like every tool) as a validator that stays inside the schema and within its time.

    Made when the tool is listed: a schema with a ``$ref`` that points outside it or to
    nothing in it, or a pattern `regex` cannot read, raises `ValueError` (the tool is left
    out, and the model never sees a tool it cannot call)."""

    def __init__(self, schema: dict) -> None:
        import jsonschema
        import referencing
        import referencing.jsonschema

        if not isinstance(schema, dict) or too_deep(schema):
            raise ValueError(f"its input schema is not an object schema at most {MAX_DEPTH} "
                             "levels deep")
        strict = {**schema}
        strict.setdefault("additionalProperties", False)  # like every tool: no extra field
        base = jsonschema.validators.validator_for(strict, jsonschema.Draft202012Validator)
        base.check_schema(strict)  # a schema that cannot check anything is refused here
        dialect = referencing.jsonschema.specification_with(
            strict.get("$schema", ""), default=referencing.jsonschema.DRAFT202012)
        nodes = list(subschemas(strict, id_of=dialect.id_of))
        # Registry(): retrieves nothing (jsonschema without one fetches http and file URIs).
        registry = referencing.Registry().with_resource(
            nodes[0][1], dialect.create_resource(strict)).crawl()
        for node, uri in nodes:
            _check_references(node, registry.resolver(base_uri=uri))
            _check_patterns(node)
        patterned = any("patternProperties" in node for node, _ in nodes)
        self.validator = _checking(base, patterned)(strict, registry=referencing.Registry())

    def check(self, value: dict) -> dict:
        """``value`` if it fits, else `ToolArgumentError` with the first problem. Whatever
        else goes wrong (the schema recurses for ever, a check takes too long) is a
        `ToolArgumentError` too: the model reads it, the run goes on."""
        if too_deep(value):
            raise ToolArgumentError(f"arguments nest deeper than {MAX_DEPTH} levels; "
                                    "send flatter ones")
        clock = _deadline.set(time.monotonic() + CHECK_SECONDS)
        try:
            errors = sorted(self.validator.iter_errors(value),
                            key=lambda e: [(type(p).__name__, p) for p in e.path])
        except ToolArgumentError:
            raise
        except RecursionError:
            raise ToolArgumentError("the arguments could not be checked: the server's schema "
                                    "refers to itself without end") from None
        except Exception as exc:  # the server's schema is at fault: say so, not its text
            raise ToolArgumentError("the arguments could not be checked against the server's "
                                    f"schema ({type(exc).__name__}); the tool cannot be "
                                    "used as listed") from None
        finally:
            _deadline.reset(clock)
        if errors:
            where = "/".join(map(str, errors[0].path)) or "arguments"
            raise ToolArgumentError(f"{where}: {errors[0].message[:300]}")
        return value


def _check_references(node: dict, resolver: Any) -> None:
    """Each reference of ``node`` points into the schema (``#...``) and lands somewhere."""
    for keyword in REFERENCES:
        ref = node.get(keyword)
        if not isinstance(ref, str):
            continue
        shown = escape(ref)[:80]
        if not ref.startswith("#"):
            raise ValueError(f"its schema's {keyword} {shown!r} points outside the schema "
                             "(only references inside it, #..., are followed)")
        try:
            resolver.lookup(ref)
        except Exception:
            raise ValueError(f"its schema's {keyword} {shown!r} points to nothing in the "
                             "schema") from None


def _check_patterns(node: dict) -> None:
    """Each pattern of ``node`` is one `regex` can read (when it is installed)."""
    patterns = [node["pattern"]] if isinstance(node.get("pattern"), str) else []
    if isinstance(node.get("patternProperties"), dict):
        patterns += node["patternProperties"]
    for pattern in patterns if regex is not None else []:
        try:
            regex.compile(pattern)
        except Exception as exc:
            raise ValueError(f"its schema's pattern {escape(pattern)[:80]!r} cannot be read "
                             f"({str(exc)[:80]})") from None


@functools.cache
def _checking(base: type, patterned: bool) -> type:
    """``base`` (a jsonschema validator class) with each keyword on the check's clock and
    patterns matched by `_search`. ``patterned``: the schema has ``patternProperties``,
    which jsonschema's ``unevaluatedProperties`` would match with `re`: then that one
    keyword is left to the server."""
    import jsonschema

    stock = base.VALIDATORS
    own = {"pattern": _pattern, "patternProperties": _pattern_properties,
           "additionalProperties": _additional(stock.get("additionalProperties"))}
    if patterned:
        own["unevaluatedProperties"] = _unchecked
    keywords = {name: _timed(own.get(name, fn)) for name, fn in stock.items()}
    return jsonschema.validators.extend(base, keywords)


def _timed(keyword: Callable) -> Callable:
    def timed(validator: Any, value: Any, instance: Any, schema: dict) -> Any:
        if time.monotonic() > _deadline.get():
            raise TooSlow(f"the arguments could not be checked within {CHECK_SECONDS:g} s "
                          "against the server's schema; send simpler ones")
        return keyword(validator, value, instance, schema)
    return timed


def _search(pattern: str, text: str) -> bool | None:
    """Whether ``pattern`` matches somewhere in ``text`` (as JSON Schema says), matched by
    `regex` within `PATTERN_SECONDS`; None when it cannot be told here (no `regex`)."""
    if regex is None:
        return None
    seconds = min(PATTERN_SECONDS, _deadline.get() - time.monotonic())
    try:
        return regex.search(pattern, text, timeout=max(seconds, 0.001)) is not None
    except TimeoutError:
        raise TooSlow(f"the server's pattern {escape(pattern)[:100]!r} took too long to "
                      f"check against {escape(text)[:40]!r}; send a value that plainly "
                      "fits it (the server checks its own input too)") from None


def _pattern(validator: Any, pattern: str, instance: Any, schema: dict) -> Iterator:
    if validator.is_type(instance, "string") and _search(pattern, instance) is False:
        yield _error(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(validator: Any, patterns: dict, instance: Any, schema: dict
                        ) -> Iterator:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for name, value in instance.items():
            if _search(pattern, name):
                yield from validator.descend(value, subschema, path=name, schema_path=pattern)


def _additional(stock: Callable | None) -> Callable:
    """``additionalProperties``: jsonschema's, unless ``patternProperties`` is beside it
    (jsonschema would match those with `re`); a name no pattern can be told not to
    match is not taken for an extra one."""
    def additional(validator: Any, extra: Any, instance: Any, schema: dict) -> Any:
        if "patternProperties" not in schema and stock is not None:
            return stock(validator, extra, instance, schema)
        return _extras(validator, extra, instance, schema)
    return additional


def _extras(validator: Any, extra: Any, instance: Any, schema: dict) -> Iterator:
    if not validator.is_type(instance, "object"):
        return
    named, patterns = schema.get("properties", {}), schema.get("patternProperties", {})
    extras = [name for name in instance if name not in named
              and all(_search(pattern, name) is False for pattern in patterns)]
    if validator.is_type(extra, "object"):
        for name in extras:
            yield from validator.descend(instance[name], extra, path=name)
    elif extra is False and extras:
        yield _error(f"Additional properties are not allowed "
                               f"({', '.join(map(repr, extras))} "
                               f"{'was' if len(extras) == 1 else 'were'} unexpected)")


def _unchecked(validator: Any, value: Any, instance: Any, schema: dict) -> tuple:
    return ()


def _error(message: str) -> Any:
    from jsonschema.exceptions import ValidationError

    return ValidationError(message)
