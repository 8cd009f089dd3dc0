"""What the installed vLLM's server runs on a finished output.

`VllmPipeline.parse` does what `vllm serve --enable-auto-tool-choice --tool-call-parser P
--reasoning-parser R` does for a chat completion with tools (tool_choice auto):
`ParserManager.get_parser(...)`, the parser built with the request's
`chat_template_kwargs`, `adjust_request`, then `parse` (the reasoning parser, then the
tool parser). The tokenizer is a byte-level BPE with no merges (256 byte tokens) plus
Qwen's added tokens (`<think>`, `</think>`, `<tool_call>`, `</tool_call>`, ... as plain
added tokens, `<|im_start|>`, `<|im_end|>`, `<|endoftext|>` as special ones): the parsers
consult the vocabulary only for those, so it stands in for Qwen's without a download.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loragate.calls.parsing import ServingStack
from tests._vllm.tools import TOOLS


def build_tokenizer(folder: Path) -> Any:
    """The stand-in Qwen tokenizer (see the module docstring), saved to `folder`."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    tok = Tokenizer(models.BPE(vocab={c: i for i, c in enumerate(alphabet)}, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>")
    fast.add_special_tokens(
        {"additional_special_tokens": ["<|im_start|>", "<|im_end|>", "<|endoftext|>"]}
    )
    added = ["<think>", "</think>", "<tool_call>", "</tool_call>"]
    fast.add_tokens([*added, "<tool_response>", "</tool_response>"])
    fast.save_pretrained(str(folder))
    return fast


@dataclass(frozen=True)
class Served:
    """What the server returned: its calls (name, arguments text), or the error it
    raised (then no reply at all)."""

    calls: list[tuple[str, str]]
    error: str | None = None


class VllmPipeline:
    """What the vLLM server runs on a finished output (see the module docstring)."""

    def __init__(self, tokenizer: Any) -> None:
        from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
        from vllm.parser.parser_manager import ParserManager

        logging.getLogger("vllm").setLevel(logging.CRITICAL)
        self.tokenizer = tokenizer
        self._request = ChatCompletionRequest
        self._manager = ParserManager
        self._classes: dict[tuple[str, str], Any] = {}

    def _parser_class(self, stack: ServingStack) -> Any:
        reasoning = None if stack.reasoning_parser == "none" else stack.reasoning_parser
        key = (stack.call_format, reasoning or "")
        cls = self._classes.get(key)
        if cls is None:
            cls = self._classes[key] = self._manager.get_parser(
                tool_parser_name=stack.call_format,
                reasoning_parser_name=reasoning,
                enable_auto_tools=True,
                tokenizer=self.tokenizer,
            )
        return cls

    def run(self, text: str, stack: ServingStack) -> Served:
        """The server's reply to `text` under `stack`."""
        kwargs: dict[str, Any] = {}
        if stack.thinking is not None:
            kwargs["chat_template_kwargs"] = {"enable_thinking": stack.thinking}
        request = self._request(
            model="m", messages=[{"role": "user", "content": "hi"}], tools=TOOLS, **kwargs
        )
        parser = self._parser_class(stack)(self.tokenizer, request.tools, **kwargs)
        request = parser.adjust_request(request)
        try:
            _, _, calls = parser.parse(text, request, enable_auto_tools=True)
        except Exception as exc:  # the server answers the request with an error
            return Served([], f"{type(exc).__name__}: {exc}"[:200])
        return Served([(c.name, c.arguments) for c in calls or []])
