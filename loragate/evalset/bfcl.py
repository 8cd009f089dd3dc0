"""BFCL (Berkeley Function Calling Leaderboard) data as one loragate evalset.

Reads the test entries and possible answers that the installed `bfcl-eval` package
ships (nothing is downloaded) and converts them:

- BFCL parameter types to JSON Schema: `dict` -> `object` (with `properties`,
  `required`, and no other keys: BFCL fails an unexpected parameter), `float` ->
  `number`, `tuple` -> `array`, `any` -> no type; `description`, `enum`, `default`,
  bounds and `format` are kept;
- possible answers to matchers: one possibility is a literal, several are `$any`,
  `""` among them means the argument may be left out (`$absent`), an empty list
  admits nothing (`$never`); dict answers become nested object matchers (not every
  combination spelled out); a tool parameter the answer does not list must be left
  out (`$absent`), as BFCL fails it as unexpected. Possibilities the tool's own
  schema rejects (BFCL does not check its schemas) are dropped and counted;
- categories to families (`CATEGORY_FAMILY`), with the category as the tag
  `bfcl:CATEGORY` and the BFCL id as the entry id.

`semantics="bfcl"` writes BFCL's rules where they differ from loragate's: strings
compared with `$loose` (case-insensitive, without ` ,./-_*^`) and integers with
`$integer` (`5.0` is not an integer), and the irrelevance categories with BFCL's rule
(`abstain` with `semantics: bfcl`: any reply without a parsed call passes, a call
that cannot be read counts as none). The default, `"loragate"`, compares strings
exactly and numbers numerically, and judges the irrelevance categories by the
`abstain` family's generic rule (any call attempt fails; an honest decline passes;
invented figures, dates, states, junk and bare refusals fail).

Each entry carries its own tools inline (evalset format 3, `tools: [...]`), since
BFCL entries define different tools of the same name; `tools.json` is `[]`.
"""

from __future__ import annotations

import importlib.util
import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from loragate.calls.schemacheck import SchemaChecker
from loragate.common.errors import BadInput, MissingDependency, Problem, unknown_name_fix
from loragate.common.jsonl import MAX_PROBLEMS, ReadReport, read_objects
from loragate.formats.versions import PER_ENTRY_TOOLS_VERSION

Semantics = Literal["loragate", "bfcl"]

BFCL_VERSION_PREFIX = "BFCL_v4_"
"""Data files of `bfcl-eval` 2026.x: `data/BFCL_v4_<category>.json` and
`data/possible_answer/BFCL_v4_<category>.json`."""

CATEGORY_FAMILY: dict[str, str] = {
    "simple_python": "tool_call",
    "multiple": "tool_call",
    "parallel": "parallel",
    "parallel_multiple": "parallel",
    "irrelevance": "abstain",
    "live_simple": "tool_call",
    "live_multiple": "tool_call",
    "live_parallel": "parallel",
    "live_parallel_multiple": "parallel",
    "live_irrelevance": "abstain",
}
"""The BFCL categories that map onto a loragate family, and that family. Not here:
`simple_java` / `simple_javascript` (values are Java / JavaScript source strings with
their own type converters), `live_relevance` (passes on any call at all, which no
family expresses), and the multi-turn, memory, web-search and format-sensitivity
categories (stateful executions, not a single scored turn)."""

DEFAULT_CATEGORIES = (
    "simple_python",
    "multiple",
    "parallel",
    "parallel_multiple",
    "irrelevance",
    "live_simple",
    "live_multiple",
)

TAG_PREFIX = "bfcl:"
"""Entries carry the tag `bfcl:CATEGORY`."""

_ID_RE = re.compile(r"^[A-Za-z0-9_.:\-]{1,200}$")
_TOOL_NAME_RE = re.compile(r"^[A-Za-z0-9_.\-]{1,64}$")

_TYPES = {"dict": "object", "float": "number", "tuple": "array"}
_KEPT = ("description", "enum", "default", "minimum", "maximum", "minItems", "maxItems", "format")


def data_dir() -> Path:
    """`bfcl_eval/data` of the installed `bfcl-eval` (found without importing it)."""
    spec = importlib.util.find_spec("bfcl_eval")
    if spec is None or not spec.submodule_search_locations:
        raise MissingDependency(
            "bfcl-eval (BFCL's data and checker)",
            "bfcl",
            "pip install --no-deps bfcl-eval==2026.3.23",
        )
    return Path(next(iter(spec.submodule_search_locations))) / "data"


def check_categories(categories: Iterable[str]) -> list[str]:
    """The categories, each known; `BadInput` naming the unknown one otherwise."""
    out = []
    for cat in categories:
        if cat not in CATEGORY_FAMILY:
            raise BadInput(
                f"unknown or unsupported BFCL category {cat!r}",
                fix=unknown_name_fix(cat, CATEGORY_FAMILY, "categories"),
            )
        if cat not in out:
            out.append(cat)
    return out


# -- schemas ------------------------------------------------------------------------


def json_schema(param: Any) -> dict[str, Any]:
    """A BFCL parameter description as JSON Schema (Draft 2020-12)."""
    if not isinstance(param, dict):
        return {}
    out: dict[str, Any] = {}
    kind = param.get("type")
    if isinstance(kind, str) and kind != "any":
        out["type"] = _TYPES.get(kind, kind)
    for key in _KEPT:
        if key in param:
            out[key] = param[key]
    if out.get("type") == "object":
        props = param.get("properties")
        if isinstance(props, dict):
            out["properties"] = {k: json_schema(v) for k, v in props.items()}
            out["additionalProperties"] = False
        required = param.get("required")
        if isinstance(required, list) and required:
            out["required"] = [r for r in required if isinstance(r, str)]
    elif out.get("type") == "array" and isinstance(param.get("items"), dict):
        out["items"] = json_schema(param["items"])
    return out


def tool_definition(function: dict[str, Any]) -> dict[str, Any]:
    """A BFCL function as an OpenAI-style tool with a JSON Schema `parameters`."""
    params = json_schema(function.get("parameters") or {"type": "dict"})
    params["type"] = "object"
    params.setdefault("properties", {})
    params["additionalProperties"] = False
    return {
        "type": "function",
        "function": {
            "name": function["name"],
            "description": str(function.get("description", "")),
            "parameters": params,
        },
    }


# -- answers -> matchers -------------------------------------------------------------


@dataclass
class ImportStats:
    """What the conversion did, for the command's summary."""

    entries: Counter[str] = field(default_factory=Counter)
    """Entries written per category."""
    dropped_values: int = 0
    """Possible answers the tool's schema rejects (dropped; BFCL does not check them)."""
    never: int = 0
    """Arguments with no acceptable value left (`$never`): their entry cannot pass."""
    skipped: list[str] = field(default_factory=list)
    """`id: why` of entries that could not be converted."""
    warnings: list[str] = field(default_factory=list)
    """What had to be mended in the data (lone surrogates)."""


def _schema_accepts(schema: dict[str, Any], value: Any) -> bool:
    return SchemaChecker(schema).first_message(value) is None


def _value_matcher(
    value: Any, schema: dict[str, Any], semantics: Semantics, type_checked: bool = True
) -> Any:
    """The matcher of one possible value of a parameter with `schema`. `type_checked`:
    BFCL checks the value's type here (a parameter, or an element of a parameter's
    list); deeper down it compares with Python's `==`, where `5.0 == 5`."""
    kind = schema.get("type")
    if kind == "object" and isinstance(value, dict):
        props = schema.get("properties", {})
        return {
            k: _answer_matcher(
                v if isinstance(v, list) else [v], props.get(k, {}), semantics, type_checked=False
            )
            for k, v in value.items()
        }
    if kind == "array" and isinstance(value, list):
        items = schema.get("items", {})
        inner = type_checked and items.get("type") != "array"
        return [_value_matcher(v, items, semantics, inner) for v in value]
    if semantics == "bfcl":
        if isinstance(value, str) and kind in ("string", None):  # BFCL reads `any` as a string
            return {"$loose": value}
        if kind == "integer" and type(value) is int and type_checked:
            return {"$integer": value}
    return value


def _literal_of(value: Any, schema: dict[str, Any]) -> Any:
    """The possible value as the plain JSON a model would write (dict answers hold
    lists of possibilities: take the first that is not `""`)."""
    if schema.get("type") == "object" and isinstance(value, dict):
        props = schema.get("properties", {})
        out = {}
        for k, v in value.items():
            options = [o for o in (v if isinstance(v, list) else [v]) if o != ""]
            if options:
                out[k] = _literal_of(options[0], props.get(k, {}))
        return out
    if schema.get("type") == "array" and isinstance(value, list):
        return [_literal_of(v, schema.get("items", {})) for v in value]
    return value


def _answer_matcher(
    possible: list[Any],
    schema: dict[str, Any],
    semantics: Semantics,
    stats: ImportStats | None = None,
    type_checked: bool = True,
) -> Any:
    """The matcher of a parameter's list of possible values."""
    alternatives: list[Any] = []
    if "" in possible:
        alternatives.append({"$absent": True})
    for value in possible:
        if value == "":
            continue
        if not _schema_accepts(schema, _literal_of(value, schema)):
            if stats is not None:
                stats.dropped_values += 1
            continue
        matcher = _value_matcher(value, schema, semantics, type_checked)
        if matcher not in alternatives:
            alternatives.append(matcher)
    if not alternatives:
        if stats is not None:
            stats.never += 1
        return {"$never": True}
    return alternatives[0] if len(alternatives) == 1 else {"$any": alternatives}


def call_spec(
    name: str,
    answer: dict[str, Any],
    tool: dict[str, Any],
    semantics: Semantics,
    stats: ImportStats | None = None,
) -> dict[str, Any]:
    """An expected call `{"name", "arguments"}` from one BFCL ground-truth call."""
    props: dict[str, Any] = tool["function"]["parameters"].get("properties", {})
    arguments: dict[str, Any] = {}
    for param, possible in answer.items():
        options = possible if isinstance(possible, list) else [possible]
        if param in props:
            arguments[param] = _answer_matcher(options, props[param], semantics, stats)
        elif "" in options:  # a parameter the tool lacks: BFCL fails any value for it
            arguments[param] = {"$absent": True}
        else:  # ... and fails its absence unless `""` allows that
            arguments[param] = {"$never": True}
            if stats is not None:
                stats.never += 1
    for param in props:
        if param not in arguments:
            arguments[param] = {"$absent": True}  # BFCL: an unexpected parameter fails
    return {"name": name, "arguments": arguments}


# -- entries ------------------------------------------------------------------------


def _messages(question: Any) -> list[dict[str, Any]]:
    """The first (only) turn of a BFCL question as chat messages."""
    turn = question[0] if isinstance(question, list) and question else []
    out = []
    for m in turn if isinstance(turn, list) else []:
        if isinstance(m, dict) and m.get("role") in ("system", "user", "assistant"):
            out.append({"role": m["role"], "content": str(m.get("content", ""))})
    return out


def convert_entry(
    raw: dict[str, Any],
    answer: dict[str, Any] | None,
    category: str,
    semantics: Semantics,
    stats: ImportStats,
) -> dict[str, Any] | None:
    """One BFCL test entry (and its possible answer) as an `entries.jsonl` object;
    None (with the reason in `stats.skipped`) when it cannot be converted."""
    entry_id = raw.get("id")
    if not isinstance(entry_id, str) or not _ID_RE.match(entry_id):
        stats.skipped.append(f"{str(entry_id)[:80]!r}: id does not match {_ID_RE.pattern}")
        return None
    if not isinstance(raw.get("question"), list) or len(raw["question"]) != 1:
        stats.skipped.append(f"{entry_id}: not a single-turn question")
        return None
    functions = raw.get("function")
    if not isinstance(functions, list) or not all(
        isinstance(f, dict) and _TOOL_NAME_RE.match(str(f.get("name", ""))) for f in functions
    ):
        stats.skipped.append(f"{entry_id}: a function without a usable name")
        return None
    tools = [tool_definition(f) for f in functions]
    by_name = {t["function"]["name"]: t for t in tools}
    family = CATEGORY_FAMILY[category]
    expect: dict[str, Any] = {}
    if family == "abstain":
        # No tool of the entry fits: loragate's generic abstain rule, or BFCL's own
        # (any reply without a parsed call passes).
        expect = {"semantics": "bfcl"} if semantics == "bfcl" else {}
    else:
        calls = []
        for call in (answer or {}).get("ground_truth", []):
            for name, args in call.items():
                if name not in by_name or not isinstance(args, dict):
                    stats.skipped.append(f"{entry_id}: the answer calls {name!r}, no tool of it")
                    return None
                calls.append(call_spec(name, args, by_name[name], semantics, stats))
        if not calls:
            stats.skipped.append(f"{entry_id}: no possible answer")
            return None
        expect = {"calls": calls}
    stats.entries[category] += 1
    return {
        "id": entry_id,
        "family": family,
        "messages": _messages(raw["question"]),
        "tools": tools,
        "expect": expect,
        "tags": [f"{TAG_PREFIX}{category}"],
    }


REINSTALL = (
    "reinstall bfcl-eval 2026.3.23: pip install --no-deps --force-reinstall bfcl-eval==2026.3.23"
)


def _read_lines(path: Path, stats: ImportStats) -> list[dict[str, Any]]:
    """The objects of a BFCL data file (JSON lines), through the one reader with its
    guards: a bad line is `BadInput` naming the file, the line and the fix; lone
    surrogates are mended and said in `stats.warnings`."""
    if not path.exists():
        return []
    report = ReadReport()
    problems: list[Problem] = []
    lines = read_objects(path, what="BFCL data file", problems=problems, report=report)
    problems = [p for p in problems if not p.message.startswith("byte ")] + [
        Problem(p.file, f"{p.message} (not UTF-8)", line=p.line, fix=REINSTALL)
        for p in problems
        if p.message.startswith("byte ")
    ]
    if report.not_utf8_lines:
        problems.append(
            Problem(str(path), "bytes that are not UTF-8 (not BFCL's data)", fix=REINSTALL)
        )
    if problems:
        raise BadInput(
            f"{path}: {len(problems)} bad line(s)", problems[:MAX_PROBLEMS], fix=REINSTALL
        )
    stats.warnings += report.warnings(path)
    return [obj for _, obj in lines]


def read_category(
    root: Path, category: str, stats: ImportStats | None = None
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """BFCL's test entries of a category and its possible answers by id."""
    stats = stats if stats is not None else ImportStats()
    entries_path = root / f"{BFCL_VERSION_PREFIX}{category}.json"
    if not entries_path.is_file():
        raise BadInput(
            f"{entries_path} is missing from the installed bfcl-eval",
            fix="install bfcl-eval 2026.3.23: pip install --no-deps bfcl-eval==2026.3.23",
        )
    answers_path = root / "possible_answer" / f"{BFCL_VERSION_PREFIX}{category}.json"
    answers = _read_lines(answers_path, stats)
    return _read_lines(entries_path, stats), {str(a.get("id")): a for a in answers}


def build_entries(
    categories: Iterable[str], semantics: Semantics = "loragate", root: Path | None = None
) -> tuple[list[dict[str, Any]], ImportStats]:
    """Every convertible entry of `categories` (from `root`, default the installed
    data), in category order, with what the conversion did."""
    root = root if root is not None else data_dir()
    stats = ImportStats()
    out = []
    for category in check_categories(categories):
        raws, answers = read_category(root, category, stats)
        for raw in raws:
            converted = convert_entry(
                raw, answers.get(str(raw.get("id"))), category, semantics, stats
            )
            if converted is not None:
                out.append(converted)
    return out, stats


def evalset_files(
    entries: list[dict[str, Any]], categories: list[str], semantics: Semantics, version: str
) -> dict[str, str]:
    """The files of the evalset folder, name -> text (`evalset.yaml` last)."""
    manifest = {
        "name": "bfcl",
        "version": version,
        "format_version": PER_ENTRY_TOOLS_VERSION,
        "description": (
            f"BFCL categories {', '.join(categories)} from bfcl-eval {version}, "
            f"imported with {semantics} semantics"
        ),
        "tools": "tools.json",
        "entries": "entries.jsonl",
    }
    lines = "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in entries)
    return {
        "tools.json": "[]\n",
        "entries.jsonl": lines,
        "evalset.yaml": yaml.safe_dump(manifest, sort_keys=False, allow_unicode=True),
    }
