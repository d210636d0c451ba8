"""One judge run, from the options to the record: the orchestration `judgepool judge`,
`judgepool calibrate` and `jp.Database.judge` share (through the service api/judge.py).

plan.py         holes -> requests (`plan_holes`), the dry run's `forecast`, the bare loop
session.py      `prepare` (options -> model, pool before, plan, judges, canaries), `ending`
panel.py        a jury's members and the canary plan, refused before anything is paid
members.py      `run_all`: every member's loop, then the canaries, then the jury; `dry_runs`
result.py       `JudgeRun`: what a run did, and `Bars`, how it shows progress
record.py       the run's rows in judge_runs, with the canary check
calibration.py  re-judging pairs people labelled through the same machinery
"""
