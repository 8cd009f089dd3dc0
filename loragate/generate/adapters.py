"""Inspect LoRA adapters on disk before any model loads.

Every adapter is checked up front and all problems are reported together as one
`BadInput` (CLI exit 2): a missing folder, no `adapter_config.json`, an adapter
trained on another base model than the configured one, a rank above what the engine
accepts, and pickle weights (`adapter_model.bin`, which can run code when loaded)
unless explicitly allowed. The weight files' sha256 identifies the adapter in
manifests and in the generation cache.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from loragate.common.errors import BadInput, Problem
from loragate.common.jsonguard import JsonRefused, loads
from loragate.formats.manifest import BASE_ADAPTER, AdapterInfo

ADAPTER_CONFIG = "adapter_config.json"
SAFETENSORS_WEIGHTS = "adapter_model.safetensors"
PICKLE_WEIGHTS = "adapter_model.bin"
RANK_FIX = "lower the adapter's rank, or raise the engine's maximum in the config"


def weights_sha256(files: Sequence[Path]) -> str:
    """sha256 (hex) over the weight files: each file's name and content, in name order."""
    h = hashlib.sha256()
    for f in sorted(files, key=lambda p: p.name):
        h.update(f.name.encode("utf-8") + b"\0")
        with f.open("rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()


def adapter_rank(config: Mapping[str, Any]) -> int | None:
    """The largest LoRA rank of an adapter config (`r` and any `rank_pattern` value)."""
    ranks: list[int] = []
    r = config.get("r")
    if isinstance(r, int):
        ranks.append(r)
    pattern = config.get("rank_pattern")
    if isinstance(pattern, dict):
        ranks.extend(v for v in pattern.values() if isinstance(v, int))
    return max(ranks) if ranks else None


def _norm(name: str) -> str:
    return name.rstrip("/").lower()


def same_base(adapter_base: str, aliases: Iterable[str]) -> bool:
    """Whether an adapter's `base_model_name_or_path` names the configured base.

    Equal strings match; so do a local folder and a hub id with the same last path
    component (`/models/Qwen3-4B` vs `Qwen/Qwen3-4B`), since adapters trained on a
    local copy record its path.
    """
    want = _norm(adapter_base)
    want_last = want.rsplit("/", 1)[-1]
    for alias in aliases:
        a = _norm(alias)
        if not a:
            continue
        if a == want or a.rsplit("/", 1)[-1] == want_last:
            return True
    return False


def inspect_adapter(
    name: str,
    path_text: str,
    *,
    problems: list[Problem],
    base_aliases: Sequence[str] = (),
    max_rank: int | None = None,
    rank_fix: str = RANK_FIX,
    allow_pickle: bool = False,
    ignore_base_mismatch: bool = False,
    source: str = "--adapter",
) -> AdapterInfo | None:
    """Inspect one adapter folder; append problems and return `None` when it is unusable."""
    where = f"{source} {name}"
    path = Path(path_text).expanduser()
    cfg = _adapter_config(name, path, where, problems)
    if cfg is None:
        return None
    weights = _weights(path, where, problems)
    if weights is None:
        return None
    files, fmt = weights
    cfg_path = path / ADAPTER_CONFIG
    found = [_pickle_problem(path, where)] if fmt == "pickle" and not allow_pickle else []
    found += _rank_problems(cfg, cfg_path, max_rank, rank_fix)
    found += _base_problems(cfg, cfg_path, base_aliases, ignore_base_mismatch)
    if found:
        problems.extend(found)
        return None
    base = cfg.get("base_model_name_or_path")
    alpha = cfg.get("lora_alpha")
    return AdapterInfo(
        name=name,
        path=path.resolve(),
        sha256=weights_sha256(files),
        rank=adapter_rank(cfg),
        alpha=float(alpha) if isinstance(alpha, (int, float)) else None,
        target_modules=_target_modules(cfg),
        base_model_name_or_path=base if isinstance(base, str) and base else None,
        weights_format=fmt,
    )


def _adapter_config(
    name: str, path: Path, where: str, problems: list[Problem]
) -> dict[str, Any] | None:
    """The adapter's `adapter_config.json` of a LoRA adapter, or None with the problem
    appended (a reserved name, no folder, no config, a config that is no JSON object,
    another peft type)."""
    if name == BASE_ADAPTER:
        problems.append(
            Problem(
                where,
                f"`{BASE_ADAPTER}` is reserved for the bare base model",
                fix=f"give the adapter another name than `{BASE_ADAPTER}`",
            )
        )
        return None
    if not path.exists():
        problems.append(
            Problem(where, f"adapter folder {path} does not exist", fix="check the path")
        )
        return None
    if not path.is_dir():
        problems.append(
            Problem(
                where, f"{path} is not a folder", fix="give the folder holding adapter_config.json"
            )
        )
        return None
    cfg_path = path / ADAPTER_CONFIG
    if not cfg_path.is_file():
        problems.append(
            Problem(
                where,
                f"{path} has no {ADAPTER_CONFIG}; it is not a peft LoRA adapter",
                fix="give the folder written by `model.save_pretrained` of a peft model",
            )
        )
        return None
    try:
        cfg = loads(cfg_path.read_text(encoding="utf-8"))[0]
    except JsonRefused as exc:
        problems.append(Problem(str(cfg_path), exc.reason, fix=exc.fix))
        return None
    except ValueError as exc:  # not UTF-8
        problems.append(Problem(str(cfg_path), f"not UTF-8: {exc}", fix="save the file as UTF-8"))
        return None
    if not isinstance(cfg, dict):
        problems.append(Problem(str(cfg_path), "must be a JSON object"))
        return None
    peft_type = cfg.get("peft_type")
    if peft_type is not None and str(peft_type).upper() != "LORA":
        problems.append(
            Problem(
                str(cfg_path),
                f"peft_type is {peft_type!r}; only LoRA adapters are supported",
                field="peft_type",
            )
        )
        return None
    return cfg


def _weights(
    path: Path, where: str, problems: list[Problem]
) -> tuple[list[Path], Literal["safetensors", "pickle"]] | None:
    """The adapter's weight files and their format (safetensors first), or None with the
    problem appended when it has none."""
    safetensors = sorted(path.glob("adapter_model*.safetensors"))
    if safetensors:
        return safetensors, "safetensors"
    pickles = sorted(path.glob("adapter_model*.bin"))
    if pickles:
        return pickles, "pickle"
    problems.append(
        Problem(
            where,
            f"{path} has no weights ({SAFETENSORS_WEIGHTS})",
            fix="give the folder written by `model.save_pretrained` of a peft model",
        )
    )
    return None


def _pickle_problem(path: Path, where: str) -> Problem:
    return Problem(
        where,
        f"{path} holds pickle weights ({PICKLE_WEIGHTS}); loading a pickle can run code",
        fix="convert it to safetensors, or pass --allow-pickle if you trust its source",
    )


def _rank_problems(
    cfg: dict[str, Any], cfg_path: Path, max_rank: int | None, rank_fix: str
) -> list[Problem]:
    """No integer LoRA rank, or one above the engine's limit."""
    rank = adapter_rank(cfg)
    if rank is None:
        return [Problem(str(cfg_path), "no integer LoRA rank `r`", field="r")]
    if max_rank is not None and rank > max_rank:
        return [
            Problem(
                str(cfg_path),
                f"LoRA rank {rank} is above the engine's maximum {max_rank}",
                field="r",
                fix=rank_fix,
            )
        ]
    return []


def _base_problems(
    cfg: dict[str, Any], cfg_path: Path, base_aliases: Sequence[str], ignore_mismatch: bool
) -> list[Problem]:
    """The adapter was trained on another base model than the configured one."""
    base = cfg.get("base_model_name_or_path")
    if not (isinstance(base, str) and base) or not base_aliases or ignore_mismatch:
        return []
    if same_base(base, base_aliases):
        return []
    return [
        Problem(
            str(cfg_path),
            f"adapter was trained on `{base}`, but the configured base model is "
            f"`{base_aliases[0]}`",
            field="base_model_name_or_path",
            fix="use the matching base model, or pass --ignore-base-mismatch if they are the same weights",
        )
    ]


def _target_modules(cfg: dict[str, Any]) -> tuple[str, ...]:
    targets = cfg.get("target_modules")
    if isinstance(targets, str):
        return (targets,)
    if isinstance(targets, list):
        return tuple(sorted(str(t) for t in targets))
    return ()


def inspect_adapters(
    adapters: Mapping[str, str],
    *,
    base_aliases: Sequence[str] = (),
    max_rank: int | None = None,
    rank_fix: str = RANK_FIX,
    allow_pickle: bool = False,
    ignore_base_mismatch: bool = False,
    server_side_ok: bool = False,
) -> list[AdapterInfo]:
    """Inspect every adapter; `BadInput` listing every problem of every adapter.

    `base_aliases` are the names of the configured base model (config value, hub id,
    local folder); the first is shown in messages. `max_rank` is the engine's limit
    (`None`: no limit), `rank_fix` what to do about an adapter above it (the backend's
    words). With `server_side_ok` (the openai backend) a path that does
    not exist locally names an adapter the server holds; it is not inspected.
    """
    problems: list[Problem] = []
    out: list[AdapterInfo] = []
    for name, path_text in adapters.items():
        if server_side_ok and not Path(path_text).expanduser().exists():
            out.append(AdapterInfo(name=name, path=None))
            continue
        info = inspect_adapter(
            name,
            path_text,
            problems=problems,
            base_aliases=base_aliases,
            max_rank=max_rank,
            rank_fix=rank_fix,
            allow_pickle=allow_pickle,
            ignore_base_mismatch=ignore_base_mismatch,
        )
        if info is not None:
            out.append(info)
    if problems:
        raise BadInput(f"{len(problems)} adapter problem(s); nothing was loaded", problems)
    return out
