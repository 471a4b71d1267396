"""The deployment examples (examples/deploy/): the systemd unit parses as
an ini file with the settings docs/production.md promises, the Kubernetes manifest
parses as YAML with probes on the worker's health endpoint, and the worker
command line of each is accepted by ``tickler worker`` itself. The page
shows both files as they are."""

from __future__ import annotations

import configparser
import re
import shlex
from pathlib import Path
from typing import Any

import click
import pytest
import yaml

from tickler.adapters._delivery_target import target_timeout
from tickler.adapters._health import parse_address
from tickler.adapters.cli._worker import worker

ROOT = Path(__file__).resolve().parents[2]
UNIT = ROOT / "examples" / "deploy" / "tickler-worker.service"
MANIFEST = ROOT / "examples" / "deploy" / "worker-deployment.yaml"


def worker_options(args: list[str]) -> dict[str, Any]:
    """The options ``tickler worker`` parses from ``args`` (a usage error
    raises, as the real command would exit 2)."""
    with worker.make_context("worker", list(args)) as context:
        return dict(context.params)


def grace_s(options: dict[str, Any]) -> float:
    """The worker's default grace on SIGTERM for these options."""
    if options["grace_s"] is not None:
        return float(options["grace_s"])
    return target_timeout(options["target"], options["deliver_timeout"]) + 5.0


def unit() -> configparser.ConfigParser:
    parser = configparser.ConfigParser(strict=True, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign] # systemd keys keep their case
    parser.read_string(UNIT.read_text())
    return parser


def test_the_systemd_unit_restarts_on_failure_but_not_on_a_usage_error() -> None:
    parsed = unit()
    assert parsed.sections() == ["Unit", "Service", "Install"]
    service = parsed["Service"]
    assert service["Restart"] == "on-failure"  # exit 1: the database was not there yet
    assert service["RestartPreventExitStatus"].split() == ["2"]  # a usage error stays down
    assert parsed["Unit"]["StartLimitIntervalSec"] == "0"  # however long the outage
    assert service["KillSignal"] == "SIGTERM"
    command = shlex.split(service["ExecStart"])
    assert command[0].endswith("/tickler")
    assert command[1] == "worker"
    options = worker_options(command[2:])
    assert parse_address(options["health_at"])[0] == "127.0.0.1"  # loopback on a host
    assert options["max_rate"] == 50
    stop_s = int(service["TimeoutStopSec"])
    assert stop_s > grace_s(options)  # systemd waits out the drain before SIGKILL
    assert not any(arg.startswith("--dsn") for arg in command)  # not in `ps`: from the file
    assert service["EnvironmentFile"].startswith("/etc/")


def test_the_kubernetes_deployment_probes_the_health_endpoint() -> None:
    deployment = yaml.safe_load(MANIFEST.read_text())
    assert (deployment["apiVersion"], deployment["kind"]) == ("apps/v1", "Deployment")
    spec = deployment["spec"]
    labels = spec["template"]["metadata"]["labels"]
    assert spec["selector"]["matchLabels"].items() <= labels.items()
    pod = spec["template"]["spec"]
    (container,) = pod["containers"]
    assert container["command"] == ["tickler", "worker"]
    options = worker_options(container["args"])
    host, port = parse_address(options["health_at"])
    assert host == "0.0.0.0"  # the kubelet probes the pod's address
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports["health"] == port
    for probe, path in (("livenessProbe", "/livez"), ("readinessProbe", "/readyz")):
        assert container[probe]["httpGet"] == {"path": path, "port": "health"}
    assert pod["terminationGracePeriodSeconds"] > grace_s(options)
    (variable,) = container["env"]
    assert variable["name"] == "TICKLER_DSN"
    assert "secretKeyRef" in variable["valueFrom"]  # the DSN is a secret, not an argument


def test_a_usage_error_in_a_worker_command_line_is_caught_here_too() -> None:
    # What the two tests above rely on: make_context refuses what the CLI refuses.
    with pytest.raises(click.BadParameter, match="not in the range"):
        worker_options(["--deliver", "m:f", "--max-rate", "0"])
    with pytest.raises(click.NoSuchOption):
        worker_options(["--deliver", "m:f", "--max-rat", "5"])


def test_the_production_page_shows_both_files_as_they_are() -> None:
    page = (ROOT / "docs" / "production.md").read_text()
    blocks = re.findall(r"```(ini|yaml)\n(.*?)```", page, flags=re.DOTALL)
    assert [kind for kind, _ in blocks] == ["ini", "yaml"]
    shown = dict(blocks)
    assert shown["ini"] == UNIT.read_text()
    assert shown["yaml"] == MANIFEST.read_text()
