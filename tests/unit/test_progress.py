"""posir.progress: a long step says how far it is, at most every so often, and always at its end."""

from __future__ import annotations

import logging

from posir.progress import Progress


def test_lines_come_every_interval_and_at_the_end_with_rate_and_time_left(caplog):
    now = [0.0]
    progress = Progress("encoding document texts", 100, every_s=30, clock=lambda: now[0])
    with caplog.at_level(logging.INFO, logger="posir"):
        for _ in range(10):
            now[0] += 10
            progress.advance(10)
    lines = [record.getMessage() for record in caplog.records]
    assert lines == [
        "encoding document texts: 30/100 texts (30%), 1.0 texts/s, 30 s so far, about 70 s left",
        "encoding document texts: 60/100 texts (60%), 1.0 texts/s, 60 s so far, about 40 s left",
        "encoding document texts: 90/100 texts (90%), 1.0 texts/s, 90 s so far, about 10 s left",
        "encoding document texts: 100/100 texts (100%), 1.0 texts/s, 100 s so far, about 0 s left",
    ]


def test_a_fast_step_logs_once_when_it_ends(caplog):
    now = [0.0]
    progress = Progress("encoding query texts", 3, clock=lambda: now[0])
    with caplog.at_level(logging.INFO, logger="posir"):
        for _ in range(3):
            now[0] += 0.5
            progress.advance(1)
    assert [record.getMessage() for record in caplog.records] == [
        "encoding query texts: 3/3 texts (100%), 2.0 texts/s, 2 s so far, about 0 s left"
    ]
