"""Names vulture calls unused that are used, reviewed one by one (`make deadcode`, in
`make check`): each is public API, a schema field, a field a report or a later issue reads, or
a reference a test checks our numbers against. A name that is truly dead is deleted, not
listed here."""

# ruff: noqa: B018, F821
# Public API of jp.Database and its results (library users call them; tests/test_api.py).
_.ajudge
_.submit_batch
_.collect_batches
_.cancel_batch
_.audit_pairs
_.raise_for_floors
_.odd_lines
# The JSON report's pydantic fields (docs/report.schema.json is generated from them).
_.ppi
_.ppi_reason
_.ppi_forecast
_.comparisons
_.judge_run
_.fooled_by_canaries
_.audit_ci95
_.shift_ci95
_.verdict_detail
# Fields of what a run, a batch or a draw returns, kept for the reports and the tests that
# check printed = stored (issue 22).
_.labels_written
_.http_status
_.duplicates
_.jury_canaries
_.judge_mask
_.judge_labeller
_.collectable
# Reads of the store that tests and the dashboard's bench use to check what a run left.
_.holders
_.judge_runs
_.schema_version
_.embedding_count
_.db_version
# The bare labelling loop (judge/run/plan.py), for callers that want no canary, jury or record.
_.backfill
# References: ppi_py's own estimator, checked against ppi-python to 1e-9 (tests/test_ppi.py), and
# the numerics tests check ours with (t distribution, binary relevance).
_.PPI_PY
_.ppi_mean_difference
_.t_cdf
_.binary
# litellm's module switch, set on import to keep it quiet (judge/litellm_env.py).
_.suppress_debug_info
# The ASGI app `streamlit run ui/dashboard_server.py` finds by its name (judgepool ui).
_.app
# The report's model: docs/make_report_schema.py publishes it, and the tests check every printed
# report against it (tests/report_shape.py); the commands no longer run it (issue 23).
_.Report
# click.Group's hooks, which click calls: the `judgepool` group loads its commands on first use.
_.list_commands
_.get_command
