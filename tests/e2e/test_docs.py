"""The documentation site (mkdocs.yml over docs/) builds in strict mode, as
``make docs`` builds it, with every public name of tickler rendered in the
API reference; a broken link, a missing anchor or an API name that does not
resolve, planted in a copy, fails the same build. The README's links into
docs/ lead to pages and headings that exist, and what the README shares
with the documentation says the same in both."""

from __future__ import annotations

import importlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from pymdownx.slugs import slugify

import tickler

ROOT = Path(tickler.__file__).resolve().parent
DOCS = ROOT / "docs"
README = ROOT / "README.md"
PUBLIC = ("tickler", "tickler.core", "tickler.shell", "tickler.adapters", "tickler.testing")
SLUG = slugify(case="lower")  # mkdocs.yml's, GitHub's anchors
DEAD_PROXY = "http://127.0.0.1:9"  # nothing is fetched: a fetch would fail


def _build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    for proxy in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        env[proxy] = DEAD_PROXY
    for exempt in ("NO_PROXY", "no_proxy"):
        env.pop(exempt, None)
    command = [sys.executable, "-m", "mkdocs", "build", "--strict"]
    return subprocess.run(
        [*command, "--config-file", str(config), "--site-dir", str(site)],
        cwd=config.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    result = _build(ROOT / "mkdocs.yml", out)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "WARNING" not in result.stderr, result.stderr
    return out


def _headings(page: Path) -> list[str]:
    found, fence = [], False
    for line in page.read_text().splitlines():
        if line.startswith("```"):
            fence = not fence
        elif not fence and (heading := re.match(r"#+ (.*)", line)):
            found.append(heading.group(1).strip())
    return found


def test_the_site_builds_in_strict_mode_with_every_page(site: Path) -> None:
    pages = sorted(path.stem for path in DOCS.glob("*.md"))
    assert {"index", "getting-started", "api", "architecture"} <= set(pages)
    assert [page for page in pages if not (site / f"{page}.html").is_file()] == []
    # The kept figures are published where the pages link them.
    assert (site / "dashboard.png").is_file()
    kept = sorted(path.name for path in (DOCS / "bench").iterdir())
    assert kept
    assert sorted(path.name for path in (site / "bench").iterdir()) == kept


def test_the_api_reference_renders_every_public_name(site: Path) -> None:
    html = (site / "api.html").read_text()
    ids = set(re.findall(r'id="(tickler[\w.]*)"', html))
    missing = []
    for name in PUBLIC:
        module = importlib.import_module(name)
        for member in module.__all__:
            if f"{name}.{member}" in ids:
                continue
            # tickler re-exports names of tickler.shell and tickler.adapters,
            # documented there (an object is rendered once: one anchor).
            homes = [
                home
                for home in ("tickler.shell", "tickler.adapters")
                if name == "tickler"
                and f"{home}.{member}" in ids
                and getattr(importlib.import_module(home), member) is getattr(module, member)
            ]
            if not homes:
                missing.append(f"{name}.{member}")
    assert missing == []


def test_a_broken_link_anchor_or_name_fails_the_strict_build(tmp_path: Path) -> None:
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    shutil.copytree(DOCS, tmp_path / "docs")
    # The API page's rendering is proved above; here only its references count.
    (tmp_path / "docs" / "api.md").write_text("# API reference\n")
    limits = tmp_path / "docs" / "limits.md"
    planted = (
        "\nSee [a page](no-such-page.md), [a heading](calendar.md#no-such-heading)"
        " and [a name][tickler.NoSuchName].\n"
    )
    limits.write_text(limits.read_text() + planted)
    result = _build(tmp_path / "mkdocs.yml", tmp_path / "site")
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "Aborted with 3 warnings in strict mode" in output, output
    for fault in ("no-such-page.md", "no-such-heading", "tickler.NoSuchName"):
        assert fault in output, output


def test_the_readme_links_lead_to_pages_and_headings_that_exist() -> None:
    links = re.findall(r"\]\((docs/[^)#\s]*)(?:#([^)\s]+))?\)", README.read_text())
    assert len(links) >= 20
    for target, anchor in links:
        page = ROOT / target
        assert page.is_file(), target
        if anchor:
            assert anchor in [SLUG(h.replace("`", ""), "-") for h in _headings(page)], anchor


def test_the_readme_and_the_home_page_say_the_same_first() -> None:
    """What tickler is and the two commands, in both; links differ by docs/."""
    readme = README.read_text()
    home = (DOCS / "index.md").read_text()
    shared = readme[: readme.index("## Quickstart")].replace("](docs/", "](")
    assert "## Two commands" in shared
    assert home.startswith(shared)
    pages = readme[readme.index("- [Getting started]") :].replace("](docs/", "](")
    assert home.endswith(pages)


def _python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```$", text, flags=re.DOTALL | re.MULTILINE)


def test_the_readme_quickstart_is_the_getting_started_program() -> None:
    [quickstart] = _python_blocks(README.read_text())
    page = (DOCS / "getting-started.md").read_text()
    assert quickstart == _python_blocks(page[page.index("## PydanticAI") :])[0]


def test_the_quickstart_leaves_a_log_that_inspect_and_check_read(tmp_path: Path) -> None:
    """The README says so after its program: `tickler inspect sessions` shows
    the reminder's delivery, `tickler check sessions` finds the log valid."""
    [quickstart] = _python_blocks(README.read_text())
    (tmp_path / "quickstart.py").write_text(quickstart)
    env = {k: v for k, v in os.environ.items() if k not in ("TICKLER_MODEL", "OPENAI_API_KEY")}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    assert run("quickstart.py").returncode == 0
    inspected = run("-m", "tickler", "inspect", "sessions", "--json")
    assert inspected.returncode == 0, inspected.stderr
    assert '"stretch"' in inspected.stdout
    checked = run("-m", "tickler", "check", "sessions")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "valid" in checked.stdout
