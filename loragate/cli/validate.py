"""`loragate validate DIR`: check an evalset folder and list every problem in it."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Annotated, NoReturn

import typer

from loragate.common.errors import BadInput, LoragateError
from loragate.common.exit_codes import ExitCode
from loragate.episodes.answer_replay import episode_verdicts
from loragate.episodes.definitions import EpisodeSet
from loragate.episodes.episodes_file import load_episodes
from loragate.episodes.rewards import reward_kind
from loragate.evalset.answers import entry_verdicts
from loragate.evalset.forbid_languages import english_only_forbids
from loragate.evalset.load import Evalset, load_evalset
from loragate.evalset.world import check_world
from loragate.families import family_label, family_order

EXIT_CODES: tuple[ExitCode, ...] = ()
"""The exit codes beside 0 and 2 this command can give (shown in its help)."""


def reward_notes(episodes: EpisodeSet) -> list[str]:
    """What the episodes' outside rewards need installed before `run` and
    `score-episodes` can compute them."""
    kinds = {k for e in episodes.episodes for k in e.spec.reward_kinds()}
    out = []
    for kind in sorted(kinds):
        try:
            reward_kind(kind).require()
        except LoragateError as exc:
            out.append(f"the {kind} reward: {exc} (run and score-episodes need it)")
    return out


def describe(evalset: Evalset) -> str:
    """`OK: NAME VERSION, N entries (M after fault expansion): A tool_call 8, ...`, and
    for entries with their own tools: how many tools, definitions and tool lists."""
    expanded = Counter(e.family for e in evalset.entries)
    base_ids: dict[str, str] = {}  # written entry id -> family; variants share their base id
    for e in evalset.entries:
        base_ids.setdefault(e.base_id, e.family)
    written = Counter(base_ids.values())
    parts = []
    for fam in family_order(expanded):
        letter, name = family_label(fam)
        part = f"{letter} {name} {written[fam]}"
        if expanded[fam] != written[fam]:
            part += f" ({expanded[fam]} after expansion)"
        parts.append(part)
    text = (
        f"OK: {evalset.name} {evalset.version}, {len(base_ids)} entries "
        f"({len(evalset.entries)} after fault expansion): " + ", ".join(parts)
        if base_ids
        else f"OK: {evalset.name} {evalset.version}, no entries (episodes only); "
        f"{len(evalset.toolset)} tools in tools.json"
    )
    if evalset.entry_toolsets:
        toolsets = {id(t): t for t in evalset.entry_toolsets.values()}
        shared = {id(c) for c in map(evalset.toolset.compiled, evalset.toolset.names())}
        inline = {
            id(c)
            for t in toolsets.values()
            for c in map(t.compiled, t.names())
            if id(c) not in shared
        }
        text += (
            f"; tools: {len(evalset.toolset)} in tools.json, {len(inline)} defined in "
            f"entries, {len(toolsets)} per-entry tool lists"
        )
    return text


def _report(exc: BadInput, evalset: Path) -> NoReturn:
    """Every problem, one a line, then exit 2."""
    if not exc.problems:
        raise exc
    typer.echo(f"error: {exc.message}", err=True)
    for problem in exc.problems:
        typer.echo(str(problem))
    typer.echo(f"{len(exc.problems)} problem(s) in {evalset}")
    raise typer.Exit(ExitCode.BAD_INPUT) from None


def _check_world(loaded: Evalset, evalset: Path) -> None:
    """The world file against the entries, episodes and curriculum: OK, or every
    contradiction and exit 2."""
    manifest = loaded.manifest
    assert manifest.world is not None
    try:
        world, problems = check_world(loaded.root, manifest.world, manifest.entries)
    except BadInput as exc:
        _report(exc, evalset)
    if problems:
        _report(
            BadInput(f"{len(problems)} contradiction(s) with {manifest.world}", problems),
            evalset,
        )
    records = sum(
        len(t) for t in (world.invoices, world.crm, world.tickets, world.events, world.files)
    )
    typer.echo(
        f"OK: world: {len(world.companies)} companies, {len(world.people)} people, "
        f"{records} records; no entry or episode contradicts {manifest.world}"
    )


def command(
    evalset: Annotated[
        Path,
        typer.Argument(
            metavar="DIR",
            help="Evalset folder: evalset.yaml, its tools file and its entries file.",
        ),
    ],
    policy: Annotated[
        Path | None,
        typer.Option(
            "--policy",
            "-p",
            help="A gate policy: also say, per family and rule, whether this evalset is large "
            "enough for the rule to decide, and how many entries or samples it would need.",
        ),
    ] = None,
    samples: Annotated[
        int,
        typer.Option("--samples", "-k", min=1, help="Samples per entry the run will take."),
    ] = 1,
) -> None:
    """Check an evalset: manifest, tool schemas, policy, every entry and its `expect`,
    and its episodes (episodes.jsonl) when it has any.

    Prints OK with the entry counts per family, or every problem and exits 2. With
    --policy, then the gate plan: per family (and tag) and baseline rule, what the rule
    can see at this size and, where it cannot decide, the entries or samples it needs
    (BLIND lines; the exit code stays 0). See docs/gate.md.

    A problem line reads `file:line: field: message (fix: ...)`.
    """
    try:
        loaded = load_evalset(evalset)
    except BadInput as exc:
        _report(exc, evalset)
    typer.echo(describe(loaded))
    try:
        episodes = load_episodes(loaded)
    except BadInput as exc:
        _report(exc, evalset)
    if episodes is not None:
        specs = {e.base_id for e in episodes.episodes}
        typer.echo(
            f"OK: {len(specs)} episodes ({len(episodes.episodes)} with their fault variants) "
            f"in {episodes.path.name}"
        )
        for note in reward_notes(episodes):
            typer.echo(f"note: {note}", err=True)
    manifest = loaded.manifest
    if manifest.world:
        _check_world(loaded, evalset)
    for warning in english_only_forbids(
        loaded.root / manifest.entries, episodes.path if episodes is not None else None
    ):
        typer.echo(f"warning: {warning}")
    if manifest.answers:
        try:
            path = loaded.root / manifest.answers
            verdicts = entry_verdicts(loaded, path) + episode_verdicts(loaded, episodes, path)
        except BadInput as exc:
            _report(exc, evalset)
        wrong = [v for v in verdicts if not v.agrees]
        if wrong:
            _report(
                BadInput(
                    f"{len(wrong)} of {len(verdicts)} answers get another verdict than labelled",
                    [v.problem() for v in wrong],
                ),
                evalset,
            )
        right = sum(1 for v in verdicts if v.expect_pass)
        typer.echo(
            f"OK: answers: all {len(verdicts)} agree with their labels ({right} right, "
            f"{len(verdicts) - right} near misses) in {manifest.answers}"
        )
    if manifest.system_prompts:
        from loragate.evalset.paraphrases import check_paraphrase, load_paraphrases

        try:
            paraphrases = load_paraphrases(loaded)
            assert paraphrases is not None
            for name in paraphrases.names():
                check_paraphrase(paraphrases, name, f"system-{name}", loaded.entries)
        except BadInput as exc:
            _report(exc, evalset)
        typer.echo(
            f"OK: system prompt paraphrases: {', '.join(paraphrases.names()) or 'none'} state "
            f"the {len(paraphrases.file.rules)} rules the entries rely on "
            f"({manifest.system_prompts})"
        )
    if policy is not None:
        from loragate.results.gate import load_policy
        from loragate.results.gate_plan import group_sizes, plan_lines, plan_policy

        gate_policy = load_policy(policy)
        families, tags = group_sizes(loaded.entries)
        rows = plan_policy(gate_policy, families, tags, samples, policy)
        name = gate_policy.name or policy.stem
        for line in plan_lines(rows, name, samples):
            typer.echo(line)
