"""The store contract (store_contract.py) run for each store in the box."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import Stores
from .store_contract import DurableStoreContract, StoreBackend, StoreContract, expected, summary

__all__ = ["expected", "summary"]  # test_jsonl_store.py imports them from here


class TestMemoryStoreContract(StoreContract):
    @pytest.fixture
    def backend(self, tmp_path: Path) -> StoreBackend:
        return Stores("memory", tmp_path / "data")


class TestJsonlStoreContract(DurableStoreContract):
    @pytest.fixture
    def backend(self, tmp_path: Path) -> StoreBackend:
        return Stores("jsonl", tmp_path / "data")


class TestSqliteStoreContract(DurableStoreContract):
    @pytest.fixture
    def backend(self, tmp_path: Path) -> StoreBackend:
        return Stores("sqlite", tmp_path / "data")
