"""Reports of evaluations and comparisons: JSON model, plain rows, text, markdown, HTML and SVG.

Rendering only: every figure is computed by judgepool.metrics before it gets here."""
