"""A store of a user's own runs tickler's store contract, as a third party
would: subclass it from ``tickler.testing`` (third_party_store.py holds the
stores and imports no private tickler module)."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tickler.testing import DurableStoreBackend, DurableStoreContract, StoreBackend, StoreContract

from . import third_party_store
from .third_party_store import DictBackend, FileDictBackend


class TestDictStoreContract(StoreContract):
    @pytest.fixture
    def backend(self) -> StoreBackend:
        return DictBackend()


class TestFileDictStoreContract(DurableStoreContract):
    @pytest.fixture
    def backend(self, tmp_path: Path) -> DurableStoreBackend:
        return FileDictBackend(tmp_path)


def test_the_third_party_store_imports_only_public_tickler_modules() -> None:
    tree = ast.parse(Path(third_party_store.__file__).read_text())
    imported = [
        name
        for node in ast.walk(tree)
        for name in (
            [node.module or ""]
            if isinstance(node, ast.ImportFrom)
            else [alias.name for alias in node.names]
            if isinstance(node, ast.Import)
            else []
        )
    ]
    ours = [name for name in imported if name.partition(".")[0] == "tickler"]
    assert ours == ["tickler.core", "tickler.shell"]
    assert all(not part.startswith("_") for name in ours for part in name.split("."))


BROKEN_PROJECT = """
import pytest

from tickler.testing import DurableStoreContract, StoreContract
from mystores.broken_stores import ForgetfulFileDictStore, ProcessLockFileDictStore, TornDictStore
from mystores.third_party_store import DictBackend, FileDictBackend


class TestTorn(StoreContract):
    @pytest.fixture
    def backend(self):
        return DictBackend(TornDictStore())


class TestForgetful(DurableStoreContract):
    @pytest.fixture
    def backend(self, tmp_path):
        return FileDictBackend(tmp_path, ForgetfulFileDictStore)


class TestProcessLock(DurableStoreContract):
    @pytest.fixture
    def backend(self, tmp_path):
        return FileDictBackend(tmp_path, ProcessLockFileDictStore)


class TestSound(DurableStoreContract):
    @pytest.fixture
    def backend(self, tmp_path):
        return FileDictBackend(tmp_path)
"""
PLUGIN_PROJECT = """
import asyncio

import pytest

LOOPS = []


async def test_an_async_test_runs():
    LOOPS.append(asyncio.get_running_loop())


async def test_on_a_loop_of_its_own_with_its_fixtures(tmp_path):
    LOOPS.append(asyncio.get_running_loop())
    assert LOOPS[0] is not LOOPS[1]
    assert tmp_path.is_dir()


@pytest.mark.asyncio
async def test_a_test_for_another_plugin_is_left_to_it():
    pass  # no such plugin here: pytest fails it, unrun
"""
NOT_READ_BACK = [
    f"test_events_that_would_not_read_back_are_refused[{case}]"
    for case in ("not-json", "newline", "empty", "two")
]


def test_the_contract_fails_a_broken_store_in_a_project_of_its_own(tmp_path: Path) -> None:
    """A project that is not tickler's (the stores copied into a package of
    its own; the plugin named in its conftest.py, as docs/testing-a-store.md says) runs
    the contract on three stores broken in one way each: each fails the
    tests that catch its fault, and a sound one passes them all. Its own
    async tests run too, each on a loop of its own, but not one marked for
    another async plugin."""
    package = tmp_path / "mystores"
    package.mkdir()
    (package / "__init__.py").write_text("")
    here = Path(__file__).parent
    for name in ("third_party_store.py", "broken_stores.py"):
        (package / name).write_text((here / name).read_text())
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers = asyncio: another plugin's\n")
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["tickler.testing"]\n')
    (tmp_path / "test_broken.py").write_text(BROKEN_PROJECT)
    (tmp_path / "test_plugin.py").write_text(PLUGIN_PROJECT)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rf", "-W", "error", "-p", "no:cacheprovider"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )
    failed = {line.split()[1] for line in done.stdout.splitlines() if line.startswith("FAILED ")}
    caught = {
        *(f"test_broken.py::TestTorn::{name}" for name in NOT_READ_BACK),
        "test_broken.py::TestForgetful::test_reopen_keeps_everything",
        "test_broken.py::TestForgetful::test_close_is_idempotent_and_releases_the_lock",
        *(f"test_broken.py::TestForgetful::{name}" for name in NOT_READ_BACK),
        "test_broken.py::TestProcessLock::test_a_writer_in_another_process_is_locked_out",
        "test_plugin.py::test_a_test_for_another_plugin_is_left_to_it",
    }
    assert failed == caught, done.stdout + done.stderr
    # Nothing else failed, errored or was skipped; TestSound passed.
    assert done.returncode == 1
    assert re.fullmatch(rf"{len(caught)} failed, \d+ passed in .*", done.stdout.splitlines()[-1])
