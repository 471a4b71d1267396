"""The OpenTelemetry SDK's in-memory reader and exporter, wired to tickler's
instruments for one test (:func:`readings`), and what a test asks of them."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tickler.shell import _telemetry


@dataclass(frozen=True)
class Metric:
    unit: str
    points: list[Any]

    @property
    def value(self) -> int | float:
        """A counter's sum or a gauge's value, over every point."""
        total: int | float = sum(point.value for point in self.points)
        return total


@dataclass(frozen=True)
class Readings:
    reader: InMemoryMetricReader
    exporter: InMemorySpanExporter

    def metrics(self) -> dict[str, Metric]:
        """tickler's instruments, collected now (gauges observed now)."""
        data = self.reader.get_metrics_data()
        found: dict[str, Metric] = {}
        for resource in data.resource_metrics if data is not None else ():
            for scope in resource.scope_metrics:
                if scope.scope.name != _telemetry.SCOPE_NAME:
                    continue
                for metric in scope.metrics:
                    found[metric.name] = Metric(metric.unit or "", list(metric.data.data_points))
        return found

    def value(self, name: str) -> int | float:
        """A counter's total (0 when never added to) or a gauge's value."""
        metric = self.metrics().get(name)
        return 0 if metric is None else metric.value

    def spans(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())


@contextmanager
def readings() -> Iterator[Readings]:
    """tickler reports to fresh SDK providers for the block."""
    reader = InMemoryMetricReader()
    meters = MeterProvider(metric_readers=[reader])
    exporter = InMemorySpanExporter()
    tracers = TracerProvider()
    tracers.add_span_processor(SimpleSpanProcessor(exporter))
    _telemetry.use_providers(meters, tracers)
    try:
        yield Readings(reader, exporter)
    finally:
        _telemetry.use_providers()  # the global providers again
        meters.shutdown()
        tracers.shutdown()
