"""`loragate view` pages in a real headless Chromium (see tests/_browser.py).

Opened from `file://` with the network cut off: the case-study comparison and a
three-adapter agent20 run (replayed reference outputs, no model) show the counts of
their `summary.json`, filter as asked and expand an entry; outputs built to attack
the page run nothing. Screenshots are kept in build/artifacts/view/.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from loragate.formats.records import GenerationRecord
from loragate.formats.runfolder import VIEW, read_results
from loragate.results.view.html import write_view
from loragate.results.view.page_data import find_evalset, load_sides, side_headlines, view_data
from tests._browser import artifacts_dir, launch_browser
from tests._casestudy import ROUND1_LOG, ROUND2_LOG, build_rounds, casestudy_evalset, replay, texts
from tests._view_runs import agent20_run

pytestmark = pytest.mark.slow

HOSTILE = {
    "F-001": "<script>window.__pwned = 'script'</script>",
    "F-002": "</script><script>window.__pwned = 'close'</script>",
    "F-003": "<img src=x onerror=\"window.__pwned = 'onerror'\">",
    "F-004": "<a href=\"javascript:window.__pwned='js-url'\">click</a>",
    "F-005": "<!-- <script>window.__pwned = 'comment'</script> -->",
    "F-006": "<tool_call>\n<svg onload=\"window.__pwned='svg'\"></svg>\n</tool_call>",
    "F-007": '\u2028</script>\u2029<iframe src="https://example.com/"></iframe>',
    "F-008": '<link rel="stylesheet" href="https://example.com/x.css">',
}


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from launch_browser()


@dataclass
class Opened:
    page: Any
    requests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)


@pytest.fixture
def open_page(browser: Any) -> Iterator[Any]:
    contexts: list[Any] = []

    def _open(path: Path) -> Opened:
        context = browser.new_context(viewport={"width": 1280, "height": 900}, offline=True)
        contexts.append(context)
        page = context.new_page()
        opened = Opened(page)
        page.on("request", lambda r: opened.requests.append(r.url))
        page.on("pageerror", lambda e: opened.errors.append(str(e)))
        page.on("dialog", lambda d: (opened.dialogs.append(d.message), d.dismiss()))
        page.goto(path.resolve().as_uri())
        page.wait_for_selector("body[data-ready='1']", timeout=20_000)
        return opened

    yield _open
    for context in contexts:
        context.close()


def _visible_ids(page: Any) -> list[str]:
    return [
        str(x)
        for x in page.eval_on_selector_all("#rows .row", "rs => rs.map(r => r.dataset.entry)")
    ]


def _show_all(page: Any) -> None:
    """Render every matching row (the page renders them a page at a time)."""
    page.evaluate(
        "() => { const box = document.getElementById('more-box');"
        " while (!box.hidden) document.getElementById('more').click(); }"
    )


def _cell(page: Any, family: str, side: int, field: str, part: str) -> str:
    selector = f'#family-table tr[data-family="{family}"] td[data-side="{side}"][data-field="{field}"] .{part}'
    return str(page.text_content(selector))


def _assert_counts_match(page: Any, summaries: list[dict[str, Any]]) -> None:
    for side, stats in enumerate(summaries):
        groups = {**stats["families"], "overall": stats["overall"]}
        for family, st in groups.items():
            assert (
                _cell(page, family, side, "pass_at_1", "count")
                == f"({st['passes']}/{st['samples']})"
            )
            # the same figures, in the same words, as compare, the report and the card
            n = st["samples"]
            assert _cell(page, family, side, "unparseable", "strict") == f"{st['unparseable']}/{n}"
            assert (
                _cell(page, family, side, "unparseable", "lenient")
                == f"{st['unparseable_lenient']}/{n}"
            )
        for reason, n in stats["reasons"].items():
            got = page.text_content(f'#reason-table tr[data-key="{reason}"] td[data-side="{side}"]')
            assert got == str(n), reason


def _summary(run: Path, adapter: str) -> dict[str, Any]:
    return dict(json.loads((run / "summary.json").read_text(encoding="utf-8"))["adapters"][adapter])


def _shot(page: Any, name: str) -> None:
    page.screenshot(path=str(artifacts_dir() / name), full_page=False)


def test_casestudy_comparison(open_page: Any, tmp_path: Path) -> None:
    r1, r2 = build_rounds(tmp_path)
    sides = load_sides([str(r1), str(r2)])
    headlines = side_headlines(sides, [ROUND1_LOG, ROUND2_LOG])
    html = write_view(tmp_path / "cmp.html", view_data(sides, casestudy_evalset(), None, headlines))
    opened = open_page(html)
    page = opened.page
    _assert_counts_match(page, [_summary(r1, "round1"), _summary(r2, "round2")])
    assert len(_visible_ids(page)) == 24
    assert page.locator("#chart svg rect").count() >= 8  # a bar per family and round
    # compare's headline leads the page: training loss beside behaviour
    assert page.locator("#headlines .headline").inner_text() == (
        "train loss +0.6 %, token accuracy +0.00 pt; should_not_call +75 pt (p = 0.03); "
        "unparseable (served) 2/24 -> 0/24"
    )
    # every interval: a line and two caps, over a white halo (visible on the bar)
    bars = page.locator("#chart svg rect[height]").count() - 2  # less the legend swatches
    assert page.locator("#chart svg line.whisker").count() == bars * 6
    # no entry has tags: no tags column, no tag filter
    assert "tags" not in page.locator("#rows .columns-head").inner_text()
    assert page.locator("#f-tag").is_hidden()
    _shot(page, "casestudy-overview.png")

    page.select_option("#f-family", "should_not_call")
    assert _visible_ids(page) == [f"F-00{i}" for i in range(1, 9)]
    page.check("#f-flipped")
    assert _visible_ids(page) == [f"F-00{i}" for i in range(2, 8)]
    assert "6 of 24 entries match" in str(page.text_content("#shown"))

    page.click('.row[data-entry="F-003"] .head')
    detail = page.locator('.row[data-entry="F-003"] .detail')
    assert "What is double-entry bookkeeping?" in detail.inner_text()
    before = detail.locator('.side[data-side="0"]')
    assert before.locator(".reason").inner_text() == "called_when_should_not"
    assert "web_search" in before.locator("mark.call").inner_text()
    assert "web_search" in before.locator("pre.calls").inner_text()
    after = detail.locator('.side[data-side="1"]')
    assert "flip-up" in str(after.get_attribute("class"))
    assert "debit" in after.locator("pre.output").inner_text()
    assert not detail.locator("details.system pre").is_visible()  # the system prompt is collapsed
    detail.locator("details.system > summary").click()
    assert "Atlas" in detail.locator("details.system pre").inner_text()
    detail.locator("details.tools > summary").click()
    tool = detail.locator('details.tool[data-tool="pay_invoice"]')
    tool.locator("summary").click()
    assert '"invoice_id"' in tool.locator("pre").inner_text()
    page.locator('.row[data-entry="F-003"]').scroll_into_view_if_needed()
    _shot(page, "casestudy-F-003.png")
    assert not opened.errors and not opened.dialogs
    assert all(u.startswith("file://") for u in opened.requests), opened.requests


def test_agent20_three_adapters(open_page: Any, tmp_path: Path) -> None:
    run = agent20_run(tmp_path / "a20")
    opened = open_page(run / VIEW)
    page = opened.page
    _assert_counts_match(page, [_summary(run, a) for a in ("base", "round1", "round2")])
    # rows are rendered a page at a time
    assert len(_visible_ids(page)) == 100
    _show_all(page)
    entries = {r.entry_id for r in read_results(run)}
    assert len(_visible_ids(page)) == len(entries) == 131  # agent20 4.0.0 after faults
    _shot(page, "agent20-overview.png")

    frac: dict[str, dict[str, float]] = {}
    for r in read_results(run):
        frac.setdefault(r.adapter, {})[r.entry_id] = float(r.verdict.passed)
    flipped = sorted(e for e in frac["round1"] if frac["round1"][e] != frac["round2"][e])
    page.select_option("#f-a", "1")
    page.select_option("#f-b", "2")
    page.check("#f-flipped")
    _show_all(page)
    assert sorted(_visible_ids(page)) == flipped and flipped

    page.uncheck("#f-flipped")
    page.select_option("#f-family", "recovery")
    page.select_option("#f-side", "0")
    page.select_option("#f-verdict", "fail")
    failing = sorted(
        r.entry_id
        for r in read_results(run)
        if r.adapter == "base" and r.family == "recovery" and not r.verdict.passed
    )
    assert sorted(_visible_ids(page)) == failing
    first = failing[0]
    page.click(f'.row[data-entry="{first}"] .head')
    base = page.locator(f'.row[data-entry="{first}"] .side[data-side="0"]')
    result = next(r for r in read_results(run) if r.adapter == "base" and r.entry_id == first)
    assert base.locator(".reason").inner_text() == result.verdict.reason.value
    assert result.text.strip()[:40] in base.locator("pre.output").inner_text()
    _shot(page, "agent20-entry.png")
    assert find_evalset(load_sides([str(run)])) is not None
    assert not opened.errors and not opened.dialogs


def test_episodes_tab(open_page: Any, tmp_path: Path) -> None:
    from loragate.episodes.stage import rescore_episodes
    from tests._episodes import FIXTURE
    from tests._view_runs import agent20

    run = agent20_run(tmp_path / "ep", ("round0", "round1"))
    rescore_episodes(FIXTURE, agent20(), run, "strict")
    sides = load_sides([str(run)])
    html = write_view(tmp_path / "ep.html", view_data(sides, find_evalset(sides)))
    opened = open_page(html)
    page = opened.page
    assert not page.is_visible("#episodes")
    page.click("#tabs button[data-tab='episodes']")
    assert page.is_visible("#episodes") and not page.is_visible("#entries")
    assert page.locator("#ep-chart svg polyline").count() == 6  # 3 curves a side
    assert page.locator("#ep-hazard tbody tr").count() >= 8
    page.fill("#e-text", "EP-32~write")
    assert "1 of 112 episode variants match" in str(page.text_content("#ep-shown"))
    page.click('.row[data-episode="EP-32~write_timeout"] .head')
    sides_box = page.locator('.row[data-episode="EP-32~write_timeout"] .side')
    careless, careful = sides_box.nth(0), sides_box.nth(1)
    assert careless.locator(".step.failstep").count() == 1
    assert "claimed_success_after_error" in careless.locator(".step.failstep").inner_text()
    assert "write_timeout" in careful.locator(".faultmark").inner_text()
    assert careful.locator(".step.failstep").count() == 0 and careful.locator(".step").count() == 5
    assert "recovered" in careful.locator(".recs").inner_text()
    _shot(page, "episodes-tab.png")
    assert not opened.errors and not opened.dialogs


def test_hostile_outputs_run_nothing(open_page: Any, tmp_path: Path) -> None:
    gens = [
        GenerationRecord(entry_id=eid, adapter="round1", sample=0, text=HOSTILE.get(eid, text))
        for eid, text in texts("round1").items()
    ]
    run = replay(tmp_path / "hostile", gens)
    opened = open_page(run / VIEW)
    page = opened.page
    page.select_option("#f-family", "should_not_call")
    for eid in HOSTILE:
        page.click(f'.row[data-entry="{eid}"] .head')
    outputs = page.locator("pre.output").all_inner_texts()
    for text in HOSTILE.values():
        assert any(
            text.replace("\u2028", "").replace("\u2029", "")[:20]
            in o.replace("\u2028", "").replace("\u2029", "")
            for o in outputs
        ), text
    page.locator("pre.output").first.click()
    for link in page.locator("a").all():  # nothing from the data became a link
        pytest.fail(f"a link was created: {link.get_attribute('href')}")
    page.wait_for_timeout(300)  # give an injected handler the chance to fire
    assert page.evaluate("window.__pwned") is None
    assert page.locator("#rows img, #rows iframe, #rows svg, #rows script, #rows link").count() == 0
    assert not opened.dialogs and not opened.errors
    assert all(u.startswith("file://") for u in opened.requests), opened.requests
    assert str(page.title()) == "hostile"
    _shot(page, "hostile.png")


def test_page_cannot_reach_the_network(open_page: Any, tmp_path: Path) -> None:
    """The page's own policy forbids fetches, even where the browser is online."""
    run = replay(
        tmp_path / "r",
        [
            GenerationRecord(entry_id=e, adapter="round1", sample=0, text=t)
            for e, t in texts("round1").items()
        ],
    )
    opened = open_page(run / VIEW)
    page = opened.page
    page.context.set_offline(False)
    violated = page.evaluate(
        """async () => {
             const seen = [];
             document.addEventListener('securitypolicyviolation', e => seen.push(e.effectiveDirective));
             try { await fetch('http://127.0.0.1:9/x'); } catch (e) {}
             const img = document.createElement('img');
             img.src = 'http://127.0.0.1:9/y.png';
             document.body.appendChild(img);
             await new Promise(done => setTimeout(done, 500));
             return seen; }"""
    )
    assert "connect-src" in violated and "img-src" in violated, violated


def test_harness_strip_marks_each_variant(open_page: Any, tmp_path: Path) -> None:
    # two synthetic adapters under the default harness and two variants: each row shows,
    # per adapter, one mark a harness, and the harness filter switches the badges
    import loragate.runners as runners_pkg
    from loragate.evaluation import finish_run
    from loragate.generate.config import RunConfig
    from loragate.generate.pipeline import execute_run, plan_run
    from tests._scripted import ScriptedRunner, right_answers, scripted_config

    agent20 = Path(__file__).resolve().parents[1] / "evalsets" / "agent20"
    mp = pytest.MonkeyPatch()
    try:
        ScriptedRunner.answers = right_answers(agent20)
        mp.setattr(runners_pkg, "get_runner", lambda name: ScriptedRunner)
        raw = scripted_config(agent20, tmp_path / "run", harness={"entries": 8})
        raw["adapters"] = {"short-context": "short-context", "position-biased": "position-biased"}
        cfg = RunConfig.model_validate(raw)
        plan = plan_run(cfg, limit=8, harness=["context-4k", "routed"])
        outcome = execute_run(plan)
        finish_run(
            plan.evalset, outcome.records, plan.out_dir, "strict", k=1, variants=plan.variants
        )
    finally:
        mp.undo()
    sides = load_sides([f"{plan.out_dir}:short-context", f"{plan.out_dir}:position-biased"])
    opened = open_page(write_view(tmp_path / "h.html", view_data(sides, find_evalset(sides))))
    page = opened.page
    legend = page.locator("#rows .columns-head .hstrip.legend").first.inner_text()
    assert legend == "marks: default, context-4k, routed"
    marks = page.locator('.row[data-entry="A-001"] .head .cell').first.locator(".hstrip span")
    # short-context: right under the default harness and routed, wrong past 3,800 tokens
    assert [marks.nth(i).inner_text() for i in range(3)] == ["✓", "✗", "✓"]
    assert "context-4k 0/1" in str(marks.first.locator("..").get_attribute("title"))
    page.select_option("#f-harness", "1")
    badge = page.locator('.row[data-entry="A-001"] .badge[data-side="0"]')
    assert badge.inner_text().startswith("✗ 0/1")
    assert not opened.errors
