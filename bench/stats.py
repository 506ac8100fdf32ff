"""Medians and percentiles, and the one-record-per-measurement shape of the results JSON."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any


def median(samples: Sequence[float]) -> float:
    return float(statistics.median(samples))


def p95(samples: Sequence[float]) -> float:
    """The 95th percentile, interpolated between ranks (the sample itself when there is one)."""
    if len(samples) == 1:
        return float(samples[0])
    return float(statistics.quantiles(samples, n=20, method="inclusive")[18])


@dataclass
class Record:
    """One measurement: its samples, their median and p95, and a baseline from the same run."""

    suite: str
    case: str
    metric: str
    unit: str
    samples: list[float]
    median: float | None
    p95: float | None
    baseline: str | None = None
    ratio: float | None = None
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        # Microsecond (or 0.001-unit) resolution is all a noisy machine can give.
        data["samples"] = [round(s, 3) for s in self.samples]
        for key in ("median", "p95", "ratio"):
            data[key] = None if data[key] is None else round(data[key], 3 if key != "ratio" else 4)
        return data

    @property
    def available(self) -> bool:
        return self.median is not None


def measured(
    suite: str,
    case: str,
    metric: str,
    unit: str,
    samples: Sequence[float],
    baseline: tuple[str, float | None] | None = None,
    note: str | None = None,
) -> Record:
    """A record from samples; `baseline` is (name, its median) and gives the ratio median / baseline."""
    values = [float(s) for s in samples]
    if not values:
        return missing(suite, case, metric, unit, note or "n/a (no sample)")
    mid = median(values)
    name, base = baseline if baseline else (None, None)
    ratio = mid / base if base else None
    return Record(suite, case, metric, unit, values, mid, p95(values), name, ratio, note)


def missing(suite: str, case: str, metric: str, unit: str, note: str) -> Record:
    """A measurement that could not be taken, with the reason in `note` (e.g. a verb not built yet)."""
    return Record(suite, case, metric, unit, [], None, None, None, None, note)
