"""LoRA adapter folders for tests: a real adapter_config.json and a few bytes of
weights (enough for inspection and sha256 cache identity; nothing loads them)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

BASE = "Qwen/Qwen3-4B"


def make_adapter(
    root: Path,
    *,
    base: str = BASE,
    rank: int = 16,
    weights: str = "adapter_model.safetensors",
    config: dict[str, Any] | None = None,
    payload: bytes = b"weights",
) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    cfg = {
        "peft_type": "LORA",
        "r": rank,
        "lora_alpha": 2 * rank,
        "target_modules": ["v_proj", "q_proj"],
        "base_model_name_or_path": base,
    }
    cfg.update(config or {})
    (root / "adapter_config.json").write_text(json.dumps(cfg), encoding="utf-8")
    (root / weights).write_bytes(payload)
    return root
