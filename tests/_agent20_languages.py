"""The German, French, Italian and Spanish words of agent20's expectations (issue 27).

Every expectation of agent20 written in English words - `question_mentions`,
`answer_mentions`, `answer_forbids`, `success_patterns`, and the argument patterns
that name a concept or an entity (the central bank, a regulation, a weekday) - also
accepts the same meaning in the supported languages; so do the episodes' answer terms,
the questions that get a simulated user's reply, the summaries a simulated approver
accepts and the state they check. The additions are listed in
`tests/data/agent20_languages.yaml`, per entry, and `apply` writes them into an `entries.jsonl` (idempotent: a term that is
there already is not added again; a pattern that already holds the alternatives is
left alone), so they can be laid again over another version of the file:

    python -m tests._agent20_languages evalsets/agent20/entries.jsonl evalsets/agent20/episodes.jsonl

`tests/test_evalset_languages.py` holds the bundled file to them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import yaml

DATA = Path(__file__).resolve().parent / "data" / "agent20_languages.yaml"
"""The additions: terms, widened patterns and `$any` alternatives, per entry."""


def _load() -> tuple[
    dict[str, Any], dict[str, list[tuple[str, str, str]]], dict[str, Any], dict[str, Any]
]:
    data = yaml.safe_load(DATA.read_text(encoding="utf-8"))
    patterns = {k: [(p[0], p[1], p[2]) for p in v] for k, v in data["patterns"].items()}
    alternatives = {k: [(p, m) for p, m in v] for k, v in data["alternatives"].items()}
    return data["mentions"], patterns, alternatives, data["episodes"]


MENTIONS, PATTERNS, ALTERNATIVES, EPISODES = _load()


def _walk(obj: Any, path: str) -> tuple[Any, str | int]:
    """(the container, the key) at a dotted `path` (list items by index)."""
    parts = path.split(".")
    for part in parts[:-1]:
        obj = obj[int(part)] if isinstance(obj, list) else obj[part]
    last = parts[-1]
    return obj, int(last) if isinstance(obj, list) else last


def apply_entry(entry: dict[str, Any]) -> bool:
    """Lay the additions of `entry`'s id over it; True when something changed."""
    eid = entry["id"]
    expect = entry["expect"]
    changed = False
    for field, add in MENTIONS.get(eid, {}).items():
        container, key = _walk(expect, field)
        groups = container.setdefault(key, []) if isinstance(container, dict) else container[key]
        if (isinstance(add, list) and field == "question_mentions") or isinstance(add, list):
            new = [t for t in add if t not in groups]
            groups += new
            changed |= bool(new)
        else:
            for index, terms in add.items():
                new = [t for t in terms if t not in groups[index]]
                groups[index] += new
                changed |= bool(new)
    for path, matchers in ALTERNATIVES.get(eid, []):
        container, key = _walk(expect, path)
        new = [m for m in matchers if m not in container[key]]
        container[key] += new
        changed |= bool(new)
    return _widen(eid, expect, PATTERNS.get(eid, [])) or changed


def _widen(eid: str, root: Any, patterns: list[tuple[str, str, str]] | list[list[str]]) -> bool:
    """Replace the English part of each pattern at its path by the wider one."""
    changed = False
    for path, english, wider in patterns:
        container, key = _walk(root, path)
        value = container[key]
        if wider in value or english == wider:
            continue
        if english not in value:
            raise ValueError(f"{eid} {path}: {english!r} is not in {value!r}; update the additions")
        container[key] = value.replace(english, wider, 1)
        changed = True
    return changed


def apply_episode(episode: dict[str, Any]) -> bool:
    """Lay the additions of an episode's id over it; True when something changed."""
    eid = episode["id"]
    additions = EPISODES.get(eid, {})
    changed = False
    for path, terms in additions.get("add", []):
        container, key = _walk(episode, path)
        new = [t for t in terms if t not in container[key]]
        container[key] += new
        changed |= bool(new)
    return _widen(eid, episode, additions.get("patterns", [])) or changed


def apply(path: Path) -> int:
    """Lay the additions over the entries or episodes file at `path`; the number of
    records changed."""
    lines = path.read_text(encoding="utf-8").splitlines()
    out = []
    changed = 0
    for line in lines:
        if not line.strip():
            out.append(line)
            continue
        entry = json.loads(line)
        if apply_episode(entry) if "expect" not in entry else apply_entry(entry):
            changed += 1
            out.append(json.dumps(entry, ensure_ascii=False))
        else:
            out.append(line)
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return changed


if __name__ == "__main__":
    for name in sys.argv[1:]:
        print(name, apply(Path(name)), "records changed")
