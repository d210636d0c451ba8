"""The `judgepool` command line and the Streamlit dashboard: thin layers over the libraries."""

if __name__ != "judgepool.ui":  # imported through the top-level link `ui/`
    raise ImportError(
        f"the code lives in judgepool.ui: write `import judgepool.ui`, "
        f"not `import {__name__}` "
        "(the folder ui/ at the repository's top is a link for reading, not a package)"
    )
