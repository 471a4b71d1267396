"""PostgreSQL at scale: a million sessions with pending reminders.

    python -m bench.pg_scale [--sessions N [N ...]] [--burst N] [--quick] [--dsn DSN]

By default 100,000 then 1,000,000 sessions, each size in a fresh database
of its own (dropped after, also on failure), loaded with COPY, never
through the tools (:mod:`.load`: the rows a real session has, checked by
:mod:`.check` before anything is measured). For each size it prints, side
by side with the growth from the first size to the last:

* the size of each table and index, the wake index among them (:mod:`.sizes`);
* the claim's latency, median and p99, as the worker calls it (:mod:`.claim`);
* 1, 2 and 4 ``tickler worker --dsn`` processes draining 10,000 occurrences
  due at once, each delivered exactly once (checked), with the workers'
  peak resident memory and the CPU and database transactions a delivery
  costs (:mod:`.drain`);
* ``tickler reminders DSN --due-within 1h`` (and its query in process,
  :mod:`.read_model`) and ``tickler db migrate`` on the loaded schema
  (:mod:`.commands`);

and, once, the database's commit rate from 1, 4 and 16 connections
(:mod:`.commit_rate`), the constant the capacity model in docs/performance.md needs.
``--quick`` is 10,000 sessions and a burst of 2,000 (about a minute).
"""
