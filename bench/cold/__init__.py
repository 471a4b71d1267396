"""Cold sessions on one machine: ``tickler worker --store`` beside
APScheduler 3 (a BackgroundScheduler on its SQLAlchemy job store on SQLite),
doing the same work in the same run.

Run from the repository root ``python -m bench.cold`` (about 6 minutes on
2 cores), or ``python -m bench.cold --quick`` (10,000 sessions, about 2
minutes); ``make bench-cold`` runs the first. ``--profile`` also runs
tickler's workers under cProfile and prints their hotspots (its figures are
slower than real); ``--keep`` keeps the generated data.

The stores are generated directly on disk (:mod:`bench.cold.stores`):
100,000 cold sessions of one one-shot reminder each, in a JSONL directory
and in an SQLite store file, with their wake index rows exact, and the same
reminders as date jobs in APScheduler's job store. A correctness check runs
first (:mod:`bench.cold.check`): a worker on a small generated store
delivers each overdue occurrence once and nothing else, and rewrites the
rows it is asked to look at again exactly as generated. Every run below is
checked the same way (each expected occurrence delivered exactly once).

The figures, each in fresh processes (the worker is the ``tickler worker``
command a user runs; its target, :mod:`bench.cold.target`, notes the wall
time of each delivery):

1. process start to first delivery, 100,000 sessions, one of them overdue
   (APScheduler: process start to its first job run, 100,000 jobs);
2. peak resident memory of the worker at 1,000 and 100,000 sessions, and
   after figure 3's deliveries;
3. firing lateness (delivery minus the occurrence's instant) for 2,000
   occurrences due evenly over 20 s among 100,000 sessions (APScheduler:
   job run minus its run date);
4. what the worker asks its wake index each round (the due sessions, the
   next wake), per call, at 1,000 and 100,000 sessions (APScheduler:
   ``get_due_jobs`` and ``get_next_run_time`` of its job store).

The machine may be shared: only ratios measured in the same run mean much.

The parts: ``plan`` (scale, targets, the run's state), ``stores`` and
``data`` (the generated stores), ``check``, ``process`` (a worker process
and its log), ``target`` (what both sides call), ``peer`` and ``aps_start``
(APScheduler's side), ``timing``, and one module per figure group:
``start`` (1 and 2), ``lateness`` (3), ``index`` (4).
"""
