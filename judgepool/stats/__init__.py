"""Numerics with no knowledge of runs: agreement (kappa, alpha, tau) and t quantiles."""
