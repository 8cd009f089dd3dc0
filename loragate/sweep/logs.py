"""The sweep's log: what Ray and the engines write goes to `sweep.log` in the sweep's
folder (`loragate.common.third_party`), not to the terminal."""

from __future__ import annotations

SWEEP_LOG = "sweep.log"
