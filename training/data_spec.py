"""The `data:` block of a training recipe (sources, their weights and limits, the leakage
check) and the data manifest a training run writes (`data_manifest.json`): the models,
validated when the recipe loads; `loragate.training.data` reads, checks and mixes the
sources they name."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from loragate.formats.versions import DATA_MANIFEST_SCHEMA_VERSION

DATA_MANIFEST = "data_manifest.json"
_NAME = r"^[A-Za-z0-9_.\-]{1,64}$"

# -- config ----------------------------------------------------------------------------


class CurriculumSpec(BaseModel):
    """Generate the source at training time from the evalset's `curriculum.yaml`
    (`loragate.training.curriculum`)."""

    model_config = ConfigDict(extra="forbid")

    families: dict[str, int] = Field(description="family -> number of distinct examples")
    seed: int = Field(default=0, ge=0, description="generator seed (same seed, same examples)")


class SourceSpec(BaseModel):
    """One data source of a recipe: a file or a generated curriculum."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=_NAME, description="shown in the mix table and the manifest")
    path: str | None = Field(
        default=None, description="JSON, JSONL or parquet file (relative: to cwd)"
    )
    format: Literal["auto", "xlam", "messages"] = "auto"
    curriculum: CurriculumSpec | None = None
    weight: float = Field(
        default=1.0,
        ge=0.0,
        le=100.0,
        description="upweighting: every example appears int(weight) times, plus a seeded "
        "share of (weight - int(weight)) once more (3 = three times, 0.5 = half)",
    )
    limit: int | None = Field(
        default=None, ge=1, description="keep at most this many (seeded sample)"
    )
    system_prompt: Literal["auto", "evalset", "none"] = Field(
        default="auto",
        description="put the evalset's system prompt in front (auto: yes unless xlam)",
    )
    tools: Literal["all", "called"] = Field(
        default="all",
        description="examples on the evalset toolset: show all its tools, or only the tools "
        "the example calls or is about plus `distractor_tools` others (shorter prompts)",
    )
    distractor_tools: int = Field(
        default=0, ge=0, description="extra tools shown with `tools: called`"
    )
    skip_invalid: bool = Field(
        default=False, description="drop (and count) invalid rows instead of failing on them"
    )

    @model_validator(mode="after")
    def _one_kind(self) -> SourceSpec:
        if (self.path is None) == (self.curriculum is None):
            raise ValueError("give exactly one of `path` and `curriculum`")
        if self.curriculum is not None and self.format == "xlam":
            raise ValueError("a curriculum source is in the `messages` format, not `xlam`")
        return self


class LeakageConfig(BaseModel):
    """The train/eval overlap check run before training."""

    model_config = ConfigDict(extra="forbid")

    threshold: float = Field(
        default=0.6, gt=0, le=1, description="near-duplicate Jaccard similarity"
    )
    containment: float = Field(
        default=0.8, gt=0, le=1, description="share of an eval turn contained"
    )
    drop: bool = Field(
        default=False, description="drop overlapping examples and go on (default: refuse to train)"
    )


class DataConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    sources: list[SourceSpec] = Field(min_length=1)
    leakage: LeakageConfig = Field(default_factory=lambda: LeakageConfig())
    seed: int = Field(default=0, ge=0, description="seed of sampling, upweighting and shuffling")

    @model_validator(mode="after")
    def _unique_names(self) -> DataConfig:
        names = [s.name for s in self.sources]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"source names must be unique; repeated: {', '.join(dupes)}")
        return self


# -- manifest --------------------------------------------------------------------------


class SourceStats(BaseModel):
    """One source's line in the data manifest and the mix table."""

    model_config = ConfigDict(extra="forbid")

    name: str
    kind: Literal["file", "curriculum"]
    path: str | None = None
    format: str
    sha256: str
    """Of the file (path sources) or of the generated JSONL (curriculum sources)."""
    curriculum: dict[str, Any] | None = None
    rows: int
    """Rows read (before validation, leakage, limit and length filtering)."""
    dropped: dict[str, int] = Field(default_factory=dict)
    """Rows dropped per reason (`invalid`, `leakage`, `limit`, `too_long`)."""
    examples: int
    """Distinct examples kept."""
    families: dict[str, int] = Field(default_factory=dict)
    """Kept examples per behaviour family (curriculum sources)."""
    weight: float
    in_mix: int
    """Training rows this source contributes after upweighting."""
    share: float
    """in_mix / total rows of the mix (fraction)."""
    tokens: int
    """Tokens (prompt + completion) this source contributes to one epoch of the mix."""
    completion_tokens: int
    """Of which are trained on (the final assistant turns)."""


class DataManifest(BaseModel):
    """`data_manifest.json` in a training output folder."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = DATA_MANIFEST_SCHEMA_VERSION
    evalset: dict[str, str]
    seed: int
    max_length: int
    chat_template: str
    """Where the template came from and its sha256."""
    sources: list[SourceStats]
    total_rows: int
    total_tokens: int
    total_completion_tokens: int
    mix_sha256: str
    """sha256 over the tokenised rows in training order."""
    leakage: dict[str, Any]
    warnings: list[str] = Field(default_factory=list)
    """Things a model card must carry (e.g. training with allowed eval leakage)."""


__all__ = [
    "DATA_MANIFEST",
    "CurriculumSpec",
    "DataConfig",
    "DataManifest",
    "LeakageConfig",
    "SourceSpec",
    "SourceStats",
]
