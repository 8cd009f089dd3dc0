"""Evalset loading and validation: `evalset.yaml` + `tools.json` + `entries.jsonl`.

`load_evalset(path)` returns a typed `Evalset` or raises `BadInput` listing *every*
problem (file, line, field, what is wrong, how to fix it). Entries that ask for fault
injection (`faults`) are expanded here into one entry per fault (`ID~fault`).
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from loragate.calls.checks import spec_problems
from loragate.calls.matchers import check_matcher
from loragate.calls.tools import ToolDef, Toolset, schema_errors
from loragate.common.errors import (
    BadInput,
    Problem,
    did_you_mean,
    fix_unless_said,
    unknown_name_fix,
    validation_problems,
)
from loragate.common.files import read_json, read_yaml
from loragate.common.jsonl import read_objects
from loragate.common.resources import user_or_bundled
from loragate.evalset.entry_tools import EntryTools
from loragate.evalset.faults import expand_faults
from loragate.families import Family, ScoringContext, get_families
from loragate.formats.evalset import (
    EPISODES_FILE,
    Entry,
    EvalsetManifest,
    Policy,
    Tau2ServerConfig,
)
from loragate.formats.versions import (
    EVALSET_FORMAT_VERSION,
    PER_ENTRY_TOOLS_VERSION,
    TAU2_SERVER_VERSION,
    TOOL_SERVERS_VERSION,
    WORLD_VERSION,
)
from loragate.judge.text import TEXT_OPERATORS


@dataclass
class Evalset:
    """A loaded, validated evalset. `entries` are fault-expanded; `expects` are typed.

    `toolset` holds the tools of `tools.json`; `entry_toolsets` the toolset of each
    entry that lists its own `tools` (shared between entries with the same list).
    """

    root: Path
    manifest: EvalsetManifest
    toolset: Toolset
    entries: list[Entry]
    expects: dict[str, BaseModel]
    sha256: str
    by_id: dict[str, Entry] = field(default_factory=dict)
    entry_toolsets: dict[str, Toolset] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.by_id = {e.id: e for e in self.entries}

    def toolset_of(self, entry_id: str) -> Toolset:
        """The tools offered to entry `entry_id`: its own list, else all of tools.json."""
        return self.entry_toolsets.get(entry_id, self.toolset)

    @property
    def name(self) -> str:
        return self.manifest.name

    @property
    def version(self) -> str:
        return self.manifest.version

    @property
    def policy(self) -> Policy:
        return self.manifest.policy


# -- loading -----------------------------------------------------------------------


def _sha256_files(paths: list[Path]) -> str:
    h = hashlib.sha256()
    for p in paths:
        h.update(p.name.encode())
        h.update(b"\0")
        h.update(p.read_bytes())
        h.update(b"\0")
    return h.hexdigest()


def _check_messages(entry: Entry, toolset: Toolset) -> list[tuple[str, str, str]]:
    """(field, message, fix) problems of an entry's conversation."""
    out: list[tuple[str, str, str]] = []
    msgs = entry.messages
    pending: set[str] = set()
    for i, m in enumerate(msgs):
        f = f"messages[{i}]"
        if m.role == "system" and i != 0:
            out.append(
                (
                    f + ".role",
                    "a system message may only come first",
                    "move it to the start or drop it",
                )
            )
        if m.tool_calls and m.role != "assistant":
            out.append(
                (
                    f + ".tool_calls",
                    f"only assistant messages carry tool_calls, not {m.role}",
                    "set role to assistant",
                )
            )
        for j, tc in enumerate(m.tool_calls or []):
            if tc.function.name not in toolset:
                out.append(
                    (
                        f"{f}.tool_calls[{j}].function.name",
                        f"unknown tool {tc.function.name!r}",
                        "use a tool the entry offers (its `tools`, else tools.json)",
                    )
                )
            try:
                tc.function.arguments_dict()
            except ValueError as exc:
                out.append(
                    (
                        f"{f}.tool_calls[{j}].function.arguments",
                        str(exc),
                        "give arguments as a JSON object",
                    )
                )
            if tc.id:
                pending.add(tc.id)
        if m.role == "tool":
            prev = msgs[i - 1] if i > 0 else None
            if prev is None or not (prev.role == "tool" or prev.tool_calls):
                out.append(
                    (
                        f + ".role",
                        "a tool result must follow an assistant message with tool_calls",
                        "add the assistant tool call before it",
                    )
                )
            if m.tool_call_id and pending and m.tool_call_id not in pending:
                out.append(
                    (
                        f + ".tool_call_id",
                        f"{m.tool_call_id!r} answers no earlier tool call id",
                        "use the id of the call it answers",
                    )
                )
        if m.role in ("user", "system") and not (m.content or "").strip():
            out.append((f + ".content", f"empty {m.role} message", "write the message text"))
    last = msgs[-1]
    if last.role not in ("user", "tool"):
        out.append(
            (
                f"messages[{len(msgs) - 1}].role",
                f"the conversation ends with {last.role!r}; the model must speak next",
                "end with a user or tool message",
            )
        )
    return out


def _features(manifest: EvalsetManifest) -> list[tuple[str, int]]:
    """(feature, the first format that has it) of every versioned feature the manifest
    uses."""
    policy = manifest.policy
    world = [
        ("`world`", manifest.world),
        ("`answers`", manifest.answers),
        ("`policy.destructive_when`", policy.destructive_when),
        ("`system_prompts`", manifest.system_prompts),
    ]
    out = [(name, WORLD_VERSION) for name, used in world if used]
    if manifest.tool_servers:
        out.append(("`tool_servers`", TOOL_SERVERS_VERSION))
    tau2 = [n for n, c in manifest.tool_servers.items() if isinstance(c, Tau2ServerConfig)]
    if tau2:
        out.append((f"the tau2 server `{tau2[0]}`", TAU2_SERVER_VERSION))
    if policy.repeatable_tools:
        out.append(("`policy.repeatable_tools`", TAU2_SERVER_VERSION))
    return out


def _read_manifest(root: Path) -> EvalsetManifest:
    """`evalset.yaml`, validated; `BadInput` when the folder or file is missing or bad."""
    manifest_path = root / "evalset.yaml"
    if not root.is_dir():
        raise BadInput(
            f"evalset folder {root} does not exist",
            [
                Problem(
                    str(root),
                    "no such folder",
                    fix="pass an evalset folder (e.g. evalsets/agent20)",
                )
            ],
        )
    if not manifest_path.is_file():
        raise BadInput(
            f"{manifest_path} is missing",
            [
                Problem(
                    str(manifest_path),
                    "no evalset.yaml",
                    fix="an evalset folder needs evalset.yaml",
                )
            ],
        )
    raw_manifest = read_yaml(manifest_path, "evalset manifest")
    try:
        manifest = EvalsetManifest.model_validate(raw_manifest or {})
    except ValidationError as exc:
        raise BadInput(
            "invalid evalset manifest",
            validation_problems(exc, str(manifest_path), fix="see docs/formats.md, evalset folder"),
        ) from None
    if manifest.format_version > EVALSET_FORMAT_VERSION:
        raise BadInput(
            f"{manifest_path}: format_version {manifest.format_version} is newer than this "
            f"loragate reads ({EVALSET_FORMAT_VERSION})",
            [
                Problem(
                    str(manifest_path),
                    "newer format",
                    field="format_version",
                    fix="upgrade loragate",
                )
            ],
        )
    for feature, needs in _features(manifest):
        if manifest.format_version < needs:
            raise BadInput(
                f"{manifest_path}: {feature} needs format_version {needs}",
                [
                    Problem(
                        str(manifest_path),
                        f"evalset.yaml says {manifest.format_version}",
                        field="format_version",
                        fix=f"set `format_version: {needs}` in evalset.yaml",
                    )
                ],
            )
    return manifest


def _read_tools(tools_path: Path, what: str, problems: list[Problem]) -> tuple[Toolset, set[str]]:
    """The valid tools of `tools.json` and every name it defines; problems appended."""
    raw_tools = read_json(tools_path, what)
    if not isinstance(raw_tools, list):
        raise BadInput(
            f"{tools_path}: must be a JSON array of tool definitions",
            [
                Problem(
                    str(tools_path), "not an array", fix='write [{"type": "function", ...}, ...]'
                )
            ],
        )
    tools: list[ToolDef] = []
    seen: set[str] = set()
    where = str(tools_path)
    for i, raw in enumerate(raw_tools):
        try:
            tool = ToolDef.model_validate(raw)
        except ValidationError as exc:
            fix = 'use {"type": "function", "function": {...}}'
            problems += validation_problems(exc, where, fix=fix, prefix=f"[{i}]")
            continue
        errors = schema_errors(tool.function.parameters)
        field = f"[{i}].function.parameters"
        problems += [Problem(where, msg, field=field, fix="fix the JSON Schema") for msg in errors]
        if tool.name in seen:
            problems.append(
                Problem(
                    where,
                    f"duplicate tool name {tool.name!r}",
                    field=f"[{i}].function.name",
                    fix="rename one",
                )
            )
        seen.add(tool.name)
        if not errors:
            tools.append(tool)
    return Toolset(tools), seen


def _policy_problems(policy: Policy, tool_names: set[str], where: str) -> list[Problem]:
    """Tools the policy names that neither `tools.json` nor any entry offers; tools both
    destructive and read-only."""
    problems: list[Problem] = []
    named = [policy.confirmation_tool] if policy.confirmation_tool else []
    listed = policy.destructive_tools + (policy.read_only_tools or []) + policy.repeatable_tools
    for name in named + listed:
        if name not in tool_names:
            problems.append(
                Problem(
                    where,
                    f"policy names unknown tool {name!r}",
                    field="policy",
                    fix=f"{did_you_mean(name, tool_names)}use a tool name from tools.json "
                    "or an entry's `tools`",
                )
            )
    for name, matchers in policy.destructive_when.items():
        if name not in policy.destructive_tools:
            problems.append(
                Problem(
                    where,
                    f"`destructive_when` names {name!r}, which is not in `destructive_tools`",
                    field=f"policy.destructive_when.{name}",
                    fix="list the tool in `destructive_tools` too, or remove it here",
                )
            )
        problems += [
            Problem(where, msg, field="policy.destructive_when", fix="fix the matcher")
            for msg in check_matcher(matchers, f"policy.destructive_when.{name}", TEXT_OPERATORS)
        ]
    both = sorted(set(policy.destructive_tools) & set(policy.read_only_tools or []))
    if both:
        problems.append(
            Problem(
                where,
                f"{', '.join(both)} listed as both destructive and read-only",
                field="policy",
                fix="a tool is one or the other; remove it from one list",
            )
        )
    return problems


def _entry_line_problems(
    entry: Entry, lineno: int, first_line: int | None, where: str
) -> list[Problem]:
    """Problems of an entry's own fields: `fault` written by hand, a duplicate id."""
    problems: list[Problem] = []
    if entry.fault is not None:
        problems.append(
            Problem(
                where,
                "`fault` is set by expansion",
                line=lineno,
                field="fault",
                fix="write `faults: [KIND, ...]` instead",
            )
        )
    if first_line is not None:
        problems.append(
            Problem(
                where,
                f"duplicate id {entry.id!r} (first on line {first_line})",
                line=lineno,
                field="id",
                fix="give every entry its own id",
            )
        )
    return problems


def _opt_out_problems(entry: Entry, lineno: int, where: str, format_version: int) -> list[Problem]:
    """`harness_opt_out` needs format 5 and a reason for every transformation."""
    if not entry.harness_opt_out:
        return []
    problems = [
        Problem(
            where,
            f"opting out of `{name}` needs the reason",
            line=lineno,
            field=f"harness_opt_out.{name}",
            fix="say why the transformation would change what the entry expects",
        )
        for name, reason in entry.harness_opt_out.items()
        if not reason.strip()
    ]
    if format_version < WORLD_VERSION:
        problems.append(
            Problem(
                where,
                f"`harness_opt_out` needs evalset format {WORLD_VERSION}",
                line=lineno,
                field="harness_opt_out",
                fix=f"set `format_version: {WORLD_VERSION}` in evalset.yaml",
            )
        )
    return problems


def _expect_problems(
    fam: Family[Any], expect: BaseModel, toolset: Toolset, lineno: int, where: str
) -> list[Problem]:
    """Tools and calls the expectation names, checked against the toolset."""
    names = toolset.names()
    problems = [
        Problem(
            where,
            f"unknown tool {name!r}",
            line=lineno,
            field="expect",
            fix=f"{did_you_mean(name, names)}use a tool name from tools.json",
        )
        for name in fam.referenced_tools(expect)
        if name not in toolset
    ]
    for k, spec in enumerate(fam.referenced_calls(expect)):
        at = f"expect.call[{k}]"
        for p in spec_problems(
            spec,
            toolset,
            name_field=f"{at}.name",
            args_field=f"{at}.arguments",
            text=TEXT_OPERATORS,
        ):
            problems.append(Problem(where, p.message, line=lineno, field=p.field, fix=p.fix))
    return problems


def _entry_toolset(
    entry: Entry, lineno: int, where: str, tools: EntryTools, format_version: int
) -> tuple[Toolset, list[Problem]]:
    """The toolset entry `entry` offers, and the problems of its `tools` list."""
    if entry.tools is None:
        if not len(tools.base):
            return tools.base, [
                Problem(
                    where,
                    "the entry offers no tools: it has no `tools` and tools.json is empty",
                    line=lineno,
                    field="tools",
                    fix='list the tools it offers in `"tools": [...]` (`[]` for none), '
                    "or define tools in tools.json",
                )
            ]
        return tools.base, []
    toolset, problems = tools.resolve(entry.tools, where, lineno)
    if format_version < PER_ENTRY_TOOLS_VERSION:
        problems.insert(
            0,
            Problem(
                where,
                f"per-entry `tools` need evalset format {PER_ENTRY_TOOLS_VERSION}; "
                f"evalset.yaml says {format_version}",
                line=lineno,
                field="tools",
                fix=f"set `format_version: {PER_ENTRY_TOOLS_VERSION}` in evalset.yaml",
            ),
        )
    return toolset, problems


@dataclass
class _ReadEntries:
    """What `_read_entries` found: fault-expanded entries, typed expects, and the toolset
    of every entry with its own `tools`."""

    entries: list[Entry] = field(default_factory=list)
    expects: dict[str, BaseModel] = field(default_factory=dict)
    toolsets: dict[str, Toolset] = field(default_factory=dict)


def _read_entries(
    entries_path: Path,
    what: str,
    ctx: ScoringContext,
    tools: EntryTools,
    format_version: int,
    problems: list[Problem],
    allow_empty: bool = False,
) -> _ReadEntries:
    """Every entry (fault variants expanded), its parsed expectation and its own toolset;
    problems appended. `ctx` is the scoring context of an entry offering tools.json;
    `allow_empty`: the evalset has episodes, so it may have no entry."""
    registry = get_families()
    out = _ReadEntries()
    contexts: dict[int, ScoringContext] = {id(ctx.toolset): ctx}
    seen_ids: dict[str, int] = {}
    ef = str(entries_path)
    for lineno, raw in read_objects(entries_path, what=what, problems=problems):
        try:
            entry = Entry.model_validate(raw)
        except ValidationError as exc:
            problems += validation_problems(
                exc, ef, line=lineno, fix="see docs/formats.md, entries"
            )
            continue
        problems += _entry_line_problems(entry, lineno, seen_ids.get(entry.id), ef)
        problems += _opt_out_problems(entry, lineno, ef, format_version)
        if entry.id in seen_ids:
            continue
        seen_ids[entry.id] = lineno
        fam: Family[Any] | None = registry.get(entry.family)
        if fam is None:
            problems.append(
                Problem(
                    ef,
                    f"unknown family {entry.family!r}",
                    line=lineno,
                    field="family",
                    fix=unknown_name_fix(entry.family, sorted(registry), "families"),
                )
            )
            continue
        toolset, tool_problems = _entry_toolset(entry, lineno, ef, tools, format_version)
        problems += tool_problems
        entry_ctx = contexts.get(id(toolset))
        if entry_ctx is None:
            entry_ctx = contexts[id(toolset)] = dataclasses.replace(ctx, toolset=toolset)
        for fld, msg, fix in _check_messages(entry, toolset):
            problems.append(Problem(ef, msg, line=lineno, field=fld, fix=fix))
        try:
            expect = fam.parse_expect(entry.expect)
        except ValidationError as exc:
            problems += validation_problems(
                exc,
                ef,
                line=lineno,
                prefix="expect",
                fix=f"see the `{fam.name}` family's expect fields (docs/families.md)",
            )
            continue
        problems += _expect_problems(fam, expect, toolset, lineno, ef)
        variants, fault_problems = expand_faults(entry)
        for msg in fault_problems:
            fault_fix = fix_unless_said(msg, "give the fault's result in `fault_results`")
            problems.append(Problem(ef, msg, line=lineno, field="faults", fix=fault_fix))
        for v_entry in variants:
            for msg in fam.check_entry(v_entry, expect, entry_ctx):
                expect_fix = fix_unless_said(
                    msg, f"correct the `{fam.name}` expectation (docs/families.md)"
                )
                problems.append(Problem(ef, msg, line=lineno, field="expect", fix=expect_fix))
            out.entries.append(v_entry)
            out.expects[v_entry.id] = expect
            if entry.tools is not None:
                out.toolsets[v_entry.id] = toolset
    if not out.entries and not problems and not allow_empty:
        problems.append(
            Problem(ef, "no entries", fix="add at least one entry (or an episodes.jsonl)")
        )
    return out


def load_evalset(path: str | Path) -> Evalset:
    """Load and validate an evalset folder; raise `BadInput` with every problem found."""
    root = user_or_bundled(path)
    manifest = _read_manifest(root)
    manifest_path = root / "evalset.yaml"
    named_by = f"named by `{{}}` in {manifest_path}"
    problems: list[Problem] = []
    tools_path = root / manifest.tools
    toolset, tool_names = _read_tools(
        tools_path, "tools file (" + named_by.format("tools") + ")", problems
    )
    policy_at = len(problems)  # policy problems are listed here, before the entries'
    policy = manifest.policy
    ctx = ScoringContext(toolset=toolset, policy=policy, system_prompt=manifest.system_prompt)
    entries_path = root / manifest.entries
    entry_tools = EntryTools(toolset)
    read = _read_entries(
        entries_path,
        "entries file (" + named_by.format("entries") + ")",
        ctx,
        entry_tools,
        manifest.format_version,
        problems,
        allow_empty=(root / EPISODES_FILE).is_file(),
    )
    offered = tool_names.union(*(t.names() for t in entry_tools.toolsets))
    problems[policy_at:policy_at] = _policy_problems(policy, offered, str(manifest_path))
    if problems:
        raise BadInput(f"evalset {root} has {len(problems)} problem(s)", problems)
    sha = _sha256_files([manifest_path, tools_path, entries_path])
    return Evalset(
        root=root,
        manifest=manifest,
        toolset=toolset,
        entries=read.entries,
        expects=read.expects,
        sha256=sha,
        entry_toolsets=read.toolsets,
    )
