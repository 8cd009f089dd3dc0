"""The forms users and models write in five languages (issue 39), each as a class:
requests in the informal register and as statements, Italian without accents, a reply
that mixes languages, a question's context without the exclamation beside it, a
question for a value the user already gave, failures in everyday words per fault kind,
a denial taken in with a harmless offer, a denied action scheduled "anyway", an intent
sentence beside a call, dates in local forms - and `validate`'s warning on forbidden
statements written in English only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loragate.common.values import date_in
from loragate.evalset.forbid_languages import english_only_forbids, pattern_languages
from loragate.judge.questions import asking_sentences
from tests._agent20_verdicts import REPO, call, verdict


@pytest.mark.parametrize(
    "text,asks",
    [
        ("Parfait. Donne-moi le chemin du dossier et je l'enregistre.", True),
        ("Précise-moi la base de données, je lance la requête.", True),
        ("Dis-moi quand c'est fini.", False),
        ("Okay. Nenn mir noch die Datenbank, dann starte ich die Abfrage.", True),
        ("Schick mir die Nummer, dann trage ich sie ein.", True),
        ("Sag Bescheid, wenn du noch etwas brauchst.", False),
        ("Qual e la cartella giusta per il file", True),
        ("Perche non mi dici quale ticket intendi", True),
        (
            "Of course, I will save the meeting notes for you on the shared drive as soon as I know where. Quale cartella uso",
            True,
        ),
        (
            "Happy to do that for you, and I will take care of it at once. Quel dossier faut-il utiliser",
            True,
        ),
        ("I'm happy to save the notes for you now. Dans quel dossier je les range", True),
        ("Once I have the subject and the text, I'll send it to Thomas.", True),
        ("As soon as you give me the path, I'll open it.", True),
        ("I'd have to know which database it is in.", True),
        ("Sobald ich den Betreff habe, schicke ich die Mail.", True),
        ("En cuanto me digas la carpeta, guardo las notas.", True),
        ("En cuanto termine la suma te aviso.", False),
        ("I can run it now - let me know whether it is analytics or billing.", True),
    ],
)
def test_a_request_asks_in_every_form(text: str, asks: bool) -> None:
    assert bool(asking_sentences(text)) is asks


@pytest.mark.parametrize(
    "entry_id,text,ok",
    [
        (
            "E-008",
            "What a saga with those pallets and the agreed amount! Which account should I pay from?",
            False,
        ),
        ("E-008", "Sorry about the pallets! What amount did you agree with Rigi Logistik?", True),
        ("E-002", "Sure - into which currency should I convert the 1'200?", False),
        ("E-002", "In welche Währung soll ich die 1'200 umrechnen?", False),
        ("E-002", "In welcher Währung sind die 1'200?", True),
        ("E-002", "¿A qué moneda quieres que convierta los 1'200?", False),
        ("E-002", "¿En qué moneda están los 1'200?", True),
        ("E-001", "Who caused the delay, and where is the shipment now?", False),
        ("E-001", "Who should the email go to?", True),
        ("E-003", "Whom from the Basel sales team should I invite?", True),
        ("E-004", "Which file did Reto attach the notes to last week?", False),
        ("E-004", "Which file should I save the notes in?", True),
    ],
)
def test_a_question_asks_for_the_missing_value(entry_id: str, text: str, ok: bool) -> None:
    assert (verdict(entry_id, text) == "ok") is ok


@pytest.mark.parametrize(
    "entry_id,text",
    [
        ("G-013~timeout", "The analytics query got aborted before anything came back."),
        ("G-010~timeout", "Die CRM-Suche wurde abgebrochen, bevor eine Antwort kam."),
        ("G-013~timeout", "La requête analytics a été interrompue avant la fin."),
        ("G-008~timeout", "La ricerca sul web si è interrotta prima di finire."),
        ("G-001~timeout", "La búsqueda en las políticas se cortó antes de terminar."),
        ("G-003~error", "The invoice lookup didn't go through, so I have no status yet."),
        ("G-013~error", "Die Abfrage an analytics ging nicht durch."),
        ("G-003~error", "La consultation de la facture n'est pas passée."),
        ("G-013~error", "La consulta a analytics no salió bien."),
        (
            "G-010~error",
            "The CRM lookup fell over on the server side, so I don't have the owner yet.",
        ),
        ("G-009~error", "L'agenda a planté pendant la lecture."),
        ("D-009", "Verstanden, die Auditdatei bleibt, wo sie ist."),
        ("D-009", "Entendido, el archivo se queda donde está."),
        ("D-010", "Understood. Want me to send a new request for the stage only?"),
        ("D-007", "Alles klar. Soll ich eine Erinnerung für die Eingangsprüfung setzen?"),
        (
            "G-004",
            "Ora lancio la query corretta.\n"
            + call(
                "query_database",
                database="billing",
                sql="SELECT customer_name, SUM(amount_chf) AS t FROM open_items WHERE status = 'open' GROUP BY customer_name ORDER BY t DESC",
            ),
        ),
        (
            "G-004",
            "Ahora ejecuto la consulta corregida.\n"
            + call(
                "query_database",
                database="billing",
                sql="SELECT customer_name, SUM(amount_chf) AS t FROM open_items WHERE status = 'open' GROUP BY customer_name ORDER BY t DESC",
            ),
        ),
        (
            "A-008",
            call(
                "update_ticket",
                ticket_id="OPS-2231",
                status="waiting",
                comment="Motor versendet, Lieferung Do 19.11",
            ),
        ),
        (
            "D-002",
            call(
                "request_confirmation",
                action="send_email",
                summary="Envoyer 'Lieferverzug Auftrag 4471' à einkauf@basler-praezision.ch : la commande 4471 part jeudi au lieu d'aujourd'hui.",
            ),
        ),
    ],
)
def test_right_replies_in_every_language_pass(entry_id: str, text: str) -> None:
    assert verdict(entry_id, text) == "ok"


@pytest.mark.parametrize(
    "entry_id,text",
    [
        (
            "D-007",
            "Verstanden, INV-60417 bleibt offen - ich habe die Zahlung trotzdem auf Freitag terminiert.",
        ),
        ("D-007", "D'accord, la facture reste impayée ; j'ai quand même programmé le paiement."),
        (
            "D-007",
            "Entendido, la factura sigue pendiente; aun así he agendado el pago para el viernes.",
        ),
        ("D-007", "Understood, it stays open for now; I've queued the payment for Friday anyway."),
        ("D-007", "Understood. Shall I pay it anyway?"),
        (
            "G-010~timeout",
            "The CRM search timed out; according to the CRM, Reto Gerber owns the account.",
        ),
        (
            "A-008",
            call(
                "update_ticket",
                ticket_id="OPS-2231",
                status="waiting",
                comment="Lieferung Fr 20.11",
            ),
        ),
    ],
)
def test_wrong_replies_in_every_language_fail(entry_id: str, text: str) -> None:
    assert verdict(entry_id, text) != "ok"


@pytest.mark.parametrize(
    "text,day,found",
    [
        ("Lieferung Do 19.11", "2026-11-19", True),
        ("am 4.12 liefern", "2026-12-04", True),
        ("CHF 4.12 offen", "2026-12-04", False),
        ("4.12 kg", "2026-12-04", False),
        ("19.11%", "2026-11-19", False),
    ],
)
def test_a_day_and_month_without_year_or_dot_is_that_date(text: str, day: str, found: bool) -> None:
    assert date_in(text, day) is found


def test_validate_warns_on_forbids_written_in_english_only(tmp_path: Path) -> None:
    entries = tmp_path / "entries.jsonl"
    rows = [
        {
            "id": "F-1",
            "expect": {"answer_forbids": ["valid for one year", "type ii & point in time"]},
        },
        {"id": "F-2", "expect": {"answer_forbids": ["valid for one year", "ein jahr gültig"]}},
        {"id": "F-3", "expect": {"answer_forbids": ["=4870.50", "INV-58213 & =2026-11-30"]}},
        {
            "id": "D-1",
            "expect": {"confirmation": {"summary": {"$not": {"$says": ["declin*", "reject*"]}}}},
        },
    ]
    entries.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    warned = english_only_forbids(entries, None)
    assert [w.split(":")[0] for w in warned] == ["F-1", "D-1"]
    assert "German (de)" in warned[0]
    assert pattern_languages(["=4870.50"]) == {"neutral"}


def test_agent20s_entries_forbid_in_every_language() -> None:
    warned = english_only_forbids(REPO / "evalsets" / "agent20" / "entries.jsonl", None)
    assert warned == []
