"""The database: its file and connections, the schema and each feature's tables.

The only place SQL touches the schema; io (files) sits below it, pools and ingest above."""
