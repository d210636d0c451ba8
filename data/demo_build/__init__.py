"""Build helpers for the judgepool demo collection (see data/README.md).

Imported by data/build_collection.py, which puts data/ on sys.path; data/ itself is
deliberately not a package so that it never clashes with an importable name.
"""
