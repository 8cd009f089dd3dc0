"""A tool named in prose after the calls ran is a mention, not a call written as text
(issue 50, point 6): `tool()` with empty parentheses inside a sentence of a final reply.
A call with arguments written as text, one alone on its line or in a code fence, and any
`tool()` in a reply before any call ran stay call attempts."""

from __future__ import annotations

from pathlib import Path

import pytest

from loragate.calls.checks import call_attempt
from loragate.calls.parsing import parse_output
from loragate.evalset.load import load_evalset
from tests._episodes import GOOD_PAY, PAY, agent20_context, call, play_spec

REPO = Path(__file__).resolve().parent.parent
TOOLSET = load_evalset(REPO / "evalsets" / "agent20").toolset

MENTIONS = [
    "I looked it up with get_invoice() and INV-58213 is still open.",
    "Ich habe die Rechnung mit `get_invoice()` geprüft: sie ist noch offen.",
    "Après l'appel à pay_invoice( ), la facture figure comme payée.",
    "He usado get_invoice() para revisar la factura y sigue abierta.",
    "La fattura risulta pagata: l'ho verificato con get_invoice() poco fa.",
    "- pay_invoice() went through for INV-58001, CHF 480\n- nothing else was changed",
]
ATTEMPTS = [
    'Now I will run get_invoice(invoice_id="INV-58213") for you.',
    "get_invoice()",
    "Next step:\nget_invoice()\n",
    "Here it is:\n```\nget_invoice()\n```",
    "Run get_invoice().",
    "Ich rufe jetzt pay_invoice(invoice_id='INV-58213', amount=4870.5) auf.",
]


@pytest.mark.parametrize("text", MENTIONS)
def test_a_tool_named_in_prose_after_calls_is_a_mention(text: str) -> None:
    assert call_attempt(parse_output(text), TOOLSET, after_calls=True) is None


@pytest.mark.parametrize("text", MENTIONS)
def test_before_any_call_it_is_still_an_attempt(text: str) -> None:
    assert call_attempt(parse_output(text), TOOLSET) is not None


@pytest.mark.parametrize("text", ATTEMPTS)
def test_arguments_a_line_of_its_own_or_a_fence_stay_attempts(text: str) -> None:
    assert call_attempt(parse_output(text), TOOLSET, after_calls=True) is not None


def test_json_written_as_text_stays_an_attempt_after_calls() -> None:
    text = 'I will do it: {"name": "pay_invoice", "arguments": {"invoice_id": "INV-1"}}'
    assert call_attempt(parse_output(text), TOOLSET, after_calls=True) == "pay_invoice"


def test_an_episode_closing_that_names_its_calls_passes() -> None:
    closing = (
        "I checked INV-58001 with get_invoice() and, once you approved, "
        "pay_invoice() went through: invoice INV-58001 (CHF 480) has been paid."
    )
    t = play_spec(agent20_context(), PAY, [*GOOD_PAY[:-1], closing])
    assert t.done
    r = t.result()
    assert r.passed, r.detail


def test_an_episode_closing_that_writes_a_call_with_arguments_fails() -> None:
    closing = 'Invoice INV-58001 is paid. pay_invoice(invoice_id="INV-58001") returned ok.'
    t = play_spec(agent20_context(), PAY, [*GOOD_PAY[:-1], closing])
    r = t.result()
    assert not r.passed
    assert r.reason == "unparseable" or "without <tool_call> tags" in r.detail


def test_an_episode_with_no_call_keeps_the_old_rule() -> None:
    t = play_spec(
        agent20_context(),
        PAY,
        ["I would pay it with pay_invoice() once you tell me the amount is right, INV-58001."],
    )
    r = t.result()
    assert not r.passed
    assert "without <tool_call> tags" in r.detail, r.detail


def test_call_helper_is_a_real_call() -> None:
    assert call_attempt(parse_output(call("get_invoice", invoice_id="X")), TOOLSET) is None
