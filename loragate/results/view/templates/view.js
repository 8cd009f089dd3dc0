"use strict";
// loragate view: builds the page from the JSON in #data. Every text from the data goes
// into the DOM through textContent or createTextNode; nothing is parsed as HTML.
(function () {
  const D = JSON.parse(document.getElementById("data").textContent);
  const SIDES = D.sides;
  const FAMILIES = D.families; // [[name, letter], ...]
  const LETTER = Object.fromEntries(FAMILIES.map(([n, l]) => [n, l]));
  const PAGE = 100;
  const COLORS = ["#0969da", "#bf3989", "#1a7f37", "#bc4c00", "#8250df", "#57606a"];
  const S = { ENTRY: 0, SIDE: 1, SAMPLE: 2, PASS: 3, REASON: 4, DETAIL: 5, TEXT: 6, CALLS: 7, SERVED: 8, STRICT: 9, LENIENT: 10, HARNESS: 11 };
  const HARNESS = D.harness_names || ["default"];
  // The tags column and filter only when some entry has tags (an empty column would take
  // the room of the outputs).
  const HAS_TAGS = D.entries.some((e) => (e.tags || []).length > 0);

  // -- small DOM helpers ------------------------------------------------------------
  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function add(parent, ...children) {
    for (const c of children) if (c !== null && c !== undefined) parent.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    return parent;
  }
  function pct(x) { return x === null || x === undefined ? "n/a" : (x * 100).toFixed(1) + " %"; }
  function ci(s) { return s.ci_low === null ? "" : "[" + (s.ci_low * 100).toFixed(1) + ", " + (s.ci_high * 100).toFixed(1) + "]"; }
  function json(v) { return JSON.stringify(v, null, 2); }
  function option(select, value, label) { const o = el("option", null, label); o.value = String(value); select.appendChild(o); }

  // -- indexes ----------------------------------------------------------------------
  // perEntryBy[harness][e][side] = list of sample rows; perEntry: the harness the
  // entries section shows (the default, or the variant chosen in its filter)
  const perEntryBy = HARNESS.map(() => D.entries.map(() => SIDES.map(() => [])));
  for (const row of D.samples) perEntryBy[row[S.HARNESS] || 0][row[S.ENTRY]][row[S.SIDE]].push(row);
  for (const byEntry of perEntryBy) for (const bySide of byEntry) for (const rows of bySide) rows.sort((a, b) => a[S.SAMPLE] - b[S.SAMPLE]);
  let perEntry = perEntryBy[0];
  function frac(e, s) {
    const rows = perEntry[e][s];
    if (!rows.length) return null;
    let p = 0; for (const r of rows) p += r[S.PASS];
    return p / rows.length;
  }
  function flipClass(e, s) {
    if (s === 0) return "";
    const a = frac(e, 0), b = frac(e, s);
    if (a === null || b === null || a === b) return "";
    return b > a ? "flip-up" : "flip-down";
  }

  // -- header -----------------------------------------------------------------------
  document.getElementById("title").textContent = D.title;
  const ev = SIDES.length ? SIDES[0].evalset : null;
  document.getElementById("sides").textContent =
    SIDES.map((s) => s.label + " (" + s.run_dir + ", adapter " + s.adapter + ", " + s.parse_mode + ", k = " + s.k + (s.stack ? ", judged as " + s.stack : "") + ")").join(" · ") +
    (ev ? " — evalset " + ev.name + " " + ev.version : "");
  // What `compare` leads with: each side against the first, training loss beside behaviour.
  const heads = document.getElementById("headlines");
  SIDES.forEach((s, i) => {
    if (i === 0 || !s.headline) return;
    add(heads, el("p", "headline", (SIDES.length > 2 ? s.label + " vs " + SIDES[0].label + ": " : "") + s.headline));
  });
  heads.hidden = !heads.childNodes.length;
  if (!D.evalset) document.getElementById("notes").textContent =
    "The evalset these runs were scored on was not found: conversations and expectations are not shown (pass --evalset DIR).";
  // Replies in a language with no cue lists were not judged (unsupported_language).
  const langNotes = SIDES.filter((s) => Object.keys(s.summary.unsupported_language || {}).length).map((s) =>
    s.label + ": " + Object.values(s.summary.unsupported_language).reduce((a, b) => a + b, 0) +
    " sample(s) answer in a language loragate has no cue lists for (unsupported_language, counted as failures): " +
    Object.entries(s.summary.unsupported_language).map(([f, n]) => f + " " + n).join(", ") + ".");
  if (langNotes.length) {
    const box = document.getElementById("notes");
    box.textContent = [box.textContent, ...langNotes].filter(Boolean).join(" ");
  }

  // -- overview: family table ---------------------------------------------------------
  // Issue 22's figures (summary schema 4): shown when a side has any of them.
  function callFigures(summary) {
    const groups = [summary.overall, ...Object.values(summary.families)];
    return groups.some((g) => g && ((g.format_mix || 0) + (g.calls_in_reasoning || 0) + (g.truncated_reasoning || 0) > 0 ||
      (g.reasoning_tokens && g.reasoning_tokens.mean > 0)));
  }
  function callCell(st) {
    const tok = st.reasoning_tokens ? Math.round(st.reasoning_tokens.mean) + "/" + Math.round(st.reasoning_tokens.p95) : "-";
    return tok + " · " + (st.truncated_reasoning || 0) + " · " + (st.calls_in_reasoning || 0) + " · " + (st.format_mix || 0);
  }
  function familyTable() {
    const table = document.getElementById("family-table");
    const head = el("thead"), top = el("tr"), sub = el("tr");
    add(top, el("th", null, "family"));
    add(sub, el("th"));
    const extra = SIDES.map((s) => callFigures(s.summary));
    SIDES.forEach((s, i) => {
      const th = el("th", null, s.label); th.colSpan = 3 + (extra[i] ? 1 : 0) + (s.detectable ? 1 : 0); top.appendChild(th);
      add(sub, el("th", null, "pass@1 (passes/samples)"), el("th", null, "pass^" + s.summary.overall.k), el("th", null, "unparseable (served / strict / lenient)"));
      if (extra[i]) add(sub, el("th", null, "reasoning tokens mean/p95 · truncated reasoning · calls in reasoning · format mix"));
      if (s.detectable) {
        const d = el("th", null, "detectable drop vs " + SIDES[0].label);
        d.title = "the smallest drop the paired exact test can call significant at p < 0.05 on these entries (every changed entry worse)";
        sub.appendChild(d);
      }
    });
    add(head, top, sub); table.appendChild(head);
    const body = el("tbody");
    const names = FAMILIES.map(([n]) => n);
    for (const name of [...names, null]) {
      const tr = el("tr", name === null ? "total" : null);
      tr.dataset.family = name === null ? "overall" : name;
      add(tr, el("td", null, name === null ? "overall" : LETTER[name] + " " + name));
      SIDES.forEach((side, i) => {
        const st = name === null ? side.summary.overall : side.summary.families[name];
        const cells = [el("td"), el("td"), el("td")];
        cells.forEach((c, j) => { c.dataset.side = String(i); c.dataset.field = ["pass_at_1", "pass_hat_k", "unparseable"][j]; });
        if (st) {
          add(cells[0], el("span", "rate", pct(st.pass_at_1)), " ", el("span", "count", "(" + st.passes + "/" + st.samples + ")"), el("span", "ci", ci(st)));
          cells[1].textContent = pct(st.pass_hat_k);
          const served = st.unparseable_served === null || st.unparseable_served === undefined ? "-" : st.unparseable_served + "/" + st.samples;
          add(cells[2], el("span", "served", served), " / ", el("span", "strict", st.unparseable + "/" + st.samples), " / ", el("span", "lenient", st.unparseable_lenient + "/" + st.samples));
        }
        if (extra[i]) {
          const cell = el("td"); cell.dataset.side = String(i); cell.dataset.field = "reasoning";
          if (st) cell.textContent = callCell(st);
          cells.push(cell);
        }
        add(tr, ...cells);
        if (side.detectable) {
          const key = name === null ? "overall" : name;
          const v = side.detectable[key];
          const td = el("td", null, key in side.detectable ? (v === null ? "none (too few entries)" : "≥ " + (Math.round(v * 10) / 10) + " pt") : "");
          td.dataset.side = String(i); td.dataset.field = "detectable";
          tr.appendChild(td);
        }
      });
      body.appendChild(tr);
    }
    table.appendChild(body);
  }

  // -- overview: the chart (SVG, drawn here from the summary figures) -----------------
  function chart() {
    const NS = "http://www.w3.org/2000/svg";
    const groups = FAMILIES.map(([n, l]) => [l + " " + n, SIDES.map((s) => s.summary.families[n] || null)]);
    groups.push(["overall", SIDES.map((s) => s.summary.overall)]);
    const bar = 16, gap = 14, h = 180, top = 10, left = 36;
    const gw = SIDES.length * bar + gap;
    const width = left + groups.length * gw + 40, height = top + h + 80;
    const svg = document.createElementNS(NS, "svg");
    svg.setAttribute("width", String(width)); svg.setAttribute("height", String(height + 18 * SIDES.length));
    svg.setAttribute("role", "img"); svg.setAttribute("aria-label", "pass@1 per family with 95 % intervals");
    function node(tag, attrs, text) {
      const n = document.createElementNS(NS, tag);
      for (const k in attrs) n.setAttribute(k, String(attrs[k]));
      if (text !== undefined) n.textContent = text;
      svg.appendChild(n); return n;
    }
    for (const t of [0, 0.5, 1]) {
      const y = top + h * (1 - t);
      node("line", { x1: left, x2: width, y1: y, y2: y, stroke: "#d0d7de" });
      node("text", { x: 2, y: y + 4 }, (t * 100) + " %");
    }
    groups.forEach(([label, stats], g) => {
      const x0 = left + g * gw + gap / 2;
      stats.forEach((st, i) => {
        if (!st || st.pass_at_1 === null) return;
        const x = x0 + i * bar, y = top + h * (1 - st.pass_at_1);
        node("rect", { x: x, y: y, width: bar - 2, height: Math.max(0, top + h - y), fill: COLORS[i % COLORS.length] });
        if (st.ci_low !== null) {
          // a white halo under a dark line with caps: visible on the bar and off it
          const cx = x + (bar - 2) / 2, y1 = top + h * (1 - st.ci_high), y2 = top + h * (1 - st.ci_low);
          for (const [stroke, sw] of [["#ffffff", 4], ["#1f2328", 1.6]]) {
            const attrs = { stroke: stroke, "stroke-width": sw, "stroke-linecap": "round", class: "whisker" };
            node("line", { ...attrs, x1: cx, x2: cx, y1: y1, y2: y2 });
            for (const yy of [y1, y2]) node("line", { ...attrs, x1: cx - 4, x2: cx + 4, y1: yy, y2: yy });
          }
        }
      });
      const t = node("text", { x: x0, y: top + h + 12, transform: "rotate(30 " + x0 + " " + (top + h + 12) + ")" }, label);
      t.setAttribute("text-anchor", "start");
    });
    SIDES.forEach((s, i) => {
      const y = height + 18 * i;
      node("rect", { x: left, y: y - 10, width: 12, height: 12, fill: COLORS[i % COLORS.length] });
      node("text", { x: left + 18, y: y }, s.label);
    });
    document.getElementById("chart").appendChild(svg);
  }

  // -- overview: reasons, faults, gates ------------------------------------------------
  function keyedTable(id, keys, cell) {
    const table = document.getElementById(id);
    const head = add(el("tr"), el("th"), ...SIDES.map((s) => el("th", null, s.label)));
    add(table, add(el("thead"), head));
    const body = el("tbody");
    for (const k of keys) {
      const tr = el("tr"); tr.dataset.key = k;
      add(tr, el("td", null, k));
      SIDES.forEach((s, i) => { const td = el("td"); td.dataset.side = String(i); cell(td, s, k); tr.appendChild(td); });
      body.appendChild(tr);
    }
    table.appendChild(body);
  }
  function reasonsAndFaults() {
    const reasons = [...new Set(SIDES.flatMap((s) => Object.keys(s.summary.reasons)))].sort();
    keyedTable("reason-table", reasons, (td, s, k) => { td.textContent = String(s.summary.reasons[k] || 0); });
    const faults = [...new Set(SIDES.flatMap((s) => Object.keys(s.summary.faults)))];
    if (!faults.length) { document.getElementById("fault-box").hidden = true; return; }
    keyedTable("fault-table", faults, (td, s, k) => {
      const st = s.summary.faults[k];
      if (st) add(td, pct(st.pass_at_1) + " ", el("span", "count", "(" + st.passes + "/" + st.samples + ")"));
    });
  }
  function gates() {
    const box = document.getElementById("gates");
    SIDES.forEach((s) => {
      const g = s.gate;
      if (!g) return;
      const div = el("div", "gate");
      const verdict = g.verdict || (g.passed ? "SHIP" : "BLOCK");
      const cls = { SHIP: "ok", BLOCK: "bad", INCONCLUSIVE: "unsure" };
      add(div, el("h2", null, "Gate: " + s.label), el("span", cls[verdict] || "bad", verdict),
        " policy " + (g.policy_name || g.policy) + (g.baseline ? ", baseline " + g.baseline : ""));
      const t = el("table", "grid");
      add(t, add(el("tr"), ...["rule", "family", "figure", "requirement", "can see", "status"].map((h) => el("th", null, h))));
      for (const r of g.rules) {
        add(t, add(el("tr"), el("td", null, r.rule), el("td", null, r.family || (r.tag ? "tag " + r.tag : "-")), el("td", null, r.shown),
          el("td", null, r.requirement), el("td", null, r.sees || ""), el("td", cls[r.status === "FAIL" ? "BLOCK" : r.status === "INCONCLUSIVE" ? "INCONCLUSIVE" : "SHIP"], r.status)));
      }
      div.appendChild(t);
      for (const r of g.rules) {
        if (r.status !== "INCONCLUSIVE" && !(r.status === "FAIL" && r.needs)) continue;
        const where = r.family || (r.tag ? "tag " + r.tag : "(run)");
        div.appendChild(el("p", "muted", r.status + " " + where + " " + r.rule + ": " + (r.detail || r.sees || "") + (r.needs ? "; needs " + r.needs : "")));
      }
      box.appendChild(div);
    });
  }

  function harnessTables() {
    // a run made with --harness: family x variant pass@1, the Δ against the default
    // harness on the same entries (* p < 0.05), spread and worst variant
    const box = document.getElementById("harness");
    SIDES.forEach((s) => {
      const h = s.harness;
      if (!h) return;
      const div = el("div", "harness");
      add(div, el("h2", null, "Harness sensitivity: " + s.label + " (" + h.entries + " entries)"));
      const names = ["default", ...h.variants];
      const t = el("table", "grid");
      add(t, add(el("tr"), el("th", null, "family"), ...names.map((n) => el("th", null, n)), el("th", null, "spread"), el("th", null, "worst variant")));
      for (const [fam, row] of Object.entries(h.rows)) {
        const tr = add(el("tr"), el("td", null, (LETTER[fam] ? LETTER[fam] + " " : "") + fam));
        for (const n of names) {
          const c = row.cells[n], td = el("td");
          td.dataset.variant = n;
          if (c && c.pass_at_1 !== null) {
            add(td, pct(c.pass_at_1) + " ", el("span", "count", "(" + c.passes + "/" + c.samples + ")"));
            if (n !== "default" && c.diff_points) {
              const sig = c.p_value !== null && c.p_value < 0.05;
              add(td, " ", el("span", c.diff_points < 0 ? "bad" : "ok", (c.diff_points > 0 ? "+" : "") + c.diff_points.toFixed(1) + " pt" + (sig ? "*" : "")));
            }
          } else td.textContent = "n/a";
          tr.appendChild(td);
        }
        add(tr, el("td", null, row.spread_points === null ? "n/a" : row.spread_points.toFixed(1) + " pt"), el("td", null, row.worst || "-"));
        t.appendChild(tr);
      }
      add(div, t, el("p", "muted", "pass@1 under each harness; beside a variant: its paired difference against the default on the same entries (* exact test p < 0.05). The entries below are the default harness's."));
      box.appendChild(div);
    });
  }

  // -- entries: filters --------------------------------------------------------------
  const F = {};
  for (const k of ["family", "tag", "reason", "side", "verdict", "flipped", "a", "b", "text", "harness"]) F[k] = document.getElementById("f-" + k);
  function fillFilters() {
    option(F.family, "", "(any)");
    for (const [n, l] of FAMILIES) option(F.family, n, l + " " + n);
    option(F.tag, "", "(any)");
    for (const t of [...new Set(D.entries.flatMap((e) => e.tags || []))].sort()) option(F.tag, t, t);
    F.tag.parentElement.hidden = !HAS_TAGS;
    option(F.reason, "", "(any)");
    D.reasons.forEach((r, i) => option(F.reason, i, r));
    option(F.side, "", "(any)");
    SIDES.forEach((s, i) => { option(F.side, i, s.label); option(F.a, i, s.label); option(F.b, i, s.label); });
    for (const [v, l] of [["", "(any)"], ["pass", "pass"], ["fail", "fail"]]) option(F.verdict, v, l);
    HARNESS.forEach((h, i) => option(F.harness, i, h));
    if (HARNESS.length < 2) F.harness.parentElement.hidden = true;
    if (SIDES.length > 1) F.b.value = "1";
    else { F.flipped.disabled = true; F.a.disabled = true; F.b.disabled = true; }
  }
  function matches(e) {
    const entry = D.entries[e];
    if (F.family.value && entry.family !== F.family.value) return false;
    if (F.tag.value && !(entry.tags || []).includes(F.tag.value)) return false;
    if (F.text.value && !entry.id.toLowerCase().includes(F.text.value.toLowerCase())) return false;
    const sides = F.side.value === "" ? SIDES.map((_, i) => i) : [Number(F.side.value)];
    if (F.reason.value !== "") {
      const r = Number(F.reason.value);
      if (!sides.some((s) => perEntry[e][s].some((row) => row[S.REASON] === r))) return false;
    }
    if (F.verdict.value) {
      const scored = sides.filter((s) => perEntry[e][s].length);
      const allPass = scored.every((s) => frac(e, s) === 1);
      if (!scored.length || (F.verdict.value === "pass") !== allPass) return false;
    }
    if (F.flipped.checked) {
      const a = frac(e, Number(F.a.value)), b = frac(e, Number(F.b.value));
      if (a === null || b === null || a === b) return false;
    }
    return true;
  }

  // -- entries: rows, rendered a page at a time ---------------------------------------
  let visible = [], rendered = 0;
  const rowsBox = document.getElementById("rows");
  const GRID = HAS_TAGS
    ? "7em 12em minmax(4em, 1fr) " + SIDES.map(() => "minmax(8em, 16em)").join(" ")
    : "7em 12em " + SIDES.map(() => "minmax(8em, 1fr)").join(" ");
  function columnsHead() {
    const head = el("div", "head columns-head");
    head.style.gridTemplateColumns = GRID;
    const sideHead = (s) => HARNESS.length > 1
      ? add(el("span", null, s.label), el("span", "hstrip legend", "marks: " + HARNESS.join(", ")))
      : el("span", null, s.label);
    add(head, el("span", null, "entry"), el("span", null, "family"), HAS_TAGS ? el("span", null, "tags") : null, ...SIDES.map(sideHead));
    return head;
  }
  const moreBox = document.getElementById("more-box");
  function refresh() {
    perEntry = perEntryBy[Number(F.harness.value || 0)];
    visible = [];
    for (let e = 0; e < D.entries.length; e++) if (matches(e)) visible.push(e);
    rowsBox.replaceChildren(columnsHead());
    rendered = 0;
    renderMore();
  }
  function renderMore() {
    const stop = Math.min(visible.length, rendered + PAGE);
    const frag = document.createDocumentFragment();
    for (; rendered < stop; rendered++) frag.appendChild(rowFor(visible[rendered]));
    rowsBox.appendChild(frag);
    document.getElementById("shown").textContent =
      visible.length + " of " + D.entries.length + " entries match" + (rendered < visible.length ? "; " + rendered + " shown" : "") +
      (F.harness.value && F.harness.value !== "0" ? "; outputs under harness variant " + HARNESS[Number(F.harness.value)] + " (the conversation shown is the default harness's)" : "");
    moreBox.hidden = rendered >= visible.length;
  }
  function badge(e, s) {
    const rows = perEntry[e][s];
    const b = el("span", "badge");
    b.dataset.side = String(s);
    if (!rows.length) { b.textContent = "-"; return b; }
    let p = 0; for (const r of rows) p += r[S.PASS];
    const fail = rows.find((r) => !r[S.PASS]);
    b.classList.add(p === rows.length ? "ok" : "bad");
    const flip = flipClass(e, s);
    if (flip) b.classList.add(flip);
    b.title = SIDES[s].label;
    b.textContent = (p === rows.length ? "✓" : "✗") + " " + p + "/" + rows.length +
      (fail ? " " + D.reasons[fail[S.REASON]] : "") + (flip === "flip-up" ? " ↑" : flip === "flip-down" ? " ↓" : "");
    return b;
  }
  // The harness strip: one mark per harness (default first), so a row says which
  // variant broke the entry without switching the filter.
  function strip(e, s) {
    const box = el("span", "hstrip");
    const said = [];
    HARNESS.forEach((name, h) => {
      const rows = perEntryBy[h][e][s];
      let p = 0; for (const r of rows) p += r[S.PASS];
      const mark = !rows.length ? "·" : p === rows.length ? "✓" : "✗";
      const m = el("span", !rows.length ? "none" : p === rows.length ? "ok" : "bad", mark);
      m.dataset.harness = name;
      box.appendChild(m);
      said.push(name + " " + (rows.length ? p + "/" + rows.length : "not run"));
    });
    box.title = said.join(", ");
    return box;
  }
  function rowFor(e) {
    const entry = D.entries[e];
    const row = el("div", "row");
    row.dataset.entry = entry.id;
    const head = el("div", "head");
    head.style.gridTemplateColumns = GRID;
    head.setAttribute("role", "button"); head.tabIndex = 0;
    add(head, el("span", "id", entry.id), el("span", "fam", (LETTER[entry.family] || "?") + " " + entry.family + (entry.fault ? " · " + entry.fault : "")));
    if (HAS_TAGS) {
      const tags = el("span", "tags");
      for (const t of entry.tags || []) tags.appendChild(el("span", "tag", t));
      head.appendChild(tags);
    }
    SIDES.forEach((_, s) => head.appendChild(HARNESS.length > 1 ? add(el("span", "cell"), badge(e, s), strip(e, s)) : badge(e, s)));
    let detail = null;
    function toggle() {
      if (detail === null) { detail = (DETAIL_RENDERERS[entry.kind] || entryDetail)(e); row.appendChild(detail); }
      else detail.hidden = !detail.hidden;
      row.classList.toggle("open", !detail.hidden);
    }
    head.addEventListener("click", toggle);
    head.addEventListener("keydown", (ev) => { if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); toggle(); } });
    row.appendChild(head);
    return row;
  }

  // -- entries: the drill-down ---------------------------------------------------------
  function highlighted(text) {
    // Raw output with each <tool_call> block (closed or cut off at the end) marked.
    const pre = el("pre", "output");
    const re = /<tool_call>[\s\S]*?(?:<\/tool_call>|$)/g;
    let last = 0, m;
    while ((m = re.exec(text)) !== null) {
      if (m.index > last) pre.appendChild(document.createTextNode(text.slice(last, m.index)));
      pre.appendChild(el("mark", "call", m[0]));
      last = m.index + m[0].length;
      if (m[0].length === 0) re.lastIndex++;
    }
    if (last < text.length) pre.appendChild(document.createTextNode(text.slice(last)));
    return pre;
  }
  function message(m) {
    if (m.role === "system") {
      const d = el("details", "msg system");
      add(d, el("summary", null, "system prompt (" + (m.content || "").length + " characters)"), el("pre", null, m.content || ""));
      return d;
    }
    const div = el("div", "msg " + m.role);
    add(div, el("div", "role", m.role + (m.name ? " · " + m.name : "")));
    if (m.content) div.appendChild(el("pre", null, m.content));
    for (const c of m.tool_calls || []) {
      const f = c.function || {};
      div.appendChild(el("pre", "call", "call " + f.name + " " + JSON.stringify(f.arguments)));
    }
    return div;
  }
  function toolsList() {
    const d = el("details", "tools");
    add(d, el("summary", null, "tools (" + D.tools.length + "): " + D.tools.map((t) => t.function.name).join(", ")));
    for (const t of D.tools) {
      const one = el("details", "tool");
      one.dataset.tool = t.function.name;
      one.appendChild(el("summary", null, t.function.name));
      one.addEventListener("toggle", () => {
        if (one.open && one.childNodes.length === 1) add(one, el("p", null, t.function.description || ""), el("pre", null, json(t.function.parameters)));
      });
      d.appendChild(one);
    }
    return d;
  }
  function sampleView(row) {
    const div = el("div", "sample");
    div.dataset.sample = String(row[S.SAMPLE]);
    const pass = row[S.PASS] === 1;
    add(div, el("span", "verdict " + (pass ? "pass" : "fail"), "sample " + row[S.SAMPLE] + ": " + (pass ? "PASS" : "FAIL")), " ",
      el("span", "reason", D.reasons[row[S.REASON]]));
    if (row[S.DETAIL]) div.appendChild(el("div", "vdetail", row[S.DETAIL]));
    div.appendChild(el("div", "muted", "parse: served " + (row[S.SERVED] || "-") + ", strict " + row[S.STRICT] + ", lenient " + row[S.LENIENT]));
    div.appendChild(highlighted(D.texts[row[S.TEXT]]));
    if (row[S.CALLS].length) add(div, el("div", "muted", "parsed calls"), el("pre", "calls", json(row[S.CALLS])));
    return div;
  }
  function entryDetail(e) {
    const entry = D.entries[e];
    const box = el("div", "detail");
    const conv = entry.conversation;
    if (conv) {
      box.appendChild(el("h3", null, "Conversation (as the model saw it)"));
      for (const m of conv.messages) box.appendChild(message(m));
      if (D.tools.length) box.appendChild(toolsList());
      add(box, el("h3", null, "Expectation"), el("pre", "expect", json(conv.expect)));
      if (conv.notes) box.appendChild(el("p", "muted", conv.notes));
    }
    const grid = el("div", "sides");
    SIDES.forEach((side, s) => {
      const col = el("div", "side");
      col.dataset.side = String(s);
      const flip = flipClass(e, s);
      if (flip) col.classList.add(flip);
      col.appendChild(el("h3", null, side.label + (flip === "flip-up" ? " (flipped: now passes)" : flip === "flip-down" ? " (flipped: now fails)" : "")));
      const rows = perEntry[e][s];
      if (!rows.length) col.appendChild(el("p", "muted", "not scored in this run"));
      for (const row of rows) col.appendChild(sampleView(row));
      grid.appendChild(col);
    });
    box.appendChild(grid);
    return box;
  }
  // One renderer per entry kind; a multi-step episode kind plugs in here.
  const DETAIL_RENDERERS = { entry: entryDetail };

  // -- episodes: figures, chart, trajectories step by step --------------------------------
  const EP = D.episodes || null;
  const T = { VAR: 0, SIDE: 1, SAMPLE: 2, PASS: 3, REASON: 4, DETAIL: 5, REC: 6, RECS: 7, STEPS: 8 };
  const P = { STEP: 0, TEXT: 1, CALLS: 2, RESULTS: 3, PASS: 4, REASON: 5, DETAIL: 6, REPLY: 7, FINAL: 8, FAULTS: 9 };
  function tabs() {
    const nav = document.getElementById("tabs");
    if (!EP) return;
    nav.hidden = false;
    for (const b of nav.querySelectorAll("button")) {
      b.addEventListener("click", () => {
        for (const o of nav.querySelectorAll("button")) o.classList.toggle("on", o === b);
        for (const sec of document.querySelectorAll("main > section")) sec.hidden = sec.dataset.tab !== b.dataset.tab;
      });
    }
  }
  function rateText(r) { return r && r.n ? pct(r.rate) + " (" + r.passes + "/" + r.n + ")" : "-"; }
  function survivalChart() {
    const NS = "http://www.w3.org/2000/svg";
    const curves = EP.summaries.map((s) => (s ? s.survival : []));
    const maxN = Math.max(1, ...curves.map((c) => c.length));
    const w = 420, h = 200, left = 40, top = 10, bottom = 30;
    const svg = document.createElementNS(NS, "svg");
    const legend = 18 * 3 * SIDES.length;
    svg.setAttribute("width", String(w + left + 20)); svg.setAttribute("height", String(h + top + bottom + legend));
    svg.setAttribute("role", "img"); svg.setAttribute("aria-label", "survival curve per adapter");
    function node(tag, attrs, text) {
      const n = document.createElementNS(NS, tag);
      for (const k in attrs) n.setAttribute(k, String(attrs[k]));
      if (text !== undefined) n.textContent = text;
      svg.appendChild(n); return n;
    }
    const X = (n) => left + (maxN === 1 ? w / 2 : ((n - 1) / (maxN - 1)) * w);
    const Y = (v) => top + h * (1 - v);
    for (const t of [0, 0.5, 1]) {
      node("line", { x1: left, x2: left + w, y1: Y(t), y2: Y(t), stroke: "#d0d7de" });
      node("text", { x: 2, y: Y(t) + 4 }, (t * 100) + " %");
    }
    for (let n = 1; n <= maxN; n++) node("text", { x: X(n) - 3, y: top + h + 14 }, String(n));
    node("text", { x: left + w / 2 - 30, y: top + h + 27 }, "steps n");
    const styles = [["observed", ""], ["pooled", "6 4"], ["positions", "2 3"]];
    curves.forEach((c, i) => {
      const color = COLORS[i % COLORS.length];
      for (const [key, dash] of styles) {
        const pts = c.map((p) => [p.steps, key === "observed" ? p.observed.rate : p[key]]).filter((q) => q[1] !== null && q[1] !== undefined);
        if (!pts.length) continue;
        const line = node("polyline", { points: pts.map(([n, v]) => X(n) + "," + Y(v)).join(" "), fill: "none", stroke: color, "stroke-width": key === "observed" ? 2 : 1.5 });
        if (dash) line.setAttribute("stroke-dasharray", dash);
        line.dataset.side = String(i); line.dataset.curve = key;
      }
      for (const p of c) {
        if (p.observed.rate === null) continue;
        if (p.observed.ci_low !== null) node("line", { x1: X(p.steps), x2: X(p.steps), y1: Y(p.observed.ci_high), y2: Y(p.observed.ci_low), stroke: color, opacity: 0.5 });
        node("circle", { cx: X(p.steps), cy: Y(p.observed.rate), r: 3, fill: color });
      }
    });
    SIDES.forEach((s, i) => {
      styles.forEach(([key, dash], j) => {
        const y = top + h + bottom + 18 * (3 * i + j) + 10;
        const l = node("line", { x1: left, x2: left + 24, y1: y - 4, y2: y - 4, stroke: COLORS[i % COLORS.length], "stroke-width": 2 });
        if (dash) l.setAttribute("stroke-dasharray", dash);
        node("text", { x: left + 30, y: y }, s.label + ": " + { observed: "first n steps all passed (95 % CI)", pooled: "r^n, pooled per-step rate", positions: "product of per-position rates" }[key]);
      });
    });
    document.getElementById("ep-chart").appendChild(svg);
  }
  function hazardTable() {
    const table = document.getElementById("ep-hazard");
    const steps = Math.max(0, ...EP.summaries.map((s) => (s ? s.hazard.length : 0)));
    add(table, add(el("thead"), add(el("tr"), el("th", null, "step i"), ...SIDES.flatMap((s) => [el("th", null, s.label + " hazard"), el("th", null, "pass rate at i")]))));
    const body = el("tbody");
    for (let i = 0; i < steps; i++) {
      const tr = add(el("tr"), el("td", null, String(i + 1)));
      EP.summaries.forEach((s) => {
        const hz = s && s.hazard[i];
        add(tr, el("td", null, hz ? rateText(hz.hazard) : "-"), el("td", null, hz ? rateText(hz.position) : "-"));
      });
      body.appendChild(tr);
    }
    table.appendChild(body);
  }
  function figuresTable() {
    const table = document.getElementById("ep-figures");
    add(table, add(el("thead"), add(el("tr"), el("th"), ...SIDES.map((s) => el("th", null, s.label)))));
    const rows = [["episode success", (s) => rateText(s.success)], ["per-step rate", (s) => rateText(s.per_step)], ["pass^k", (s) => pct(s.pass_hat_k)]];
    const kinds = [...new Set(EP.summaries.flatMap((s) => (s ? Object.keys(s.recovery) : [])))];
    for (const k of kinds) rows.push(["recovery: " + k, (s) => rateText(s.recovery[k])]);
    const body = el("tbody");
    for (const [label, f] of rows) add(body, add(el("tr"), el("td", null, label), ...EP.summaries.map((s) => el("td", null, s ? f(s) : "-"))));
    table.appendChild(body);
  }
  const perVariant = EP ? EP.variants.map(() => SIDES.map(() => [])) : [];
  if (EP) for (const t of EP.trajectories) perVariant[t[T.VAR]][t[T.SIDE]].push(t);
  function variantPass(v, s) {
    const ts = perVariant[v][s];
    if (!ts.length) return null;
    let p = 0; for (const t of ts) p += t[T.PASS];
    return p / ts.length;
  }
  function trajBadge(v, s) {
    const ts = perVariant[v][s];
    const b = el("span", "badge"); b.dataset.side = String(s);
    if (!ts.length) { b.textContent = "-"; return b; }
    const p = ts.filter((t) => t[T.PASS]).length, fail = ts.find((t) => !t[T.PASS]);
    b.classList.add(p === ts.length ? "ok" : "bad");
    b.textContent = (p === ts.length ? "✓" : "✗") + " " + p + "/" + ts.length + (fail ? " " + fail[T.REASON] : "");
    return b;
  }
  function stepView(st, t) {
    const failing = !st[P.PASS];
    const div = el("div", "step" + (failing ? " failstep" : ""));
    div.dataset.step = String(st[P.STEP]);
    add(div, el("div", "shead", "step " + st[P.STEP] + ": " + (failing ? "FAIL " + st[P.REASON] : "ok") + (st[P.FINAL] ? " (last)" : "")));
    if (st[P.DETAIL]) div.appendChild(el("div", "vdetail", st[P.DETAIL]));
    div.appendChild(highlighted(D.texts[st[P.TEXT]]));
    for (const r of st[P.RESULTS]) {
      const box = el("div", "result" + (r[4] ? " fault" : ""));
      const head = el("div", "muted", "→ " + r[0] + " " + JSON.stringify(r[1]) + (r[3] ? " (failed)" : ""));
      if (r[4]) { head.appendChild(document.createTextNode(" ")); head.appendChild(el("span", "faultmark", "injected fault: " + r[4])); }
      add(box, head, el("pre", null, D.texts[r[2]]));
      div.appendChild(box);
    }
    if (st[P.REPLY]) div.appendChild(el("div", "userreply", "user: " + st[P.REPLY]));
    return div;
  }
  function trajView(t) {
    const div = el("div", "traj");
    div.dataset.sample = String(t[T.SAMPLE]);
    add(div, el("span", "verdict " + (t[T.PASS] ? "pass" : "fail"), "sample " + t[T.SAMPLE] + ": " + (t[T.PASS] ? "PASS" : "FAIL " + t[T.REASON])));
    if (t[T.DETAIL]) div.appendChild(el("div", "vdetail", t[T.DETAIL]));
    if (t[T.RECS].length) {
      const recs = el("div", "recs");
      for (const [kind, tool, step, rec, why] of t[T.RECS]) {
        recs.appendChild(el("div", rec === true ? "ok" : rec === false ? "bad" : "muted",
          kind + " on " + tool + " at step " + step + ": " + (rec === true ? "recovered" : rec === false ? "not recovered" : "not judged") + (why ? " - " + why : "")));
      }
      div.appendChild(recs);
    }
    for (const st of t[T.STEPS]) div.appendChild(stepView(st, t));
    return div;
  }
  function episodeDetail(v) {
    const box = el("div", "detail");
    const variant = EP.variants[v];
    if (variant.task) add(box, el("h3", null, "Task"), el("pre", null, variant.task));
    const grid = el("div", "sides");
    SIDES.forEach((side, s) => {
      const col = el("div", "side"); col.dataset.side = String(s);
      col.appendChild(el("h3", null, side.label));
      const ts = perVariant[v][s];
      if (!ts.length) col.appendChild(el("p", "muted", "not run on this side"));
      for (const t of ts) col.appendChild(trajView(t));
      grid.appendChild(col);
    });
    box.appendChild(grid);
    return box;
  }
  function episodeRows() {
    const box = document.getElementById("ep-rows");
    const verdict = document.getElementById("e-verdict"), text = document.getElementById("e-text"), flipped = document.getElementById("e-flipped");
    const grid = "12em 10em " + SIDES.map(() => "minmax(8em, 16em)").join(" ");
    box.replaceChildren();
    const head = el("div", "head columns-head"); head.style.gridTemplateColumns = grid;
    add(head, el("span", null, "episode"), el("span", null, "variant"), ...SIDES.map((s) => el("span", null, s.label)));
    box.appendChild(head);
    let shown = 0;
    EP.variants.forEach((variant, v) => {
      const fr = SIDES.map((_, s) => variantPass(v, s));
      if (text.value && !variant.id.toLowerCase().includes(text.value.toLowerCase())) return;
      if (verdict.value === "pass" && !fr.every((x) => x === null || x === 1)) return;
      if (verdict.value === "fail" && !fr.some((x) => x !== null && x < 1)) return;
      if (flipped.checked && new Set(fr.filter((x) => x !== null)).size < 2) return;
      shown++;
      const row = el("div", "row"); row.dataset.episode = variant.id;
      const h = el("div", "head"); h.style.gridTemplateColumns = grid; h.setAttribute("role", "button"); h.tabIndex = 0;
      add(h, el("span", "id", variant.id), el("span", "fam", variant.variant || "clean"), ...SIDES.map((_, s) => trajBadge(v, s)));
      let detail = null;
      function toggle() {
        if (detail === null) { detail = episodeDetail(v); row.appendChild(detail); } else detail.hidden = !detail.hidden;
        row.classList.toggle("open", !detail.hidden);
      }
      h.addEventListener("click", toggle);
      h.addEventListener("keydown", (ev) => { if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); toggle(); } });
      row.appendChild(h); box.appendChild(row);
    });
    document.getElementById("ep-shown").textContent = shown + " of " + EP.variants.length + " episode variants match";
  }
  function episodes() {
    if (!EP) return;
    if (EP.problems.length) document.getElementById("ep-notes").textContent = EP.problems.join(" · ");
    survivalChart(); hazardTable(); figuresTable();
    const verdict = document.getElementById("e-verdict");
    for (const [v, l] of [["", "(any)"], ["pass", "pass"], ["fail", "fail"]]) option(verdict, v, l);
    const form = document.getElementById("ep-filters");
    form.addEventListener("input", episodeRows);
    form.addEventListener("submit", (ev) => ev.preventDefault());
    episodeRows();
  }

  // -- start ---------------------------------------------------------------------------
  tabs();
  episodes();
  familyTable();
  chart();
  reasonsAndFaults();
  gates();
  harnessTables();
  fillFilters();
  document.getElementById("filters").addEventListener("input", refresh);
  document.getElementById("filters").addEventListener("submit", (ev) => ev.preventDefault());
  document.getElementById("more").addEventListener("click", renderMore);
  if ("IntersectionObserver" in window) {
    new IntersectionObserver((seen) => { if (seen.some((x) => x.isIntersecting) && rendered < visible.length) renderMore(); }).observe(moreBox);
  }
  refresh();
  document.body.dataset.ready = "1";
})();
