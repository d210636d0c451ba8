"""judgepool: know whether a retrieval change made search better.

The four parts of the product live in the repository's folders and import under this one root:
`judgepool.pooling` (the database: ingest, pools, labels), `judgepool.judge` (judges that fill the
holes), `judgepool.metrics` (measures, intervals, comparisons) and `judgepool.ui` (the command and
the dashboard).
"""

from __future__ import annotations

from importlib import metadata

try:
    __version__ = metadata.version("judgepool")
except metadata.PackageNotFoundError:  # a checkout used without installing it
    __version__ = "0+unknown"
