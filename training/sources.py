"""The formats of a training source file, each row into a `TrainingExample`:

- `xlam`: Salesforce xLAM function-calling rows `{"query", "tools", "answers"}` (`tools`
  and `answers` may be JSON strings) in JSON, JSONL or parquet, read through `datasets`;
  each row becomes a user turn and an assistant turn with the answers as tool calls,
  its tools converted to JSON Schema parameters;
- `messages`: JSONL of `{"messages": [...], "tools"?: [...], "family"?, "id"?}`, read
  with the json module (see `loragate.training.data`).

`loragate.training.data.load_source` picks the format and validates the examples.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Literal

from loragate.common.errors import BadInput, MissingDependency
from loragate.common.jsonl import read_objects
from loragate.training.example import TrainingExample


def _read_with_datasets(path: Path) -> list[dict[str, Any]]:
    try:
        import datasets
    except ImportError as exc:
        raise MissingDependency("datasets", "train") from exc
    suffix = path.suffix.lower()
    builder = "parquet" if suffix == ".parquet" else "json"
    try:
        ds = datasets.load_dataset(builder, data_files=str(path), split="train")
    except Exception as exc:  # datasets raises many types for unreadable files
        raise BadInput(
            f"{path}: cannot read it as {builder}: {type(exc).__name__}: {exc}",
            fix="check the file format named in the recipe",
        ) from None
    return [dict(row) for row in ds]


def read_rows(path: Path, fmt: Literal["xlam", "messages"]) -> list[dict[str, Any]]:
    """The rows of a source file of format `fmt` (xLAM through `datasets`)."""
    return _read_with_datasets(path) if fmt == "xlam" else _read_jsonl(path)


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [obj for _, obj in read_objects(path, what="data source", allow_array=True)]


def sniff_format(path: Path) -> Literal["xlam", "messages"]:
    """`messages` when the first row has a `messages` key before any `query` key."""
    if path.suffix.lower() == ".parquet":
        return "xlam"
    with path.open(encoding="utf-8") as fh:
        head = fh.read(8192)
    m, q = head.find('"messages"'), head.find('"query"')
    return "messages" if m >= 0 and (q < 0 or m < q) else "xlam"


_XLAM_TYPES = {
    "str": "string",
    "string": "string",
    "int": "integer",
    "integer": "integer",
    "float": "number",
    "number": "number",
    "bool": "boolean",
    "boolean": "boolean",
    "list": "array",
    "tuple": "array",
    "set": "array",
    "array": "array",
    "dict": "object",
    "object": "object",
}


def _xlam_type(raw: Any) -> str | None:
    """JSON Schema type of an xLAM parameter type such as `str, optional` or `List[int]`."""
    if not isinstance(raw, str):
        return None
    base = raw.split(",", 1)[0].strip()
    base = re.sub(r"^Optional\[(.*)\]$", r"\1", base)
    base = base.split("[", 1)[0].strip().lower()
    return _XLAM_TYPES.get(base)


def xlam_tool(raw: dict[str, Any]) -> dict[str, Any]:
    """An xLAM tool `{"name", "description", "parameters": {p: {type, description,
    default}}}` as an OpenAI tool definition with a JSON Schema `parameters` object.

    A parameter is required unless it has a `default` or its type says `optional`.
    Parameters that are already a JSON Schema object are kept as they are.
    """
    params = raw.get("parameters") or {}
    if isinstance(params, dict) and params.get("type") == "object":
        schema: dict[str, Any] = params
    else:
        props: dict[str, Any] = {}
        required: list[str] = []
        for pname, spec in (params or {}).items():
            spec = spec if isinstance(spec, dict) else {}
            prop: dict[str, Any] = {}
            typ = _xlam_type(spec.get("type"))
            if typ:
                prop["type"] = typ
            if spec.get("description"):
                prop["description"] = str(spec["description"])
            optional = "optional" in str(spec.get("type", "")).lower()
            if "default" in spec and spec["default"] not in (None, ""):
                prop["default"] = spec["default"]
                optional = True
            if not optional:
                required.append(str(pname))
            props[str(pname)] = prop
        schema = {"type": "object", "properties": props}
        if required:
            schema["required"] = required
    return {
        "type": "function",
        "function": {
            "name": str(raw.get("name", "")),
            "description": str(raw.get("description", "")),
            "parameters": schema,
        },
    }


def _json_field(value: Any, what: str) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError as exc:
            raise ValueError(f"`{what}` is a string but not valid JSON: {exc}") from None
    return value


def xlam_example(row: dict[str, Any], index: int, source: str) -> TrainingExample:
    """One xLAM row as a training example; `ValueError` naming what is wrong."""
    query = row.get("query")
    if not isinstance(query, str) or not query.strip():
        raise ValueError("`query` must be a non-empty string")
    tools = _json_field(row.get("tools"), "tools")
    answers = _json_field(row.get("answers"), "answers")
    if not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools):
        raise ValueError("`tools` must be a list of tool objects")
    if not isinstance(answers, list) or not all(isinstance(a, dict) for a in answers):
        raise ValueError("`answers` must be a list of {name, arguments} objects")
    calls = []
    for i, a in enumerate(answers):
        args = _json_field(a.get("arguments", {}), f"answers[{i}].arguments")
        if not isinstance(args, dict):
            raise ValueError(f"answers[{i}].arguments must be an object")
        calls.append(
            {
                "id": f"call_{i + 1}",
                "type": "function",
                "function": {"name": str(a.get("name", "")), "arguments": args},
            }
        )
    if not calls:
        raise ValueError("`answers` is empty; xLAM rows teach calls")
    row_id = row.get("id", index)
    return TrainingExample(
        id=f"{source}:{row_id}",
        messages=[
            {"role": "user", "content": query},
            {"role": "assistant", "content": "", "tool_calls": calls},
        ],
        source=source,
        tools=[xlam_tool(t) for t in tools],
    )


def messages_example(row: dict[str, Any], index: int, source: str) -> TrainingExample:
    """One `messages`-format row as a training example; `ValueError` when malformed."""
    messages = row.get("messages")
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        raise ValueError("`messages` must be a list of chat message objects")
    tools = row.get("tools")
    if tools is not None and not (
        isinstance(tools, list) and all(isinstance(t, dict) for t in tools)
    ):
        raise ValueError("`tools` must be a list of OpenAI tool definitions")
    family = row.get("family")
    return TrainingExample(
        id=f"{source}:{row.get('id', index)}",
        messages=messages,
        source=source,
        family=str(family) if family is not None else None,
        tools=tools,
        tags=tuple(str(t) for t in row.get("tags") or ()),
    )


__all__ = ["messages_example", "read_rows", "sniff_format", "xlam_example", "xlam_tool"]
