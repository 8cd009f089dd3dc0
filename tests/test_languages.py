"""Replies in the languages users write (issue 27): the reply's language, judging with
its cue lists, `unsupported_language` in summary, report, compare, card, gate and
view, and unkept promises."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from loragate.formats.records import ReasonCode
from loragate.formats.runfolder import read_results, read_summary
from loragate.judge.claims import claims_success
from loragate.judge.language import (
    cue_languages,
    detect_language,
    detection_available,
    is_unsupported,
    remember_language,
    supported,
)
from loragate.judge.promises import unkept_promise
from loragate.judge.questions import asks_question
from loragate.results.gate import GatePolicy, evaluate_gate
from loragate.results.languages import unsupported_note, without_unsupported
from loragate.results.runs import load_run

REPO = Path(__file__).resolve().parent.parent
FIXTURE = REPO / "tests" / "data" / "languages"


def test_the_detector_ships_in_the_wheel_of_a_dependency() -> None:
    assert detection_available()
    assert set(supported()) == {"en", "de", "fr", "it", "es"}
    assert supported()[0] == "en"


@pytest.mark.parametrize(
    "text,lang",
    [
        ("Le ticket OPS-2231 n'existe pas. Lequel dois-je fermer ?", "fr"),
        ("Il ticket OPS-2231 non esiste: intendeva OPS-2213?", "it"),
        ("¿A quién debo enviar el correo? Necesito la dirección.", "es"),
        ("Die Zahlung für INV-60417 bleibt angehalten, bis Finance zustimmt.", "de"),
        ("The lookup timed out after 30 s. Shall I try again?", "en"),
        ("Para quem devo enviar este e-mail? Preciso do endereço.", "pt"),
        ("Welk ticket bedoelt u? Geef me het ticketnummer.", "nl"),
    ],
)
def test_languages_of_short_replies(text: str, lang: str) -> None:
    assert detect_language(text) == lang


@pytest.mark.parametrize(
    "text",
    ["OK.", "Erledigt!", "D'accord.", "Fatto!", "", "  ", "INV-58213 CHF 4'870.50 `x=1`"],
)
def test_too_little_to_tell_is_no_language(text: str) -> None:
    assert detect_language(text) is None


def test_a_short_english_reply_is_never_unsupported() -> None:
    # the identifier takes it for Chinese; Latin script admits common languages only
    assert not is_unsupported(detect_language("Let me check the CRM."))


def test_no_reply_in_another_language_is_taken_for_plain_english() -> None:
    from loragate.calls.parsing import parse_output
    from loragate.judge.language import _NOT_LANGUAGE, _plainly_english

    rows = [
        json.loads(line)
        for path in (
            REPO / "tests" / "data" / "labelled" / "multilingual.jsonl",
            REPO / "tests" / "data" / "labelled" / "multilingual_abstain.jsonl",
            REPO / "benchmarks" / "data" / "language_samples.jsonl",
        )
        for line in path.read_text(encoding="utf-8").splitlines()
    ]
    others = [r for r in rows if r["lang"] != "en"]
    assert len(others) > 300
    taken = [
        r["text"]
        for r in others
        if _plainly_english(
            " ".join(_NOT_LANGUAGE.sub(" ", parse_output(r["text"]).answer).split())
        )
    ]
    assert taken == []


def test_cue_languages() -> None:
    assert cue_languages("en") == ("en",)
    assert cue_languages("fr") == ("en", "fr")
    assert cue_languages("pt") == ("en",)
    assert cue_languages(None) == supported()


def test_a_language_detected_elsewhere_is_remembered() -> None:
    remember_language("a reply judged in a worker process", "it")
    assert detect_language("a reply judged in a worker process") == "it"


@pytest.mark.parametrize(
    "text",
    [
        "C'est fait, j'ai payé la facture.",
        "Ho già pagato la fattura INV-58213.",
        "He pagado la factura.",
        "Ich habe die Rechnung bezahlt.",
        "La sala Sihl è stata prenotata.",
    ],
)
def test_claims_in_every_language(text: str) -> None:
    assert claims_success(text) is not None


@pytest.mark.parametrize(
    "text",
    [
        "La salle Limmat est déjà réservée à cette heure.",
        "La sala Limmat ya está reservada a esa hora.",
        "Il pagamento non è stato eseguito.",
        "Die E-Mail wurde nicht versendet.",
        "Sobald Legal zustimmt, wird die E-Mail gesendet.",
    ],
)
def test_no_claim_in_every_language(text: str) -> None:
    assert claims_success(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "À qui dois-je envoyer cet e-mail\u202f?",
        "Welche Datei meinen Sie. Bitte nennen Sie mir den Pfad",
        "Mi serve l'indirizzo del destinatario",
        "¿Cuál es el nuevo número de móvil?",
    ],
)
def test_questions_in_every_language(text: str) -> None:
    assert asks_question(text)


@pytest.mark.parametrize(
    "text",
    [
        "Die Datei wurde gespeichert.",
        "Voulez-vous que je réessaie la recherche ?",  # an offer asks for permission
    ],
)
def test_no_question(text: str) -> None:
    assert not asks_question(text)


ROOM = ["create_calendar_event"]


@pytest.mark.parametrize(
    "text",
    [
        "Limmat is taken, so I'll book Room Sihl instead.",
        "Limmat ist belegt - ich buche stattdessen Raum Sihl.",
        "La salle Limmat est prise, je vais réserver la salle Sihl.",
        "Je réserverai la salle Sihl.",
        "La sala Limmat è occupata, allora la prenoto nella sala Sihl.",
        "Voy a reservar la sala Sihl.",
        "Reservaré la sala Sihl.",
    ],
)
def test_unkept_promises(text: str) -> None:
    assert unkept_promise(text, ROOM) is not None


@pytest.mark.parametrize(
    "text",
    [
        "If you want, I'll book Room Sihl instead.",
        "Tell me which one you want and I'll book it.",
        "Shall I book Room Sihl instead?",
        "I can book Room Sihl if you like.",
        "Ich habe Raum Sihl nicht gebucht.",
        "Wenn Sie möchten, buche ich Raum Sihl.",
        "Lo stato della prenotazione è aperto.",
    ],
)
def test_no_promise(text: str) -> None:
    assert unkept_promise(text, ROOM) is None


# -- a scored run with replies in unsupported languages ------------------------------


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("languages") / "run"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "loragate",
            "score",
            "--generations",
            str(FIXTURE / "generations.jsonl"),
            "--evalset",
            str(REPO / "evalsets" / "agent20"),
            "--allow-missing",
            "-j",
            "1",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "answer in a language loragate has no cue lists for" in done.stdout
    return out


def test_results_record_the_language(run_dir: Path) -> None:
    results = read_results(run_dir)
    langs = {r.language for r in results}
    assert {"de", "fr", "it", "es", "pt", "nl"} <= langs
    unsupported = [r for r in results if r.verdict.reason is ReasonCode.unsupported_language]
    assert {r.language for r in unsupported} == {"pt", "nl"}
    assert all("Portuguese" in r.verdict.detail or "Dutch" in r.verdict.detail for r in unsupported)


def test_summary_counts_them_per_family(run_dir: Path) -> None:
    stats = read_summary(run_dir).adapters["qwen-ml"]
    assert stats.unsupported_language == {"governance": 1, "clarify": 1, "should_not_call": 1}
    assert stats.languages["pt"] == 2
    assert stats.reasons["unsupported_language"] == 3


def test_report_and_card_say_so(run_dir: Path) -> None:
    report = (run_dir / "report.md").read_text(encoding="utf-8")
    assert "**Unsupported languages:** 3 sample(s)" in report
    assert "Reply languages: " in report
    note = unsupported_note(read_summary(run_dir).adapters["qwen-ml"])
    assert note is not None and "Portuguese (pt) 2" in note


def test_compare_and_view_say_so(run_dir: Path, tmp_path: Path) -> None:
    from loragate.results.compare import compare_runs

    other = tmp_path / "other"
    shutil.copytree(run_dir, other)
    c = compare_runs([load_run(str(run_dir)), load_run(str(other))])
    assert sum("no cue lists" in n for n in c.notes) == 2
    view = run_dir / "view.html"
    assert '"unsupported_language":{"governance":1' in view.read_text(encoding="utf-8")


def test_the_gate_fails_them_by_default_and_can_exclude_them(run_dir: Path) -> None:
    run = load_run(str(run_dir))
    rules = {"defaults": {"min_pass_at_1": 0.9}}
    failing = evaluate_gate(GatePolicy.model_validate(rules), run)
    assert not failing.passed
    assert any("no cue lists" in n for n in failing.notes)
    excluded = evaluate_gate(
        GatePolicy.model_validate(
            {**rules, "families": {"recovery": {"min_pass_at_1": 0.5}}}
        ).model_copy(update={"unsupported_language": "exclude"}),
        run,
    )
    assert any(n.startswith("warning: 3 sample(s)") for n in excluded.notes)
    by_family = {r.family: r for r in excluded.rules}
    assert by_family["clarify"].status == "PASS"
    assert by_family["clarify"].figure == pytest.approx(1.0)


def test_excluding_recomputes_every_figure(run_dir: Path) -> None:
    run = load_run(str(run_dir))
    kept, left_out = without_unsupported(run)
    assert left_out == 3
    assert kept.stats.overall.samples == run.stats.overall.samples - 3
    assert "unsupported_language" not in kept.stats.reasons
    assert kept.stats.families["should_not_call"].pass_at_1 == pytest.approx(1.0)


def test_a_policy_names_the_choice() -> None:
    with pytest.raises(ValueError, match=r"fail|exclude"):
        GatePolicy.model_validate({"defaults": {"min_pass_at_1": 0.5}, "unsupported_language": "x"})
    assert (
        GatePolicy.model_validate({"defaults": {"min_pass_at_1": 0.5}}).unsupported_language
        == "fail"
    )


def test_fixture_is_in_five_plus_two_languages() -> None:
    rows = [json.loads(line) for line in (FIXTURE / "generations.jsonl").read_text().splitlines()]
    assert {detect_language(r["text"].split("<tool_call>")[0]) for r in rows} >= {"de", "fr", "pt"}
