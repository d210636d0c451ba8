"""The `judgepool` subcommands, one module per group of verbs."""
