"""The store contract (tickler.testing) run for each store in the box."""

from __future__ import annotations

from pathlib import Path

import pytest

from tickler.testing import (
    DurableStoreBackend,
    DurableStoreContract,
    StoreBackend,
    StoreContract,
)

from .conftest import Stores


class TestMemoryStoreContract(StoreContract):
    @pytest.fixture
    def backend(self, tmp_path: Path) -> StoreBackend:
        return Stores("memory", tmp_path / "data")


class TestJsonlStoreContract(DurableStoreContract):
    @pytest.fixture
    def backend(self, tmp_path: Path) -> DurableStoreBackend:
        return Stores("jsonl", tmp_path / "data")


class TestSqliteStoreContract(DurableStoreContract):
    @pytest.fixture
    def backend(self, tmp_path: Path) -> DurableStoreBackend:
        return Stores("sqlite", tmp_path / "data")
