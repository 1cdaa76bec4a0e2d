"""Prometheus metrics, hand-written in the text exposition format (version 0.0.4).

A handful of counters, gauges and histograms updated from the event loop only (no
locks needed), rendered by ``Registry.render``. No dependency on ``prometheus_client``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

_LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(names: Sequence[str], values: Sequence[str], extra: str = "") -> str:
    parts = [f'{n}="{_escape(v)}"' for n, v in zip(names, values, strict=False)]
    if extra:
        parts.append(extra)
    return "{" + ",".join(parts) + "}" if parts else ""


def _num(x: float) -> str:
    if math.isinf(x):
        return "+Inf" if x > 0 else "-Inf"
    return repr(float(x)) if not float(x).is_integer() else str(int(x))


class _Metric:
    kind = "untyped"

    def __init__(self, name: str, help_text: str, labelnames: Sequence[str] = ()) -> None:
        self.name = name
        self.help = help_text
        self.labelnames = tuple(labelnames)

    def header(self) -> list[str]:
        return [f"# HELP {self.name} {self.help}", f"# TYPE {self.name} {self.kind}"]

    def samples(self) -> Iterable[str]:
        raise NotImplementedError


class Counter(_Metric):
    """A monotonically increasing count per label set."""

    kind = "counter"

    def __init__(self, name: str, help_text: str, labelnames: Sequence[str] = ()) -> None:
        super().__init__(name, help_text, labelnames)
        self.values: dict[tuple[str, ...], float] = {}

    def inc(self, *labels: str, amount: float = 1.0) -> None:
        key = tuple(labels)
        self.values[key] = self.values.get(key, 0.0) + amount

    def get(self, *labels: str) -> float:
        return self.values.get(tuple(labels), 0.0)

    def samples(self) -> Iterable[str]:
        if not self.values and not self.labelnames:
            yield f"{self.name} 0"
        for key, v in sorted(self.values.items()):
            yield f"{self.name}{_labels(self.labelnames, key)} {_num(v)}"


class Gauge(_Metric):
    """A value read when the metrics are rendered."""

    kind = "gauge"

    def __init__(self, name: str, help_text: str, read: Callable[[], float]) -> None:
        super().__init__(name, help_text)
        self.read = read

    def samples(self) -> Iterable[str]:
        yield f"{self.name} {_num(self.read())}"


class Histogram(_Metric):
    """Observations in cumulative buckets, per label set."""

    kind = "histogram"

    def __init__(self, name: str, help_text: str, labelnames: Sequence[str] = (),
                 buckets: Sequence[float] = _LATENCY_BUCKETS) -> None:
        super().__init__(name, help_text, labelnames)
        self.buckets = tuple(sorted(buckets))
        self.data: dict[tuple[str, ...], tuple[list[int], list[float]]] = {}

    def observe(self, value: float, *labels: str) -> None:
        counts, total = self.data.setdefault(tuple(labels), ([0] * (len(self.buckets) + 1), [0.0]))
        for i, b in enumerate(self.buckets):
            if value <= b:
                counts[i] += 1
                break
        else:
            counts[-1] += 1
        total[0] += value

    def samples(self) -> Iterable[str]:
        for key, (counts, total) in sorted(self.data.items()):
            cumulative = 0
            for b, c in zip((*self.buckets, math.inf), counts, strict=True):
                cumulative += c
                le = 'le="' + _num(b) + '"'
                yield f"{self.name}_bucket{_labels(self.labelnames, key, le)} {cumulative}"
            yield f"{self.name}_sum{_labels(self.labelnames, key)} {_num(total[0])}"
            yield f"{self.name}_count{_labels(self.labelnames, key)} {cumulative}"


_M = TypeVar("_M", bound=_Metric)


class Registry:
    """The service's metrics, rendered in registration order."""

    def __init__(self) -> None:
        self._metrics: list[_Metric] = []

    def add(self, metric: _M) -> _M:
        self._metrics.append(metric)
        return metric

    def render(self) -> str:
        lines: list[str] = []
        for m in self._metrics:
            lines.extend(m.header())
            lines.extend(m.samples())
        return "\n".join(lines) + "\n"


class ServiceMetrics:
    """The metrics FaithSieve's service exports."""

    def __init__(self) -> None:
        self.registry = Registry()
        r = self.registry
        self.requests = r.add(Counter("faithsieve_http_requests_total", "HTTP requests answered.",
                                      ("route", "method", "status")))
        self.latency = r.add(Histogram("faithsieve_http_request_duration_seconds",
                                       "Time from request to the end of the response.", ("route",)))
        self.proofs = r.add(Counter("faithsieve_proofs_total",
                                    "Proofs answered, by outcome (correct, error, or the error code of a failed item).",
                                    ("outcome",)))
        self.evidence = r.add(Counter("faithsieve_evidence_total", "Evidence records produced, by status.",
                                      ("status",)))
        self.check_seconds = r.add(Histogram("faithsieve_proof_check_seconds",
                                             "Time a worker spent on one proof."))
        self.timeouts = r.add(Counter("faithsieve_timeouts_total",
                                      "Time limits hit: body (408), worker (504, worker killed), queue (429), header (connection "
                                      "closed before its headers were complete).",
                                      ("stage",)))
        self.rejections = r.add(Counter("faithsieve_rejections_total",
                                        "Requests refused before any work, by reason.", ("reason",)))
        self.disconnects = r.add(Counter("faithsieve_client_disconnects_total",
                                         "Requests whose client went away; their work was cancelled."))
        self.restarts = r.add(Counter("faithsieve_worker_restarts_total", "Worker processes replaced, by reason.",
                                      ("reason",)))
        self.cache = r.add(Counter("faithsieve_cache_lookups_total", "Verdict cache lookups.", ("result",)))

    def gauge(self, name: str, help_text: str, read: Callable[[], float]) -> None:
        self.registry.add(Gauge(name, help_text, read))

    def render(self) -> str:
        return self.registry.render()
