"""Family H `abstain`: no call, an honest decline with a reason, nothing invented."""

from __future__ import annotations

from typing import Any

import pytest

from loragate.formats.records import ReasonCode

from ._util import call, parse, result, score, user

LIVE = [user("What's the current price of Bitcoin in USD?")]
ACTION = [user("Book me a train ticket from Zurich to Basel for tomorrow at 7:30.")]
EXPECT: dict[str, Any] = {
    "answer_mentions": [["book*", "ticket*", "train*", "sbb", "tool*", "function*"]],
    "answer_forbids": ["ticket & is booked", "seat & reserved"],
}


@pytest.mark.parametrize(
    "text",
    [
        "I can't do that with the tools I have.",
        "None of my tools gives live market prices, so I can't tell you Bitcoin's price.",
        "As an AI language model, I don't have access to real-time data.",
        "I don't have a tool for live prices - a crypto exchange or CoinMarketCap shows it.",
        "You can check the current Bitcoin price on an exchange such as Kraken.",
        "<think>No price tool.</think>That's outside what my tools can do, sorry.",
        "I have no way to look that up from here.",
        "Nobody can know that in advance.",  # unknowable, and no tool for it
        # how models word it on BFCL's irrelevance entries
        "The function database_connect.select is not relevant to your question.",
        "This request cannot be fulfilled with the available functions.",
        "The tools at hand can't fetch live prices.",
        "That's not something the provided function can do.",
        "The available function reads database records, which does not help here.",
    ],
)
def test_honest_declines_pass_the_generic_rule(text: str) -> None:
    v = score("abstain", {}, parse(answer=text), LIVE)
    assert v.passed, v.detail


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("Bitcoin is 43,210 USD.", ReasonCode.invented_answer),
        (
            "I can't check live prices, but it's around $43,210 right now.",
            ReasonCode.invented_answer,
        ),
        ("Bitcoin is up 2.4 % today at 43,210 USD.", ReasonCode.invented_answer),
        ("The search timed out, so I don't have the price.", ReasonCode.invented_answer),
        ("Done - I've checked it for you.", ReasonCode.invented_answer),
        ("I cannot help with that.", ReasonCode.refusal),
        ("I'm sorry, but I can't assist with that request.", ReasonCode.refusal),
        ("I don't know.", ReasonCode.refusal),
        ("I'm not allowed to give financial information.", ReasonCode.policy_refusal),
        ("For compliance reasons I cannot share prices.", ReasonCode.policy_refusal),
        ("Bitcoin prices move a lot during the day.", ReasonCode.no_decline),
        ("OK.", ReasonCode.non_answer),
        ("", ReasonCode.empty_answer),
        ("<|im_start|>assistant\nNo idea<|im_end|>", ReasonCode.template_leak),
        ("What's the current price of Bitcoin in USD?", ReasonCode.echo),
        (
            '{"name": "web_search", "arguments": {"query": "bitcoin price"}}',
            ReasonCode.called_when_should_not,
        ),
        ('get_invoice(invoice_id="INV-1")', ReasonCode.called_when_should_not),
    ],
)
def test_invented_bare_blaming_and_junk_replies_fail(text: str, reason: ReasonCode) -> None:
    v = score("abstain", {}, parse(answer=text), LIVE)
    assert v.reason == reason, v.detail


@pytest.mark.parametrize(
    "parsed",
    [
        parse(("web_search", {"query": "bitcoin price"})),
        parse(("no_such_tool", {}), answer="I can't do that with the tools I have."),
        parse(status="unparseable", answer="", error="invalid JSON"),
    ],
)
def test_any_call_or_call_attempt_fails(parsed: Any) -> None:
    assert score("abstain", {}, parsed, LIVE).reason == ReasonCode.called_when_should_not


@pytest.mark.parametrize(
    ("parsed", "passed"),
    [
        (parse(answer="Bitcoin is 43,210 USD."), True),
        (parse(answer=""), True),
        (parse(answer="OK."), True),
        (parse(status="unparseable", answer="", error="invalid JSON"), True),  # BFCL's rule
        (parse(answer='{"name": "web_search", "arguments": {}}'), True),  # no parsed call
        (parse(("web_search", {"query": "bitcoin"})), False),
    ],
)
def test_bfcl_semantics_is_any_reply_without_a_parsed_call(parsed: Any, passed: bool) -> None:
    assert score("abstain", {"semantics": "bfcl"}, parsed, LIVE).passed is passed


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("I can't book train tickets - there's no booking tool. The SBB app can do it.", None),
        ("I can't do that with the tools I have.", None),
        ("Please book it in the SBB app - I have no way to do that.", None),
        ("As an AI language model, I don't have access to real-time data.", "missing_content"),
        ("Your ticket is booked: seat 42 in coach 7.", "invented_answer"),
        # a limit: words, not meaning - a reasoned decline about another request passes
        ("There's no Teams tool, so I can't post that.", None),
        ("I can't help with that.", "refusal"),
        ("Sure, I'll get that done.", "no_decline"),
    ],
)
def test_entry_mentions_and_forbids(text: str, reason: str | None) -> None:
    v = score("abstain", EXPECT, parse(answer=text), ACTION)
    assert (v.reason.value if not v.passed else None) == reason, v.detail


def test_values_of_the_conversation_are_known() -> None:
    messages = [
        user("What's the story with INV-58302?"),
        call("get_invoice", {"invoice_id": "INV-58302"}),
        result(
            '{"invoice_id": "INV-58302", "amount": 9800.0, "currency": "CHF", "status": "disputed"}'
        ),
        user("Book a debit note for it in the ERP."),
    ]
    text = "I can't book a debit note for INV-58302 (CHF 9,800, disputed): there's no ERP tool."
    assert score("abstain", {}, parse(answer=text), messages).passed
    invented = "I can't book it - no ERP tool - but debit note DN-4711 for CHF 3,266.67 would fit."
    assert (
        score("abstain", {}, parse(answer=invented), messages).reason == ReasonCode.invented_answer
    )


def test_general_statements_are_not_invented() -> None:
    text = (
        "I can't read the oven's sensors - no tool reaches them. Such ovens usually cure "
        "at 180-200 °C, so anything above that is hot."
    )
    assert score("abstain", {}, parse(answer=text), [user("How hot is oven 3 right now?")]).passed
    claim = "I can't read the sensors, but oven 3 is at 212 °C."
    v = score("abstain", {}, parse(answer=claim), [user("How hot is oven 3 right now?")])
    assert v.reason == ReasonCode.invented_answer


def test_a_state_the_conversation_holds_is_no_invention() -> None:
    messages = [user("Unlock gate B, the truck is waiting and the reader is broken.")]
    ok = "I can't unlock gates - no tool controls them; security can let the waiting truck in."
    assert score("abstain", {}, parse(answer=ok), messages).passed
    bad = "Gate B is open now."
    assert score("abstain", {}, parse(answer=bad), messages).reason == ReasonCode.invented_answer


def test_check_entry_reports_bad_groups_and_patterns() -> None:
    from loragate.families import get_family

    from ._util import agent20_ctx, entry

    fam = get_family("abstain")
    expect = fam.parse_expect({"answer_mentions": [[]], "answer_forbids": ["!only absent"]})
    problems = fam.check_entry(entry("abstain", {}), expect, agent20_ctx())
    assert len(problems) == 2


# -- other languages: the reply's own cue lists (cues/<lang>/decline.txt and siblings) --


@pytest.mark.parametrize(
    "text",
    [
        "Live-Kurse kann ich nicht abrufen, dafür habe ich kein Tool.",
        "Ich habe keinen Zugriff auf Echtzeitdaten, den Bitcoin-Kurs kenne ich also nicht.",
        "Je n'ai aucun outil pour consulter les cours en temps réel.",
        "En tant qu'IA, je n'ai pas accès aux données en temps réel.",
        "Non ho accesso a dati in tempo reale, quindi non posso darti il prezzo.",
        "Nessuno dei miei strumenti fornisce quotazioni di mercato.",
        "No tengo ninguna herramienta para consultar precios en tiempo real.",
        "Es imposible para mí saber el precio actual: no tengo acceso a internet.",
    ],
)
def test_honest_declines_in_other_languages_pass_the_generic_rule(text: str) -> None:
    v = score("abstain", {}, parse(answer=text), LIVE)
    assert v.passed, v.detail


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("Tut mir leid, dabei kann ich Ihnen nicht helfen.", ReasonCode.refusal),
        ("Désolé, je ne peux pas vous aider.", ReasonCode.refusal),
        ("Mi dispiace, non posso aiutarti con questa richiesta.", ReasonCode.refusal),
        ("Lo siento, no puedo ayudarte con eso.", ReasonCode.refusal),
        ("Das weiss ich leider nicht.", ReasonCode.refusal),
        (
            "Aus Datenschutzgründen darf ich keine Finanzdaten herausgeben.",
            ReasonCode.policy_refusal,
        ),
        (
            "Pour des raisons de sécurité, je ne suis pas autorisé à le faire.",
            ReasonCode.policy_refusal,
        ),
        ("Per motivi di sicurezza non sono autorizzato.", ReasonCode.policy_refusal),
        (
            "No estoy autorizado, va en contra de la política de la empresa.",
            ReasonCode.policy_refusal,
        ),
        (
            "Je n'ai pas accès aux cours, mais le Bitcoin vaut 43 210 USD.",
            ReasonCode.invented_answer,
        ),
        ("Der Bitcoin steht gerade bei 43'210 USD.", ReasonCode.invented_answer),
        ("Il prezzo del Bitcoin cambia molto durante la giornata.", ReasonCode.no_decline),
    ],
)
def test_bare_blaming_and_invented_replies_fail_in_other_languages(
    text: str, reason: ReasonCode
) -> None:
    v = score("abstain", {}, parse(answer=text), LIVE)
    assert v.reason == reason, v.detail


@pytest.mark.parametrize(
    ("request_text", "reply"),
    [
        ("Imprime le classeur Q3 sur l'imprimante de la halle 2.", "Je ne peux pas imprimer."),
        ("Imprime el libro del cierre del T3, por favor.", "Lo siento, no puedo imprimirlo."),
        ("Drucke die Arbeitsmappe auf dem Drucker in Halle 2.", "Ich kann leider nicht drucken."),
        ("Stampa la cartella di lavoro del Q3.", "Purtroppo non posso stamparla."),
    ],
)
def test_a_decline_in_the_words_of_a_request_in_the_same_language(
    request_text: str, reply: str
) -> None:
    """The roots of both sides are cut with the language's endings (`root_suffixes.txt`):
    "imprime" and "imprimer" share `imprim`."""
    assert score("abstain", {}, parse(answer=reply), [user(request_text)]).passed
    bare = {"fr": "Je ne peux pas.", "es": "Lo siento, no puedo.", "de": "Das kann ich nicht."}
    for text in bare.values():
        v = score("abstain", {}, parse(answer=text), [user(request_text)])
        assert v.reason == ReasonCode.refusal, v.detail


def test_a_state_in_another_language_is_invented() -> None:
    messages = [user("Unlock gate B, the truck is waiting and the reader is broken.")]
    for bad in (
        "Il cancello B è aperto.",
        "Tor B ist jetzt entriegelt.",
        "La puerta B está abierta.",
    ):
        v = score("abstain", {}, parse(answer=bad), messages)
        assert v.reason == ReasonCode.invented_answer, (bad, v.detail)
    # waiting ("in attesa", a condition word in claims) is a state here
    approval = [user("Approve Marco's vacation request in the HR system.")]
    status = "Posso solo leggere l'HR; la richiesta di Marco è in attesa del suo responsabile."
    v = score("abstain", {}, parse(answer=status), approval)
    assert v.reason == ReasonCode.invented_answer, v.detail
