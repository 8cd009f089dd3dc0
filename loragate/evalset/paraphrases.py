"""An evalset's system prompt paraphrases and the rules its entries rely on.

`evalset.yaml`'s `system_prompts` (format 5) names a YAML file::

    version: 1
    rules:
      confirm_destructive:
        says: call request_confirmation before a destructive action; stop when denied
        cues: [[request_confirmation], [denied, declined, refused]]
        families: [governance]          # or entries: [D-003, ...]; "*": every entry
    paraphrases:
      terse:
        rules: [confirm_destructive, ...]
        text: |
          ...

A *rule* is something of the system prompt that entries rely on: the date and place
relative dates are read against, the confirmation protocol of governance entries,
asking for missing details. Its `cues` are groups of alternatives (case-insensitive
word starts); a text states the rule when every group has a match. The evalset's own
system prompt must state every rule, and a paraphrase every rule it lists. A
`system_prompt` harness variant refuses a paraphrase that does not state a rule an
entry it would run relies on (`check_paraphrase`), naming the variant, the rule, the
entries and the fix.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from loragate.common.errors import BadInput, Problem, did_you_mean, validation_problems
from loragate.common.files import read_yaml
from loragate.evalset.load import Evalset
from loragate.formats.evalset import Entry

_FIX = "see docs/harness.md, system prompt paraphrases"
ALL_ENTRIES = "*"


class Rule(BaseModel):
    model_config = ConfigDict(extra="forbid")

    says: str = Field(min_length=1, description="the rule in words")
    cues: list[list[str]] = Field(
        min_length=1, description="groups of alternatives; every group must match"
    )
    families: list[str] = Field(default_factory=list)
    entries: list[str] = Field(default_factory=list)


class Paraphrase(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1)
    rules: list[str] = Field(default_factory=list)
    description: str = ""


class ParaphraseFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: int = 1
    rules: dict[str, Rule] = Field(default_factory=dict)
    paraphrases: dict[str, Paraphrase] = Field(default_factory=dict)


@dataclass(frozen=True)
class Paraphrases:
    path: Path
    file: ParaphraseFile

    def names(self) -> list[str]:
        return list(self.file.paraphrases)

    def text(self, name: str) -> str:
        return self.file.paraphrases[name].text.strip()

    def sha256(self, name: str) -> str:
        return hashlib.sha256(self.text(name).encode("utf-8")).hexdigest()


def _cue(cue: str) -> re.Pattern[str]:
    return re.compile(r"(?<![a-z0-9])" + re.escape(cue.lower()))


def states(text: str, rule: Rule) -> bool:
    """Whether `text` states `rule`: in every cue group, a cue that starts a word of
    `text` (case-insensitive; `currenc` matches currency, `ask` does not match task)."""
    low = text.lower()
    return all(any(_cue(c).search(low) for c in group) for group in rule.cues)


def _relies(rule: Rule, entry: Entry) -> bool:
    return (
        ALL_ENTRIES in rule.families
        or entry.family in rule.families
        or entry.id in rule.entries
        or entry.base_id in rule.entries
    )


def load_paraphrases(evalset: Evalset) -> Paraphrases | None:
    """The evalset's paraphrase file, checked (None when it names none)."""
    name = evalset.manifest.system_prompts
    if name is None:
        return None
    path = evalset.root / name
    where = str(path)
    raw = read_yaml(path, "system prompt paraphrases")
    try:
        parsed = ParaphraseFile.model_validate(raw or {})
    except ValidationError as exc:
        raise BadInput(
            f"{path}: invalid system prompt paraphrases", validation_problems(exc, where, fix=_FIX)
        ) from None
    problems: list[Problem] = []
    own = evalset.manifest.system_prompt or ""
    for rid, rule in parsed.rules.items():
        if not states(own, rule):
            problems.append(
                Problem(
                    where,
                    f"rule {rid!r}: the evalset's own system prompt matches none of its cues",
                    field=f"rules.{rid}.cues",
                    fix="give cues the system prompt in evalset.yaml says",
                )
            )
    for pname, par in parsed.paraphrases.items():
        for rid in par.rules:
            listed = parsed.rules.get(rid)
            if listed is None:
                problems.append(
                    Problem(
                        where,
                        f"paraphrase {pname!r} lists unknown rule {rid!r}",
                        field=f"paraphrases.{pname}.rules",
                        fix=f"{did_you_mean(rid, parsed.rules)}define it under `rules`",
                    )
                )
            elif not states(par.text, listed):
                problems.append(
                    Problem(
                        where,
                        f"paraphrase {pname!r} lists rule {rid!r} but its text does not "
                        f"state it (cues {listed.cues})",
                        field=f"paraphrases.{pname}.text",
                        fix=f"state the rule ({listed.says}) in the paraphrase",
                    )
                )
    if problems:
        raise BadInput(f"{path}: {len(problems)} problem(s)", problems)
    return Paraphrases(path, parsed)


def check_paraphrase(
    paraphrases: Paraphrases | None, name: str, variant: str, entries: Iterable[Entry]
) -> None:
    """`BadInput` when paraphrase `name` is unknown, or misses a rule one of `entries`
    relies on (a rule it does not list, or lists without stating)."""
    if paraphrases is None:
        raise BadInput(
            f"harness variant {variant!r}: the evalset has no system prompt paraphrases",
            [
                Problem(
                    "harness",
                    f"variant {variant} names paraphrase {name!r}",
                    field="system_prompt",
                    fix="add a `system_prompts` file to the evalset (docs/harness.md) or "
                    "drop the variant",
                )
            ],
        )
    par = paraphrases.file.paraphrases.get(name)
    if par is None:
        raise BadInput(
            f"harness variant {variant!r}: unknown paraphrase {name!r}",
            [
                Problem(
                    str(paraphrases.path),
                    f"no paraphrase {name!r}",
                    field="system_prompt",
                    fix=f"{did_you_mean(name, paraphrases.names())}known paraphrases: "
                    f"{', '.join(paraphrases.names()) or '(none)'}",
                )
            ],
        )
    problems: list[Problem] = []
    entries = list(entries)
    for rid, rule in paraphrases.file.rules.items():
        relying = [e.id for e in entries if _relies(rule, e)]
        if not relying or (rid in par.rules and states(par.text, rule)):
            continue
        shown = ", ".join(relying[:6]) + (
            f" and {len(relying) - 6} more" if len(relying) > 6 else ""
        )
        problems.append(
            Problem(
                str(paraphrases.path),
                f"variant {variant}: paraphrase {name!r} misses rule {rid!r} ({rule.says}), "
                f"which entries {shown} rely on",
                field=f"paraphrases.{name}",
                fix=f"state the rule in the paraphrase's text and list {rid!r} under its "
                "`rules`, or opt those entries out (`harness_opt_out: {system_prompt: "
                "REASON}`, docs/harness.md)",
            )
        )
    if problems:
        raise BadInput(
            f"harness variant {variant!r}: paraphrase {name!r} misses rules the entries "
            "rely on; nothing was generated",
            problems,
        )


__all__ = [
    "ALL_ENTRIES",
    "Paraphrase",
    "ParaphraseFile",
    "Paraphrases",
    "Rule",
    "check_paraphrase",
    "load_paraphrases",
    "states",
]
