"""The trust loop's data: audit samples, a person's grades, overrides, label browsing and
the human-labelled pairs that calibration re-judges."""
