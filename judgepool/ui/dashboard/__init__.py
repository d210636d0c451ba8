"""The Streamlit dashboard's pages and helpers (imported only by `ui/app.py` and its pages)."""
