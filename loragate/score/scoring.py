"""Scoring: generations -> parsed output -> family verdicts -> a written run folder.

`Scorer` judges one `GenerationRecord` at a time; `score_records` checks a whole
generations set against the evalset first (unknown ids, duplicates, missing entries)
and scores it; `score_run` also summarises, and `write_scored` writes `results.jsonl`
and `summary.json` into a run folder without ever leaving it half-written (with any
files a later stage hands it, such as the report: `loragate.evaluation.finish_run`).

Scorers are pure functions of (entry, expect, parsed output, the entry's toolset, policy) and must
never raise. When one does anyway it is a bug in that family, not bad input: it
surfaces as `ScorerError` naming the family, entry, adapter and sample, with the
original exception chained.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

from loragate.calls.parsing import DEFAULT_STACK, ServingStack, parse_output
from loragate.calls.reasoning import split_reasoning
from loragate.common.errors import BadInput, Problem
from loragate.common.files import replace_files
from loragate.common.heap import no_cyclic_gc
from loragate.evalset.load import Evalset
from loragate.families import Family, Sample, ScoringContext, get_families
from loragate.formats.evalset import Entry
from loragate.formats.records import (
    DEFAULT_PARSE_MODE,
    PARSE_MODES,
    FaultKind,
    GenerationRecord,
    ParseMode,
    ParseResult,
    ReasonCode,
    ResultRecord,
    Summary,
    Verdict,
    parse_mode_named,
    trusted,
)
from loragate.formats.runfolder import GENERATIONS, RESULTS, SUMMARY, dump_jsonl
from loragate.generate.harness_apply import AppliedVariant
from loragate.judge.language import detect_language
from loragate.score.aggregate import summarize
from loragate.score.processes import (
    PARALLEL_MIN_OUTPUTS,
    ForkedJudges,
    can_fork,
    resolve_jobs,
)
from loragate.score.sensitivity import harness_summary

PROGRESS_MIN_RECORDS = 5000
"""Below this many records no progress bar is shown (scoring takes well under a second)."""

MEMO_MAX_OUTPUTS = 250_000
"""Distinct (entry, output) pairs a `Scorer` remembers before it starts afresh."""

_MAX_LISTED = 50
"""At most this many problems are listed in one `BadInput`."""


class ScorerError(RuntimeError):
    """A family scorer raised. That is a bug in the scorer (scorers must never raise)."""

    def __init__(self, family: str, record: GenerationRecord, cause: BaseException) -> None:
        self.family = family
        self.entry_id = record.entry_id
        self.adapter = record.adapter
        self.sample = record.sample
        super().__init__(
            f"the `{family}` family scorer raised {type(cause).__name__}: {cause} "
            f"(entry {record.entry_id!r}, adapter {record.adapter!r}, sample {record.sample}, "
            f"output starts {record.text[:120]!r}). Scorers must return a verdict for any "
            "output: this is a bug in that family's `score`; please report it with this line."
        )


class Scorer:
    """Scores generations against one evalset.

    Everything that does not depend on the sample (entry, typed expect, family, the
    scoring context with its compiled validators) is looked up once here, not per sample,
    and an output seen before for the same entry reuses its parse and verdict.
    `parse_mode` chooses which reading the verdict is based on (`ParseMode`); the
    status of every reading is recorded either way.
    """

    def __init__(
        self,
        evalset: Evalset,
        parse_mode: ParseMode = DEFAULT_PARSE_MODE,
        stack: ServingStack = DEFAULT_STACK,
    ) -> None:
        parse_mode = parse_mode_named(parse_mode, "parse_mode")  # type: ignore[assignment]
        if parse_mode not in PARSE_MODES:
            raise BadInput(
                f"`parse_mode` must be one of {', '.join(PARSE_MODES)}, got {parse_mode!r}",
                fix="pass --parse-mode " + " | ".join(PARSE_MODES),
            )
        self.evalset = evalset
        self.parse_mode: ParseMode = parse_mode
        self.stack = stack
        self.ctx = ScoringContext(
            toolset=evalset.toolset,
            policy=evalset.policy,
            system_prompt=evalset.manifest.system_prompt,
        )
        # One context per distinct toolset: each entry is judged against the tools it offers.
        contexts: dict[int, ScoringContext] = {id(evalset.toolset): self.ctx}
        for toolset in evalset.entry_toolsets.values():
            if id(toolset) not in contexts:
                contexts[id(toolset)] = ScoringContext(
                    toolset=toolset,
                    policy=evalset.policy,
                    system_prompt=evalset.manifest.system_prompt,
                )
        families = get_families()
        self._plan: dict[str, tuple[Entry, BaseModel, Family[Any], ScoringContext]] = {
            e.id: (
                e,
                evalset.expects[e.id],
                families[e.family],
                contexts[id(evalset.toolset_of(e.id))],
            )
            for e in evalset.entries
        }
        # Parsing and judging are pure functions of (entry, text), and samples of one
        # entry often say exactly the same thing (greedy decoding, several adapters that
        # agree, short tool calls), so identical outputs are parsed and judged once. The
        # ParseResult and Verdict are then shared by those results (never mutated).
        self._memo: dict[tuple[str, str], tuple[ParseResult, Verdict]] = {}

    def _plan_of(self, entry_id: str) -> tuple[Entry, BaseModel, Family[Any], ScoringContext]:
        plan = self._plan.get(entry_id)
        if plan is None:
            raise BadInput(
                f"generation names entry {entry_id!r}, which evalset "
                f"{self.evalset.name} {self.evalset.version} does not have",
                fix="score against the evalset the generations were made for",
            )
        return plan

    def judge(self, record: GenerationRecord) -> tuple[ParseResult, Verdict]:
        """The parse and the verdict of one generation (what a checker answers), without
        the result record around them. `BadInput` for an entry id the evalset lacks.

        A sample that hit the token limit (`finish_reason` "length") inside its
        reasoning fails as `truncated_reasoning`, whatever its text holds."""
        memo = self.judge_text(record)
        if record.finish_reason == "length" and self._stopped_in_reasoning(record.text):
            return memo[0], _truncated(record.text, self.stack)
        return memo

    def judge_text(self, record: GenerationRecord) -> tuple[ParseResult, Verdict]:
        """`judge` without the finish reason: a pure function of (entry, text)."""
        key = (record.entry_id, record.text)
        memo = self._memo.get(key)
        if memo is not None:
            return memo
        entry, expect, family, ctx = self._plan_of(record.entry_id)
        parse = parse_output(record.text, self.parse_mode, stack=self.stack, tools=ctx.toolset)
        try:
            verdict = family.score(Sample(entry=entry, expect=expect, parse=parse, ctx=ctx))
        except Exception as exc:
            raise ScorerError(family.name, record, exc) from exc
        if not isinstance(verdict, Verdict):
            raise ScorerError(
                family.name,
                record,
                TypeError(f"returned {type(verdict).__name__}, not Verdict"),
            )
        if len(self._memo) >= MEMO_MAX_OUTPUTS:
            self._memo.clear()  # bound the memory of a long-lived scorer
        self._memo[key] = memo = (parse, verdict)
        return memo

    def _stopped_in_reasoning(self, text: str) -> bool:
        stack = self.stack
        return split_reasoning(text, stack.reasoning_parser, thinking=stack.thinking).open_at_end

    def remember(
        self, judged: Iterable[tuple[GenerationRecord, tuple[ParseResult, Verdict]]]
    ) -> None:
        """Take judgements made elsewhere (another process) as this scorer's own: later
        `judge` and `score` calls on those outputs reuse them."""
        for record, parse_verdict in judged:
            self._memo[(record.entry_id, record.text)] = parse_verdict

    def score(self, record: GenerationRecord) -> ResultRecord:
        """Parse and judge one generation. `BadInput` for an entry id the evalset lacks."""
        parse, verdict = self.judge(record)
        entry = self._plan_of(record.entry_id)[0]
        return result_record(record, entry.family, entry.fault, parse, verdict)


def _truncated(text: str, stack: ServingStack) -> Verdict:
    split = split_reasoning(text, stack.reasoning_parser, thinking=stack.thinking)
    reasoning = split.reasoning or "".join(split.regions)
    return Verdict.fail(
        ReasonCode.truncated_reasoning,
        f"stopped at the token limit inside its reasoning ({len(reasoning)} characters of "
        "reasoning, no answer)",
    )


def result_record(
    record: GenerationRecord,
    family: str,
    fault: FaultKind | None,
    parse: ParseResult,
    verdict: Verdict,
) -> ResultRecord:
    """`record` scored: its fields (`schema_version` included, as results have always
    carried it), then the family, fault, parse, verdict and the language of the reply.

    Built without re-validating what is valid already (a `GenerationRecord`, the
    parser's `ParseResult`, the family's `Verdict`): 1.5 us instead of 7.5 us a sample
    with `ResultRecord.model_validate`; `tests/test_scoring_fast.py` holds the two equal.
    """
    fields = dict(record.__dict__)
    fields["family"] = family
    fields["fault"] = fault
    fields["parse"] = parse
    fields["verdict"] = verdict
    fields["language"] = detect_language(parse.answer)
    return trusted(ResultRecord, fields)


# -- checks ------------------------------------------------------------------------


def _nonblank_line_numbers(path: Path) -> list[int]:
    """1-based numbers of the non-blank lines of `path`: record i was read from line [i]."""
    text = path.read_bytes().decode("utf-8", errors="replace")
    return [i for i, line in enumerate(text.split("\n"), start=1) if line.strip()]


class _Locator:
    """Names where record i came from: `FILE:LINE` when the source file is known."""

    def __init__(self, source: Path | None) -> None:
        self.source = source
        self._lines: list[int] | None = None

    @property
    def file(self) -> str:
        return str(self.source) if self.source is not None else "generations"

    def line_of(self, index: int) -> int | None:
        """The line of record `index` (its 1-based position when no file is known)."""
        if self.source is None:
            return index + 1
        if self._lines is None:
            # Only computed when something is wrong; the common path never rereads the file.
            self._lines = _nonblank_line_numbers(self.source)
        return self._lines[index] if index < len(self._lines) else None

    def problem(self, index: int, message: str, field: str, fix: str) -> Problem:
        return Problem(self.file, message, line=self.line_of(index), field=field, fix=fix)


def check_generations(
    evalset: Evalset,
    records: Sequence[GenerationRecord],
    *,
    allow_missing: bool = False,
    source: Path | None = None,
    variants: Mapping[str, Evalset] | None = None,
) -> dict[str, list[str]]:
    """Check a generations set against `evalset`; return the missing entry ids per adapter.

    `BadInput` (listing the lines when `source`, the file the records were read from in
    order, is given) for: records naming entries the evalset lacks, the same
    (adapter, entry, sample, harness variant) twice, samples of a harness variant not
    in `variants` (variant name -> the evalset it is scored on), and - unless
    `allow_missing` - evalset entries an adapter has no default-harness generation for.
    """
    where = _Locator(source)
    problems: list[Problem] = []
    seen: dict[tuple[str, str, int, str | None], int] = {}
    covered: dict[str, set[str]] = defaultdict(set)
    for i, r in enumerate(records):
        if r.harness is not None:
            problem = _variant_problem(where, i, r, variants or {})
            if problem is not None:
                problems.append(problem)
                continue
        elif r.entry_id not in evalset.by_id:
            problems.append(
                where.problem(
                    i,
                    f"unknown entry id {r.entry_id!r} (evalset {evalset.name} {evalset.version})",
                    "entry_id",
                    "score against the evalset the generations were made for",
                )
            )
            continue
        key = (r.adapter, r.entry_id, r.sample, r.harness)
        if key in seen:
            first = where.line_of(seen[key])
            problems.append(
                where.problem(
                    i,
                    f"duplicate generation for adapter {r.adapter!r}, entry {r.entry_id!r}, "
                    f"sample {r.sample} (first on line {first})",
                    "sample",
                    "keep one generation per (adapter, entry_id, sample)",
                )
            )
            continue
        seen[key] = i
        if r.harness is None:
            covered[r.adapter].add(r.entry_id)
    if problems:
        raise BadInput(
            f"{len(problems)} bad generation record(s)"
            + (f"; the first {_MAX_LISTED} are listed" if len(problems) > _MAX_LISTED else ""),
            problems[:_MAX_LISTED],
        )

    all_ids = sorted(evalset.by_id)
    missing = {a: [e for e in all_ids if e not in ids] for a, ids in covered.items()}
    if not allow_missing and any(missing.values()):
        missing_problems = []
        for adapter, ids in missing.items():
            if not ids:
                continue
            shown = ", ".join(ids[:20]) + (f" and {len(ids) - 20} more" if len(ids) > 20 else "")
            missing_problems.append(
                Problem(
                    where.file,
                    f"adapter {adapter!r} has no generation for {len(ids)} of {len(all_ids)} "
                    f"entries: {shown}",
                    field="entry_id",
                    fix="generate them (rerun `loragate run`; it resumes) or pass --allow-missing",
                )
            )
        raise BadInput("generations do not cover the evalset", missing_problems)
    return {a: ids for a, ids in missing.items() if ids}


def _variant_problem(
    where: _Locator, index: int, r: GenerationRecord, variants: Mapping[str, Evalset]
) -> Problem | None:
    """Why a harness variant's record cannot be scored here, or None."""
    scoring = variants.get(str(r.harness))
    if scoring is None:
        return where.problem(
            index,
            f"a sample of harness variant {r.harness!r}, which this scoring does not know",
            "harness",
            "rebuild the run folder with `loragate run --backend replay` and the run's "
            "config and --harness (docs/harness.md)",
        )
    if r.entry_id not in scoring.by_id:
        return where.problem(
            index,
            f"entry {r.entry_id!r} is not one harness variant {r.harness!r} runs",
            "entry_id",
            "score against the run config the generations were made with",
        )
    return None


# -- scoring a set -----------------------------------------------------------------


def _want_progress(n: int, progress: bool | None) -> bool:
    if progress is not None:
        return progress
    if n < PROGRESS_MIN_RECORDS:
        return False

    return Console(stderr=True).is_terminal


def score_records(
    evalset: Evalset,
    records: Sequence[GenerationRecord],
    parse_mode: ParseMode = DEFAULT_PARSE_MODE,
    *,
    allow_missing: bool = False,
    source: Path | None = None,
    progress: bool | None = None,
    jobs: int = 1,
    min_parallel: int = PARALLEL_MIN_OUTPUTS,
    stack: ServingStack = DEFAULT_STACK,
) -> list[ResultRecord]:
    """Check (`check_generations`) and score every record, in input order.

    `progress`: show a rich progress bar on stderr; `None` shows one for at least
    `PROGRESS_MIN_RECORDS` records when stderr is a terminal. `jobs`: processes that
    judge the distinct outputs (0: one per core), used when there are at least
    `min_parallel` of them and processes can be forked (Linux); the results are the
    same either way.
    """
    check_generations(evalset, records, allow_missing=allow_missing, source=source)
    return _score_checked(evalset, records, parse_mode, progress, jobs, min_parallel, stack)


def _score_checked(
    evalset: Evalset,
    records: Sequence[GenerationRecord],
    parse_mode: ParseMode,
    progress: bool | None,
    jobs: int = 1,
    min_parallel: int = PARALLEL_MIN_OUTPUTS,
    stack: ServingStack = DEFAULT_STACK,
) -> list[ResultRecord]:
    scorer = Scorer(evalset, parse_mode, stack)
    jobs = resolve_jobs(jobs)
    with no_cyclic_gc():
        distinct = _distinct(records) if jobs > 1 and can_fork() else []
        if len(distinct) >= max(2, min_parallel):
            # forked before the progress bar starts its thread
            with (
                ForkedJudges(scorer.judge_text, distinct, jobs) as workers,
                _progress(len(records), progress) as advance,
            ):
                judged = workers.judge_all(advance)
                scorer.remember((distinct[i], pv) for i, pv in judged.items())
                scored = [scorer.score(r) for r in records]
                advance(len(records) - len(distinct))
                return scored
        with _progress(len(records), progress) as advance:
            out: list[ResultRecord] = []
            step = 1000  # updating the bar per record would cost more than scoring it
            for start in range(0, len(records), step):
                chunk = records[start : start + step]
                out.extend(scorer.score(r) for r in chunk)
                advance(len(chunk))
            return out


def _distinct(records: Sequence[GenerationRecord]) -> list[GenerationRecord]:
    """The first record of each distinct (entry, text) pair, in order."""
    first: dict[tuple[str, str], GenerationRecord] = {}
    for r in records:
        first.setdefault((r.entry_id, r.text), r)
    return list(first.values())


@contextmanager
def _progress(total: int, wanted: bool | None) -> Iterator[Callable[[int], None]]:
    """A function advancing a rich progress bar on stderr by n records (a no-op without
    a bar: `wanted` False, or None and fewer than `PROGRESS_MIN_RECORDS` records or
    stderr not a terminal)."""
    if not _want_progress(total, wanted):
        yield lambda n: None
        return

    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=True,
    ) as bar:
        task = bar.add_task("scoring", total=total)
        yield lambda n: bar.advance(task, n)


# -- writing a run folder ----------------------------------------------------------


@dataclass(frozen=True)
class ScoredRun:
    """A scored generations set: the summary, the scored records, the entries with no
    generation, and the run folder it was written to (None: not written)."""

    summary: Summary
    results: list[ResultRecord]
    """The default harness's scored samples."""
    missing: dict[str, list[str]]
    """Per adapter, entries without any generation (only with `allow_missing`)."""
    out_dir: Path | None = None
    variant_results: list[ResultRecord] = field(default_factory=list)
    """The harness variants' scored samples (`--harness`), each with its `harness`."""


def write_run_files(out_dir: Path, files: dict[str, str]) -> None:
    """Write `files` (name -> text) into `out_dir` (created when missing), each through
    a temp file and a rename, in insertion order - `summary.json` last, so a folder with
    a new summary always has the matching results and report. Other files are kept."""
    if out_dir.exists() and not out_dir.is_dir():
        raise BadInput(
            f"{out_dir} exists and is not a folder",
            [Problem(str(out_dir), "a file, not a run folder", fix="pass a folder path as --out")],
        )
    replace_files(out_dir, files)


def score_run(
    evalset: Evalset,
    generations: Sequence[GenerationRecord],
    parse_mode: ParseMode = DEFAULT_PARSE_MODE,
    k: int | None = None,
    *,
    allow_missing: bool = False,
    source: Path | None = None,
    progress: bool | None = None,
    jobs: int = 1,
    variants: Sequence[AppliedVariant] = (),
    stack: ServingStack = DEFAULT_STACK,
) -> ScoredRun:
    """Check, score and summarise `generations`; nothing is written. `BadInput` for
    bad input, `ScorerError` for a scorer bug. `k` is the k of pass^k / pass@k (default:
    the smallest per-entry sample count). `source` is the file the generations were read
    from, in order, so problems can name its lines. `jobs`: processes judging the
    distinct outputs (see `score_records`). `stack`: the serving stack the outputs are
    judged as (see `loragate.calls.parsing`). `variants`: the harness variants the
    generations were made under; each variant's samples are judged on its own scoring
    evalset, as the call format its prompt taught (`AppliedVariant.stack`) (`variant_results`) and summarised in `summary.harness` (figures per
    variant, the sensitivity table; docs/harness.md)."""
    scoring = {v.name: v.scoring for v in variants}
    missing = check_generations(
        evalset, generations, allow_missing=allow_missing, source=source, variants=scoring
    )
    default = [g for g in generations if g.harness is None]
    results = _score_checked(
        evalset, default, parse_mode, progress, jobs, PARALLEL_MIN_OUTPUTS, stack
    )
    summary = summarize(evalset, results, parse_mode, k, stack=stack)
    others: list[ResultRecord] = []
    if variants:
        by_variant = {
            v.name: _score_checked(
                v.scoring,
                [g for g in generations if g.harness == v.name],
                parse_mode,
                False,
                jobs,
                PARALLEL_MIN_OUTPUTS,
                v.stack(stack),
            )
            for v in variants
        }
        summary.harness = harness_summary(
            summary, results, by_variant, variants, parse_mode, k, stack
        )
        others = [r for rs in by_variant.values() for r in rs]
    return ScoredRun(summary=summary, results=results, missing=missing, variant_results=others)


def write_scored(
    out_dir: Path,
    scored: ScoredRun,
    *,
    generations: Sequence[GenerationRecord] | None = None,
    files: Mapping[str, str] | None = None,
) -> None:
    """Write `results.jsonl` (the default harness's samples, then the variants'), then
    `files` (name -> text, from the stages after scoring), then `summary.json` into
    `out_dir`, each atomically; also `generations` as `generations.jsonl` when given and
    the folder has none (so a run folder scored from a loose file is self-contained).
    Other files in the folder are kept."""
    out: dict[str, str] = {}
    if generations is not None and not (out_dir / GENERATIONS).exists():
        out[GENERATIONS] = dump_jsonl(generations)
    out[RESULTS] = dump_jsonl([*scored.results, *scored.variant_results])
    out |= dict(files or {})
    out[SUMMARY] = scored.summary.model_dump_json(indent=2) + "\n"
    write_run_files(out_dir, out)


__all__ = [
    "PROGRESS_MIN_RECORDS",
    "ScoredRun",
    "Scorer",
    "ScorerError",
    "check_generations",
    "result_record",
    "score_records",
    "score_run",
    "write_run_files",
    "write_scored",
]
