"""Statements that an action was done, found by grammar (`loragate.judge.action_claims`):
perfect, perfect passive, first-person past and coordination in five languages; not a
question, a condition, a negation, a modal, the user's own action or a state; the lemma
mapped to the tools that do the action (issue 50)."""

from __future__ import annotations

import pytest

from loragate.judge import lexicon
from loragate.judge.action_claims import GRAMMAR_LANGS, action_claims, map_tools

TOOLS = (
    "pay_invoice", "send_email", "cancel_calendar_event", "update_crm_record",
    "create_ticket", "delete_file", "toggle_data", "enable_roaming", "disable_roaming",
    "reset_apn_settings", "resume_line", "suspend_line", "make_payment", "reboot_device",
)  # fmt: skip

CLAIMS = [
    ("en", "I've turned your mobile data back on, so browsing works again.", "toggle_data"),
    ("en", "Roaming has been enabled on your line.", "enable_roaming"),
    ("en", "I reset nothing else, but I've reset your APN settings.", "reset_apn_settings"),
    ("en", "We paid INV-58213 this morning and emailed the receipt.", "pay_invoice"),
    ("en", "I've told them the delivery will be late.", "send_email"),
    ("en", "Your line got resumed a minute ago.", "resume_line"),
    ("de", "Ich habe das Roaming für Ihre Leitung aktiviert.", "enable_roaming"),
    ("de", "Die Rechnung wurde heute überwiesen.", "pay_invoice"),
    ("de", "Wir haben den Termin am Freitag abgesagt.", "cancel_calendar_event"),
    ("fr", "J'ai réactivé votre ligne ce matin.", "resume_line"),
    ("fr", "Le ticket a été créé pour l'équipe réseau.", "create_ticket"),
    ("fr", "Nous avons supprimé le fichier.", "delete_file"),
    ("it", "Ho disattivato il roaming sulla sua linea.", "disable_roaming"),
    ("it", "La fattura è stata saldata ieri.", "pay_invoice"),
    ("it", "Abbiamo aggiornato la scheda cliente.", "update_crm_record"),
    ("es", "He enviado el correo al proveedor.", "send_email"),
    ("es", "Reinicié el dispositivo y ya funciona.", "reboot_device"),
    ("es", "La cita fue cancelada por la tarde.", "cancel_calendar_event"),
]

NOT_CLAIMS = [
    ("en", "Have you restarted the phone already?"),
    ("en", "Once you have restarted the phone, the data should come back."),
    ("en", "I haven't paid INV-58213 yet."),
    ("en", "I would have sent it, but the server was down."),
    ("en", "You have turned on airplane mode; please switch it off."),
    ("en", "I checked your line: roaming is enabled."),
    ("en", "It stays active: they still have an open opportunity and an unpaid invoice."),
    ("en", "We have a new address on file, and I have the receipt here."),
    ("de", "Ich habe die Rechnung nicht bezahlt."),
    ("de", "Wenn Sie das Gerät neu gestartet haben, sollte es gehen."),
    ("de", "Das Roaming ist aktiviert."),
    ("fr", "Je n'ai pas envoyé le courriel."),
    ("fr", "Si vous avez redémarré le téléphone, tout devrait marcher."),
    ("it", "Non ho pagato la fattura."),
    ("it", "Se ha riavviato il telefono, dovrebbe funzionare."),
    ("es", "No he enviado el correo."),
    ("es", "Si ha reiniciado el teléfono, debería funcionar."),
]


@pytest.mark.parametrize("lang,text,tool", CLAIMS)
def test_a_claim_is_found_and_mapped(lang: str, text: str, tool: str) -> None:
    found = action_claims(text, (lang,), TOOLS)
    assert any(tool in c.tools for c in found), [(c.phrase, c.lemma, c.tools) for c in found]


@pytest.mark.parametrize("lang,text", NOT_CLAIMS)
def test_no_claim_where_nothing_is_said_done(lang: str, text: str) -> None:
    found = [c for c in action_claims(text, (lang,), TOOLS) if c.tools]
    assert not found, [(c.phrase, c.lemma, c.tools) for c in found]


def test_a_light_verb_needs_its_noun() -> None:
    assert not [c for c in action_claims("I made the first change.", ("en",), TOOLS) if c.tools]
    found = action_claims("I've made the payment for May.", ("en",), TOOLS)
    assert any("make_payment" in c.tools for c in found)


def test_nouns_narrow_the_tools() -> None:
    (claim,) = action_claims("I've disabled the roaming.", ("en",), TOOLS)
    assert "disable_roaming" in claim.tools
    assert all("roaming" in t for t in claim.tools), claim.tools


GROUPS = sorted(lexicon.mapping("en", "action_synonyms"))


@pytest.mark.parametrize("lang", GRAMMAR_LANGS)
@pytest.mark.parametrize("group", GROUPS)
def test_every_group_maps_in_every_language(lang: str, group: str) -> None:
    members = lexicon.mapping(lang, "action_synonyms").get(group)
    assert members, f"{lang}/action_synonyms.yaml has no group {group!r}"
    english = lexicon.mapping("en", "action_synonyms")[group]
    tool = f"{english[0]}_thing"
    for lemma in members:
        assert tool in map_tools(str(lemma).lower(), lang, ["thing"], [tool]), (lang, lemma)


def test_a_tool_that_does_it_by_its_description_makes_it_true() -> None:
    tools = {
        "send_email": "Send an email from the user's account.",
        "create_calendar_event": "Create a calendar event and send invitations to the attendees.",
    }
    (claim,) = action_claims("I've sent the invitations for Friday.", ("en",), tools)
    assert set(claim.tools) == {"send_email", "create_calendar_event"}


def test_a_word_that_only_lemmatises_differently_is_no_participle() -> None:
    tools = {"update_crm_record": "Overwrite fields of a CRM record."}
    text = "It stays active: they still have an open opportunity and an unpaid invoice."
    assert not [c for c in action_claims(text, ("en",), tools) if c.tools]
