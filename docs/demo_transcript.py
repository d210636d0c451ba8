"""README's demo transcript, from a real run: check it (the default) or write it (`--write`).

Issue 24: the transcript in README did not match a fresh run. This runs `judgepool demo` as
README says (its own folder with a copy of data/, so every run starts from an empty database and
an empty judge cache, and prints the same paths), then compares its output with the block
between README's `<!-- demo-transcript ... -->` marker and the end of the code block. What a
run cannot repeat is set aside before comparing: durations (`labelled in 1.1 s`, `demo finished
in 67 s`) and dates (a judge run's day). `--write` puts the new run's output in README.

Run: .venv/bin/python docs/demo_transcript.py [--write]   (a few minutes: the offline judge)
tests/test_demo.py runs the check (slow).
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
MARKER = "<!-- demo-transcript: pasted from a real run of `.venv/bin/judgepool demo` -->"
# What differs from run to run, and what it reads as once set aside.
VOLATILE = (
    (re.compile(r"\b\d+(\.\d+)? s\b"), "N s"),
    (re.compile(r"\b\d{4}-\d{2}-\d{2}\b"), "YYYY-MM-DD"),
)


def demo_process(folder: Path) -> subprocess.CompletedProcess[str]:
    """`judgepool demo` run in the empty `folder` given a copy of data/, as README says; what it
    wrote (the demo database, its judge cache) stays there. tests/test_demo.py reads both the
    output and the database of one such run."""
    judgepool = Path(sys.executable).with_name("judgepool")
    shutil.copytree(REPO / "data", folder / "data")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    return subprocess.run(
        [str(judgepool), "demo", "--data", "data"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )


def run_demo() -> str:
    """The output of `judgepool demo` in a fresh folder holding a copy of data/."""
    with tempfile.TemporaryDirectory(prefix="judgepool-demo-") as folder:
        done = demo_process(Path(folder))
    if done.returncode != 0:
        raise SystemExit(f"judgepool demo failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return done.stdout


def normalise(text: str) -> str:
    """`text` with what a run cannot repeat set aside, and no trailing blanks."""
    for pattern, instead in VOLATILE:
        text = pattern.sub(instead, text)
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


def block(readme: str) -> tuple[int, int]:
    """Where README's transcript lies: the start and end offsets of its code block's body."""
    at = readme.index(MARKER)
    start = readme.index("```\n", at) + len("```\n")
    return start, readme.index("\n```\n", start) + 1


def differences(readme: str, output: str) -> list[str]:
    """The lines where README's transcript and a run's output differ (none: they agree)."""
    start, end = block(readme)
    shown, ran = normalise(readme[start:end]), normalise(output)
    return list(difflib.unified_diff(shown.splitlines(), ran.splitlines(), "README", "run", n=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="put the run's output in README")
    args = parser.parse_args()
    output = run_demo()
    readme = README.read_text(encoding="utf-8")
    if args.write:
        start, end = block(readme)
        README.write_text(readme[:start] + output.strip() + "\n" + readme[end:], encoding="utf-8")
        print("README's demo transcript written from this run")
        return
    found = differences(readme, output)
    if found:
        print("\n".join(found))
        raise SystemExit("README's demo transcript differs from a real run: run with --write")
    print("README's demo transcript matches a real run")


if __name__ == "__main__":
    main()
