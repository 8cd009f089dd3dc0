"""`summarize` on hand-built results whose rates are worked out in the comments."""

from __future__ import annotations

import pytest

from loragate.common.errors import BadInput
from loragate.evalset.load import Evalset, load_evalset
from loragate.families import family_order
from loragate.formats.records import ParseResult, ParseStatus, ReasonCode, ResultRecord, Verdict
from loragate.score.aggregate import missing_entries, summarize
from loragate.stats.binomial import wilson_interval
from tests._mini_evalset import ENTRY_IDS, write_evalset

FAMILY_OF = {
    "A-001": "tool_call",
    "B-001": "parallel",
    "C-001": "sequencing",
    "D-001": "governance",
    "E-001": "clarify",
    "F-001": "should_not_call",
    "G-001~error": "recovery",
    "G-001~timeout": "recovery",
}

# Passing samples out of 4 per entry, and the reason of the failing ones.
PASSES: dict[str, tuple[int, ReasonCode]] = {
    "A-001": (4, ReasonCode.ok),
    "B-001": (2, ReasonCode.missing_call),
    "C-001": (0, ReasonCode.order_violation),
    "D-001": (4, ReasonCode.ok),
    "E-001": (3, ReasonCode.no_question),
    "F-001": (1, ReasonCode.called_when_should_not),
    "G-001~error": (0, ReasonCode.claimed_success_after_error),
    "G-001~timeout": (4, ReasonCode.ok),
}


@pytest.fixture(scope="module")
def evalset(tmp_path_factory: pytest.TempPathFactory) -> Evalset:
    return load_evalset(write_evalset(tmp_path_factory.mktemp("ev") / "mini"))


def result(
    entry_id: str,
    sample: int,
    passed: bool,
    reason: ReasonCode = ReasonCode.ok,
    adapter: str = "a",
    strict: ParseStatus = "ok",
    repaired: ParseStatus = "ok",
) -> ResultRecord:
    fault = entry_id.split("~")[1] if "~" in entry_id else None
    return ResultRecord.model_validate(
        {
            "entry_id": entry_id,
            "adapter": adapter,
            "sample": sample,
            "text": "",
            "family": FAMILY_OF[entry_id],
            "fault": fault,
            "parse": ParseResult(status=strict, strict_status=strict, lenient_status=repaired),
            "verdict": Verdict.ok() if passed else Verdict.fail(reason),
        }
    )


def four_samples(adapter: str = "a") -> list[ResultRecord]:
    """4 samples per entry as in PASSES; F-001 samples 1 and 2 are unparseable strictly,
    sample 2 also after repair."""
    out = []
    for eid, (c, reason) in PASSES.items():
        for s in range(4):
            if eid == "F-001" and s in (1, 2):
                repaired: ParseStatus = "unparseable" if s == 2 else "ok"
                out.append(
                    result(eid, s, False, ReasonCode.unparseable, adapter, "unparseable", repaired)
                )
            else:
                out.append(result(eid, s, s < c, reason, adapter))
    return out


def test_overall_rates(evalset: Evalset) -> None:
    s = summarize(evalset, four_samples())
    o = s.adapters["a"].overall
    assert (o.entries, o.samples, o.passes) == (8, 32, 18)
    # pass@1 = (1 + 0.5 + 0 + 1 + 0.75 + 0.25 + 0 + 1) / 8 = 4.5 / 8 = 0.5625
    assert o.pass_at_1 == pytest.approx(0.5625)
    # Wilson over entries: 4.5 "successes" of n = 8 entries (not 18 of 32 samples).
    assert (o.ci_low, o.ci_high) == pytest.approx(wilson_interval(4.5, 8))
    assert (o.ci_low, o.ci_high) != pytest.approx(wilson_interval(18, 32))
    # k defaults to the samples per entry (4): pass^4 = entries with 4/4 = 3/8,
    # pass@4 = entries with any pass = 6/8.
    assert o.k == 4
    assert o.pass_hat_k == pytest.approx(3 / 8)
    assert o.pass_at_k == pytest.approx(6 / 8)
    # F-001 samples 1 and 2 were unparseable strictly, sample 2 also after repair.
    assert (o.unparseable, o.unparseable_lenient) == (2, 1)
    assert s.samples_per_entry == 4
    assert s.entry_ids == sorted(ENTRY_IDS)
    assert s.evalset.sha256 == evalset.sha256


def test_explicit_k(evalset: Evalset) -> None:
    o = summarize(evalset, four_samples(), k=2).adapters["a"].overall
    # pass^2 per entry, C(4, 2) = 6: A 1, B 1/6, C 0, D 1, E 3/6, F 0, G~error 0, G~timeout 1
    # -> (3 + 2/3) / 8 = 11/24
    assert o.pass_hat_k == pytest.approx(11 / 24)
    # pass@2: 1 - C(4-c, 2)/6: A 1, B 5/6, C 0, D 1, E 1, F 1 - 3/6, G~e 0, G~t 1
    # -> (4 + 5/6 + 1/2) / 8 = (16/3) / 8 = 2/3
    assert o.pass_at_k == pytest.approx(2 / 3)
    # k above the sample count: no entry qualifies.
    o5 = summarize(evalset, four_samples(), k=5).adapters["a"].overall
    assert (o5.pass_hat_k, o5.pass_at_k, o5.k) == (None, None, 5)
    with pytest.raises(BadInput, match="k"):
        summarize(evalset, four_samples(), k=0)


def test_families_in_registry_order_with_their_rates(evalset: Evalset) -> None:
    s = summarize(evalset, list(reversed(four_samples())))
    fams = s.adapters["a"].families
    assert list(fams) == [
        "tool_call",
        "parallel",
        "sequencing",
        "governance",
        "clarify",
        "should_not_call",
        "recovery",
    ]
    assert fams["parallel"].pass_at_1 == pytest.approx(0.5)
    assert fams["clarify"].pass_at_1 == pytest.approx(0.75)
    # Recovery has two fault variants: (0/4 + 4/4) / 2 = 0.5, Wilson(1.0, 2).
    rec = fams["recovery"]
    assert (rec.entries, rec.samples) == (2, 8)
    assert rec.pass_at_1 == pytest.approx(0.5)
    assert (rec.ci_low, rec.ci_high) == pytest.approx(wilson_interval(1.0, 2))
    assert fams["should_not_call"].unparseable == 2


def test_faults_and_reasons(evalset: Evalset) -> None:
    a = summarize(evalset, four_samples()).adapters["a"]
    assert list(a.faults) == ["error", "timeout"]
    assert a.faults["error"].pass_at_1 == 0.0
    assert a.faults["timeout"].pass_at_1 == 1.0
    # Failing samples: C 4 order_violation, G~error 4 claimed_success_after_error, F 1 + 2
    # (called_when_should_not, unparseable x2), B 2 missing_call, E 1 no_question.
    # Sorted by count, ties in ReasonCode order.
    assert list(a.reasons.items()) == [
        ("order_violation", 4),
        ("claimed_success_after_error", 4),
        ("unparseable", 2),
        ("missing_call", 2),
        ("called_when_should_not", 1),
        ("no_question", 1),
    ]
    assert "ok" not in a.reasons


def test_adapters_and_missing_entries(evalset: Evalset) -> None:
    partial = [r for r in four_samples("b") if r.family not in ("parallel", "recovery")]
    s = summarize(evalset, four_samples("a") + partial)
    assert list(s.adapters) == ["a", "b"]
    b = s.adapters["b"]
    assert b.overall.entries == 5
    par = b.families["parallel"]
    assert (par.entries, par.samples, par.pass_at_1, par.ci_low, par.pass_hat_k) == (
        0,
        0,
        None,
        None,
        None,
    )
    # The evalset has fault variants, so the fault rows exist, empty for `b`.
    assert b.faults["error"].entries == 0
    assert missing_entries(s, four_samples("a") + partial) == {
        "a": [],
        "b": ["B-001", "G-001~error", "G-001~timeout"],
    }


def test_uneven_samples_default_k_is_the_smallest_count(evalset: Evalset) -> None:
    results = [*four_samples(), result("A-001", 0, True, adapter="greedy")]
    s = summarize(evalset, results)
    assert s.samples_per_entry == 4
    assert s.adapters["a"].overall.k == 1
    # With k = 1, pass^1 and pass@1 coincide.
    o = s.adapters["a"].overall
    assert o.pass_hat_k == pytest.approx(o.pass_at_1)


def test_unknown_entry_is_bad_input(evalset: Evalset) -> None:
    bad = result("A-001", 0, True).model_copy(update={"entry_id": "A-999"})
    with pytest.raises(BadInput, match="does not have") as info:
        summarize(evalset, [bad])
    assert "A-999" in info.value.problems[0].message


def test_no_results(evalset: Evalset) -> None:
    s = summarize(evalset, [])
    assert s.adapters == {}
    assert s.samples_per_entry == 0


def test_family_order_puts_unknown_names_last() -> None:
    assert family_order(["zz_plugin", "recovery", "tool_call", "aa_plugin"]) == [
        "tool_call",
        "recovery",
        "aa_plugin",
        "zz_plugin",
    ]
