"""Tiny random models for runner tests: a 2-layer Qwen3 and peft LoRA adapters on it.

The tokenizer is SmolLM2's (from the embedded checkpoint): a real tokenizer makes the
rendered agent20 prompts realistic (~2k tokens) and its vocabulary (49,152) keeps the
model small (a random Qwen3 needs no hub download). head_dim is 64 because vLLM's
CPU attention rejects 16. Weights are drawn with a large init range so the logits
are peaked: greedy decoding then has clear winners, and the hf and vLLM backends,
whose float32 kernels differ in the last bits, pick the same tokens.
"""

from __future__ import annotations

import shutil
from pathlib import Path

TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja")


def build_tiny_qwen3(out: Path, tokenizer_dir: Path, *, seed: int = 0) -> Path:
    """Write a random 2-layer Qwen3 (float32) plus the tokenizer of `tokenizer_dir`."""
    import torch
    from transformers import AutoTokenizer, Qwen3Config, Qwen3ForCausalLM

    tok = AutoTokenizer.from_pretrained(str(tokenizer_dir))
    config = Qwen3Config(
        vocab_size=len(tok),
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=64,
        max_position_embeddings=8192,
        initializer_range=0.2,
        tie_word_embeddings=True,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
        dtype="float32",
    )
    torch.manual_seed(seed)
    model = Qwen3ForCausalLM(config)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(out), safe_serialization=True)
    for name in TOKENIZER_FILES:
        src = tokenizer_dir / name
        if src.is_file():
            shutil.copy(src, out / name)
    return out


def build_lora(
    base: Path,
    out: Path,
    *,
    seed: int,
    rank: int = 8,
    scale: float = 1.0,
    target_modules: tuple[str, ...] = ("q_proj", "k_proj", "v_proj", "o_proj"),
) -> Path:
    """Write a peft LoRA adapter on `base` whose A and B are random (non-zero), so it
    changes what the model generates."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(base), dtype=torch.float32)
    cfg = LoraConfig(
        r=rank,
        lora_alpha=2 * rank,
        target_modules=list(target_modules),
        init_lora_weights=False,
        lora_dropout=0.0,
    )
    torch.manual_seed(seed)
    peft_model = get_peft_model(model, cfg)
    with torch.no_grad():
        for name, param in peft_model.named_parameters():
            if "lora_A" in name or "lora_B" in name:
                param.copy_(torch.randn_like(param) * scale / rank**0.5)
    peft_model.save_pretrained(str(out))
    return out
