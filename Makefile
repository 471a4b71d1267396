# One entry point. Every target does its own set-up on a fresh machine.
PY ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
# A strict editable install needs a re-install when a module is added.
SRC := $(shell find core shell adapters testing -name '*.py' -o -name '*.html' 2>/dev/null) $(wildcard *.py) pyproject.toml
# Zone data comes from the pinned tzdata wheel, never the host.
export PYTHONTZPATH :=

.PHONY: install browser demo test test-explore mutants lint specs docs bench bench-core bench-runtime bench-cold bench-stores bench-postgres bench-mcp bench-calendar bench-calendar-ops bench-reminders bench-pacing bench-dashboard bench-pg-scale bench-timer-yield clean
install: $(VENV)/.installed
# The first install shows pip's progress (about a minute); a re-install is quiet.
PIP_QUIET = $(if $(wildcard $(VENV)/.installed),-q,)
# setuptools announces every strict editable install in a banner of stars
# ("Editable installation." ... "Please be careful to not remove this
# directory"); it is a warning at its own start, so only it is filtered out:
# errors and every other warning still show.
QUIET_BANNER := PYTHONWARNINGS='ignore:Editable installation'
$(VENV)/.installed: $(SRC)
	@$(PY) -c 'import sys; assert sys.version_info >= (3, 11), sys.version' 2>/dev/null \
	  || { echo "tickler needs Python 3.11 or newer as $(PY) (make PY=python3.12 ...)"; exit 2; }
	@# A venv cut short (Ctrl-C while it was made) has a python but no pip: made again.
	@$(BIN)/python -m pip --version >/dev/null 2>&1 \
	  || { echo "make: creating $(VENV) with $(PY)"; $(PY) -m venv $(VENV) --clear; }
	@echo "make: installing tickler with every extra and the dev tools into $(VENV)" \
	  "$(if $(PIP_QUIET),(again, quietly: the sources changed),(about a minute the first time))"
	@$(BIN)/python -m pip install -q --disable-pip-version-check --upgrade "pip>=25.1"
	@# The distribution was called tickler before: drop that install, or two would map tickler.
	@$(BIN)/python -m pip uninstall -q -y --disable-pip-version-check tickler 2>/dev/null || true
	@$(QUIET_BANNER) $(BIN)/python -m pip install $(PIP_QUIET) --disable-pip-version-check \
	    -e '.[all]' --group dev --config-settings editable_mode=strict
	@touch $@
	@echo "make: done; the CLI is $(BIN)/tickler (or run: source $(BIN)/activate)"

# The main job: reminders created by a model, delivered as turns, across a
# kill -9 and a restart; offline, under a minute. Keep the session log with
# make demo DEMO_ARGS=--keep (a temporary directory) or DEMO_ARGS='--store DIR'.
DEMO_ARGS ?=
demo: install
	$(BIN)/tickler demo $(DEMO_ARGS)

test: install browser
	$(BIN)/python -m pytest -q

# The dashboard's browser test drives the system's Chromium (Debian's
# chromium package), never a browser build downloaded by Playwright.
CHROMIUM ?= /usr/bin/chromium
APT_GET ?= apt-get
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)
browser:
	@test -x $(CHROMIUM) || { \
	  echo "make: installing the system's Chromium for the dashboard's browser test" \
	    "($(strip $(SUDO) $(APT_GET) install -y chromium))"; \
	  $(SUDO) $(APT_GET) update -qq && $(SUDO) $(APT_GET) install -y -qq chromium >/dev/null; }

# Property tests with random draws and more examples (make test draws the
# same examples every run); failures are kept in .hypothesis/ and replayed.
test-explore: install
	TICKLER_HYPOTHESIS_PROFILE=explore $(BIN)/python -m pytest -q tests/property tests/unit

# Change one rule at a time in core/ and check that the core suite fails.
mutants: install
	$(BIN)/python tests/mutants.py

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	@# The layers' import rules: no cycle, no import upwards or of another layer's private module.
	$(BIN)/python tests/architecture/import_rules.py
	@# Module names from the folders, not the clone's directory name (any name lints).
	$(BIN)/mypy --explicit-package-bases core shell adapters tests bench specs examples \
	    testing docs _contract_child.py

# The documentation site (MkDocs, docs/ and mkdocs.yml) into site/, in strict
# mode: a broken link or anchor, or an API name that does not resolve, fails
# it. make test builds it too (tests/e2e/test_docs.py). Nothing is fetched.
# The theme's banner about its successor is silenced; its warnings are not.
docs: install
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

# Regenerate the checked-in contracts under specs/ from the code.
specs: install
	$(BIN)/python specs/generate.py

# Benchmarks print their figures, with ratios to a peer measured in the same
# run (the machine may be shared); about 20 minutes in all on 2 cores.
bench: bench-core bench-stores bench-runtime bench-cold bench-postgres bench-mcp bench-calendar bench-calendar-ops bench-reminders bench-dashboard bench-timer-yield

bench-core: install
	$(BIN)/python bench/core.py

bench-stores: install
	$(BIN)/python bench/stores.py

bench-runtime: install
	$(BIN)/python -m bench.runtime

# tickler worker --store on 100,000 cold sessions (JSONL and SQLite) beside
# APScheduler 3 on its SQLite job store; a few minutes.
bench-cold: install
	$(BIN)/python -m bench.cold

# PostgreSQL workers against procrastinate, on the local server (127.0.0.1:5432).
bench-postgres: install
	$(BIN)/python -m bench.postgres

# A fleet waking to 100,000 due reminders, drained at --max-rate (about 10
# minutes; not part of `make bench`). `python -m bench.pacing --quick` is shorter.
bench-pacing: install
	$(BIN)/python -m bench.pacing

# PostgreSQL at 100,000 and 1,000,000 bulk-loaded sessions: table and wake
# index sizes, claim latency, 1/2/4 workers draining 10,000 due at once,
# tickler reminders and db migrate, the commit rate (about 6 minutes; not
# part of `make bench`). `python -m bench.pg_scale --quick` is 10,000 sessions.
bench-pg-scale: install
	$(BIN)/python -m bench.pg_scale

# The MCP server's memory for one large prompt, beside the SDK's own transport.
bench-mcp: install
	$(BIN)/python bench/mcp_memory.py

# Calendar rules: next occurrence per wake against croniter and APScheduler 3.
bench-calendar: install
	$(BIN)/python -m bench.next_occurrence

# tickler reminders over 100,000 PostgreSQL sessions beside a full scan of
# the events; over JSONL and SQLite too (fewer sessions). A few minutes.
bench-reminders: install
	$(BIN)/python -m bench.reminders

# The dashboard and tickler reminders --limit 10 over 5,000 JSONL and SQLite
# sessions holding 60,000 reminders, beside a read of every session.
bench-dashboard: install
	$(BIN)/python -m bench.dashboard

# Create, delete, deliver and list with 10,000 calendar reminders in a session
# against 10 (the core and a session; the bound is 1.3x).
bench-calendar-ops: install
	$(BIN)/python -m bench.calendar_ops

# A store's sync thread handing its result back while the timer heap yields
# before a target, with the heap's pauses and without them (a few seconds).
bench-timer-yield: install
	$(BIN)/python -m bench.timer_yield

clean:
	rm -rf $(VENV) build site *.egg-info .mypy_cache .pytest_cache .ruff_cache .hypothesis
