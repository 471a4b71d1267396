"""Runtime benchmarks: tickler's shell and JSONL store beside APScheduler 3.

Run from the repository root ``python -m bench.runtime`` (about 4 minutes
on 2 cores), or ``python -m bench.runtime --quick`` (smaller, under 2
minutes); ``make bench-runtime`` runs the first. ``--profile`` also runs
tickler's workers under cProfile, for their measured phase only, and prints
the hotspots (a profiled run's figures are slower than real); ``--keep``
keeps the generated data.

The same work on both sides, in one run, each part in a fresh process:

1. the disk's raw ``write`` + ``fsync`` rate: the ceiling for anything durable;
2. durable creates per second: ``schedule_create`` through
   ``ScheduleRuntime.call_tool`` (returning after its flush) on the JSONL
   store, one in flight on one session and 64 sessions each creating in a
   loop, in one process and spread over one process per core (as
   docs/performance.md advises: each session belongs to one process, all
   on one store directory; the rates add up over a window they share), and for
   information one in flight with the process pinned to one CPU (a thread
   hand-off then needs no cross-CPU wake-up, which is slow on a VM); APScheduler
   ``add_job(trigger="date")`` on a ``SQLAlchemyJobStore("sqlite:///...")``,
   sequential and from 64 threads;
3. firing lateness (arrival at the host minus the target) with 100,000
   pending reminders in one process, about 2,000 of them due within
   10-20 s at known instants; APScheduler: job start minus its run time,
   100,000 jobs in its SQLite store;
4. a burst of 10,000 reminders due at the same instant: deliveries per
   second until the last one is handed over;
5. resident memory per pending reminder (RSS delta after ``gc``);
6. start to "armed" with 100,000 pending in one session, in a fresh process,
   without and with a snapshot; the interpreter and imports separately.

The bulk data (pending reminders, APScheduler's jobs) is generated once
directly on disk; only what each figure names is timed. Beside each figure,
rows without a target say where the time goes (CPU per operation, fsyncs,
timer wake versus hand-over, garbage-collector passes). The number of
sessions held open in one process is capped by the open-files limit (the
store's descriptors per session are probed first) and printed.

Each target is a row with PASS or MISS beside APScheduler's figure from the
same run: firing lateness p99 and memory per pending reminder at or below
APScheduler's (``--quick``: 20,000 pending in 2,000 sessions; the full run:
100,000 in 10,000, as the open-files limit allows); start to armed without a
snapshot at most 2x APScheduler's, with one ahead of it; CPU per durable
create at most 40 us with 64 sessions; one create in flight at 0.3x the raw
write+fsync rate or better (the disk is called fast from 10,000 a second);
64 sessions at 20,000 creates a second or better.

The machine is shared and noisy: only ratios measured in the same run mean
much.

The parts:

* ``harness``: everything the bench uses of tickler (the store, the runtime,
  the shared timers, the line encoders), in one place;
* ``aps``: the same for APScheduler;
* ``common``: scales, targets and measuring helpers both sides use;
* ``workers``: a figure's worker runs in a fresh interpreter, with typed
  parameters and a typed result;
* ``creates``, ``fds``, ``lateness``, ``burst``, ``startup``: one module per
  scenario, each with its workers and the rows it adds;
* ``context`` and ``report``: the run's state, its rows and notes, and the
  table printed at the end; ``__main__``: the command line.
"""
