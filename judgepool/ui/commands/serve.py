"""`judgepool ui`: serve the Streamlit dashboard on this machine (127.0.0.1 unless --host says).

The dashboard runs as `python -P -m streamlit run ui/dashboard_server.py` (Streamlit's server
for ui/app.py, with the page HTML and warm-up of ui/dashboard/server.py) in a child process,
headless, with usage statistics off and the file watcher off; the database path reaches it through
JUDGEPOOL_DB. Its reads wait at most JUDGEPOOL_LOCK_TIMEOUT seconds for another process's write
(default here 10 s, not 60: a page then shows its last figures with a notice and tries again at
the next refresh, instead of hanging). Streamlit is imported only there, never by
`judgepool --help`.

Before anything is announced, the address is checked: a host that does not resolve or is not an
address of this machine, and a port something already listens on, are refused with what to do
(the free port to use instead). A server that stops with an error still ends with an `error:`
line.
"""

from __future__ import annotations

import errno
import os
import shlex
import signal
import socket
import subprocess
import sys
from pathlib import Path
from types import FrameType

import click

from judgepool.api.store import ENV_DB, ENV_LOCK_TIMEOUT, Store
from judgepool.errors import DatabaseError, JudgepoolError, UsageError

APP = Path(__file__).parent.parent / "dashboard_server.py"
UI_LOCK_TIMEOUT = "10"


def streamlit_command(host: str, port: int) -> list[str]:
    """The `streamlit run` command line for the dashboard.

    `-P` keeps the working folder off sys.path, so a user's own `streamlit.py` or `judgepool.py`
    there cannot shadow the real ones.
    """
    return [
        sys.executable,
        "-P",
        "-m",
        "streamlit",
        "run",
        str(APP),
        "--server.address",
        host,
        "--server.port",
        str(port),
        "--server.headless",
        "true",
        "--server.fileWatcherType",
        "none",
        "--browser.gatherUsageStats",
        "false",
        "--client.toolbarMode",
        "viewer",
    ]


def _bind_error(host: str, port: int) -> OSError | None:
    """Try to bind every address `host` resolves to, as the server will (SO_REUSEADDR)."""
    for family, kind, proto, _, address in socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    ):
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(address)
            except OSError as err:
                return err
    return None


def _free_port(host: str, after: int) -> int | None:
    """The first port above `after` that `host` can listen on now."""
    for port in range(after + 1, min(after + 100, 65535) + 1):
        try:
            if _bind_error(host, port) is None:
                return port
        except OSError:
            return None
    return None


def check_address(store: Store, host: str, port: int) -> None:
    """Refuse a host that is not this machine's or a port that is taken, with what to do."""
    command = f"judgepool --db {shlex.quote(str(store.path))} ui"
    try:
        found = _bind_error(host, port)
    except socket.gaierror as err:
        raise UsageError(
            f"cannot find host {host!r} ({err.strerror})",
            "give a name or address of this machine: --host 127.0.0.1 (this machine only) or "
            "--host 0.0.0.0 (every address)",
        ) from err
    if found is None:
        return
    if found.errno == errno.EADDRINUSE:
        free = _free_port(host, port)
        instead = f"{command} --port {free}" if free else f"{command} --port N"
        raise UsageError(
            f"port {port} on {host} is taken: another program (or another judgepool ui) "
            "listens there",
            f"stop it, or choose another port: {instead}",
        ) from found
    if found.errno == errno.EADDRNOTAVAIL:
        raise UsageError(
            f"{host} is not an address of this machine",
            f"listen on one of its own: {command} --host 127.0.0.1 (this machine only) or "
            "--host 0.0.0.0 (every address)",
        ) from found
    if found.errno == errno.EACCES:
        raise UsageError(
            f"port {port} needs privileges this process does not have",
            f"use a port above 1023: {command} --port 8501",
        ) from found
    raise found


@click.command("ui")
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on; 0.0.0.0 exposes the dashboard (and your labels) to the network.",
)
@click.option(
    "--port",
    type=click.IntRange(1, 65535),
    default=8501,
    show_default=True,
    help="Port to listen on.",
)
@click.option(
    "--db",
    "db",
    metavar="FILE",
    default=None,
    help="The database to show (the same as `judgepool --db FILE ui`).",
)
@click.pass_obj
def ui(store: Store, host: str, port: int, db: str | None) -> None:
    """Serve the dashboard (Runs, Compare, Audit, Export) at http://HOST:PORT.

    It stays usable while `judgepool judge` writes to the same database from another process.
    """
    if db is not None:
        store = Store(db)
    if not store.exists():
        raise DatabaseError(
            f"no database at {store.path}",
            "create it with `judgepool ingest ...`, or point --db / JUDGEPOOL_DB at it",
        )
    check_address(store, host, port)
    env = {ENV_LOCK_TIMEOUT: UI_LOCK_TIMEOUT, **os.environ, ENV_DB: str(store.path.resolve())}
    click.echo(f"judgepool dashboard on http://{host}:{port} (database {store.path}); Ctrl-C stops")
    code = serve(streamlit_command(host, port), env)
    if code not in (0, -signal.SIGINT, -signal.SIGTERM):
        raise JudgepoolError(
            f"the dashboard server stopped with exit code {code}",
            "see its messages above; if the port was taken meanwhile, choose another with "
            "--port N, and run with JUDGEPOOL_DEBUG=1 to see more",
        )


def serve(command: list[str], env: dict[str, str]) -> int:
    """Run the server and wait; a SIGTERM to us is passed on, so no server is left orphaned."""
    server = subprocess.Popen(command, env=env)

    def forward(signum: int, frame: FrameType | None) -> None:
        server.send_signal(signum)

    previous = signal.signal(signal.SIGTERM, forward)
    try:
        return server.wait()
    except KeyboardInterrupt:  # the terminal sent SIGINT to both of us: let it finish
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
        raise
    finally:
        signal.signal(signal.SIGTERM, previous)
