"""Run folders for the view's tests and benchmark, replayed without a model.

`agent20_run` scores the labelled reference outputs of the bundled agent20 evalset
(`tests/data/agent20_reference_outputs.jsonl`, one to four outputs an entry) as a
multi-adapter run: `base` takes an output labelled failing where the entry has one,
`round1` a failing one for every other entry that has one, `round2` one labelled
passing where there is one - so entries flip between the adapters. With `samples` > 1 each adapter cycles through
the entry's outputs from its own starting point.
"""

from __future__ import annotations

import json
from collections import defaultdict
from functools import lru_cache
from pathlib import Path

from loragate.evalset.load import Evalset, load_evalset
from loragate.evaluation import finish_run
from loragate.formats.records import GenerationRecord

REPO = Path(__file__).resolve().parent.parent
AGENT20 = REPO / "evalsets" / "agent20"
REFERENCES = Path(__file__).resolve().parent / "data" / "agent20_reference_outputs.jsonl"
ADAPTERS = ("base", "round1", "round2")


@lru_cache(maxsize=1)
def agent20() -> Evalset:
    return load_evalset(AGENT20)


def _outputs() -> dict[str, list[tuple[str, bool]]]:
    """Entry id -> [(text, labelled passing)] in file order."""
    out: dict[str, list[tuple[str, bool]]] = defaultdict(list)
    for line in REFERENCES.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        out[row["entry_id"]].append((row["text"], bool(row["expect_pass"])))
    return out


def _start(adapter: str, entry_no: int, outputs: list[tuple[str, bool]]) -> int:
    failing = next((i for i, (_, ok) in enumerate(outputs) if not ok), 0)
    passing = next((i for i, (_, ok) in enumerate(outputs) if ok), 0)
    if adapter == "base" or (adapter == "round1" and entry_no % 2 == 0):
        return failing
    return passing


def agent20_generations(
    adapters: tuple[str, ...] = ADAPTERS, samples: int = 1
) -> list[GenerationRecord]:
    records: list[GenerationRecord] = []
    for entry_no, (eid, outputs) in enumerate(_outputs().items()):
        for adapter in adapters:
            start = _start(adapter, entry_no, outputs)
            for s in range(samples):
                text = outputs[(start + s) % len(outputs)][0]
                records.append(GenerationRecord(entry_id=eid, adapter=adapter, sample=s, text=text))
    return records


def agent20_run(out: Path, adapters: tuple[str, ...] = ADAPTERS, samples: int = 1) -> Path:
    """Score the replayed outputs into the run folder `out` (created) and return it."""
    finish_run(agent20(), agent20_generations(adapters, samples), out, progress=False)
    return out
