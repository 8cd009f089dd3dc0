"""loragate: gate LoRA fine-tune rounds by behaviour.

Importing this package stays light: no torch, vllm, peft or trl is imported here.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
