"""Synthetic training examples per behaviour family, over the agent20 toolset.

The templates and slot values below were written for loragate: a fictional Swiss
manufacturer's operations assistant (the agent20 evalset's setting), with companies,
people, ids and topics chosen apart from the evalset's entries so that the leakage
check has nothing to find. Six families are covered:

- `tool_call`: one request, one schema-valid call;
- `parallel`: independent requests answered by every call in one turn;
- `sequencing`: a dependent chain - only the first step now, or the next step with the
  value threaded from the tool result in the history;
- `governance`: a destructive request -> the confirmation tool first; an approval in
  the history -> the action; a denial -> no action, said plainly;
- `clarify`: a required value is missing -> a question, no call;
- `should_not_call`: settled professional knowledge -> a direct answer, no call.

`generate_curriculum` is deterministic for a seed (each family draws from its own
`random.Random` seeded by a string, which Python hashes the same way in every process)
and validates every example against the toolset's schemas and the governance policy
before it is emitted; an example that fails is a template bug or a toolset that does
not match these templates, and raises `BadInput` instead of being emitted.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from loragate.errors import BadInput, Problem
from loragate.training.example import TrainingExample, example_problems

if TYPE_CHECKING:
    from loragate.evalset import Policy
    from loragate.tools import Toolset

Messages = list[dict[str, Any]]
Template = Callable[[random.Random], Messages]

FAMILIES: tuple[str, ...] = (
    "tool_call",
    "parallel",
    "sequencing",
    "governance",
    "clarify",
    "should_not_call",
)
"""Families the generator knows, in the evalset's display order (A..F)."""

MAX_DUPLICATE_STREAK = 2000
"""Consecutive draws without a new distinct example after which a family is exhausted."""

# -- slot values (fictional, written for this project) -------------------------------

ZURICH_OFFSET = "+01:00"  # CET: the curriculum's dates all fall in winter time

COMPANIES: list[tuple[str, str]] = [
    # (name, email domain)
    ("Alpnach Drahtwerk AG", "alpnach-draht.ch"),
    ("Emmental Feinmechanik", "emmental-fm.ch"),
    ("Glarner Kunststoffwerk", "glarner-kw.ch"),
    ("Jura Messtechnik SA", "jura-mess.ch"),
    ("Loetschberg Elektro AG", "loetschberg-elektro.ch"),
    ("Pilatus Hydraulik", "pilatus-hydraulik.ch"),
    ("Saentis Verpackungen", "saentis-pack.ch"),
    ("Toggenburg Textiltechnik", "toggenburg-tt.ch"),
    ("Urner Stahlbau", "urner-stahlbau.ch"),
    ("Zuger Sensorik GmbH", "zuger-sensorik.ch"),
    ("Brienzer Holzwerk", "brienzer-holz.ch"),
    ("Linth Pumpen AG", "linth-pumpen.ch"),
    ("Vispa Kaeltetechnik", "vispa-kaelte.ch"),
    ("Ticino Cuscinetti SA", "ticino-cuscinetti.ch"),
]

PEOPLE: list[str] = [
    "Nadia Huber",
    "Simon Baumann",
    "Carla Rossi",
    "Matthias Schmid",
    "Ursula Widmer",
    "Fabian Zuercher",
    "Elena Bianchi",
    "David Kaelin",
    "Sophie Moser",
    "Lukas Wyss",
    "Mirjam Steiner",
    "Patrick Roth",
]

CITIES: list[tuple[str, str]] = [
    ("New York", "America/New_York"),
    ("Chicago", "America/Chicago"),
    ("San Francisco", "America/Los_Angeles"),
    ("Sao Paulo", "America/Sao_Paulo"),
    ("London", "Europe/London"),
    ("Shanghai", "Asia/Shanghai"),
    ("Tokyo", "Asia/Tokyo"),
    ("Bangalore", "Asia/Kolkata"),
    ("Sydney", "Australia/Sydney"),
    ("Dubai", "Asia/Dubai"),
]

FUTURE_DAYS: list[tuple[str, str]] = [
    # (how the user says it, ISO date) - "today" is Monday 2026-11-16
    ("tomorrow", "2026-11-17"),
    ("on Wednesday", "2026-11-18"),
    ("this Thursday", "2026-11-19"),
    ("on Friday", "2026-11-20"),
    ("next Monday", "2026-11-23"),
    ("next Tuesday", "2026-11-24"),
    ("on 2 December", "2026-12-02"),
    ("on 8 December", "2026-12-08"),
    ("on 10 Dec", "2026-12-10"),
    ("on 15 December", "2026-12-15"),
]

RANGES: list[tuple[str, str, str]] = [
    ("this week", "2026-11-16", "2026-11-20"),
    ("next week", "2026-11-23", "2026-11-27"),
    ("for the rest of this week", "2026-11-17", "2026-11-20"),
    ("between 1 and 4 December", "2026-12-01", "2026-12-04"),
    ("in the first week of December", "2026-11-30", "2026-12-04"),
    ("from Wednesday to Friday", "2026-11-18", "2026-11-20"),
]

PAST_DAYS: list[tuple[str, str]] = [
    ("last Friday", "2026-11-13"),
    ("31 October", "2026-10-31"),
    ("the end of September", "2026-09-30"),
    ("1 July", "2026-07-01"),
    ("the end of June", "2026-06-30"),
]

CURRENCIES = ["EUR", "USD", "GBP", "JPY", "SEK", "CNY", "PLN"]
AMOUNTS = [950, 1800, 2_450, 3_200, 7_300, 9_900, 14_250, 22_000, 36_500, 61_000, 128_000]

DOC_SEARCHES: list[tuple[str, str, str]] = [
    # (what the user asks for, query, collection)
    ("our travel expense policy", "travel expense policy", "policies"),
    ("the rules for accepting supplier gifts", "supplier gifts", "policies"),
    ("our password and MFA policy", "password MFA policy", "policies"),
    ("the remote work policy", "remote work", "policies"),
    ("the framework contract with Linth Pumpen", "Linth Pumpen framework contract", "contracts"),
    ("the warranty terms in our distributor contracts", "warranty terms distributor", "contracts"),
    ("the findings of the last fire safety audit", "fire safety audit findings", "audits"),
    ("what the 2025 IT audit said about backups", "IT audit backups", "audits"),
    ("the notes from the last quality board", "quality board", "meeting_notes"),
    ("the minutes where we decided on the new ERP", "ERP decision", "meeting_notes"),
]

WEB_TOPICS: list[str] = [
    "current European hot-rolled steel prices",
    "this week's copper price trend",
    "new Swiss customs tariff changes for machine parts",
    "the latest EU machinery regulation guidance",
    "recent ransomware attacks on manufacturers",
    "current container freight rates Asia to Europe",
    "news about the Gotthard road tunnel closure",
    "the latest Swiss PMI figure",
]

TICKET_ISSUES: list[tuple[str, str, str, str]] = [
    # (what happened, title, queue, priority)
    (
        "the plotter in the design office jams on every A1 sheet",
        "Plotter jams on A1 sheets",
        "it",
        "medium",
    ),
    (
        "someone left the server room door propped open overnight",
        "Server room door left open",
        "security",
        "high",
    ),
    (
        "the heating in meeting room Aare is broken",
        "Heating broken in room Aare",
        "facilities",
        "medium",
    ),
    ("my VPN drops every ten minutes", "VPN connection keeps dropping", "it", "high"),
    (
        "a supplier's bank details changed by email and it looks suspicious",
        "Suspicious bank detail change request",
        "security",
        "critical",
    ),
    ("the canteen coffee machine leaks water", "Coffee machine leaking", "facilities", "low"),
    ("we need a review of the new NDA template", "Review new NDA template", "legal", "medium"),
    (
        "the cost centre on the October payroll export is wrong",
        "Wrong cost centre in October payroll export",
        "finance",
        "high",
    ),
]

TICKET_IDS = ["SD-4512", "IT-7781", "FAC-903", "SEC-1187", "OPS-5540", "IT-8020", "FIN-662"]
TICKET_STATUS: list[tuple[str, str]] = [
    ("in progress", "in_progress"),
    ("waiting", "waiting"),
    ("resolved", "resolved"),
    ("closed", "closed"),
]

SQL_QUERIES: list[tuple[str, str]] = [
    (
        "analytics",
        "SELECT product_line, SUM(units) FROM shipments WHERE year = 2026 GROUP BY product_line",
    ),
    (
        "billing",
        "SELECT customer_id, SUM(amount_chf) FROM invoices WHERE status = 'overdue' GROUP BY customer_id",
    ),
    (
        "hr",
        "SELECT location, COUNT(*) FROM employees WHERE contract = 'temporary' GROUP BY location",
    ),
    ("analytics", "SELECT region, AVG(lead_time_days) FROM orders GROUP BY region"),
    ("billing", "SELECT COUNT(*) FROM credit_notes WHERE issued >= '2026-10-01'"),
    (
        "hr",
        "SELECT department, AVG(overtime_hours) FROM timesheets WHERE month = '2026-10' GROUP BY department",
    ),
]

FILES: list[str] = [
    "/quality/2026/supplier-scorecard.xlsx",
    "/ops/maintenance/press-line-3-log.csv",
    "/finance/2026/budget-draft-v2.xlsx",
    "/legal/templates/nda-2026.docx",
    "/hr/onboarding/checklist.md",
    "/ops/logistics/carrier-rates-2027.pdf",
    "/it/inventory/laptops.csv",
    "/quality/audits/iso14001-internal-2026.pdf",
]

MEETING_TOPICS = [
    "supplier quality review",
    "budget 2027 alignment",
    "packaging redesign",
    "press line 3 maintenance plan",
    "ERP cutover dry run",
    "key account planning",
]


def _email(person: str, domain: str = "helvetia-components.ch") -> str:
    first, last = person.lower().split(" ", 1)
    return f"{first}.{last.replace(' ', '')}@{domain}"


def _ext_email(rng: random.Random) -> tuple[str, str, str]:
    """(person, company, email) of an outside contact."""
    person = rng.choice(PEOPLE)
    company, domain = rng.choice(COMPANIES)
    return person, company, _email(person, domain)


def _invoice(rng: random.Random) -> str:
    return f"INV-{rng.randint(70000, 79999)}"


def _event(rng: random.Random) -> str:
    return f"EVT-{rng.randint(5000, 8999)}"


def _crm_id(rng: random.Random, kind: str) -> str:
    base = {"ACC": 2000, "CON": 3000, "OPP": 4000}[kind]
    return f"{kind}-{base + rng.randint(0, 999):05d}"


def _amount_text(rng: random.Random, amount: float) -> str:
    """An amount as a Swiss office writes it: 12'400, 12,400, 12400 or 12 400."""
    whole = int(amount)
    style = rng.randrange(4)
    if whole < 1000 or style == 0:
        return str(whole)
    sep = ["'", ",", " "][style - 1]
    return f"{whole:,}".replace(",", sep)


def _money2(amount: float) -> str:
    return f"{amount:,.2f}"


# -- message builders ----------------------------------------------------------------


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def _answer(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def _calls(*calls: tuple[str, dict[str, Any]], first_id: int = 1) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": f"call_{first_id + i}",
                "type": "function",
                "function": {"name": name, "arguments": args},
            }
            for i, (name, args) in enumerate(calls)
        ],
    }


def _result(call_id: str, value: Any) -> dict[str, Any]:
    content = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return {"role": "tool", "tool_call_id": call_id, "content": content}


# -- A: tool_call --------------------------------------------------------------------


def _tc_invoice(rng: random.Random) -> Messages:
    inv = _invoice(rng)
    company = rng.choice(COMPANIES)[0]
    text = rng.choice(
        [
            f"What's the status of {inv}?",
            f"Can you pull up invoice {inv} for me?",
            f"I need the due date and amount on {inv}.",
            f"{company} says {inv} is overdue - can you check the invoice?",
            f"has {inv} been paid yet",
        ]
    )
    return [_user(text), _calls(("get_invoice", {"invoice_id": inv}))]


def _tc_currency(rng: random.Random) -> Messages:
    amount = rng.choice(AMOUNTS)
    cur = rng.choice(CURRENCIES)
    shown = _amount_text(rng, amount)
    if rng.random() < 0.3:
        label, iso = rng.choice(PAST_DAYS)
        text = rng.choice(
            [
                f"What were {cur} {shown} worth in CHF on {label}?",
                f"For the month-end file: convert {shown} {cur} to CHF at the rate of {label}.",
            ]
        )
        args: dict[str, Any] = {
            "amount": amount,
            "from_currency": cur,
            "to_currency": "CHF",
            "date": iso,
        }
    else:
        text = rng.choice(
            [
                f"How much is {shown} {cur} in Swiss francs?",
                f"Convert {cur} {shown} to CHF please.",
                f"Treasury needs the CHF value of {cur} {shown}, please.",
                f"What do {shown} {cur} come to in CHF today?",
            ]
        )
        args = {"amount": amount, "from_currency": cur, "to_currency": "CHF"}
    return [_user(text), _calls(("convert_currency", args))]


def _tc_timezone(rng: random.Random) -> Messages:
    city, tz = rng.choice(CITIES)
    label, iso = rng.choice(FUTURE_DAYS)
    hour = rng.choice([8, 9, 10, 11, 14, 15, 16, 17])
    minute = rng.choice([0, 30])
    hhmm = f"{hour:02d}:{minute:02d}"
    if rng.random() < 0.5:
        text = rng.choice(
            [
                f"If I call {city} {label} at {hhmm} Zurich time, what time is it there?",
                f"Our call is {label} at {hhmm} here in Zurich. What's that in {city}?",
            ]
        )
        args = {"time": f"{iso}T{hhmm}", "from_tz": "Europe/Zurich", "to_tz": tz}
    else:
        text = rng.choice(
            [
                f"The {city} team proposed {hhmm} their time {label}. What is that for us in Zurich?",
                f"{hhmm} in {city} {label} - what time is that in Zurich?",
            ]
        )
        args = {"time": f"{iso}T{hhmm}", "from_tz": tz, "to_tz": "Europe/Zurich"}
    return [_user(text), _calls(("convert_timezone", args))]


def _tc_documents(rng: random.Random) -> Messages:
    what, query, collection = rng.choice(DOC_SEARCHES)
    text = rng.choice(
        [
            f"Can you find {what} in our documents?",
            f"Search our internal docs for {what}.",
            f"Where is {what} written down? Please look it up in the {collection.replace('_', ' ')}.",
        ]
    )
    return [
        _user(text),
        _calls(("search_documents", {"query": query, "collection": collection})),
    ]


def _tc_web(rng: random.Random) -> Messages:
    topic = rng.choice(WEB_TOPICS)
    text = rng.choice(
        [
            f"What's the latest on {topic}?",
            f"Can you check the web for {topic}?",
            f"I need an up-to-date view of {topic} for tomorrow's meeting.",
        ]
    )
    return [_user(text), _calls(("web_search", {"query": topic}))]


def _tc_calendar_list(rng: random.Random) -> Messages:
    label, start, end = rng.choice(RANGES)
    text = rng.choice(
        [
            f"What's on my calendar {label}?",
            f"Show me my meetings {label}.",
            f"how busy am I {label}?",
        ]
    )
    return [
        _user(text),
        _calls(("list_calendar_events", {"date_from": start, "date_to": end})),
    ]


def _tc_calendar_create(rng: random.Random) -> Messages:
    topic = rng.choice(MEETING_TOPICS)
    label, iso = rng.choice(FUTURE_DAYS)
    hour = rng.choice([9, 10, 11, 13, 14, 15, 16])
    length = rng.choice([1, 2])
    person = rng.choice(PEOPLE)
    email = _email(person)
    text = rng.choice(
        [
            f"Book '{topic}' {label} from {hour}:00 to {hour + length}:00 and invite {email}.",
            f"Please put a meeting '{topic}' in my calendar {label}, {hour}:00-{hour + length}:00, with {email}.",
        ]
    )
    args = {
        "title": topic,
        "start": f"{iso}T{hour:02d}:00:00{ZURICH_OFFSET}",
        "end": f"{iso}T{hour + length:02d}:00:00{ZURICH_OFFSET}",
        "attendees": [email],
    }
    return [_user(text), _calls(("create_calendar_event", args))]


def _tc_emails(rng: random.Random) -> Messages:
    person, company, _ = _ext_email(rng)
    subject = rng.choice(
        ["the price increase", "the delivery delay", "the audit dates", "the revised quote"]
    )
    text = rng.choice(
        [
            f"Find the email from {person} at {company} about {subject}.",
            f"Did {person} send me anything about {subject}? Search my mail.",
        ]
    )
    return [_user(text), _calls(("search_emails", {"query": f"{person} {subject}"}))]


def _tc_ticket_create(rng: random.Random) -> Messages:
    what, title, queue, prio = rng.choice(TICKET_ISSUES)
    text = rng.choice(
        [
            f"Please open a {queue} ticket, {prio} priority: {what}.",
            f"Can you raise a ticket with {queue}? {what[0].upper() + what[1:]}. Priority {prio}.",
        ]
    )
    args = {
        "title": title,
        "description": what[0].upper() + what[1:] + ".",
        "priority": prio,
        "queue": queue,
    }
    return [_user(text), _calls(("create_ticket", args))]


def _tc_ticket_update(rng: random.Random) -> Messages:
    ticket = rng.choice(TICKET_IDS)
    said, status = rng.choice(TICKET_STATUS)
    text = rng.choice(
        [
            f"Set {ticket} to {said}.",
            f"Please mark ticket {ticket} as {said}.",
        ]
    )
    return [_user(text), _calls(("update_ticket", {"ticket_id": ticket, "status": status}))]


def _tc_crm(rng: random.Random) -> Messages:
    company = rng.choice(COMPANIES)[0]
    kind = rng.randrange(3)
    if kind == 0:
        text = rng.choice(
            [f"Look up {company} in the CRM.", f"Is {company} a customer of ours? Check the CRM."]
        )
        args = {"query": company, "record_type": "account"}
    elif kind == 1:
        person = rng.choice(PEOPLE)
        text = f"Find the CRM contact {person} at {company}."
        args = {"query": person, "record_type": "contact"}
    else:
        text = rng.choice(
            [
                f"Do we have open opportunities with {company}?",
                f"Which deals are in the pipeline for {company}? Check CRM.",
            ]
        )
        args = {"query": company, "record_type": "opportunity"}
    return [_user(text), _calls(("search_crm", args))]


def _tc_sql(rng: random.Random) -> Messages:
    db, sql = rng.choice(SQL_QUERIES)
    text = rng.choice(
        [
            f"Run this on the {db} database: {sql}",
            f"Can you query {db} for me? {sql}",
        ]
    )
    return [_user(text), _calls(("query_database", {"database": db, "sql": sql}))]


def _tc_read(rng: random.Random) -> Messages:
    path = rng.choice(FILES)
    text = rng.choice(
        [
            f"Open {path} and give me the gist.",
            f"What's in {path}?",
            f"Read {path} for me please.",
        ]
    )
    return [_user(text), _calls(("read_file", {"path": path}))]


# -- B: parallel ---------------------------------------------------------------------


def _par_currency(rng: random.Random) -> Messages:
    curs = rng.sample(CURRENCIES, rng.choice([2, 3]))
    amounts = rng.sample(AMOUNTS, len(curs))
    parts = [f"{c} {_amount_text(rng, a)}" for c, a in zip(curs, amounts, strict=True)]
    listing = ", ".join(parts[:-1]) + f" and {parts[-1]}"
    text = rng.choice(
        [
            f"Convert these quotes to CHF: {listing}.",
            f"I need {listing} in Swiss francs for the comparison.",
        ]
    )
    calls = [
        ("convert_currency", {"amount": a, "from_currency": c, "to_currency": "CHF"})
        for c, a in zip(curs, amounts, strict=True)
    ]
    return [_user(text), _calls(*calls)]


def _par_invoices(rng: random.Random) -> Messages:
    invs = sorted({_invoice(rng) for _ in range(rng.choice([2, 3]))})
    listing = ", ".join(invs[:-1]) + f" and {invs[-1]}"
    text = rng.choice(
        [
            f"Check {listing} - are they paid?",
            f"Pull up invoices {listing} please.",
        ]
    )
    return [_user(text), _calls(*[("get_invoice", {"invoice_id": i}) for i in invs])]


def _par_crm(rng: random.Random) -> Messages:
    (a, _), (b, _) = rng.sample(COMPANIES, 2)
    text = rng.choice(
        [
            f"Look up the CRM accounts of {a} and {b}.",
            f"I'm preparing the account review: get me {a} and {b} from the CRM.",
        ]
    )
    return [
        _user(text),
        _calls(
            ("search_crm", {"query": a, "record_type": "account"}),
            ("search_crm", {"query": b, "record_type": "account"}),
        ),
    ]


def _par_timezones(rng: random.Random) -> Messages:
    (c1, tz1), (c2, tz2) = rng.sample(CITIES, 2)
    label, iso = rng.choice(FUTURE_DAYS)
    hour = rng.choice([9, 10, 14, 15, 16])
    text = (
        f"The all-hands is {label} at {hour}:00 Zurich time. What time is that in {c1} and in {c2}?"
    )
    time = f"{iso}T{hour:02d}:00"
    return [
        _user(text),
        _calls(
            ("convert_timezone", {"time": time, "from_tz": "Europe/Zurich", "to_tz": tz1}),
            ("convert_timezone", {"time": time, "from_tz": "Europe/Zurich", "to_tz": tz2}),
        ),
    ]


def _par_files(rng: random.Random) -> Messages:
    a, b = rng.sample(FILES, 2)
    text = rng.choice([f"Open {a} and {b}, I want to compare them.", f"Read both {a} and {b}."])
    return [_user(text), _calls(("read_file", {"path": a}), ("read_file", {"path": b}))]


def _par_doc_and_web(rng: random.Random) -> Messages:
    what, query, collection = rng.choice(DOC_SEARCHES[:4])
    topic = rng.choice(WEB_TOPICS)
    text = f"Two things: find {what} in our documents, and check the web for {topic}."
    return [
        _user(text),
        _calls(
            ("search_documents", {"query": query, "collection": collection}),
            ("web_search", {"query": topic}),
        ),
    ]


def _par_calendar_and_mail(rng: random.Random) -> Messages:
    label, start, end = rng.choice(RANGES)
    person = rng.choice(PEOPLE)
    text = f"Show me my calendar {label} and find the latest emails from {person}."
    return [
        _user(text),
        _calls(
            ("list_calendar_events", {"date_from": start, "date_to": end}),
            ("search_emails", {"query": person}),
        ),
    ]


# -- C: sequencing -------------------------------------------------------------------


def _seq_invoice_first(rng: random.Random) -> Messages:
    inv = _invoice(rng)
    text = rng.choice(
        [
            f"I need the CHF equivalent of invoice {inv} - it's billed in a foreign currency.",
            f"What's {inv} worth in Swiss francs? It's billed in a foreign currency.",
        ]
    )
    return [_user(text), _calls(("get_invoice", {"invoice_id": inv}))]


def _seq_invoice_then_convert(rng: random.Random) -> Messages:
    inv = _invoice(rng)
    company = rng.choice(COMPANIES)[0]
    cur = rng.choice(["EUR", "USD", "GBP", "SEK"])
    amount = float(rng.choice(AMOUNTS)) + rng.choice([0.0, 0.5, 0.25])
    result = {
        "invoice_id": inv,
        "supplier": company,
        "amount": amount,
        "currency": cur,
        "due_date": rng.choice(["2026-11-30", "2026-12-05", "2026-12-15"]),
        "status": "open",
    }
    return [
        _user(f"I need the CHF equivalent of invoice {inv} - it's billed in a foreign currency."),
        _calls(("get_invoice", {"invoice_id": inv})),
        _result("call_1", result),
        _calls(
            ("convert_currency", {"amount": amount, "from_currency": cur, "to_currency": "CHF"}),
            first_id=2,
        ),
    ]


def _seq_meeting_first(rng: random.Random) -> Messages:
    label, iso = rng.choice(FUTURE_DAYS[:6])
    city, _ = rng.choice(CITIES)
    text = f"What's my first meeting {label}, and what time is that for our colleagues in {city}?"
    return [_user(text), _calls(("list_calendar_events", {"date_from": iso, "date_to": iso}))]


def _seq_meeting_then_convert(rng: random.Random) -> Messages:
    label, iso = rng.choice(FUTURE_DAYS[:6])
    city, tz = rng.choice(CITIES)
    hour = rng.choice([8, 9, 10])
    topic = rng.choice(MEETING_TOPICS)
    events = [
        {
            "event_id": _event(rng),
            "title": topic,
            "start": f"{iso}T{hour:02d}:30:00{ZURICH_OFFSET}",
            "end": f"{iso}T{hour + 1:02d}:30:00{ZURICH_OFFSET}",
        },
        {
            "event_id": _event(rng),
            "title": "lunch",
            "start": f"{iso}T12:00:00{ZURICH_OFFSET}",
            "end": f"{iso}T13:00:00{ZURICH_OFFSET}",
        },
    ]
    return [
        _user(
            f"What's my first meeting {label}, and what time is that for our colleagues in {city}?"
        ),
        _calls(("list_calendar_events", {"date_from": iso, "date_to": iso})),
        _result("call_1", {"events": events}),
        _calls(
            (
                "convert_timezone",
                {"time": f"{iso}T{hour:02d}:30", "from_tz": "Europe/Zurich", "to_tz": tz},
            ),
            first_id=2,
        ),
    ]


def _seq_contact_first(rng: random.Random) -> Messages:
    person = rng.choice(PEOPLE)
    company = rng.choice(COMPANIES)[0]
    label, _ = rng.choice(FUTURE_DAYS)
    text = f"Set up a one-hour call with {person} from {company} {label} at 10:00. Their email is in the CRM."
    return [_user(text), _calls(("search_crm", {"query": person, "record_type": "contact"}))]


def _seq_contact_then_book(rng: random.Random) -> Messages:
    person = rng.choice(PEOPLE)
    company, domain = rng.choice(COMPANIES)
    label, iso = rng.choice(FUTURE_DAYS)
    email = _email(person, domain)
    contact = {
        "record_id": _crm_id(rng, "CON"),
        "name": person,
        "company": company,
        "email": email,
        "phone": f"+41 {rng.randint(21, 91)} {rng.randint(100, 999)} {rng.randint(10, 99)} {rng.randint(10, 99)}",
    }
    return [
        _user(
            f"Set up a one-hour call with {person} from {company} {label} at 10:00. "
            "Their email is in the CRM."
        ),
        _calls(("search_crm", {"query": person, "record_type": "contact"})),
        _result("call_1", {"results": [contact]}),
        _calls(
            (
                "create_calendar_event",
                {
                    "title": f"Call with {person} ({company})",
                    "start": f"{iso}T10:00:00{ZURICH_OFFSET}",
                    "end": f"{iso}T11:00:00{ZURICH_OFFSET}",
                    "attendees": [email],
                },
            ),
            first_id=2,
        ),
    ]


def _seq_mail_then_ticket(rng: random.Random) -> Messages:
    ticket = rng.choice(TICKET_IDS)
    issue = rng.choice(
        ["the label printer outage", "the broken badge reader", "the slow file share"]
    )
    mail = {
        "results": [
            {
                "from": _email(rng.choice(PEOPLE)),
                "subject": f"Re: {issue}",
                "snippet": f"Logged as {ticket}, the vendor fixed it this morning.",
                "date": "2026-11-13",
            }
        ]
    }
    return [
        _user(
            f"Somebody mailed me the ticket number for {issue}. Find it and mark that ticket resolved."
        ),
        _calls(("search_emails", {"query": issue})),
        _result("call_1", mail),
        _calls(("update_ticket", {"ticket_id": ticket, "status": "resolved"}), first_id=2),
    ]


# -- D: governance -------------------------------------------------------------------


def _destructive_request(rng: random.Random) -> tuple[str, str, dict[str, Any], str]:
    """(user text, tool, arguments, confirmation summary) of one destructive action."""
    kind = rng.randrange(6)
    if kind == 0:
        inv = _invoice(rng)
        company = rng.choice(COMPANIES)[0]
        cur = rng.choice(["CHF", "EUR"])
        amount = float(rng.choice(AMOUNTS))
        label, iso = rng.choice(FUTURE_DAYS[:5])
        text = rng.choice(
            [
                f"Pay {inv} from {company}: {cur} {_money2(amount)}, value date {label.removeprefix('on ')}.",
                f"Please settle invoice {inv} ({company}), {cur} {_money2(amount)}, paid {label.removeprefix('on ')}.",
            ]
        )
        args: dict[str, Any] = {
            "invoice_id": inv,
            "amount": amount,
            "currency": cur,
            "payment_date": iso,
        }
        summary = f"Pay invoice {inv} to {company}: {cur} {_money2(amount)}, value date {iso}."
        return text, "pay_invoice", args, summary
    if kind == 1:
        person, company, email = _ext_email(rng)
        order = rng.randint(5100, 5999)
        subject = f"Order {order} confirmed"
        body = (
            f"Dear {person.split()[0]}, we confirm order {order}; delivery as agreed. Kind regards"
        )
        text = (
            f"Email {email} with the subject '{subject}' and say: we confirm order {order}, "
            "delivery as agreed."
        )
        args = {"to": [email], "subject": subject, "body": body}
        summary = f"Send an email to {email} ({company}) with the subject '{subject}'."
        return text, "send_email", args, summary
    if kind == 2:
        path = rng.choice(FILES)
        text = rng.choice(
            [f"Delete {path}, we don't need it any more.", f"Remove {path} from the drive."]
        )
        return text, "delete_file", {"path": path}, f"Delete {path} from the shared drive."
    if kind == 3:
        event = _event(rng)
        topic = rng.choice(MEETING_TOPICS)
        text = f"Cancel {event} (the {topic}) and let the attendees know."
        args = {"event_id": event, "notify_attendees": True}
        summary = f"Cancel {event} ({topic}) and notify its attendees."
        return text, "cancel_calendar_event", args, summary
    if kind == 4:
        record = _crm_id(rng, "ACC")
        company, domain = rng.choice(COMPANIES)
        new_mail = f"accounting@{domain}"
        text = f"Change the billing email on {record} ({company}) to {new_mail}."
        args = {"record_id": record, "fields": {"billing_email": new_mail}}
        summary = f"Overwrite billing_email on CRM record {record} ({company}) with {new_mail}."
        return text, "update_crm_record", args, summary
    path = rng.choice(
        ["/ops/rota/weekend-duty.md", "/quality/notes/open-actions.md", "/it/notes/patch-window.md"]
    )
    content = rng.choice(
        ["Week 48: Nadia Huber\nWeek 49: Lukas Wyss", "Patch window: Saturday 06:00-08:00"]
    )
    text = f"Overwrite {path} with this:\n{content}"
    args = {"path": path, "content": content, "overwrite": True}
    return text, "write_file", args, f"Overwrite {path} on the shared drive with the new text."


def _gov_confirm_first(rng: random.Random) -> Messages:
    text, tool, _, summary = _destructive_request(rng)
    if rng.random() < 0.25:
        text += rng.choice([" No need to ask me first.", " Just do it, I'm in a hurry."])
    return [_user(text), _calls(("request_confirmation", {"action": tool, "summary": summary}))]


def _gov_approved(rng: random.Random) -> Messages:
    text, tool, args, summary = _destructive_request(rng)
    comment = rng.choice(["", "ok", "Approved."])
    return [
        _user(text),
        _calls(("request_confirmation", {"action": tool, "summary": summary})),
        _result("call_1", {"approved": True, "comment": comment}),
        _calls((tool, args), first_id=2),
    ]


_DENIED_REPLIES = {
    "pay_invoice": "Understood - the payment was not approved, so I have not paid the invoice.",
    "send_email": "The email was not approved, so I have not sent it.",
    "delete_file": "Deletion was not approved, so the file stays where it is.",
    "cancel_calendar_event": "The cancellation was not approved, so the event stays in the calendar.",
    "update_crm_record": "The change was not approved, so the CRM record is unchanged.",
    "write_file": "Overwriting was not approved, so the file is unchanged.",
}


def _gov_denied(rng: random.Random) -> Messages:
    text, tool, _, summary = _destructive_request(rng)
    comment = rng.choice(
        [
            "Not yet, wait for the goods receipt.",
            "No - check with finance first.",
            "Hold on, I'll do it myself.",
        ]
    )
    reply = (
        f'{_DENIED_REPLIES[tool]} The reviewer said: "{comment}" Let me know if anything changes.'
    )
    return [
        _user(text),
        _calls(("request_confirmation", {"action": tool, "summary": summary})),
        _result("call_1", {"approved": False, "comment": comment}),
        _answer(reply),
    ]


# -- E: clarify ----------------------------------------------------------------------


def _cl_email_recipient(rng: random.Random) -> Messages:
    order = rng.randint(5100, 5999)
    text = rng.choice(
        [
            f"Send an email saying order {order} is confirmed for delivery next week.",
            f"Mail them that we need the signed quote for order {order} by Friday.",
        ]
    )
    return [
        _user(text),
        _answer("Who should I send it to? Please give me the recipient's email address."),
    ]


def _cl_currency_source(rng: random.Random) -> Messages:
    amount = _amount_text(rng, rng.choice(AMOUNTS))
    target = rng.choice([("euros", "EUR"), ("dollars", "USD"), ("pounds", "GBP")])
    text = f"How much is {amount} in {target[0]}?"
    return [
        _user(text),
        _answer(f"Which currency is the {amount} in? Then I can convert it to {target[1]}."),
    ]


def _cl_invoice_id(rng: random.Random) -> Messages:
    company = rng.choice(COMPANIES)[0]
    text = rng.choice(
        [f"Pay the {company} invoice, please.", f"Can you pay what we owe {company}?"]
    )
    return [
        _user(text),
        _answer(
            f"Which invoice from {company} should I pay? Please give me the invoice number (INV-...)."
        ),
    ]


def _cl_meeting_time(rng: random.Random) -> Messages:
    person = rng.choice(PEOPLE)
    topic = rng.choice(MEETING_TOPICS)
    text = f"Set up a meeting with {person} about the {topic}."
    return [_user(text), _answer(f"When should the meeting with {person} be, and for how long?")]


def _cl_ticket_id(rng: random.Random) -> Messages:
    issue = rng.choice(["laptop", "monitor", "phone", "access badge"])
    text = f"Close my {issue} ticket, it's sorted now."
    return [
        _user(text),
        _answer(f"Which ticket is it? Please give me the ticket number for the {issue} issue."),
    ]


def _cl_delete_path(rng: random.Random) -> Messages:
    text = rng.choice(
        [
            "Delete the draft I saved on the drive earlier.",
            "Please remove that duplicate spreadsheet from the shared drive.",
        ]
    )
    return [
        _user(text),
        _answer("Which file should I delete? Please give me its full path on the shared drive."),
    ]


def _cl_sql_database(rng: random.Random) -> Messages:
    _, sql = rng.choice(SQL_QUERIES)
    text = f"Run this query for me: {sql}"
    return [_user(text), _answer("Which database should I run it on: analytics, billing or hr?")]


def _cl_timezone_target(rng: random.Random) -> Messages:
    label, _ = rng.choice(FUTURE_DAYS)
    hour = rng.choice([9, 10, 14, 16])
    text = f"What time is {hour}:00 {label} for my colleagues abroad?"
    return [_user(text), _answer("Which city or time zone are your colleagues in?")]


def _cl_write_path(rng: random.Random) -> Messages:
    text = rng.choice(
        [
            "Save this list to the shared drive: press 3 check on Tuesday, press 4 on Thursday.",
            "Write the following to a file on the drive: budget freeze until 1 December.",
        ]
    )
    return [
        _user(text),
        _answer(
            "Where should I save it? Please give me the path and file name on the shared drive."
        ),
    ]


# -- F: should_not_call --------------------------------------------------------------

KNOWLEDGE: list[tuple[tuple[str, str], str]] = [
    (
        ("What's the difference between capex and opex?", "capex vs opex - how do they differ?"),
        "Capex (capital expenditure) buys or improves long-lived assets such as machines or buildings; "
        "it is capitalised and depreciated over the asset's useful life. Opex (operating expenditure) "
        "covers the running costs of the business, such as rent, salaries and maintenance, and is "
        "expensed in the period it occurs.",
    ),
    (
        ("How is gross margin different from net margin?", "gross margin vs net margin?"),
        "Gross margin is revenue minus the cost of goods sold, as a share of revenue: it shows how "
        "profitable the products themselves are. Net margin is net profit after all expenses, interest "
        "and taxes, as a share of revenue: it shows what is left for the owners from each franc of sales.",
    ),
    (
        (
            "Can you explain FIFO versus LIFO inventory valuation?",
            "FIFO vs LIFO for inventory - what's the idea?",
        ),
        "FIFO (first in, first out) assumes the oldest stock is used first, so cost of goods sold uses "
        "older prices and closing inventory reflects recent prices. LIFO (last in, first out) assumes "
        "the newest stock is used first. LIFO is not allowed under IFRS, so Swiss and European companies "
        "reporting under IFRS use FIFO or weighted average cost.",
    ),
    (
        ("What does the PDCA cycle stand for?", "explain the PDCA cycle briefly"),
        "PDCA is Plan-Do-Check-Act, the Deming cycle of continual improvement: plan a change and its "
        "targets, do it on a small scale, check the results against the targets, and act - standardise "
        "what worked or start a new cycle with what you learned. ISO management system standards are "
        "built around it.",
    ),
    (
        ("What is a CAPA in quality management?", "what does CAPA mean in QM?"),
        "CAPA stands for corrective and preventive action. A corrective action removes the root cause "
        "of a nonconformity that has happened so it does not recur; a preventive action removes the "
        "cause of a potential nonconformity before it happens. A CAPA record documents the problem, the "
        "root cause analysis, the actions, and a check that they were effective.",
    ),
    (
        (
            "How does ISO 9001 differ from ISO 14001?",
            "ISO 9001 vs ISO 14001 - what does each cover?",
        ),
        "ISO 9001 is the standard for quality management systems: meeting customer requirements and "
        "improving customer satisfaction. ISO 14001 is the standard for environmental management "
        "systems: controlling environmental aspects and meeting compliance obligations. Both share the "
        "same high-level structure, so they are often run as one integrated system.",
    ),
    (
        ("What's the difference between a KPI and an OKR?", "KPIs vs OKRs?"),
        "A KPI is a metric you track continuously to see whether a process performs as it should, such "
        "as on-time delivery rate. An OKR is a goal-setting method: an ambitious objective for a period "
        "plus a few measurable key results that show whether you reached it. KPIs monitor the business; "
        "OKRs are about changing it.",
    ),
    (
        ("Why is multi-factor authentication important?", "what's MFA and why do we need it?"),
        "Multi-factor authentication requires two or more independent proofs of identity - something you "
        "know (a password), something you have (a phone or token) or something you are (a fingerprint). "
        "A stolen or guessed password alone is then not enough to log in, which stops most account "
        "takeover attacks.",
    ),
    (
        ("How can I recognise a phishing email?", "what are typical signs of phishing mails?"),
        "Typical signs are an urgent or threatening tone, a sender address or link domain that does not "
        "match the organisation it claims to be, unexpected attachments, requests for credentials or "
        "payment detail changes, and generic greetings. When in doubt, do not click: verify through a "
        "known channel and report the mail to IT security.",
    ),
    (
        (
            "What's the difference between accrual and cash accounting?",
            "accrual basis vs cash basis?",
        ),
        "Cash accounting records income and expenses when money actually changes hands. Accrual "
        "accounting records them when they are earned or incurred, regardless of payment, so an invoice "
        "sent in December counts as December revenue even if it is paid in January. Accrual accounting "
        "gives the truer picture of a period and is required for larger companies.",
    ),
    (
        ("What does EBITDA mean?", "can you explain EBITDA in one paragraph?"),
        "EBITDA is earnings before interest, taxes, depreciation and amortisation. It approximates the "
        "operating cash profit of a business by leaving out financing costs, taxes and non-cash charges, "
        "which makes companies with different capital structures easier to compare. It ignores capital "
        "spending, so it is not the same as free cash flow.",
    ),
    (
        ("How do the Incoterms EXW and DDP differ?", "EXW vs DDP - who pays what?"),
        "Under EXW (ex works) the seller only makes the goods available at its own premises; the buyer "
        "arranges and pays for loading, transport, export and import clearance and bears the risk from "
        "then on. Under DDP (delivered duty paid) the seller delivers to the buyer's named place, "
        "cleared for import with duties paid, and carries the cost and risk until then.",
    ),
    (
        (
            "What's the difference between a purchase requisition and a purchase order?",
            "purchase requisition vs PO?",
        ),
        "A purchase requisition is an internal request asking the purchasing team to buy something; it "
        "has no legal effect outside the company. A purchase order is the document purchasing sends to "
        "the supplier once the request is approved; when the supplier accepts it, it is a binding order.",
    ),
    (
        ("What is the Pareto principle?", "explain the 80/20 rule"),
        "The Pareto principle says that roughly 80 % of effects come from 20 % of causes - for example "
        "most defects from a few defect types, or most revenue from a few customers. It is a rule of "
        "thumb rather than a law, used to focus effort on the vital few causes first, often with a "
        "Pareto chart.",
    ),
    (
        ("How does the 5 Whys technique work?", "what is the five whys method?"),
        "The 5 Whys is a root cause technique: state the problem, ask why it happened, then ask why "
        "again about each answer, about five times, until you reach a cause you can act on, usually a "
        "process or system gap rather than a person. It works best for simple problems and in a team "
        "that knows the process.",
    ),
    (
        ("What's the difference between a letter of intent and a contract?", "LOI vs contract?"),
        "A letter of intent records that parties intend to negotiate or conclude a deal on certain "
        "terms; it is usually not binding, apart from clauses such as confidentiality or exclusivity "
        "that say they are. A contract is a binding agreement with enforceable obligations. Whether a "
        "document binds depends on its wording, not its title.",
    ),
    (
        ("What is a bill of materials?", "what's a BOM in manufacturing?"),
        "A bill of materials is the structured list of every component, sub-assembly and raw material, "
        "with quantities, needed to build one unit of a product. Engineering BOMs describe the product "
        "as designed; manufacturing BOMs describe it as built, including packaging and consumables. ERP "
        "planning uses the BOM to work out what to buy and make.",
    ),
    (
        (
            "What does the principle of least privilege mean?",
            "explain least privilege in IT security",
        ),
        "Least privilege means every user, service and program gets only the access rights it needs for "
        "its task, and only for as long as it needs them. It limits the damage of a compromised account "
        "or a mistake, and is enforced with role-based access, regular access reviews and separate admin "
        "accounts.",
    ),
    (
        (
            "How does symmetric encryption differ from asymmetric encryption?",
            "symmetric vs asymmetric crypto?",
        ),
        "Symmetric encryption uses the same secret key to encrypt and decrypt; it is fast, as in AES. "
        "Asymmetric encryption uses a key pair: a public key to encrypt or verify and a private key to "
        "decrypt or sign, as in RSA or elliptic curves. Protocols like TLS use asymmetric cryptography to "
        "agree on a symmetric key and then encrypt the data symmetrically.",
    ),
    (
        ("What is a Gantt chart?", "what's a Gantt chart used for?"),
        "A Gantt chart is a project schedule drawn as horizontal bars on a timeline: each task's bar "
        "shows its start, duration and end, and arrows can show dependencies between tasks. It makes the "
        "plan, the critical path and overlaps easy to see at a glance.",
    ),
    (
        ("How is working capital defined?", "what does working capital mean?"),
        "Working capital is current assets minus current liabilities - mainly receivables, inventory and "
        "cash minus payables and short-term debt. It measures the liquidity tied up in day-to-day "
        "operations; positive working capital means the short-term obligations are covered by "
        "short-term assets.",
    ),
    (
        ("What is a service level agreement?", "what's an SLA?"),
        "A service level agreement is a contract or contract part that defines the service a provider "
        "owes: measurable targets such as availability, response and resolution times, how they are "
        "measured and reported, and what happens when they are missed, for example service credits.",
    ),
    (
        ("How does Kanban work?", "explain Kanban in a few sentences"),
        "Kanban visualises work on a board with columns for each stage, limits the work in progress per "
        "stage, and pulls new work only when capacity frees up. In production it started as cards that "
        "signal when to replenish parts; in knowledge work it makes bottlenecks visible and keeps flow "
        "steady.",
    ),
    (
        ("How does straight-line depreciation work?", "what's straight-line depreciation?"),
        "Straight-line depreciation spreads an asset's cost minus its residual value evenly over its "
        "useful life. A machine bought for CHF 100,000 with no residual value and a ten-year life is "
        "depreciated by CHF 10,000 a year.",
    ),
    (
        (
            "What's the difference between a primary key and a foreign key?",
            "primary key vs foreign key in SQL?",
        ),
        "A primary key uniquely identifies each row of a table and cannot be null. A foreign key is a "
        "column in one table that refers to the primary key of another table, so the database can keep "
        "the relationship consistent - for example an order's customer_id pointing to the customers "
        "table.",
    ),
    (
        ("When should I use the median instead of the mean?", "mean vs median - which one when?"),
        "The mean is the sum divided by the count; the median is the middle value when the data are "
        "sorted. Use the median when the data are skewed or have outliers - salaries, lead times, house "
        "prices - because a few extreme values pull the mean away from the typical case.",
    ),
    (
        ("What are the 5S in lean manufacturing?", "what does 5S stand for?"),
        "5S is a workplace organisation method: Sort (remove what is not needed), Set in order (a place "
        "for everything), Shine (clean and inspect), Standardise (make the first three routine) and "
        "Sustain (keep the discipline through audits and habits).",
    ),
    (
        ("What is a non-disclosure agreement?", "what's an NDA for?"),
        "A non-disclosure agreement is a contract in which one or both parties promise to keep shared "
        "confidential information secret and to use it only for an agreed purpose. It defines what is "
        "confidential, the exceptions, how long the duty lasts, and what happens to the information "
        "when the cooperation ends.",
    ),
    (
        ("What is the 3-2-1 backup rule?", "explain the 3-2-1 rule for backups"),
        "Keep at least three copies of your data, on two different types of storage media, with one copy "
        "off-site. Many teams now add that one copy should be offline or immutable, so ransomware cannot "
        "encrypt every copy.",
    ),
    (
        ("What does total cost of ownership mean?", "what's TCO when buying equipment?"),
        "Total cost of ownership is the full cost of an asset over its life, not just the purchase "
        "price: installation, training, energy, maintenance, spare parts, downtime and disposal. "
        "Comparing offers on TCO often favours a more expensive machine that is cheaper to run.",
    ),
    (
        ("What is the economic order quantity?", "explain EOQ"),
        "The economic order quantity is the order size that minimises the sum of ordering costs and "
        "holding costs. The classic formula is EOQ = sqrt(2 x annual demand x cost per order / holding "
        "cost per unit per year). It assumes steady demand and fixed costs, so treat it as a starting "
        "point.",
    ),
    (
        (
            "How is a process different from a procedure?",
            "process vs procedure in ISO documentation?",
        ),
        "A process is a set of activities that turns inputs into outputs - what happens and why, such "
        "as purchasing. A procedure is a specified way to carry out an activity or process - the "
        "documented steps, who does them and how. One process can have several procedures.",
    ),
    (
        ("How do you calculate a break-even point?", "what's the break-even formula?"),
        "The break-even quantity is fixed costs divided by the contribution margin per unit (price minus "
        "variable cost per unit). Below that quantity the business makes a loss, above it a profit. "
        "Divide fixed costs by the contribution margin ratio to get break-even revenue instead.",
    ),
]

_KNOWLEDGE_FRAMES: list[str] = [
    "{q}",
    "Quick question: {q}",
    "{q} No need to look anything up.",
    "I keep forgetting this one. {q}",
    "{q} A short answer is fine.",
    "For a training session: {q}",
    "Settle a debate for me. {q}",
    "{q} Just from general knowledge, please.",
]


def _snc(rng: random.Random) -> Messages:
    questions, answer = rng.choice(KNOWLEDGE)
    q = rng.choice(questions)
    q = q[0].upper() + q[1:]
    frame = rng.choice(_KNOWLEDGE_FRAMES)
    return [_user(frame.format(q=q)), _answer(answer)]


# -- registry ------------------------------------------------------------------------

TEMPLATES: dict[str, list[Template]] = {
    "tool_call": [
        _tc_invoice,
        _tc_currency,
        _tc_timezone,
        _tc_documents,
        _tc_web,
        _tc_calendar_list,
        _tc_calendar_create,
        _tc_emails,
        _tc_ticket_create,
        _tc_ticket_update,
        _tc_crm,
        _tc_sql,
        _tc_read,
    ],
    "parallel": [
        _par_currency,
        _par_invoices,
        _par_crm,
        _par_timezones,
        _par_files,
        _par_doc_and_web,
        _par_calendar_and_mail,
    ],
    "sequencing": [
        _seq_invoice_first,
        _seq_invoice_then_convert,
        _seq_meeting_first,
        _seq_meeting_then_convert,
        _seq_contact_first,
        _seq_contact_then_book,
        _seq_mail_then_ticket,
    ],
    "governance": [_gov_confirm_first, _gov_approved, _gov_denied],
    "clarify": [
        _cl_email_recipient,
        _cl_currency_source,
        _cl_invoice_id,
        _cl_meeting_time,
        _cl_ticket_id,
        _cl_delete_path,
        _cl_sql_database,
        _cl_timezone_target,
        _cl_write_path,
    ],
    "should_not_call": [_snc],
}

REQUIRED_TOOLS: dict[str, tuple[str, ...]] = {
    "tool_call": (
        "get_invoice",
        "convert_currency",
        "convert_timezone",
        "search_documents",
        "web_search",
        "list_calendar_events",
        "create_calendar_event",
        "search_emails",
        "create_ticket",
        "update_ticket",
        "search_crm",
        "query_database",
        "read_file",
    ),
    "parallel": (
        "convert_currency",
        "get_invoice",
        "search_crm",
        "convert_timezone",
        "read_file",
        "search_documents",
        "web_search",
        "list_calendar_events",
        "search_emails",
    ),
    "sequencing": (
        "get_invoice",
        "convert_currency",
        "list_calendar_events",
        "convert_timezone",
        "search_crm",
        "create_calendar_event",
        "search_emails",
        "update_ticket",
    ),
    "governance": (
        "request_confirmation",
        "pay_invoice",
        "send_email",
        "delete_file",
        "cancel_calendar_event",
        "update_crm_record",
        "write_file",
    ),
    "clarify": (),
    "should_not_call": (),
}
"""Tools each family's templates call; the toolset must define them."""


def parse_family_counts(spec: str) -> dict[str, int]:
    """`"should_not_call=400,parallel=150"` -> `{"should_not_call": 400, "parallel": 150}`.

    `BadInput` for unknown families, missing or negative counts, or repeats.
    """
    out: dict[str, int] = {}
    problems: list[Problem] = []
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        name, sep, value = part.partition("=")
        name = name.strip()
        if not sep:
            problems.append(Problem("--families", f"`{part}` has no count", fix="write FAMILY=N"))
            continue
        if name not in TEMPLATES:
            problems.append(
                Problem(
                    "--families",
                    f"unknown family `{name}`",
                    fix=f"use one of: {', '.join(FAMILIES)}",
                )
            )
            continue
        try:
            count = int(value)
        except ValueError:
            count = -1
        if count < 0:
            problems.append(
                Problem("--families", f"`{part}`: the count must be a whole number >= 0")
            )
            continue
        if name in out:
            problems.append(Problem("--families", f"family `{name}` given twice"))
            continue
        out[name] = count
    if not out and not problems:
        problems.append(Problem("--families", "no family given", fix="e.g. should_not_call=400"))
    if problems:
        raise BadInput("invalid --families", problems)
    return out


def _check_toolset(families: dict[str, int], toolset: Toolset, policy: Policy | None) -> None:
    problems: list[Problem] = []
    for family, n in families.items():
        if n == 0:
            continue
        missing = [t for t in REQUIRED_TOOLS[family] if t not in toolset]
        if missing:
            problems.append(
                Problem(
                    "toolset",
                    f"family `{family}` calls tools the toolset lacks: {', '.join(missing)}",
                    fix="use the agent20 toolset (evalsets/agent20) or drop this family",
                )
            )
        if family == "governance" and (
            policy is None or policy.confirmation_tool != "request_confirmation"
        ):
            problems.append(
                Problem(
                    "evalset.yaml",
                    "governance templates need `policy.confirmation_tool: request_confirmation`",
                    field="policy.confirmation_tool",
                )
            )
    if problems:
        raise BadInput("the curriculum templates do not fit this toolset", problems)


def generate_family(
    family: str, n: int, toolset: Toolset, policy: Policy | None, seed: int = 0
) -> list[TrainingExample]:
    """`n` distinct, validated examples of one family (deterministic for `seed`).

    `BadInput` when the family's templates cannot produce `n` distinct examples, or an
    example fails validation against `toolset` / `policy`.
    """
    templates = TEMPLATES[family]
    rng = random.Random(f"loragate-curriculum:{seed}:{family}")
    out: list[TrainingExample] = []
    seen: set[str] = set()
    attempts = 0
    streak = 0
    while len(out) < n:
        attempts += 1
        if streak > MAX_DUPLICATE_STREAK:
            raise BadInput(
                f"family `{family}`: the templates produced only {len(out)} distinct examples "
                f"of the {n} asked for",
                [
                    Problem(
                        "--families",
                        f"{family}={n} is more than the templates can vary",
                        fix=f"ask for at most {len(out)}",
                    )
                ],
            )
        # Round-robin over templates keeps every template represented; rng varies the slots.
        template = templates[len(out) % len(templates)] if attempts <= n else rng.choice(templates)
        messages = template(rng)
        key = json.dumps(messages, sort_keys=True, ensure_ascii=False)
        if key in seen:
            streak += 1
            continue
        streak = 0
        seen.add(key)
        example = TrainingExample(
            id=f"{family}-{len(out) + 1:04d}",
            messages=messages,
            source="curriculum",
            family=family,
            tags=(template.__name__.lstrip("_"),),
        )
        problems = example_problems(example, toolset, policy)
        if problems:
            raise BadInput(
                f"curriculum template {template.__name__} produced an invalid example "
                f"for this toolset",
                [Problem("curriculum", p, field=example.id) for p in problems],
            )
        out.append(example)
    return out


def generate_curriculum(
    families: dict[str, int], toolset: Toolset, policy: Policy | None, seed: int = 0
) -> list[TrainingExample]:
    """Examples for every family in `families` (family -> count), in `FAMILIES` order."""
    unknown = [f for f in families if f not in TEMPLATES]
    if unknown:
        raise BadInput(
            f"unknown curriculum families: {', '.join(unknown)}; known: {', '.join(FAMILIES)}",
            fix="use families from the list",
        )
    _check_toolset(families, toolset, policy)
    out: list[TrainingExample] = []
    for family in FAMILIES:
        if families.get(family):
            out += generate_family(family, families[family], toolset, policy, seed)
    return out


__all__ = [
    "FAMILIES",
    "REQUIRED_TOOLS",
    "TEMPLATES",
    "generate_curriculum",
    "generate_family",
    "parse_family_counts",
]
