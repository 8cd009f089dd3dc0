#!/usr/bin/env bash
# The CPU half of docs/ci/github-actions.yml for any CI system: score the stored
# baseline and this round's generations with the same loragate, compare, write the card,
# gate (`loragate` on the PATH, or $LORAGATE). Exit code: the gate's (0 ship, 1 a rule
# failed, 6 inconclusive and blocking, 2 bad input).
# Usage: EVALSET=... POLICY=... BASELINE=... GENERATIONS=... gate.sh
set -euo pipefail
: "${EVALSET:?the evalset folder}" "${POLICY:?the gate policy}"
: "${BASELINE:?the folder holding the last shipped round's generations.jsonl}"
: "${GENERATIONS:?this round's generations.jsonl}"
"${LORAGATE:-loragate}" score --generations "$BASELINE/generations.jsonl" --evalset "$EVALSET" --out runs/baseline
"${LORAGATE:-loragate}" score --generations "$GENERATIONS" --evalset "$EVALSET" --out runs/candidate
"${LORAGATE:-loragate}" compare runs/baseline runs/candidate --format markdown --write compare.md
"${LORAGATE:-loragate}" card runs/candidate --baseline runs/baseline --no-chart --out card
exec "${LORAGATE:-loragate}" gate runs/candidate --baseline runs/baseline --policy "$POLICY"
