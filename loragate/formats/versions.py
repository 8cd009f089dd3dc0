"""Every file format loragate writes or reads, and its version: the one table.

Each persisted file carries its version (`schema_version`, `format_version` or
`episode_format`); a writer stamps the newest number below and a reader refuses a newer
one than it knows, while still reading the older ones listed in `FORMATS`. A format
changes in one place: bump its number here (at most once a release), make every new
field optional with a default that reproduces the older files, and say what changed in
the docstring beside the number.

The modules that own a format import its constant from here; nothing else defines a
version.
"""

from __future__ import annotations

from dataclasses import dataclass

# -- an evalset folder -----------------------------------------------------------------

EVALSET_FORMAT_VERSION = 6
"""`evalset.yaml`'s `format_version`. 6: a tool server of `kind: tau2` (tau2-bench's own
domain environment, in-process: the `tau2` extra), a server's `reset` that takes an
episode's `reset_arguments`, `policy.repeatable_tools` (writes the duplicate-write rule
leaves alone), and clarify `question_forbids` (a question for a value the user already
gave asks for nothing missing). 5: `policy.destructive_when` (a tool destructive
only for some arguments), the `world` and `answers` files of `evalset.yaml`, the
matchers `$number`, `$date`, `$not` and `$says`, value terms in free-text expectations,
governance `lookups`. 4: `tool_servers` (real tool backends of episodes: MCP over
stdio, HTTP). 3: per-entry `tools` (names from tools.json or inline definitions);
matchers nested inside object and array arguments, `$loose`, `$integer`, `$never`. 2:
`policy.read_only_tools`, the `$all` matcher, free-text expectations
(`answer_mentions`, `answer_forbids`, `reconfirmation`). Older evalsets load
unchanged."""
PER_ENTRY_TOOLS_VERSION = 3
"""The first evalset format whose entries may carry their own `tools`."""
TOOL_SERVERS_VERSION = 4
"""The first evalset format whose manifest may declare `tool_servers`."""
WORLD_VERSION = 5
"""The first evalset format whose manifest may name a `world` or an `answers` file and
whose policy may hold `destructive_when`."""

TAU2_SERVER_VERSION = 6
"""The first evalset format whose `tool_servers` may hold a `kind: tau2` server, and whose
policy may list `repeatable_tools`."""

WORLD_FORMAT_VERSION = 1
"""`world.yaml`'s `world_format` (the world file an evalset may name)."""

EPISODE_FORMAT_VERSION = 5
"""Version of an `episodes.jsonl` line (`episode_format`). 5: `user`, a user in the loop
(a scripted user - consent, an answer to questions, the end of the call - and/or the
system prompt and stop markers of a model playing the user; the run picks the mode). 2: a tool may be answered by
a tool server of the evalset (`backend: {TOOL: {"server": NAME}}`), and the scripted
user may answer clarifying questions (`user_replies`). 3: fault groups (several faults
in one variant), the fault kinds `write_timeout`, `partial`, `outage`, `unauthorized`
and `forbidden`, a `partial` fault's `page_size`, and `count` / `min_count` in a record
check. 4: the `calls` log holds every call that ran, reads too, so a check may require
a lookup (`{"table": "calls", "where": {"tool": "list_calendar_events", "ok": true}}`);
`reward` in the success criteria (an outside reward, e.g. tau2's, resolved through the
entry-point group `loragate.rewards`), and `reset_arguments` (per tool server, the
arguments of its reset before each trajectory)."""
SERVER_BACKEND_VERSION = 2
"""The first episode format whose backends may name a tool server."""
USER_REPLIES_FORMAT = 2
"""The first episode format with `user_replies`."""
FAULTS_FORMAT = 3
"""The first episode format with fault groups, the newer fault kinds and record counts."""
READ_LOG_FORMAT = 4
"""The first episode format whose `calls` checks may name a read (a tool that writes
nothing): reads that ran are logged too."""
REWARD_FORMAT = 4
"""The first episode format with `success.reward` and `reset_arguments`."""
USER_FORMAT = 5
"""The first episode format with `user` (a scripted or a model user in the loop)."""

# -- a run folder ----------------------------------------------------------------------

RECORD_SCHEMA_VERSION = 2
"""Version of `generations.jsonl` records. 2: `reasoning_tokens`, and `harness` (the
harness variant a sample was generated under; None: the default harness); version 1
records still load."""
RESULT_SCHEMA_VERSION = 4
"""Version of `results.jsonl` records. 4: the served reading (`parse.served_status`, a
call's `arguments_json` for arguments a server passes that are not a JSON object), and
`parse.repaired_status` renamed `parse.lenient_status` (the old name still reads). 2:
the free-text reason codes (`refusal`, `echo`, `template_leak`, `degenerate`,
`non_answer`, `missing_content`,
`wrong_answer`, `failure_not_acknowledged`, `denial_not_acknowledged`,
`claimed_success_after_denial`, `invented_result`); 3: `parse.format`,
`parse.calls_in_reasoning`, the reason code `truncated_reasoning` and the abstention
reason codes (`invented_answer`, `policy_refusal`, `no_decline`), `language` (the
reply's language) and the codes `unsupported_language` and `unkept_promise`, and
`harness` (the variant, as in generations). Versions 1 to 3 still load."""
SUMMARY_SCHEMA_VERSION = 5
"""`summary.json`. 5: the parse modes `served`, `strict` and `lenient` (`parse_mode`
`repaired` of older summaries reads as `lenient`), per family and overall
`unparseable_served`, and `unparseable_repaired` renamed `unparseable_lenient` (the old
name still reads). 2 adds `tags` (rates per entry tag); 3 adds `tag_entries` (which
entries carry each tag, so that compare and gate can pair runs per tag); 4 adds the
serving stack (`tool_call_format`, `reasoning_parser`, `stack`), each adapter's
`formats` and, per family and overall, `format_mix`, `calls_in_reasoning`,
`truncated_reasoning`, `reasoning_tokens` and `answer_tokens`; per adapter
`languages` and `unsupported_language`; `harness` (figures per harness variant and the
sensitivity table). Versions 1 to 4 still read."""
READABLE_SUMMARY_VERSIONS = (1, 2, 3, 4, 5)
MANIFEST_SCHEMA_VERSION = 5
"""`manifest.json`. 2: `self_check` (adapter-vs-base agreement and the base probe) and
`warnings`; 3: `tool_call_format`, `reasoning_parser` and `stack` (the serving stack
the run models), and `harness` (the harness variants generated beside the default
harness); 4: `entry_ids` (the entries generated for, which every reader checks the
scored entries against: a run folder holds one run); 5: `evalset.files`, the sha256 of
every file of the evalset folder the run read (episodes, world, answers, system prompt
paraphrases and tool server scripts beside `evalset.yaml`, tools and entries), so that
a run made from other files takes the folder over (`evalset.sha256` keeps its meaning:
what compare pairs runs by). Older manifests read unchanged: without `files`, runs are
told apart by `evalset.sha256` alone."""
HARNESS_FORMAT = 1
"""Version of the harness variants' transformation code (routing, distractor draws,
context padding, paraphrase checks; docs/harness.md). Part of every variant's cache
key: a change in how a variant is built gives new cache keys."""
TRAJECTORY_SCHEMA_VERSION = 5
"""`trajectories.jsonl`. 5: a step's `user` (the user mode that answered it: `scripted`
or `model`) and `user_stop` (the user ended the conversation after this step; its
`user_reply` holds what the user said), so a replay takes every user turn from the
file and needs neither the script nor the user's model. 4: a step's `parse` is the results record of schema 4 (the
served reading's status, `lenient_status` for `repaired_status`, a call's
`arguments_json`). 2 added `user_reply` to a step; 3 replaced a step's `fault` by
`faults` (a step may carry several) and added `evalset`, the identity of the evalset
the step was run on (name, version, sha256), which `score-episodes` checks. Versions 1
to 3 still load."""
EPISODE_RESULT_SCHEMA_VERSION = 4
"""`episode_results.jsonl`. 4 added `user` (the user mode of the trajectory; None: no
user in the loop) and `user_turns`. 3 added `reward` (an outside reward with its breakdown per
basis), `checks_pass` (loragate's own verdict, the reward aside; `pass` needs both) and
the reason `reward`; 2 added `faults` and `recoveries` (one per injected fault);
version-1 and -2 files load."""
EPISODE_SUMMARY_SCHEMA_VERSION = 4
"""`episodes_summary.json`. 4: per adapter `users` (trajectories per user mode of a user in
the loop). 3: per adapter `reward` (the outside reward's success, pass^k,
per fault and per basis beside loragate's verdict, and the agreement classes). 2: the
survival curve as first-n-steps survival beside r^n
and the product of the per-position rates, and the hazard table. A version-1 summary
loads without its survival line (it grouped trajectories by length, a different
quantity)."""

# -- what the commands write beside run folders ----------------------------------------

COMPARISON_SCHEMA_VERSION = 3
"""`loragate compare --format json`. 2 adds `tags` (a paired row per grouping tag); 3
adds `robustness` (per family each run's default and worst-variant pass@1)."""
GATE_SCHEMA_VERSION = 3
"""`gate.json`. 3 adds `verdict`, the INCONCLUSIVE status, `inconclusive` and
`confidence` of the policy and a rule's `detectable_points`, `sees` and `needs`; 2 adds
`tag` on a rule (rules per entry tag). Versions 1 and 2 still read."""
VIEW_DATA_VERSION = 4
"""The data `view.html` embeds (what the page's script reads). 4: a sample row holds the
status of each reading (served, strict, lenient; `repaired` before), a trajectory its
outside reward (its 10th field) and each episode summary its `reward` figures. 3 adds a
side's
`headline` (compare's headline against the first side); 2 adds `episodes`, a side's
`harness` (its harness sensitivity table), `harness_names` and a sample row's
harness."""
SWEEP_SCHEMA_VERSION = 1
"""`sweep.json`."""
DATA_MANIFEST_SCHEMA_VERSION = 1
"""`data_manifest.json` of a training output folder (`loragate train`)."""


@dataclass(frozen=True)
class Format:
    """One row of the table: a file, the constant that versions it, the version written
    now and the older versions that still read."""

    file: str
    constant: str
    current: int
    older: tuple[int, ...] = ()


FORMATS: tuple[Format, ...] = (
    Format(
        "evalset.yaml `format_version`",
        "EVALSET_FORMAT_VERSION",
        EVALSET_FORMAT_VERSION,
        (1, 2, 3, 4, 5),
    ),
    Format(
        "evalset entry `tools` (first format)", "PER_ENTRY_TOOLS_VERSION", PER_ENTRY_TOOLS_VERSION
    ),
    Format(
        "evalset.yaml `tool_servers` (first format)", "TOOL_SERVERS_VERSION", TOOL_SERVERS_VERSION
    ),
    Format("evalset.yaml `world` and `answers` (first format)", "WORLD_VERSION", WORLD_VERSION),
    Format(
        "evalset.yaml `kind: tau2` server (first format)",
        "TAU2_SERVER_VERSION",
        TAU2_SERVER_VERSION,
    ),
    Format("world.yaml `world_format`", "WORLD_FORMAT_VERSION", WORLD_FORMAT_VERSION),
    Format(
        "episodes.jsonl `episode_format`",
        "EPISODE_FORMAT_VERSION",
        EPISODE_FORMAT_VERSION,
        (1, 2, 3, 4),
    ),
    Format(
        "episode backend naming a server (first format)",
        "SERVER_BACKEND_VERSION",
        SERVER_BACKEND_VERSION,
    ),
    Format("episode `user_replies` (first format)", "USER_REPLIES_FORMAT", USER_REPLIES_FORMAT),
    Format("episode fault groups and newer faults (first format)", "FAULTS_FORMAT", FAULTS_FORMAT),
    Format("episode `calls` checks on reads (first format)", "READ_LOG_FORMAT", READ_LOG_FORMAT),
    Format(
        "episode `success.reward` and `reset_arguments` (first format)",
        "REWARD_FORMAT",
        REWARD_FORMAT,
    ),
    Format("episode `user` (first format)", "USER_FORMAT", USER_FORMAT),
    Format("generations.jsonl record", "RECORD_SCHEMA_VERSION", RECORD_SCHEMA_VERSION, (1,)),
    Format("results.jsonl record", "RESULT_SCHEMA_VERSION", RESULT_SCHEMA_VERSION, (1, 2, 3)),
    Format("summary.json", "SUMMARY_SCHEMA_VERSION", SUMMARY_SCHEMA_VERSION, (1, 2, 3, 4)),
    Format("manifest.json", "MANIFEST_SCHEMA_VERSION", MANIFEST_SCHEMA_VERSION, (1, 2, 3, 4)),
    Format("harness variant transformations", "HARNESS_FORMAT", HARNESS_FORMAT),
    Format(
        "trajectories.jsonl step",
        "TRAJECTORY_SCHEMA_VERSION",
        TRAJECTORY_SCHEMA_VERSION,
        (1, 2, 3, 4),
    ),
    Format(
        "episode_results.jsonl",
        "EPISODE_RESULT_SCHEMA_VERSION",
        EPISODE_RESULT_SCHEMA_VERSION,
        (1, 2, 3),
    ),
    Format(
        "episodes_summary.json",
        "EPISODE_SUMMARY_SCHEMA_VERSION",
        EPISODE_SUMMARY_SCHEMA_VERSION,
        (1, 2, 3),
    ),
    Format("compare --format json", "COMPARISON_SCHEMA_VERSION", COMPARISON_SCHEMA_VERSION),
    Format("gate.json", "GATE_SCHEMA_VERSION", GATE_SCHEMA_VERSION, (1, 2)),
    Format("view.html data", "VIEW_DATA_VERSION", VIEW_DATA_VERSION),
    Format("sweep.json", "SWEEP_SCHEMA_VERSION", SWEEP_SCHEMA_VERSION),
    Format(
        "data_manifest.json (training)",
        "DATA_MANIFEST_SCHEMA_VERSION",
        DATA_MANIFEST_SCHEMA_VERSION,
    ),
)
"""The table as data (the file-format docs list it; a test holds it to the constants)."""

__all__ = [
    "COMPARISON_SCHEMA_VERSION",
    "DATA_MANIFEST_SCHEMA_VERSION",
    "EPISODE_FORMAT_VERSION",
    "EPISODE_RESULT_SCHEMA_VERSION",
    "EPISODE_SUMMARY_SCHEMA_VERSION",
    "EVALSET_FORMAT_VERSION",
    "FAULTS_FORMAT",
    "FORMATS",
    "GATE_SCHEMA_VERSION",
    "HARNESS_FORMAT",
    "MANIFEST_SCHEMA_VERSION",
    "PER_ENTRY_TOOLS_VERSION",
    "READABLE_SUMMARY_VERSIONS",
    "RECORD_SCHEMA_VERSION",
    "RESULT_SCHEMA_VERSION",
    "REWARD_FORMAT",
    "SERVER_BACKEND_VERSION",
    "SUMMARY_SCHEMA_VERSION",
    "SWEEP_SCHEMA_VERSION",
    "TAU2_SERVER_VERSION",
    "TOOL_SERVERS_VERSION",
    "TRAJECTORY_SCHEMA_VERSION",
    "USER_FORMAT",
    "USER_REPLIES_FORMAT",
    "VIEW_DATA_VERSION",
    "WORLD_FORMAT_VERSION",
    "WORLD_VERSION",
    "Format",
]
