"""JupyterLab started as `workbench lab` starts it, on a folder of the test's own, and
its contents REST API: what a save from the browser (Ctrl+S, autosave) sends."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

from workbench.lab import jupyterlab_command

TOKEN = "notebook-save-test"
START_TIMEOUT = 90  # seconds, generous for a loaded 2-core machine


@contextlib.contextmanager
def running_lab(notebooks: Path, scratch: Path):
    """JupyterLab serving `notebooks` on a free port with a token (its log and runtime
    files in `scratch`); yields its base URL."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    options = [
        "--no-browser",
        f"--port={port}",
        f"--IdentityProvider.token={TOKEN}",
        f"--LabApp.workspaces_dir={scratch / 'workspaces'}",
    ]
    if os.geteuid() == 0:  # as `workbench lab` adds it
        options.append("--allow-root")
    log = scratch / "lab.log"
    with log.open("w") as out:
        server = subprocess.Popen(
            jupyterlab_command(notebooks, options),
            stdout=out,
            stderr=subprocess.STDOUT,
            env=dict(os.environ, JUPYTER_RUNTIME_DIR=str(scratch / "runtime")),
        )
        try:
            base = f"http://127.0.0.1:{port}"
            _wait_until_up(base, server, log)
            yield base
        finally:
            server.terminate()
            server.wait(timeout=30)


def _wait_until_up(base: str, server: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"JupyterLab exited with {server.returncode}: {log.read_text()[-2000:]}")
        with contextlib.suppress(OSError):
            return call(base, "GET", "api/status")
        time.sleep(0.1)
    raise RuntimeError(f"JupyterLab did not answer within {START_TIMEOUT} s: {log.read_text()[-2000:]}")


def call(base: str, method: str, path: str, body: dict | None = None) -> dict:
    """One request to the server's REST API, authenticated by the token; its JSON answer."""
    request = urllib.request.Request(
        f"{base}/{path}",
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"token {TOKEN}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.load(response)


def save_notebook(base: str, path: str, notebook: dict) -> dict:
    """Save `notebook` as the browser does: PUT /api/contents/<path>."""
    return call(base, "PUT", f"api/contents/{path}", {"type": "notebook", "format": "json", "content": notebook})
