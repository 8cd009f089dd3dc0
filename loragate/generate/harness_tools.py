"""The `tools` transformation of harness variants: routed subsets, distractors, order.

- *routed*: the tools an entry needs - those its expectation names (calls, tools it
  must not call yet), those its conversation already called, and the policy's
  confirmation tool beside a destructive one - in the entry's order.
- *distractors*: tools drawn with a seed from a versioned pool. A pool is a YAML file
  (`configs/harness/pools/NAME.yaml`: `name`, `version`, `generic_words`, `tools` with
  a `purpose` word list each) or `bfcl`, the functions of the installed `bfcl-eval`'s
  data. A pool tool named like a tool the entry offers is bad input (the pool collides
  with the evalset); a pool tool whose purpose collides with the entry is never drawn
  for it: one whose name shares a noun with a tool the entry offers, or whose purpose
  words the entry's conversation says (a tool for the very thing the user asks about
  would make a call right where the entry expects none).
- *shuffled*: a permutation seeded per entry (fault variants of one entry share it).
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from loragate.calls.tools import CompiledTool, ToolDef, Toolset
from loragate.common.errors import BadInput, Problem, validation_problems
from loragate.common.files import read_yaml
from loragate.common.resources import bundled
from loragate.evalset.bfcl import data_dir, tool_definition
from loragate.evalset.load import Evalset
from loragate.families import get_families
from loragate.formats.evalset import Entry
from loragate.generate.harness import HarnessVariant, ToolsTransform

POOLS_DIR = "configs/harness/pools"
BFCL_POOL = "bfcl"
BFCL_POOL_FILES = ("BFCL_v4_simple_python.json", "BFCL_v4_multiple.json")
"""The BFCL data files whose functions make the `bfcl` pool."""
_WORD = re.compile(r"[a-z0-9]+")


class PoolTool(BaseModel):
    """One tool of a distractor pool file."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[A-Za-z0-9_.\-]{1,64}$")
    description: str = Field(min_length=1)
    purpose: list[str] = Field(min_length=1, description="words or phrases of what the tool is for")
    parameters: dict[str, Any]


class PoolFile(BaseModel):
    """A distractor pool file."""

    model_config = ConfigDict(extra="forbid")

    name: str
    version: str
    description: str = ""
    generic_words: list[str] = Field(default_factory=list)
    """Words of tool names that say nothing of a tool's purpose (`get`, `list`, ...)."""
    tools: list[PoolTool] = Field(min_length=1)


@dataclass(frozen=True)
class DistractorTool:
    tool: CompiledTool
    nouns: frozenset[str]
    purpose: tuple[str, ...]


@dataclass(frozen=True)
class Pool:
    """A loaded distractor pool: its tools, their nouns, and its identity."""

    name: str
    version: str
    sha256: str
    source: str
    tools: tuple[DistractorTool, ...]
    generic_words: frozenset[str]

    def nouns(self, tool_name: str) -> frozenset[str]:
        return name_nouns(tool_name, self.generic_words)


def _singular(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def name_nouns(name: str, generic: Iterable[str]) -> frozenset[str]:
    """The words of a tool name that say what it acts on (`get_invoice` -> {invoice})."""
    skip = set(generic)
    words = [w for w in re.split(r"[^a-z0-9]+", name.lower()) if w]
    return frozenset(_singular(w) for w in words if w not in skip and len(w) > 1)


def _sha(data: Any) -> str:
    blob = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _pool_path(name: str) -> Path:
    direct = Path(name).expanduser()
    if direct.suffix in (".yaml", ".yml") and direct.is_file():
        return direct
    shipped = bundled(f"{POOLS_DIR}/{name}.yaml") if re.fullmatch(r"[\w.+-]{1,100}", name) else None
    if shipped is None:
        here = bundled(POOLS_DIR)
        known = sorted(p.stem for p in here.glob("*.yaml")) if here is not None else []
        raise BadInput(
            f"unknown distractor pool {name!r}",
            [
                Problem(
                    "harness",
                    f"no pool {name!r}",
                    field="tools.pool",
                    fix=f"use one of {', '.join([*known, BFCL_POOL])} or a pool .yaml file "
                    "(docs/harness.md)",
                )
            ],
        )
    return shipped


@cache
def load_pool(name: str) -> Pool:
    """The pool `name`: a shipped pool, `bfcl`, or a pool file's path."""
    if name == BFCL_POOL:
        return _bfcl_pool()
    path = _pool_path(name)
    raw = read_yaml(path, "distractor pool")
    try:
        pool = PoolFile.model_validate(raw or {})
    except ValidationError as exc:
        raise BadInput(
            f"{path}: invalid distractor pool",
            validation_problems(exc, str(path), fix="see docs/harness.md, distractor pools"),
        ) from None
    tools: list[DistractorTool] = []
    generic = frozenset(w.lower() for w in pool.generic_words)
    problems: list[Problem] = []
    seen: set[str] = set()
    for i, t in enumerate(pool.tools):
        if t.name in seen:
            problems.append(
                Problem(
                    str(path),
                    f"duplicate tool {t.name!r}",
                    field=f"tools[{i}].name",
                    fix="rename one",
                )
            )
            continue
        seen.add(t.name)
        try:
            tool = ToolDef.model_validate(
                {
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": t.parameters,
                    },
                }
            )
        except ValidationError as exc:
            problems += validation_problems(
                exc, str(path), fix="fix the tool", prefix=f"tools[{i}]"
            )
            continue
        tools.append(
            DistractorTool(
                CompiledTool(tool),
                name_nouns(t.name, generic),
                tuple(p.lower() for p in t.purpose),
            )
        )
    if problems:
        raise BadInput(f"{path}: {len(problems)} problem(s) in the distractor pool", problems)
    return Pool(
        name=pool.name,
        version=pool.version,
        sha256=_sha(raw),
        source=str(path),
        tools=tuple(tools),
        generic_words=generic,
    )


def _bfcl_pool() -> Pool:
    root = data_dir()
    functions: dict[str, dict[str, Any]] = {}
    for file in BFCL_POOL_FILES:
        path = root / file
        if not path.is_file():
            continue
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                if not line.strip():
                    continue
                for fn in json.loads(line).get("function", []):
                    if isinstance(fn, dict) and isinstance(fn.get("name"), str):
                        functions.setdefault(fn["name"], fn)
    tools: list[DistractorTool] = []
    for name in sorted(functions):
        try:
            tool = ToolDef.model_validate(tool_definition(functions[name]))
        except (ValidationError, ValueError, TypeError):
            continue  # a function the importer cannot express (e.g. a dotted class name)
        nouns = name_nouns(tool.name, ())
        tools.append(DistractorTool(CompiledTool(tool), nouns, tuple(sorted(nouns))))
    if not tools:
        raise BadInput(
            "the bfcl distractor pool found no functions",
            fix="install BFCL's data: pip install --no-deps bfcl-eval (docs/bfcl.md)",
        )
    return Pool(
        name=BFCL_POOL,
        version=_bfcl_version(),
        sha256=_sha(sorted(functions)),
        source=str(root),
        tools=tuple(tools),
        generic_words=frozenset(),
    )


def _bfcl_version() -> str:
    try:
        return metadata.version("bfcl-eval")
    except metadata.PackageNotFoundError:
        return "unknown"


# -- per entry ------------------------------------------------------------------------


def entry_text(entry: Entry) -> str:
    """Every word of an entry's conversation, lower-cased (for purpose checks)."""
    parts: list[str] = []
    for m in entry.messages:
        parts.append(m.content or "")
        for tc in m.tool_calls or []:
            args = tc.function.arguments
            parts.append(args if isinstance(args, str) else json.dumps(args, ensure_ascii=False))
    return " ".join(parts).lower()


def _says(text_words: set[str], text: str, phrase: str) -> bool:
    if " " in phrase:
        return re.search(rf"\b{re.escape(phrase)}\b", text) is not None
    return phrase in text_words


def routed_tools(evalset: Evalset, entry: Entry) -> list[str]:
    """The names of the tools `entry` needs, in its toolset's order."""
    family = get_families()[entry.family]
    expect = evalset.expects[entry.id]
    needed = {spec.name for spec in family.referenced_calls(expect)}
    needed |= set(family.referenced_tools(expect))
    for m in entry.messages:
        needed |= {tc.function.name for tc in m.tool_calls or []}
    policy = evalset.policy
    if policy.confirmation_tool and needed & set(policy.destructive_tools):
        needed.add(policy.confirmation_tool)
    return [n for n in evalset.toolset_of(entry.id).names() if n in needed]


def pool_collisions(
    pool: Pool, evalset: Evalset, entries: Iterable[Entry]
) -> list[tuple[str, str]]:
    """(entry id, tool) for every pool tool named like a tool an entry offers."""
    names = {t.tool.name for t in pool.tools}
    out: list[tuple[str, str]] = []
    for e in entries:
        for n in evalset.toolset_of(e.id).names():
            if n in names:
                out.append((e.id, n))
    return out


def admissible(pool: Pool, evalset: Evalset, entry: Entry) -> list[DistractorTool]:
    """The pool's tools that may be drawn for `entry` (see the module docstring)."""
    offered = evalset.toolset_of(entry.id).names()
    nouns: set[str] = set()
    for n in offered:
        nouns |= pool.nouns(n)
    text = entry_text(entry)
    words = set(_WORD.findall(text))
    return [
        t
        for t in pool.tools
        if t.tool.name not in offered
        and not (t.nouns & nouns)
        and not any(_says(words, text, p) for p in t.purpose)
    ]


def _rng(seed: int, entry: Entry, what: str) -> random.Random:
    digest = hashlib.sha256(f"{seed}:{entry.base_id}:{what}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


@dataclass
class ToolsResult:
    toolset: Toolset
    """What the prompt offers, in prompt order (the scoring toolset too)."""
    distractors: list[str]


def transform_tools(
    variant: HarnessVariant, spec: ToolsTransform, evalset: Evalset, entry: Entry
) -> ToolsResult:
    """The tools `entry` is offered under `variant` (BadInput when the pool has too few
    admissible tools for it)."""
    base = evalset.toolset_of(entry.id)
    names = routed_tools(evalset, entry) if spec.select == "routed" else base.names()
    chosen: list[CompiledTool] = [c for n in names if (c := base.compiled(n)) is not None]
    drawn: list[str] = []
    if spec.distractors:
        pool = load_pool(spec.pool)
        candidates = admissible(pool, evalset, entry)
        if len(candidates) < spec.distractors:
            raise BadInput(
                f"harness variant {variant.name!r}: entry {entry.id} admits only "
                f"{len(candidates)} of the {len(pool.tools)} tools of pool {pool.name!r}, "
                f"{spec.distractors} asked",
                [
                    Problem(
                        "harness",
                        f"variant {variant.name}, entry {entry.id}: the other tools of the "
                        "pool share a noun with its tools or a purpose its conversation names",
                        field="tools.distractors",
                        fix=f"lower `distractors` to {len(candidates)} or less, use a larger "
                        "pool, or opt the entry out (`harness_opt_out: {tools: REASON}`, "
                        "docs/harness.md)",
                    )
                ],
            )
        rng = _rng(spec.seed, entry, "distractors")
        picked = rng.sample(candidates, spec.distractors)
        for t in picked:
            chosen.insert(rng.randrange(len(chosen) + 1), t.tool)
            drawn.append(t.tool.name)
    if spec.order == "shuffled":
        _rng(spec.seed, entry, "order").shuffle(chosen)
    return ToolsResult(Toolset(chosen), drawn)


def check_pool(variant: HarnessVariant, evalset: Evalset, entries: list[Entry]) -> str | None:
    """The sha256 of the variant's pool; `BadInput` when a pool tool is named like a
    tool one of `entries` offers (naming the variant, the entries and the fix)."""
    spec = variant.tools
    if spec is None or not spec.distractors:
        return None
    pool = load_pool(spec.pool)
    clashes = pool_collisions(pool, evalset, entries)
    if clashes:
        tools = sorted({t for _, t in clashes})
        ids = sorted({e for e, _ in clashes})
        shown = ", ".join(ids[:8]) + (f" and {len(ids) - 8} more" if len(ids) > 8 else "")
        raise BadInput(
            f"harness variant {variant.name!r}: distractor pool {pool.name!r} ({pool.source}) "
            f"holds tools the evalset offers: {', '.join(tools)}",
            [
                Problem(
                    pool.source,
                    f"tool {t!r} of the pool collides with entries {shown}",
                    field="tools",
                    fix="rename or remove it in the pool file (a distractor must be a tool "
                    "the entry does not have), or use another pool (docs/harness.md)",
                )
                for t in tools
            ],
        )
    return pool.sha256


__all__ = [
    "BFCL_POOL",
    "Pool",
    "ToolsResult",
    "admissible",
    "check_pool",
    "load_pool",
    "name_nouns",
    "pool_collisions",
    "routed_tools",
    "transform_tools",
]
