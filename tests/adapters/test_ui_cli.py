"""``tickler ui``'s refusals, each one line on stderr with exit 2 and
nothing served: not exactly one store, no token for an address other than
loopback, an empty token, and the ``ui`` extra missing."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

from tickler.adapters.cli import cli
from tickler.adapters.cli._errors import run
from tickler.adapters.cli._ui import store_title
from tickler.adapters.dashboard._loopback import is_loopback
from tickler.adapters.operate._operate import Operator


def _refused(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert run(cli, ["ui", *args]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    return lines[0]


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.20", "example.org"])
def test_an_address_other_than_loopback_needs_a_token(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    host: str,
) -> None:
    monkeypatch.delenv("TICKLER_UI_TOKEN", raising=False)
    line = _refused(capsys, "--store", str(tmp_path), "--host", host)
    assert line == (
        f"tickler: error: listening on {host} (not loopback) needs a token: "
        "--token TOKEN or TICKLER_UI_TOKEN"
    )


def test_an_empty_token_is_refused(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("TICKLER_UI_TOKEN", " ")
    line = _refused(capsys, "--store", str(tmp_path), "--host", "0.0.0.0")
    assert line == "tickler: error: the token is empty (--token or TICKLER_UI_TOKEN)"


@pytest.mark.parametrize("args", [[], ["--store", "a", "--dsn", "postgresql://127.0.0.1/test"]])
def test_exactly_one_store(capsys: pytest.CaptureFixture[str], args: list[str]) -> None:
    line = _refused(capsys, *args)
    assert line == "tickler: error: give exactly one of --store PATH and --dsn DSN"


def test_each_option_takes_its_kind_of_store(capsys: pytest.CaptureFixture[str]) -> None:
    line = _refused(capsys, "--dsn", "./sessions")
    assert line == (
        "tickler: error: --dsn './sessions' is no PostgreSQL DSN "
        "(postgresql://... or key=value words)"
    )
    line = _refused(capsys, "--store", "postgresql://127.0.0.1/test")
    assert line == "tickler: error: --store takes a path; give a PostgreSQL DSN as --dsn"


@pytest.mark.parametrize("blocked", ["starlette", "uvicorn", "jinja2"])
def test_without_the_extra_it_names_the_extra(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    blocked: str,
) -> None:
    for name in [blocked, *(m for m in sys.modules if m.startswith(f"{blocked}."))]:
        monkeypatch.setitem(sys.modules, name, None)
    for module in ("tickler.adapters.dashboard._app", "tickler.adapters.dashboard._serve"):
        monkeypatch.delitem(sys.modules, module, raising=False)
    line = _refused(capsys, "--store", str(tmp_path))
    assert line == (
        "tickler: error: tickler's dashboard adapter needs the extra: "
        "pip install 'tickler-agents[ui]'"
    )


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.8.9.10", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("LOCALHOST", True),
        ("0.0.0.0", False),
        ("::", False),
        ("10.0.0.1", False),
        ("localhost.example.org", False),
    ],
)
def test_loopback_addresses(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


@pytest.mark.parametrize(
    ("dsn", "title"),
    [
        ("postgresql://ops:hunter2@db.internal:6432/prod", "PostgreSQL db.internal:6432/prod"),
        ("postgres://db/prod", "PostgreSQL db/prod"),
        ("host=db port=5433 dbname=test user=ops password=hunter2", "PostgreSQL db:5433/test"),
    ],
)
def test_the_page_names_a_database_without_its_credentials(dsn: str, title: str) -> None:
    assert store_title(None, dsn) == title
    assert "hunter2" not in store_title(None, dsn)


@pytest.mark.parametrize(
    "dsn",
    [
        "postgres://ops:hun/ter2@db/prod",  # urllib reads "hun" as the port
        "postgresql://ops:hunter2@db1:5432,db2:5433/prod",  # several hosts: no port for urllib
        "postgresql://ops:hunter2@db:99999/prod",
    ],
)
def test_a_dsn_urllib_cannot_read_is_named_without_its_password(dsn: str) -> None:
    title = store_title(None, dsn)
    assert title.startswith("PostgreSQL")
    assert "hun" not in title


@pytest.mark.parametrize("given", [[], ["--profile", "reference"]])
def test_the_action_buttons_write_events_of_the_profile_given(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, given: list[str]
) -> None:
    """A dashboard over sessions kept to the reference's v1 events acts
    as the reference profile does (a cancel is the plain v1 delete):
    ``--profile`` reaches the buttons' operator."""
    # The modules as the command imports them (sys.modules): another test
    # may have re-imported them, leaving the package's attribute elsewhere.
    dashboard_app = importlib.import_module("tickler.adapters.dashboard._app")
    dashboard_serve = importlib.import_module("tickler.adapters.dashboard._serve")

    made: dict[str, object] = {}

    def create_app(model: object, **options: object) -> object:
        made.update(options)
        return object()

    async def serve(app: object, sock: object) -> None:
        return None

    monkeypatch.setattr(dashboard_app, "create_app", create_app)
    monkeypatch.setattr(dashboard_serve, "serve", serve)
    args = ["ui", "--store", str(tmp_path), "--port", "0", "--token", "t0ken", *given]
    assert run(cli, args) == 0
    operator = made["operator"]
    assert isinstance(operator, Operator)
    assert operator.profile == (given[1] if given else "extended")
