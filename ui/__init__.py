"""The `judgepool` command line and the Streamlit dashboard: thin layers over the libraries."""
