"""One import root: the wheel installs `judgepool/...` only, and files named like our packages in
the user's working folder (a `metrics.py` is common in ML projects) shadow nothing."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import urllib.request
import zipfile
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.dashboard_browser import free_port, serve_dashboard

SHADOWS = ("metrics", "judge", "ui", "pooling")
COPY_IGNORE = shutil.ignore_patterns(
    ".venv", ".git", "bench", "build", "dist", "*.egg-info", "__pycache__", ".*_cache", "*.duckdb"
)


@pytest.mark.slow
def test_the_wheel_holds_only_the_judgepool_package(tmp_path: Path) -> None:
    source = tmp_path / "src"
    shutil.copytree(REPO, source, symlinks=True, ignore=COPY_IGNORE)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path / "dist"),
            str(source),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    (wheel,) = (tmp_path / "dist").glob("judgepool-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/", 1)[0] for name in names}
    assert tops == {"judgepool", f"{wheel.name.split('-')[0]}-{wheel.name.split('-')[1]}.dist-info"}
    for package in SHADOWS:  # each folder is inside, under the one root
        assert f"judgepool/{package}/__init__.py" in names
    assert "judgepool/judge/prompts/relevance-v1.txt" in names
    assert "judgepool/py.typed" in names
    assert "judgepool/ui/app.py" in names
    assert "judgepool/ui/dashboard_server.py" in names
    top_level = next(n for n in names if n.endswith("top_level.txt"))
    assert zipfile.ZipFile(wheel).read(top_level).decode().split() == ["judgepool"]


def _shadowing_folder(tmp_path: Path) -> Path:
    """A user's folder whose metrics.py, judge.py, ui.py and pooling.py refuse to be imported."""
    folder = tmp_path / "project"
    folder.mkdir()
    for name in SHADOWS:
        (folder / f"{name}.py").write_text(
            f"raise RuntimeError('the user\\'s own {name}.py was imported by judgepool')\n"
        )
    return folder


def _judgepool(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name("judgepool")
    return subprocess.run(
        [str(exe), *args],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": ""},
    )


def test_eval_runs_from_a_folder_with_modules_named_like_ours(tmp_path: Path) -> None:
    folder = _shadowing_folder(tmp_path)
    (folder / "run.trec").write_text("q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 1.0 r\n")
    (folder / "qrels.txt").write_text("q1 0 d1 1\nq1 0 d2 0\n")
    db = str(folder / "eval.duckdb")
    for args in (("ingest", "run", "run.trec"), ("ingest", "qrels", "qrels.txt")):
        done = _judgepool(folder, "--db", db, *args)
        assert done.returncode == 0, done.stderr
    done = _judgepool(folder, "--db", db, "eval", "--format", "json")
    assert done.returncode == 0, done.stderr
    assert '"nDCG@10": 1.0' in done.stdout


APP_RUN = """
import sys
from streamlit.testing.v1 import AppTest
assert sys.path[0] in ("", ".") or sys.path[0].endswith("project"), sys.path[:2]
at = AppTest.from_file(sys.argv[1], default_timeout=60)
at.run()
assert not at.exception, [e.message for e in at.exception]
print("titles:", [t.value for t in at.title])
"""


@pytest.mark.slow
def test_the_dashboard_serves_from_a_folder_with_modules_named_like_ours(tmp_path: Path) -> None:
    folder = _shadowing_folder(tmp_path)
    (folder / "run.trec").write_text("q1 Q0 d1 1 2.0 r\n")
    (folder / "qrels.txt").write_text("q1 0 d1 1\n")
    db = folder / "eval.duckdb"
    for args in (("ingest", "run", "run.trec"), ("ingest", "qrels", "qrels.txt")):
        assert _judgepool(folder, "--db", str(db), *args).returncode == 0
    port = free_port()
    health = f"http://127.0.0.1:{port}/_stcore/health"
    with serve_dashboard(db, port, cwd=folder), urllib.request.urlopen(health, timeout=5) as r:
        assert r.read() == b"ok"
    # The health endpoint answers before any page script runs: run the app itself the way
    # Streamlit does, with the user's folder first on sys.path.
    from judgepool.ui.commands.serve import APP

    done = subprocess.run(
        [sys.executable, "-c", APP_RUN, str(APP)],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "JUDGEPOOL_DB": str(db), "PYTHONPATH": ""},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "was imported by judgepool" not in done.stdout + done.stderr


def test_no_module_imports_the_old_top_level_names() -> None:
    import re

    old = re.compile(r"^\s*(from|import) (pooling|judge|metrics|ui)(\.|\s|$)", re.MULTILINE)
    tracked = subprocess.run(
        ["git", "ls-files", "*.py"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    offenders = [f for f in tracked if old.search((REPO / f).read_text(encoding="utf-8"))]
    assert offenders == []


def _wheel_names(source: Path, dist: Path) -> list[str]:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(dist),
            str(source),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    (wheel,) = dist.glob("judgepool-*.whl")
    return zipfile.ZipFile(wheel).namelist()


@pytest.mark.slow
def test_a_clone_without_symlinks_builds_every_module_and_the_command_runs(tmp_path: Path) -> None:
    """`git clone -c core.symlinks=false` (Windows without developer mode) checks the top-level
    links out as small text files: nothing may depend on them (issue 20)."""
    clone = tmp_path / "clone"
    subprocess.run(
        ["git", "clone", "-q", "-c", "core.symlinks=false", str(REPO), str(clone)],
        check=True,
        capture_output=True,
    )
    for name in SHADOWS:
        assert (clone / name).is_file() and not (clone / name).is_symlink()
    names = _wheel_names(clone, tmp_path / "dist")
    modules = subprocess.run(
        ["git", "ls-files", "judgepool/*.py"], cwd=clone, capture_output=True, text=True, check=True
    ).stdout.split()
    assert len(modules) > 150
    assert sorted(set(modules) - set(names)) == []
    (wheel,) = (tmp_path / "dist").glob("judgepool-*.whl")
    site = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--target",
            str(site),
            str(wheel),
        ],
        check=True,
        capture_output=True,
    )
    env = {**os.environ, "PYTHONPATH": str(site)}
    where = subprocess.run(
        [sys.executable, "-c", "import judgepool.ui.cli as m; print(m.__file__)"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert where.stdout.startswith(str(site))
    done = subprocess.run(
        [sys.executable, "-m", "judgepool.ui.cli", "--help"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert "compare" in done.stdout


@pytest.mark.parametrize("name", SHADOWS)
def test_the_top_level_links_cannot_be_imported(name: str) -> None:
    """From the checkout's root, `import pooling` fails and names the real package (a second
    copy of the modules would bring a second error tree and second registries)."""
    done = subprocess.run(
        [sys.executable, "-c", f"import {name}"],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": ""},
    )
    assert done.returncode != 0
    if (REPO / name).is_symlink():
        assert f"judgepool.{name}" in done.stderr
    else:  # a checkout without symlinks: the link is a plain file, and nothing imports
        assert "No module named" in done.stderr
