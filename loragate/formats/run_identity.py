"""A run folder holds one run: its manifest against its scores, one run against another.

`manifest.json` says how a run's generations were made (`loragate run` writes it);
`summary.json`, `results.jsonl`, `report.md` and `view.html` hold what was scored. Both
must describe the same run. An interrupted run with other options, into the same
folder, could leave the manifest of one run beside the scores of another (14 entries
beside 131), and a page rendered from it would mix them without a word. Two rules keep
a folder one run:

- `loragate run` compares its own manifest with the folder's (`same_run`) and, when the
  folder holds another run, removes that run's scored files before it writes anything
  (`runfolder.retire_scored`); its generations stay, as the cache.
- every reader (view, compare, gate, card, the sweep's summary) refuses a folder whose
  manifest and summary disagree (`disagreements`, checked by `runfolder.read_summary`).

The manifest is read as a plain dict: the checks use only fields that every manifest
version has, and those of version 4 (`entry_ids`) and 5 (`evalset.files`, the sha256 of
every evalset file the run read: a run of an evalset whose `episodes.jsonl` or world
changed is another run, although its `evalset.sha256` is the same) where present.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from loragate.formats.manifest import BASE_ADAPTER
from loragate.formats.records import Summary


def _dict(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _names(manifest: Mapping[str, Any]) -> list[str]:
    """The adapters a manifest's run generated for (the bare base as `base`)."""
    names = [a["name"] for a in _list(manifest.get("adapters")) if isinstance(a, Mapping)]
    if manifest.get("include_base") is True:
        names.append(BASE_ADAPTER)
    return [str(n) for n in names]


def _variants(manifest: Mapping[str, Any]) -> list[str]:
    return [str(h.get("name")) for h in _list(manifest.get("harness")) if isinstance(h, Mapping)]


def _listed(names: list[str]) -> str:
    return ", ".join(sorted(names)) or "none"


def describe(manifest: Mapping[str, Any]) -> str:
    """A run in a few words: `131 entries x base, harness routed, system-terse`."""
    entries = manifest.get("entries")
    variants = _variants(manifest)
    return (
        f"{entries if isinstance(entries, int) else '?'} entries x {_listed(_names(manifest))}"
        + (f", harness {', '.join(variants)}" if variants else "")
    )


def disagreements(manifest: Mapping[str, Any], summary: Summary) -> list[str]:
    """How the run of `manifest` (`manifest.json`, a dict) differs from the run scored in
    `summary`; empty when they are one run, or the folder has no manifest (`score`)."""
    if not manifest:
        return []
    out: list[str] = []
    if "finished_at" in manifest and manifest.get("finished_at") is None:
        out.append(
            f"manifest.json was written by a run that did not finish (started "
            f"{manifest.get('started_at', '?')}: {describe(manifest)})"
        )
    evalset = _dict(manifest.get("evalset"))
    if evalset and (evalset.get("name"), evalset.get("sha256")) != (
        summary.evalset.name,
        summary.evalset.sha256,
    ):
        out.append(
            f"manifest.json names evalset {evalset.get('name')} {evalset.get('version')}, "
            f"summary.json {summary.evalset.name} {summary.evalset.version} (another content)"
        )
    ids = _list(manifest.get("entry_ids"))
    count = manifest.get("entries")
    if ids and set(ids) != set(summary.entry_ids):
        extra = sorted(set(summary.entry_ids) - set(ids))
        out.append(
            f"manifest.json lists {len(ids)} entries, summary.json {len(summary.entry_ids)}"
            + (f" (e.g. {extra[0]} is scored but was not generated)" if extra else "")
        )
    elif not ids and isinstance(count, int) and count != len(summary.entry_ids):
        out.append(f"manifest.json says {count} entries, summary.json {len(summary.entry_ids)}")
    adapters = _names(manifest)
    # a run of an evalset of episodes only scores no entry: summary.json names no adapter
    scored_entries = bool(summary.adapters or summary.entry_ids)
    if "adapters" in manifest and scored_entries and set(adapters) != set(summary.adapters):
        out.append(
            f"manifest.json generated for {_listed(adapters)}, summary.json scores "
            f"{_listed(list(summary.adapters))}"
        )
    scored = [v.name for v in summary.harness.variants] if summary.harness else []
    if "harness" in manifest and set(_variants(manifest)) != set(scored):
        out.append(
            f"manifest.json has harness variants {_listed(_variants(manifest))}, "
            f"summary.json {_listed(scored)}"
        )
    return out


def _identity(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """What makes a run the run it is: what it generated, with what, and how it judges
    the outputs (not when, where, or how much of it was cached)."""
    model = _dict(manifest.get("model"))
    evalset = _dict(manifest.get("evalset"))
    adapters = sorted(
        (str(a.get("name")), str(a.get("sha256")))
        for a in _list(manifest.get("adapters"))
        if isinstance(a, Mapping)
    )
    harness = sorted(
        (str(h.get("name")), str(h.get("key")), tuple(_list(h.get("entries"))))
        for h in _list(manifest.get("harness"))
        if isinstance(h, Mapping)
    )
    return {
        "model": (model.get("id"), model.get("revision"), model.get("source_sha256")),
        "adapters": adapters,
        "include_base": manifest.get("include_base"),
        "evalset": (evalset.get("name"), evalset.get("sha256")),
        "entries": manifest.get("entries"),
        "sampling": manifest.get("sampling"),
        "template": manifest.get("chat_template_sha256"),
        "stack": (manifest.get("tool_call_format"), manifest.get("reasoning_parser")),
        "thinking": manifest.get("enable_thinking"),
        "harness": harness,
    }


def same_run(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """Whether two manifests (dicts) describe the same run: the same generations, judged
    the same way, of the same evalset files. A manifest without `entry_ids` (before
    version 4) is matched on the number of entries, one without `evalset.files` (before
    version 5) on `evalset.sha256` alone."""
    if not old or not new:
        return False
    if _identity(old) != _identity(new):
        return False
    old_files, new_files = _files(old), _files(new)
    if old_files is not None and new_files is not None and old_files != new_files:
        return False
    old_ids, new_ids = _list(old.get("entry_ids")), _list(new.get("entry_ids"))
    return not (old_ids and new_ids) or sorted(old_ids) == sorted(new_ids)


def _files(manifest: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The manifest's `evalset.files` (None: a manifest before version 5)."""
    files = _dict(manifest.get("evalset")).get("files")
    return files if isinstance(files, Mapping) else None
