"""Measures, bootstrap intervals, paired comparisons and the judged@k gate."""
