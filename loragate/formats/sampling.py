"""How samples are drawn: the `sampling` block of a run config, persisted in every run
manifest (`manifest.json`'s `sampling`) and part of every generation's cache key.

Shared by the run config (`loragate.generate.config`), the runners (which draw the
samples) and the manifest.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

MAX_SAMPLES = 1000
"""The most samples per entry (or episode) and adapter a run makes (`sampling.samples`);
a record's sample number is below it, so no number read from a file can size an
allocation (rescoring makes one trajectory per sample)."""


class RepetitionStop(BaseModel):
    """End a sample once its last tokens are one pattern of `min_pattern` to
    `max_pattern` tokens repeated `min_count` times in a row - vLLM's
    `repetition_detection`, reproduced by the `hf` runner. The repeated text stays in
    the output (the scorer sees the loop); only the rest of the budget is not spent."""

    model_config = ConfigDict(extra="forbid")

    min_pattern: int = Field(default=8, ge=1, le=1024, description="shortest pattern, tokens")
    max_pattern: int = Field(default=64, ge=1, le=1024, description="longest pattern, tokens")
    min_count: int = Field(default=3, ge=2, le=100, description="repeats in a row that stop")

    @model_validator(mode="after")
    def _ordered(self) -> RepetitionStop:
        if self.min_pattern > self.max_pattern:
            raise ValueError(
                f"min_pattern ({self.min_pattern}) must not exceed max_pattern ({self.max_pattern})"
            )
        return self


class SamplingConfig(BaseModel):
    """How samples are drawn. `samples = 1` with `temperature = 0` is greedy decoding."""

    model_config = ConfigDict(extra="forbid")

    samples: int = Field(
        default=1, ge=1, le=MAX_SAMPLES, description="k: samples per entry and adapter"
    )
    temperature: float = Field(default=0.0, ge=0.0, le=5.0, description="0 = greedy")
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)
    max_new_tokens: int = Field(default=256, ge=1, le=32768, description="tokens generated at most")
    seed: int = Field(default=0, ge=0, description="engine seed; per-sample seeds derive from it")
    stop_on_repetition: RepetitionStop | None = Field(
        default=None, description="stop degenerate loops early; None = run to the budget"
    )

    @property
    def greedy(self) -> bool:
        return self.temperature == 0.0


__all__ = ["MAX_SAMPLES", "RepetitionStop", "SamplingConfig"]
