"""Where a run's base model comes from, checked before anything loads it.

A model name that is not a local folder is a hub id: the tokenizer and the engine read it
from the local Hugging Face cache, or download it. With no hub (no network, or
`HF_HUB_OFFLINE` set) and nothing in the cache, `huggingface_hub` would spend a minute
and a half in retries before failing; `check_hub_model` says so at once, with the
command that downloads the model. It never downloads anything itself.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from urllib.parse import urlparse

from loragate.common.errors import BadInput, Problem

HUB_TIMEOUT = 2.0
"""Seconds the hub's address may take to answer a connection before it counts as down."""


def download_fix(model: str, revision: str | None = None) -> str:
    """The command that puts `model` in the local cache."""
    pin = f" --revision {revision}" if revision else ""
    return (
        f"download it first: huggingface-cli download {model}{pin}; or copy the model "
        "folder to this machine and pass --model PATH"
    )


def hub_offline() -> bool:
    """`HF_HUB_OFFLINE` is set to a true value: nothing may reach the hub."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in {"1", "true", "yes", "on"}


def in_local_cache(model: str, revision: str | None = None) -> bool:
    """The hub model `model` has its `config.json` in the local Hugging Face cache
    (looked up on disk only)."""
    from huggingface_hub import try_to_load_from_cache

    try:
        found = try_to_load_from_cache(model, "config.json", revision=revision)
    except ValueError:  # not a valid repo id (HFValidationError): not in any cache
        return False
    return isinstance(found, str)


def hub_reachable(timeout: float = HUB_TIMEOUT) -> bool:
    """A TCP connection to the hub (`HF_ENDPOINT`, default huggingface.co) opens within
    `timeout` seconds."""
    url = urlparse(os.environ.get("HF_ENDPOINT") or "https://huggingface.co")
    host = url.hostname or "huggingface.co"
    port = url.port or (80 if url.scheme == "http" else 443)
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def is_hub_id(model: str) -> bool:
    """`model` names no local folder, so it is read from the hub (or its cache)."""
    return bool(model) and not Path(model).expanduser().is_dir()


def missing_hub_model(model: str, revision: str | None = None) -> str | None:
    """What is wrong with the hub model `model` when it cannot be had without a download
    on an offline machine: None when it is a local folder or in the local cache; the
    cache is read on disk only (`loragate run --dry-run` asks nothing of the network)."""
    if not is_hub_id(model) or in_local_cache(model, revision):
        return None
    return f"{model} not in the local cache"


def check_model_source(model: str, revision: str | None = None, *, loads: bool) -> None:
    """Before a run plans with `model`: a local folder is read offline (nothing reaches
    for a hub: tokenizer, engine workers); a hub id a local backend `loads` must be
    cached or the hub reachable (`check_hub_model`)."""
    if os.path.isdir(model):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
    elif loads:
        check_hub_model(model, revision)


def check_hub_model(model: str, revision: str | None = None) -> None:
    """Before a local backend loads `model`: `BadInput` with the download command when
    it is a hub id, not in the local cache, and the hub cannot be reached (or
    `HF_HUB_OFFLINE` is set). A cached model with the hub down is read offline
    (`HF_HUB_OFFLINE=1`), so no retry waits for the network."""
    if not is_hub_id(model):
        return
    cached = in_local_cache(model, revision)
    offline = hub_offline()
    if not offline and hub_reachable():
        return
    if cached:  # read it offline: the environment for what starts later, the constant here
        import huggingface_hub.constants

        os.environ["HF_HUB_OFFLINE"] = "1"
        huggingface_hub.constants.HF_HUB_OFFLINE = True
        return
    why = "HF_HUB_OFFLINE is set" if offline else "the hub cannot be reached"
    raise BadInput(
        f"model {model} is not in the local cache and {why}",
        [Problem("config", f"{model}: {why}", field="model", fix=download_fix(model, revision))],
    )


__all__ = [
    "check_hub_model",
    "check_model_source",
    "download_fix",
    "hub_offline",
    "hub_reachable",
    "in_local_cache",
    "is_hub_id",
    "missing_hub_model",
]
