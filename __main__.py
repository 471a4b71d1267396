"""``python -m tickler ARGS`` is ``tickler ARGS``."""

from tickler.adapters.cli import main

main()
