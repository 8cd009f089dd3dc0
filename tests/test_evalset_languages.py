"""agent20's expectations accept German, French, Italian and Spanish (issue 27): every
addition of `tests/_agent20_languages.py` is in the bundled entries."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from tests._agent20_languages import ALTERNATIVES, MENTIONS, PATTERNS, apply_entry

ENTRIES = Path(__file__).resolve().parent.parent / "evalsets" / "agent20" / "entries.jsonl"


def test_every_addition_is_in_the_bundled_entries() -> None:
    entries = [json.loads(line) for line in ENTRIES.read_text(encoding="utf-8").splitlines()]
    by_id = {e["id"]: e for e in entries}
    assert set(MENTIONS) | set(PATTERNS) | set(ALTERNATIVES) <= set(by_id)
    stale = [e["id"] for e in entries if apply_entry(copy.deepcopy(e))]
    assert stale == [], f"run: python -m tests._agent20_languages {ENTRIES}"
