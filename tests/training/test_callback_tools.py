"""The behavioural callback renders each entry with the tools that entry offers."""

from __future__ import annotations

from pathlib import Path

from loragate.evalset.load import load_evalset
from loragate.generate.prompt import renderer_from_template
from tests._extras import require
from tests._perentry_evalset import write_perentry_evalset

require("train")  # the callback is a transformers TrainerCallback

from loragate.training.callback import BehaviouralEvalCallback  # noqa: E402


def test_prompts_show_each_entrys_own_tools(tmp_path: Path) -> None:
    evalset = load_evalset(write_perentry_evalset(tmp_path / "ev"))
    renderer = renderer_from_template("chatml-tools")
    callback = BehaviouralEvalCallback(evalset, renderer, tokenizer=None, every_steps=None)
    prompts = {entry_id: text for entry_id, text, _ in callback.prompts}
    assert '"location"' in prompts["W-loc"] and '"city"' not in prompts["W-loc"]
    assert '"city"' in prompts["W-city"] and '"location"' not in prompts["W-city"]
    assert "get_current_weather" not in prompts["C-all"] and "search_web" in prompts["C-all"]
