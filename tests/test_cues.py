"""The judge's cue lists (`loragate/judge/cues/<lang>/<kind>.txt`): every file of every
language reads, every pattern compiles, and no long list is left in Python."""

from __future__ import annotations

from pathlib import Path

import pytest

from loragate.judge import lexicon
from tests._code_lists import long_lists

REPO = Path(__file__).resolve().parent.parent


def test_every_cue_file_reads() -> None:
    assert lexicon.check_all() == []


@pytest.mark.parametrize("lang", lexicon.languages())
def test_every_cue_set_of_a_language_compiles(lang: str) -> None:
    from loragate.judge.acknowledgements import ack_cues
    from loragate.judge.claims import claim_cues
    from loragate.judge.figures import date_values
    from loragate.judge.language import cue_languages
    from loragate.judge.promises import unkept_promise
    from loragate.judge.questions import question_cues
    from loragate.judge.refusals import answer_cues

    langs = cue_languages(lang)
    for build in (ack_cues, claim_cues, question_cues, answer_cues):
        build(langs)
    for lists in lexicon.mapping(lang, "failure_by_kind").values():
        for patterns in lists.values():
            for p in patterns:
                lexicon.expand(lang, "failure_by_kind", p, check=True)
    assert unkept_promise("I'll pay it.", ["pay_invoice"], langs=langs) is not None
    assert date_values("30.11.") == {(11, 30)}


def test_english_has_every_kind() -> None:
    assert set(lexicon.kinds_present("en")) == set(lexicon.KINDS)


@pytest.mark.parametrize("lang", lexicon.languages())
def test_every_kind_of_a_language_loads(lang: str) -> None:
    for kind in lexicon.kinds_present(lang):
        if lexicon.KINDS[kind] == "map":
            assert lexicon.mapping(lang, kind)
        else:
            assert lexicon.entries(lang, kind), f"cues/{lang}/{kind}.txt is empty"


def _fake_language(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: dict[str, str]) -> None:
    folder = tmp_path / "xx"
    folder.mkdir()
    for name, body in files.items():
        (folder / name).write_text(body, encoding="utf-8")
    real = lexicon._folder
    monkeypatch.setattr(lexicon, "_folder", lambda lang: folder if lang == "xx" else real(lang))
    for cached in (lexicon._raw, lexicon.entries, lexicon.mapping):
        cached.cache_clear()


def test_a_bad_pattern_names_its_file_and_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_language(tmp_path, monkeypatch, {"negation.txt": "# comment\nnicht\n(?:kein\n"})
    with pytest.raises(lexicon.CueError, match=r"cues/xx/negation\.txt:3: .*no regular"):
        lexicon.check_entries("xx", "negation")


def test_a_reference_to_a_missing_list_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_language(tmp_path, monkeypatch, {"success.txt": r"\bhabe\s+{=done_verbs}\b" + "\n"})
    with pytest.raises(lexicon.CueError, match=r"success\.txt:1: \{=done_verbs\} is empty"):
        lexicon.entries("xx", "success")


def test_words_must_be_folded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_language(tmp_path, monkeypatch, {"stopwords.txt": "der\nDie\n"})
    with pytest.raises(lexicon.CueError, match=r"stopwords\.txt:2: 'Die' is not a folded"):
        lexicon.entries("xx", "stopwords")


def test_references_expand_to_a_group(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_language(
        tmp_path,
        monkeypatch,
        {"done_verbs.txt": "gesendet\nbezahlt\n", "success.txt": r"\bhabe\s+{=done_verbs}\b"},
    )
    assert lexicon.entries("xx", "success") == (r"\bhabe\s+(?:gesendet|bezahlt)\b",)


def test_an_unknown_file_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_language(tmp_path, monkeypatch, {"negations.txt": "nicht\n"})
    with pytest.raises(lexicon.CueError, match=r"cues/xx/negations\.txt: not a cue file"):
        lexicon.kinds_present("xx")


@pytest.mark.parametrize(
    "path",
    sorted((REPO / "loragate" / "judge").glob("*.py")) + sorted((REPO / "families").glob("*.py")),
    ids=lambda p: p.name,
)
def test_no_long_word_list_in_code(path: Path) -> None:
    assert long_lists(path, REPO) == []
