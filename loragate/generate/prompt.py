"""The one prompt renderer, shared by every backend and by training.

A `ChatRenderer` holds a Jinja chat template (the tokenizer's own, or a file from
`configs/templates/`), the tokenizer's special tokens and the Qwen3 thinking switch.
It renders with transformers' own template engine, so a model's template behaves
exactly as under `tokenizer.apply_chat_template`, and the prompt a local runner
feeds the model is byte-identical whichever backend generates it.

Generation::

    renderer = load_renderer(model_path, chat_template="chatml-tools")
    text = renderer.render_prompt(messages, tools)       # ends with the generation prompt
    sha = prompt_sha256(text)

Training (SFT on the last assistant turn)::

    prompt, completion = renderer.render_training_example(messages, tools)
    # prompt + completion == the whole rendered conversation; `prompt` is exactly what
    # `render_prompt(messages[:-1], tools)` gives at evaluation time, and `completion`
    # is the assistant turn incl. its end-of-turn token (e.g. "...<|im_end|>\n").

Messages are OpenAI chat dicts (`Entry.chat_messages()`); `evalset_messages()` puts
the evalset's system prompt in front when an entry brings none of its own.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loragate.common.errors import BadInput, Problem
from loragate.common.jsonguard import loads
from loragate.common.resources import bundled

if TYPE_CHECKING:
    from loragate.evalset.load import Evalset
    from loragate.formats.evalset import Entry

TEMPLATE_SUFFIX = ".jinja"


def prompt_sha256(text: str) -> str:
    """sha256 (hex) of a rendered prompt, UTF-8 encoded."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def template_dirs() -> list[Path]:
    """Where template names are looked up: ./configs/templates, then the shipped ones."""
    out = [Path.cwd() / "configs" / "templates"]
    shipped = bundled("configs/templates")
    if shipped is not None and shipped.resolve() != out[0].resolve():
        out.append(shipped)
    return out


def resolve_template(name_or_path: str) -> Path:
    """A template file: an existing path, or a name (with or without `.jinja`) in
    `configs/templates/`. `BadInput` lists where it looked."""
    direct = Path(name_or_path).expanduser()
    if direct.is_file():
        return direct
    name = (
        name_or_path if name_or_path.endswith(TEMPLATE_SUFFIX) else name_or_path + TEMPLATE_SUFFIX
    )
    for d in template_dirs():
        candidate = d / name
        if candidate.is_file():
            return candidate
    looked = ", ".join(str(d) for d in template_dirs())
    available = sorted(
        {p.stem for d in template_dirs() if d.is_dir() for p in d.glob(f"*{TEMPLATE_SUFFIX}")}
    )
    raise BadInput(
        f"chat template `{name_or_path}` not found",
        [
            Problem(
                "config",
                f"no such file, and no {name} in {looked}",
                field="chat_template",
                fix=f"give a path to a .jinja file or one of: {', '.join(available) or '(none found)'}",
            )
        ],
    )


@dataclass(frozen=True)
class ChatRenderer:
    """Renders OpenAI chat messages + tools into model input text."""

    template: str
    """The Jinja chat template source."""
    source: str
    """Where the template came from (a file path, or `tokenizer:<model>`), for manifests."""
    special_tokens: dict[str, str] = field(default_factory=dict)
    """`bos_token`, `eos_token`, ... as the template may refer to them."""
    enable_thinking: bool | None = None
    """Qwen3 thinking switch, passed to the template when not `None`."""

    @property
    def template_sha256(self) -> str:
        return hashlib.sha256(self.template.encode("utf-8")).hexdigest()

    def _render(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        *,
        add_generation_prompt: bool,
    ) -> str:
        from transformers.utils.chat_template_utils import render_jinja_template

        kwargs: dict[str, Any] = dict(self.special_tokens)
        if self.enable_thinking is not None:
            kwargs["enable_thinking"] = self.enable_thinking
        try:
            rendered = render_jinja_template(
                conversations=[messages],
                tools=list(tools) if tools else None,
                chat_template=self.template,
                add_generation_prompt=add_generation_prompt,
                **kwargs,
            )
        except Exception as exc:  # jinja errors, raise_exception() in templates
            raise BadInput(
                f"chat template {self.source} failed to render: {type(exc).__name__}: {exc}",
                fix="fix the chat template, or set chat_template to a working one (configs/templates/)",
            ) from None
        # transformers returns (rendered, generation_indices): a list of one string here.
        texts = rendered[0] if isinstance(rendered, tuple) else rendered
        text = texts[0] if isinstance(texts, list) else texts
        return str(text)

    def render_prompt(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
    ) -> str:
        """The model input for generating the next assistant turn."""
        return self._render(messages, tools, add_generation_prompt=True)

    def render_conversation(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
    ) -> str:
        """A whole conversation as text, with no generation prompt at the end."""
        return self._render(messages, tools, add_generation_prompt=False)

    def render_training_example(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
    ) -> tuple[str, str]:
        """(prompt, completion) for SFT on the final assistant turn of `messages`.

        `prompt` equals `render_prompt(messages[:-1], tools)`, so training sees the
        same prefix as evaluation; `completion` is the rest of the rendered
        conversation (the assistant turn and its end-of-turn token). Raises
        `BadInput` when the last message is not an assistant turn or the template
        renders history differently from a generation prompt (then prompt + completion
        could not be split honestly).
        """
        if not messages or messages[-1].get("role") != "assistant":
            raise BadInput(
                "a training example must end with an assistant message",
                fix="end every training example with the assistant turn",
            )
        prompt = self.render_prompt(messages[:-1], tools)
        full = self.render_conversation(messages, tools)
        if not full.startswith(prompt):
            raise BadInput(
                f"chat template {self.source} renders the conversation so that the "
                "generation prompt is not a prefix of it (e.g. it rewrites earlier turns "
                "or thinking blocks); cannot split it into prompt and completion",
                [
                    Problem(
                        self.source,
                        "prompt is not a prefix of the full conversation",
                        fix="use a template whose history rendering is stable, e.g. chatml-tools, "
                        "or set `enable_thinking` to match the training data",
                    )
                ],
            )
        return prompt, full[len(prompt) :]


def evalset_messages(
    evalset: Evalset, entry: Entry, *, arguments_as: str = "dict"
) -> list[dict[str, Any]]:
    """The entry's messages with the evalset's system prompt in front (unless the
    entry starts with its own system message). `arguments_as="str"` gives tool-call
    arguments as JSON strings, as OpenAI servers take them."""
    messages = entry.chat_messages("str" if arguments_as == "str" else "dict")
    system = evalset.manifest.system_prompt
    if system and (not messages or messages[0]["role"] != "system"):
        messages = [{"role": "system", "content": system.strip()}, *messages]
    return messages


_SPECIAL_TOKENS = ("bos_token", "eos_token", "pad_token", "unk_token")


def _special_tokens(tokenizer: Any) -> dict[str, str]:
    out: dict[str, str] = {}
    for key in _SPECIAL_TOKENS:
        value = getattr(tokenizer, key, None)
        if isinstance(value, str):
            out[key] = value
    return out


def _token_text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("content"), str):
        return str(value["content"])  # the older AddedToken form
    return None


def _local_tokenizer_files(folder: Path) -> tuple[str | None, dict[str, str]] | None:
    """(chat template, special tokens) read from a local model folder's files, or
    `None` when the folder does not hold a plain `tokenizer_config.json`.

    Reading the files directly skips importing and building the tokenizer (seconds),
    which matters for a fully cached rerun; the result is the same strings that
    `AutoTokenizer` would expose.
    """
    cfg_path = folder / "tokenizer_config.json"
    if not cfg_path.is_file():
        return None
    try:
        cfg = loads(cfg_path.read_text(encoding="utf-8"))[0]
    except (ValueError, OSError):  # JsonRefused is a ValueError: deep, huge, not JSON
        return None
    if not isinstance(cfg, dict):
        return None
    tokens = {k: t for k in _SPECIAL_TOKENS if (t := _token_text(cfg.get(k))) is not None}
    template: str | None = None
    jinja = folder / "chat_template.jinja"
    json_file = folder / "chat_template.json"
    if jinja.is_file():
        template = jinja.read_text(encoding="utf-8")
    elif json_file.is_file():
        try:
            value = loads(json_file.read_text(encoding="utf-8"))[0].get("chat_template")
        except (ValueError, AttributeError, OSError):
            return None
        template = value if isinstance(value, str) else None
    else:
        value = cfg.get("chat_template")
        if isinstance(value, list):  # named templates: the default one
            value = next(
                (
                    t.get("template")
                    for t in value
                    if isinstance(t, dict) and t.get("name") == "default"
                ),
                None,
            )
        template = value if isinstance(value, str) else None
    return template, tokens


def load_renderer(
    model_path: str,
    *,
    chat_template: str | None = None,
    enable_thinking: bool | None = None,
    trust_remote_code: bool = False,
    revision: str | None = None,
) -> ChatRenderer:
    """The renderer of a model: its tokenizer's template, or the named template file.

    A local model folder is read from its tokenizer files; otherwise (a hub id) the
    tokenizer is loaded with `AutoTokenizer` (never weights). `BadInput` when neither
    the tokenizer nor the config provides a template.
    """
    local = Path(model_path)
    found = _local_tokenizer_files(local) if local.is_dir() else None
    if found is not None:
        own, tokens = found
    else:
        from transformers import AutoTokenizer

        try:
            tokenizer = AutoTokenizer.from_pretrained(
                model_path, trust_remote_code=trust_remote_code, revision=revision
            )
        except (OSError, ValueError) as exc:
            raise BadInput(
                f"cannot load the tokenizer of `{model_path}`: {exc}",
                fix="check that the model folder holds tokenizer files, or pass --model",
            ) from None
        raw = getattr(tokenizer, "chat_template", None)
        if isinstance(raw, dict):  # several named templates: take the default one
            raw = raw.get("default")
        own = raw if isinstance(raw, str) else None
        tokens = _special_tokens(tokenizer)
    if chat_template is not None:
        path = resolve_template(chat_template)
        template = path.read_text(encoding="utf-8")
        source = str(path)
    else:
        if not own:
            raise BadInput(
                f"the tokenizer of `{model_path}` has no chat template",
                [
                    Problem(
                        "config",
                        "no chat template",
                        field="chat_template",
                        fix="set `chat_template: chatml-tools` (or another file in configs/templates/)",
                    )
                ],
            )
        template = own
        source = f"tokenizer:{model_path}"
    return ChatRenderer(
        template=template,
        source=source,
        special_tokens=tokens,
        enable_thinking=enable_thinking,
    )


def renderer_from_template(
    chat_template: str,
    *,
    special_tokens: dict[str, str] | None = None,
    enable_thinking: bool | None = None,
) -> ChatRenderer:
    """A renderer from a template name or file alone (no tokenizer needed)."""
    path = resolve_template(chat_template)
    return ChatRenderer(
        template=path.read_text(encoding="utf-8"),
        source=str(path),
        special_tokens=dict(special_tokens or {}),
        enable_thinking=enable_thinking,
    )
