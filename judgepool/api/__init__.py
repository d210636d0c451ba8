"""The front door: `Database` and one service function per verb, which the CLI and the
dashboard call too."""
