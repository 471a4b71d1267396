"""The package as a user installs and imports it: the distribution name
(``tickler`` on the package index belongs to an unrelated project), every
install line saying that name, and ``import tickler`` exposing the main
entry points lazily."""

from __future__ import annotations

import ast
import importlib
import json
import re
import subprocess
import sys
import tomllib
from importlib.metadata import distribution, version
from pathlib import Path

import pytest

import tickler

ROOT = Path(tickler.__file__).resolve().parent
DISTRIBUTION = "tickler-agents"
FRAMEWORKS = ("pydantic_ai", "agents", "openai", "langchain", "langchain_core", "mcp", "httpx")
# An install line naming the bare ``tickler`` distribution (with or without extras).
OLD_INSTALL = re.compile(r"pip install\s+['\"]?tickler(?![\w-])")
SKIP_DIRS = {".venv", "build", "site", ".git", ".mypy_cache", ".ruff_cache", ".hypothesis"}


def test_the_distribution_name_is_the_free_one() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["name"] == DISTRIBUTION
    assert distribution(DISTRIBUTION).read_text("top_level.txt") in (None, "tickler\n")
    # One source: _version.py, which the packaging reads (a dynamic version).
    assert "version" not in project
    assert "version" in project["dynamic"]
    assert tickler.__version__ == version(DISTRIBUTION)


def _text_files() -> list[Path]:
    files = [ROOT / "Makefile"]
    for path in ROOT.rglob("*"):
        if SKIP_DIRS.intersection(path.relative_to(ROOT).parts) or path.name.endswith(".egg-info"):
            continue
        if path.suffix in {".py", ".md", ".toml", ".txt", ".rst"} and path.is_file():
            files.append(path)
    return files


def test_every_install_line_names_the_distribution() -> None:
    stale = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for path in _text_files()
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1)
        if OLD_INSTALL.search(line) and path.name != "test_package.py"
    ]
    assert stale == []
    readme = (ROOT / "README.md").read_text()
    assert f"pip install '{DISTRIBUTION}[pydantic-ai]'" in readme


def test_a_missing_extra_names_the_distribution() -> None:
    from tickler.adapters._extras import missing_extra

    message = str(missing_extra("LangChain", "langchain"))
    assert message == (
        f"tickler's LangChain adapter needs the extra: pip install '{DISTRIBUTION}[langchain]'"
    )


def _loaded_after(statement: str) -> set[str]:
    """The top-level modules a fresh interpreter holds after ``statement``."""
    probe = (
        f"import json, sys, tickler; {statement}; "
        "print(json.dumps(sorted({m.partition('.')[0] for m in sys.modules})))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    return set(json.loads(out.stdout))


def test_importing_tickler_loads_no_framework() -> None:
    loaded = _loaded_after("tickler.__all__; dir(tickler); tickler.JsonlStore")
    assert "tickler" in loaded
    assert loaded.isdisjoint(FRAMEWORKS), loaded.intersection(FRAMEWORKS)
    # The probe sees a framework once its entry point is used.
    assert "pydantic_ai" in _loaded_after("tickler.pydantic_ai_host")


def test_the_store_contract_is_a_test_time_module() -> None:
    """``tickler.testing`` (the store contract, a pytest plugin) is never
    loaded by ``import tickler``."""
    probe = "import sys, tickler; tickler.JsonlStore; print('tickler.testing' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False"]
    assert "pytest" not in _loaded_after("tickler.__all__; dir(tickler); tickler.JsonlStore")


def test_the_store_contract_without_pytest_names_the_extra() -> None:
    # "Not installed": an import of pytest fails.
    blocked = "import sys; sys.modules['pytest'] = None; import tickler.testing"
    done = subprocess.run(
        [sys.executable, "-c", blocked], capture_output=True, text=True, check=False
    )
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1] == (
        f"ImportError: tickler.testing needs pytest: pip install '{DISTRIBUTION}[testing]'"
    )
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    assert [name.partition(">")[0] for name in extras["testing"]] == ["pytest", "hypothesis"]
    assert set(extras["testing"]) <= set(extras["all"])
    import tickler.testing

    assert sorted(tickler.testing.__all__) == tickler.testing.__all__
    for name in tickler.testing.__all__:
        assert getattr(tickler.testing, name) is not None, name


def test_the_store_contract_needs_no_hypothesis_and_the_strategies_name_the_extra() -> None:
    """Without Hypothesis, ``tickler.testing`` (the contract, ``replay``)
    still imports and never loads it; its strategies say which extra to add."""
    blocked = "import sys; sys.modules['hypothesis'] = None; "
    contract = "import tickler.testing as t; print(t.StoreContract.__name__, t.replay.__name__)"
    done = subprocess.run(
        [sys.executable, "-c", blocked + contract], capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["StoreContract", "replay"]
    assert "hypothesis" not in _loaded_after("import tickler.testing")
    done = subprocess.run(
        [sys.executable, "-c", blocked + "import tickler.testing.strategies"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1] == (
        "ImportError: tickler.testing.strategies needs hypothesis: "
        f"pip install '{DISTRIBUTION}[testing]'"
    )
    import tickler.testing.strategies as strategies

    assert len(set(strategies.__all__)) == len(strategies.__all__)
    for name in strategies.__all__:
        assert getattr(strategies, name) is not None, name


# Each public name and the module that defines it.
HOMES = {
    "ScheduleRuntime": "tickler.shell",
    "SystemClock": "tickler.shell",
    "ReferenceHost": "tickler.shell",
    "TurnInput": "tickler.shell",
    "open_session": "tickler.shell",
    "Session": "tickler.shell",
    "Reminder": "tickler.shell",
    "ScheduleError": "tickler.shell",
    "JsonlStore": "tickler.adapters.stores",
    "SqliteStore": "tickler.adapters.stores",
    "MemoryStore": "tickler.adapters.stores",
    "DeliverCommand": "tickler.adapters",
    "DeliverUrl": "tickler.adapters",
    "pydantic_ai_host": "tickler.adapters.pydantic_ai",
    "schedule_toolset": "tickler.adapters.pydantic_ai",
    "openai_agents_host": "tickler.adapters.openai_agents",
    "openai_agents_tools": "tickler.adapters.openai_agents",
    "langchain_tools": "tickler.adapters.langchain",
}
PACKAGES = (
    "tickler",
    "tickler.core",
    "tickler.core.timing",
    "tickler.core.wire",
    "tickler.shell",
    "tickler.adapters",
    "tickler.adapters.stores",
    "tickler.adapters.cli",
    "tickler.testing",
)


@pytest.mark.parametrize("name", sorted(HOMES))
def test_each_entry_point_resolves_from_the_top(name: str) -> None:
    assert name in tickler.__all__
    assert name in dir(tickler)
    assert getattr(tickler, name) is getattr(importlib.import_module(HOMES[name]), name)


def test_every_exported_name_resolves_and_an_unknown_one_is_an_attribute_error() -> None:
    for name in tickler.__all__:
        assert getattr(tickler, name) is not None, name
    assert sorted(tickler.__all__) == sorted(set(tickler.__all__))
    with pytest.raises(AttributeError, match="has no attribute 'no_such_thing'"):
        _ = tickler.no_such_thing  # type: ignore[attr-defined]


def test_type_checkers_see_the_same_names() -> None:
    """The ``if TYPE_CHECKING:`` imports name exactly the lazy exports, from
    the same modules, so ``mypy --strict`` sees what runtime resolves."""
    tree = ast.parse((ROOT / "__init__.py").read_text())
    checked: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for item in node.body:
                assert isinstance(item, ast.ImportFrom)
                checked.update({alias.name: str(item.module) for alias in item.names})
    homes: dict[str, str] = tickler.__dict__["_HOMES"]
    assert checked == homes
    assert set(homes) == set(tickler.__all__) - {"__version__"}
    assert {name: homes[name] for name in HOMES} == HOMES


def test_dir_of_tickler_shows_only_its_public_names() -> None:
    assert dir(tickler) == sorted(tickler.__all__)
    for helper in ("Any", "Final", "importlib", "TYPE_CHECKING", "annotations", "version"):
        assert helper not in dir(tickler)


@pytest.mark.parametrize("package", PACKAGES)
def test_each_package_names_its_public_api(package: str) -> None:
    """Every package lists its public names in ``__all__``; each resolves,
    none is private, and the modules behind them are private (``_name``)."""
    module = importlib.import_module(package)
    names = module.__all__
    assert names == sorted(set(names), key=names.index)
    for name in names:
        assert not name.startswith("_") or name == "__version__", name
        assert getattr(module, name) is not None, name
    folder = ROOT / package.removeprefix("tickler").strip(".").replace(".", "/")
    public_modules = {"__init__.py", "__main__.py", "pydantic_ai.py", "openai_agents.py",
                      "langchain.py", "ruff.toml", "strategies.py"}  # fmt: skip
    for path in folder.iterdir():
        if path.is_file() and path.suffix == ".py" and path.name not in public_modules:
            assert path.name.startswith("_"), f"{path} is not public: name it _{path.name}"


@pytest.mark.parametrize("package", ["tickler", "tickler.adapters", "tickler.adapters.stores"])
def test_the_lazy_facades_share_one_helper(package: str) -> None:
    """Each facade's PEP 562 hooks come from ``tickler._lazy``, not a copy."""
    module = importlib.import_module(package)
    hooks = (module.__dict__["__getattr__"], module.__dict__["__dir__"])
    assert {hook.__module__ for hook in hooks} == {"tickler._lazy"}
    assert dir(module) == sorted(module.__all__)
    with pytest.raises(AttributeError, match=f"module '{package}' has no attribute 'nothing'"):
        hooks[0]("nothing")
