"""Measures, bootstrap intervals, paired comparisons and the judged@k gate."""

if __name__ != "judgepool.metrics":  # imported through the top-level link `metrics/`
    raise ImportError(
        f"the code lives in judgepool.metrics: write `import judgepool.metrics`, "
        f"not `import {__name__}` "
        "(the folder metrics/ at the repository's top is a link for reading, not a package)"
    )
