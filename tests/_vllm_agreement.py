"""loragate's strict parse against vLLM's own server pipeline, on a generated corpus.

`corpus(n, seed)` (`_vllm_corpus.py`) writes model outputs of every kind issue 22 lists (one or several
calls, prose around them, `<think>` blocks open, closed, empty and holding calls,
malformed JSON, unclosed blocks, values of every schema type, unicode, nested objects
and arrays, unknown tools, and the known trouble: `<tool_call>` inside an argument
string, non-object arguments, empty names, lone surrogates) in both call formats, and
gives each the serving stack it is read under. `VllmPipeline` runs what `vllm serve
--enable-auto-tool-choice --tool-call-parser P --reasoning-parser R` runs on a
finished output: `ParserManager.get_parser(...)`, then its `parse` (the reasoning
parser, then the tool parser), with the request's `chat_template_kwargs`.
`compare` puts loragate's strict parse beside it: the calls agree when both run the
same (name, arguments) in the same order (a refused output runs none); every other
output falls into one named class of `CLASSES`, each with the reason it differs.
Classes marked not comparable are those where a user of that server would agree
loragate's verdict is the better one; `docs/call-formats.md` lists them with counts.

The tokenizer is a byte-level BPE with no merges (256 byte tokens) plus Qwen's added
tokens (`<think>`, `</think>`, `<tool_call>`, `</tool_call>`, ... as plain added tokens,
`<|im_start|>`, `<|im_end|>`, `<|endoftext|>` as special ones): the parsers consult the
vocabulary only for those, so it stands in for Qwen's without a download.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loragate.calls.parsing import ServingStack, parse_output
from loragate.calls.tools import Toolset
from loragate.common.surrogates import without_surrogates
from tests._vllm_corpus import TOOLS, Case, toolset

# -- vLLM -------------------------------------------------------------------------------


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
    fast.add_tokens(
        [
            "<think>",
            "</think>",
            "<tool_call>",
            "</tool_call>",
            "<tool_response>",
            "</tool_response>",
        ]
    )
    fast.save_pretrained(str(folder))
    return fast


class VllmPipeline:
    """What the vLLM server runs on a finished output (see the module docstring)."""

    def __init__(self, tokenizer: Any) -> None:
        import logging

        from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
        from vllm.parser.parser_manager import ParserManager

        logging.getLogger("vllm").setLevel(logging.CRITICAL)
        self.tokenizer = tokenizer
        self._request = ChatCompletionRequest
        self._manager = ParserManager
        self._classes: dict[tuple[str, str], Any] = {}

    def parse(self, text: str, stack: ServingStack) -> list[tuple[str, Any]]:
        """The (name, decoded arguments) vLLM executes, in order."""
        tool_parser = stack.call_format
        reasoning = None if stack.reasoning_parser == "none" else stack.reasoning_parser
        key = (tool_parser, reasoning or "")
        cls = self._classes.get(key)
        if cls is None:
            cls = self._manager.get_parser(
                tool_parser_name=tool_parser,
                reasoning_parser_name=reasoning,
                enable_auto_tools=True,
                tokenizer=self.tokenizer,
            )
            self._classes[key] = cls
        kwargs: dict[str, Any] = {}
        if stack.thinking is not None:
            kwargs["chat_template_kwargs"] = {"enable_thinking": stack.thinking}
        request = self._request(
            model="m", messages=[{"role": "user", "content": "hi"}], tools=TOOLS, **kwargs
        )
        parser = cls(self.tokenizer, request.tools, **kwargs)
        request = parser.adjust_request(request)
        _, _, calls = parser.parse(text, request, enable_auto_tools=True)
        out = []
        for call in calls or []:
            try:
                arguments = json.loads(call.arguments)
            except (TypeError, ValueError):
                arguments = call.arguments
            out.append((call.name, arguments))
        return out


# -- comparing ----------------------------------------------------------------------------


@dataclass(frozen=True)
class DiffClass:
    name: str
    comparable: bool
    reason: str


CLASSES: dict[str, DiffClass] = {
    c.name: c
    for c in [
        DiffClass("agree", True, "the same calls, or none on both sides"),
        DiffClass(
            "other_format",
            False,
            "Qwen3 XML calls under the Hermes stack: vLLM's Hermes parser fails on the XML block "
            "and runs none of the output's calls; loragate judges them as written and counts the "
            "sample in the format mix",
        ),
        DiffClass(
            "non_xml_block",
            False,
            "a <tool_call> holding JSON or other text under the Qwen3 XML stack: vLLM's XML parser "
            "drops it silently and runs the output's other calls; loragate reads it as Hermes "
            "JSON: a valid call is judged as written and counted in the format mix, anything "
            "else makes the output unparseable",
        ),
        DiffClass(
            "unclosed_final_block",
            False,
            "a final block with no </tool_call> (</function> for XML): vLLM runs it when its body "
            "is complete; strict mode counts the missing close as a format error, repaired mode "
            "runs it, and the strict/repaired gap shows it",
        ),
        DiffClass(
            "non_object_arguments",
            False,
            'vLLM runs the call with `arguments` 42, "text", [..], null or true; no tool takes '
            "them: loragate fails it",
        ),
        DiffClass(
            "empty_name",
            False,
            'vLLM runs a call named "" (Hermes) or silently drops it and runs the others (XML); '
            "no tool has that name: loragate fails the output",
        ),
        DiffClass(
            "non_finite_number",
            False,
            "vLLM passes NaN / Infinity on as arguments that are not JSON; loragate refuses them",
        ),
        DiffClass(
            "duplicate_key",
            False,
            "vLLM keeps the last of two values for one key (or parameter); which was meant is "
            "unknowable: strict mode refuses, repaired mode keeps the last as vLLM does",
        ),
        DiffClass(
            "xml_dropped_text",
            False,
            "text inside an XML block outside the tags (before <function=, after </function>, "
            "between parameters): vLLM drops it silently; strict mode refuses the block",
        ),
        DiffClass(
            "xml_dropped_parameter",
            False,
            "a last parameter with no </parameter>: vLLM drops it and runs the call without it; "
            "strict mode refuses, repaired mode closes it",
        ),
        DiffClass(
            "xml_malformed_tag",
            False,
            "<function=NAME with no '>' or an empty parameter name: vLLM runs a call with empty "
            "or garbled arguments; strict mode refuses",
        ),
        DiffClass("unexplained", True, "a difference with no named reason (must not happen)"),
    ]
}


def _normalised(calls: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """vLLM's calls with lone surrogates replaced by U+FFFD, as loragate writes them."""
    text = json.dumps(calls, ensure_ascii=False)
    fixed = without_surrogates(text)
    return calls if fixed is text else [tuple(c) for c in json.loads(fixed)]  # type: ignore[misc]


def classify(case: Case, vllm_calls: list[tuple[str, Any]], tools: Toolset) -> tuple[str, Any]:
    """The class of one output and loragate's strict parse of it."""
    result = parse_output(case.text, "strict", stack=case.stack, tools=tools)
    ours = [(c.name, c.arguments) for c in result.calls] if result.status == "ok" else []
    if _normalised(vllm_calls) == ours:
        return "agree", result
    error = result.error or ""
    xml_stack = case.stack.call_format == "qwen3_xml"
    if xml_stack and (result.format == "hermes" or any(e in error for e in _JSON_ERRORS)):
        return "non_xml_block", result
    if not xml_stack and result.format == "qwen3_xml":
        return "other_format", result
    if any(not isinstance(args, dict) for _, args in vllm_calls) and "`arguments` is a" in error:
        return "non_object_arguments", result
    if "`name` is missing, empty" in error and any(name == "" for name, _ in vllm_calls):
        return "empty_name", result
    if "has no name" in error:
        return "empty_name", result
    if "not a JSON number" in error or "non-finite" in error:
        return "non_finite_number", result
    if "duplicate key" in error or "given twice" in error:
        return "duplicate_key", result
    if "not closed (no </tool_call>)" in error or "not closed (no </function>)" in error:
        return "unclosed_final_block", result
    if "is not closed by </parameter>" in error:
        return "xml_dropped_parameter", result
    if "text between" in error or "text outside <parameter" in error:
        return "xml_dropped_text", result
    if "is not closed by '>'" in error or "empty name" in error:
        return "xml_malformed_tag", result
    return "unexplained", result


_JSON_ERRORS = (
    "invalid JSON",
    "empty block",
    "JSON is a",
    "call is a",
    "`name`",
    "`arguments`",
    "a list of calls",
    "with no <function=",
)


@dataclass
class Agreement:
    outputs: int = 0
    counts: Counter[str] = field(default_factory=Counter)
    by_kind: dict[str, Counter[str]] = field(default_factory=dict)
    examples: dict[str, list[str]] = field(default_factory=dict)

    @property
    def comparable(self) -> int:
        return sum(n for c, n in self.counts.items() if CLASSES[c].comparable)

    @property
    def agreeing(self) -> int:
        return self.counts["agree"]


def compare(cases: list[Case], pipeline: VllmPipeline) -> Agreement:
    tools = toolset()
    out = Agreement()
    for case in cases:
        cls, _ = classify(case, pipeline.parse(case.text, case.stack), tools)
        out.outputs += 1
        out.counts[cls] += 1
        out.by_kind.setdefault(case.kind, Counter())[cls] += 1
        if cls != "agree" and len(out.examples.setdefault(cls, [])) < 3:
            out.examples[cls].append(
                f"{case.kind} under {case.stack.describe()}: {case.text[:160]!r}"
            )
    return out
