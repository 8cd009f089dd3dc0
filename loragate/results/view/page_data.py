"""The data of `loragate view`: run folders (and their evalset) as one JSON-ready dict.

A *side* is one (run folder, adapter) pair; `loragate view RUN [RUN ...]` shows every
adapter of each run folder (or the one named by `RUN:ADAPTER`) side by side. The dict
`view_data` builds is what the page's script reads (`VIEW_DATA_VERSION`):

- `sides`: label, `headline` (every side after the first: `compare`'s headline against
  the first, training loss beside behaviour; version 3), run folder, adapter, parse
  mode, k, that adapter's `summary.json`
  figures (`AdapterSummary`), its `gate.json` when the folder has one, its harness
  sensitivity table (`harness`, version 2) when the run has variants, and (every side
  after the first) `detectable`: per family and `overall`, the smallest drop against
  the first side that the paired exact test can call significant at p < 0.05 on the
  entries both scored, in points (`None`: no drop can be at that size);
- `families`: `[name, letter]` in letter order; `reasons`: reason codes (samples
  refer to them by index); `texts`: distinct output texts (samples refer to them by
  index, so outputs the adapters share are stored once);
- `entries`: id, family, tags, fault, kind (`entry`; a later `episode` kind is the
  extension point), the conversation as the model saw it and the expectation (both
  `None` when the evalset was not found);
- `samples`: one compact row a scored sample,
  `[entry, side, sample, pass, reason, detail, text, calls, served, strict, lenient,
  harness]` (the status of each reading; `harness`: an index into `harness_names`, 0
  the default harness; version 2; `served` and `lenient` for `repaired`: version 4);
- `episodes`: the sides' episode trajectories step by step, their figures (survival
  curve, hazard table) and recovery per fault (`loragate.results.view.episodes`), or
  None when no side ran episodes.

Nothing here renders HTML (`loragate.results.view.html` does); everything is plain data.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from loragate.common.errors import BadInput
from loragate.common.files import read_json
from loragate.common.heap import no_cyclic_gc
from loragate.common.jsonl import ReadReport
from loragate.common.names import name_problem
from loragate.common.resources import bundled
from loragate.evalset.load import Evalset, load_evalset
from loragate.families import family_label
from loragate.formats.records import ResultRecord, Summary
from loragate.formats.runfolder import RESULTS, read_manifest, read_results, read_summary
from loragate.formats.versions import VIEW_DATA_VERSION
from loragate.generate.prompt import evalset_messages
from loragate.results.compare import compare_runs
from loragate.results.gate import GateResult
from loragate.results.runs import RunRef, check_adapter, check_run_dir, loaded_run, parse_run_ref
from loragate.results.view.episodes import add_tasks, episode_data
from loragate.results.view.html import render_view
from loragate.stats.power import detectable_drop, entry_step

SampleRow = list[Any]


@dataclass
class Side:
    """One adapter of one run folder with its scored samples."""

    label: str
    run_dir: Path
    adapter: str
    summary: Summary
    results: list[ResultRecord]
    gate: GateResult | None = None


def _gate_of(run_dir: Path, adapter: str, several: bool) -> GateResult | None:
    """The adapter's `gate.json` (`gate-ADAPTER.json` in a folder of several adapters)."""
    path = run_dir / (f"gate-{adapter}.json" if several else "gate.json")
    if not path.is_file():
        return None
    try:
        gate = GateResult.model_validate(read_json(path, "gate result"))
    except ValidationError:
        return None  # a gate.json of another version: the view shows no gate, not an error
    return gate if gate.adapter == adapter else None


def sides_of(
    run_dir: Path,
    summary: Summary,
    results: Sequence[ResultRecord],
    adapter: str | None = None,
    *,
    with_gate: bool = True,
) -> list[Side]:
    """The sides of one scored run folder: every adapter, or only `adapter`; with the
    folder's gate results unless `with_gate` is false."""
    names = list(summary.adapters)
    if adapter is not None:
        check_adapter(run_dir, summary, adapter)
    return [
        Side(
            label=run_dir.name + (f":{name}" if len(names) > 1 else ""),
            run_dir=run_dir,
            adapter=name,
            summary=summary,
            results=[r for r in results if r.adapter == name],
            gate=_gate_of(run_dir, name, len(names) > 1) if with_gate else None,
        )
        for name in ([adapter] if adapter is not None else names)
    ]


def load_sides(run_args: Sequence[str], notes: list[str] | None = None) -> list[Side]:
    """One side per adapter of each `RUN` (or the one of `RUN:ADAPTER`), in order. The
    runs must have been scored on one evalset (`BadInput` naming both otherwise, as
    `compare` refuses them); another version of it, and text that had to be mended
    in a results file, are said in `notes`."""
    sides: list[Side] = []
    for text in run_args:
        ref = parse_run_ref(text)
        summary = read_summary(check_run_dir(ref))
        report = ReadReport()
        results = read_results(ref.run_dir, report)
        if notes is not None:
            notes += report.warnings(ref.run_dir / RESULTS)
        sides += sides_of(ref.run_dir, summary, results, ref.adapter)
    said = same_evalset(sides)
    if notes is not None:
        notes += said
    _unique_labels(sides)
    return sides


def same_evalset(sides: Sequence[Side]) -> list[str]:
    """`BadInput` when a side was scored on another evalset than the first (by name):
    its outputs would be shown under the first one's conversations. Notes for another
    version or content of the same evalset (shown by entry id)."""
    notes: list[str] = []
    if not sides:
        return notes
    first = sides[0]
    base = first.summary.evalset
    for side in sides[1:]:
        other = side.summary.evalset
        if other.name != base.name:
            raise BadInput(
                f"{side.run_dir} was scored on evalset {other.name!r}, {first.run_dir} on "
                f"{base.name!r}: outputs of one evalset cannot be shown under the "
                "conversations of another",
                fix="view runs of one evalset together (one `loragate view` per evalset)",
            )
        differs = base.differs(other)
        if differs is not None and not any(side.run_dir.name in n for n in notes):
            notes.append(
                f"evalset {base.name}: {differs} ({first.run_dir} vs {side.run_dir}); "
                f"entries are matched by id and the conversations are {first.run_dir}'s"
            )
    return notes


def run_view_page(
    run_dir: Path, summary: Summary, results: Sequence[ResultRecord], evalset: Evalset
) -> str:
    """`view.html` of a run folder being written (every adapter; a `gate.json` already
    in the folder belongs to an earlier scoring and is left out)."""
    sides = sides_of(run_dir, summary, results, with_gate=False)
    return render_view(view_data(sides, evalset))


def _unique_labels(sides: list[Side]) -> None:
    seen: dict[str, int] = {}
    for side in sides:
        n = seen.get(side.label, 0)
        seen[side.label] = n + 1
        if n:
            side.label = f"{side.label} ({n + 1})"


def find_evalset(sides: Sequence[Side], explicit: Path | None = None) -> Evalset | None:
    """The evalset the first side was scored on: `explicit` (`BadInput` unless it is
    that evalset), else the path in the run's manifest or the shipped evalset of that
    name, whichever loads with the summary's sha256. `None` when neither does (the
    view then shows outputs and verdicts without the conversation)."""
    if not sides:
        return None
    ref = sides[0].summary.evalset
    if explicit is not None:
        evalset = load_evalset(explicit)
        if evalset.sha256 != ref.sha256:
            raise BadInput(
                f"--evalset {explicit} is {evalset.name} {evalset.version} "
                f"(sha256 {evalset.sha256[:12]}), but {sides[0].run_dir} was scored on "
                f"{ref.name} {ref.version} (sha256 {ref.sha256[:12]})",
                fix="pass the evalset folder the runs were scored on, or leave --evalset out",
            )
        return evalset
    candidates: list[Path] = []
    recorded = read_manifest(sides[0].run_dir).get("evalset")
    if isinstance(recorded, dict) and isinstance(recorded.get("path"), str):
        candidates.append(Path(recorded["path"]))
    shipped = bundled(Path("evalsets") / ref.name) if name_problem(ref.name) is None else None
    if shipped is not None:
        candidates.append(shipped)
    for path in candidates:
        if not path.is_dir():
            continue
        try:
            evalset = load_evalset(path)
        except BadInput:
            continue  # moved or edited since the run: the view goes without it
        if evalset.sha256 == ref.sha256:
            return evalset
    return None


def _conversation(evalset: Evalset, entry_id: str) -> dict[str, Any] | None:
    entry = evalset.by_id.get(entry_id)
    if entry is None:
        return None
    return {
        "messages": evalset_messages(evalset, entry),
        "expect": entry.expect,
        "notes": entry.notes,
    }


def _counts(side: Side) -> tuple[dict[str, tuple[int, int]], dict[str, str]]:
    """Entry id -> (samples, passes), and entry id -> family, of one side (the default
    harness's samples)."""
    counts: dict[str, tuple[int, int]] = {}
    family: dict[str, str] = {}
    for r in side.results:
        if r.harness is not None:
            continue
        n, c = counts.get(r.entry_id, (0, 0))
        counts[r.entry_id] = (n + 1, c + (1 if r.verdict.passed else 0))
        family[r.entry_id] = r.family
    return counts, family


def _detectable(base: Side, side: Side, alpha: float = 0.05) -> dict[str, float | None]:
    """Per family and `overall`: the detectable drop of `side` against `base`."""
    a, family = _counts(base)
    b, _ = _counts(side)
    ids = [i for i in a.keys() & b.keys()]
    groups: dict[str, list[str]] = {"overall": ids}
    for i in ids:
        groups.setdefault(family[i], []).append(i)
    out: dict[str, float | None] = {}
    for name, members in groups.items():
        drop = detectable_drop((entry_step(a[i][0], b[i][0]) for i in members), alpha)
        out[name] = None if drop is None else float(drop * 100)
    return out


def _side_info(side: Side, base: Side | None = None, headline: str | None = None) -> dict[str, Any]:
    return {
        "headline": headline,
        "label": side.label,
        "run_dir": str(side.run_dir),
        "adapter": side.adapter,
        "parse_mode": side.summary.parse_mode,
        "stack": side.summary.stack,
        "k": side.summary.samples_per_entry,
        "evalset": side.summary.evalset.model_dump(),
        "summary": side.summary.adapters[side.adapter].model_dump(mode="json"),
        "gate": side.gate.model_dump(mode="json") if side.gate is not None else None,
        "detectable": _detectable(base, side) if base is not None else None,
        "harness": _harness_of(side),
    }


def _harness_of(side: Side) -> dict[str, Any] | None:
    """The side's sensitivity table: variant names and, per family, each harness's
    cell (pass@1, passes, samples, Δ points and p against the default), spread, worst."""
    h = side.summary.harness
    if h is None or side.adapter not in h.sensitivity:
        return None
    return {
        "variants": [v.name for v in h.variants],
        "entries": len(h.entry_ids),
        "rows": {
            family: row.model_dump(mode="json")
            for family, row in h.sensitivity[side.adapter].items()
        },
    }


def view_data(
    sides: Sequence[Side],
    evalset: Evalset | None,
    title: str | None = None,
    headlines: Sequence[str | None] | None = None,
) -> dict[str, Any]:
    """Everything the page shows, as plain JSON-ready data (see the module docstring).
    `headlines`: per side, `compare`'s headline against the first side (`side_headlines`)."""
    with no_cyclic_gc():
        return _view_data(sides, evalset, title, headlines)


def side_headlines(
    sides: Sequence[Side], training_logs: Sequence[Path | None] | None = None
) -> list[str | None]:
    """Per side, the headline `compare` prints for it against the first side (training
    loss beside behaviour), on the entries both scored; None for the first side, and
    for every side when they cannot be paired (no common entry)."""
    if len(sides) < 2:
        return [None] * len(sides)
    logs = list(training_logs or [None] * len(sides))
    try:
        loaded = [  # from the results the sides hold: results.jsonl is not read again
            loaded_run(
                RunRef(f"{s.run_dir}:{s.adapter}", s.run_dir, s.adapter),
                s.summary,
                s.adapter,
                s.results,
                log,
            )
            for s, log in zip(sides, logs, strict=True)
        ]
        labelled = [replace(r, label=s.label) for r, s in zip(loaded, sides, strict=True)]
        comparison = compare_runs(labelled, intersect=True)
    except BadInput:
        return [None] * len(sides)
    return [None, *comparison.headlines]


class _Interned:
    """A table of distinct strings the page refers to by index (reasons, texts)."""

    def __init__(self) -> None:
        self.values: list[str] = []
        self._index: dict[str, int] = {}

    def __call__(self, value: str) -> int:
        i = self._index.get(value)
        if i is None:
            i = self._index[value] = len(self.values)
            self.values.append(value)
        return i


class _Entries:
    """The page's entries in first-seen order, each a dict the page reads."""

    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []
        self.index: dict[str, int] = {}

    def number(self, entry_id: str) -> int:
        i = self.index.get(entry_id)
        if i is None:
            i = self.index[entry_id] = len(self.rows)
            self.rows.append({"id": entry_id, "kind": "entry"})
        return i


def _harness_names(sides: Sequence[Side]) -> list[str]:
    """`default`, then every harness variant a side's summary names, in order."""
    names = ["default"]
    for side in sides:
        if side.summary.harness is not None:
            names += [v.name for v in side.summary.harness.variants if v.name not in names]
    return names


def _samples(
    sides: Sequence[Side],
    entries: _Entries,
    reasons: _Interned,
    texts: _Interned,
    harness_names: list[str],
    family_names: set[str],
) -> list[SampleRow]:
    """Every scored sample of every side as a row of the page's table (entries, reasons
    and texts by index); adds each sample's entry and family to `entries` and
    `family_names`."""
    samples: list[SampleRow] = []
    # Scored results share one ParseResult among identical outputs: their call lists are
    # built once (keyed by the parse object, which the entry keeps alive meanwhile).
    calls_of: dict[int, tuple[Any, list[dict[str, Any]]]] = {}
    for side_no, side in enumerate(sides):
        for eid in side.summary.entry_ids:
            entries.number(eid)
        for r in side.results:
            if r.harness is not None and r.harness not in harness_names:
                continue  # a variant the summary does not name: nothing to show it under
            number = entries.number(r.entry_id)
            entry = entries.rows[number]
            entry.setdefault("family", r.family)
            entry.setdefault("fault", r.fault)
            family_names.add(r.family)
            calls = calls_of.get(id(r.parse))
            if calls is None:
                built = [
                    {
                        "name": c.name,
                        "arguments": c.arguments if c.arguments_json is None else c.arguments_json,
                    }
                    for c in r.parse.calls
                ]
                calls = calls_of[id(r.parse)] = (r.parse, built)
            samples.append(
                [
                    number,
                    side_no,
                    r.sample,
                    1 if r.verdict.passed else 0,
                    reasons(r.verdict.reason.value),
                    r.verdict.detail,
                    texts(r.text),
                    calls[1],
                    r.parse.served_status,
                    r.parse.strict_status,
                    r.parse.lenient_status,
                    harness_names.index(r.harness or "default"),
                ]
            )
    return samples


def _describe_entries(rows: list[dict[str, Any]], evalset: Evalset | None) -> None:
    """Each entry's family, fault, tags and conversation, from the evalset when given."""
    for entry in rows:
        known = evalset.by_id.get(entry["id"]) if evalset is not None else None
        entry.setdefault("family", known.family if known is not None else "")
        entry.setdefault("fault", known.fault if known is not None else None)
        entry["tags"] = list(known.tags) if known is not None else []
        entry["conversation"] = _conversation(evalset, entry["id"]) if evalset else None


def _view_data(
    sides: Sequence[Side],
    evalset: Evalset | None,
    title: str | None,
    headlines: Sequence[str | None] | None,
) -> dict[str, Any]:
    family_names: set[str] = set()
    for side in sides:
        family_names.update(side.summary.adapters[side.adapter].families)
    entries, reasons, texts = _Entries(), _Interned(), _Interned()
    harness_names = _harness_names(sides)
    samples = _samples(sides, entries, reasons, texts, harness_names, family_names)
    _describe_entries(entries.rows, evalset)
    episodes = episode_data(sides, texts)
    if episodes is not None and evalset is not None:
        add_tasks(episodes, evalset)
    families = sorted((family_label(f)[0], f) for f in family_names)
    return {
        "version": VIEW_DATA_VERSION,
        "title": title or " vs ".join(s.label for s in sides) or "loragate view",
        "evalset": (
            {"name": evalset.name, "version": evalset.version, "path": str(evalset.root)}
            if evalset is not None
            else None
        ),
        "tools": evalset.toolset.as_openai() if evalset is not None else [],
        "sides": [
            _side_info(s, sides[0] if i else None, headlines[i] if headlines else None)
            for i, s in enumerate(sides)
        ],
        "families": [[name, letter] for letter, name in families],
        "reasons": reasons.values,
        "texts": texts.values,
        "entries": entries.rows,
        "samples": samples,
        "episodes": episodes,
        "harness_names": harness_names,
    }


__all__ = [
    "Side",
    "find_evalset",
    "load_sides",
    "run_view_page",
    "side_headlines",
    "sides_of",
    "view_data",
]
