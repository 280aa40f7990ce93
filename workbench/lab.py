"""JupyterLab as `workbench lab` starts it: on the repository's notebooks, saving each
notebook without what running it added, so that running and saving one (Ctrl+S, or
JupyterLab's autosave) leaves `git status` clean.

The server's contents manager strips the notebook before it writes it (a
`pre_save_hook`): the outputs (which show the database's absolute path), execution
counts, the widget state (model ids, and whatever the widgets held) and the cell
metadata about a run or its outputs. The open notebook keeps its outputs in the browser;
only the file is clean. A hook in the server, rather than a git filter, keeps the file
itself clean, whatever tool reads it, with nothing to install in each clone.
"""

from __future__ import annotations

import sys
from pathlib import Path

# Cell metadata that describes a run or its outputs: timings (JupyterLab's
# `recordTiming`, nbclient), and outputs collapsed or scrolled.
RUN_METADATA = ("execution", "collapsed", "scrolled")


def jupyterlab_command(notebooks: Path, extra: list[str]) -> list[str]:
    """The command line that starts JupyterLab on `notebooks`, saving notebooks clean;
    `extra`: further JupyterLab options."""
    return [
        sys.executable,
        "-m",
        "jupyterlab",
        f"--notebook-dir={notebooks}",
        f"--ContentsManager.pre_save_hook={__name__}.{strip_run_state.__name__}",
        *extra,
    ]


def strip_run_state(model: dict, **_context) -> None:
    """Jupyter's pre-save hook: the notebook in the contents `model`, about to be written,
    as it was before it ran (other files are left as they are)."""
    if model.get("type") != "notebook" or not isinstance(model.get("content"), dict):
        return
    notebook = model["content"]
    notebook.get("metadata", {}).pop("widgets", None)
    for cell in notebook.get("cells", []):
        metadata = cell.get("metadata", {})
        for key in RUN_METADATA:
            metadata.pop(key, None)
        if "jupyter" in metadata:
            metadata["jupyter"].pop("outputs_hidden", None)
            if not metadata["jupyter"]:
                del metadata["jupyter"]
        if cell.get("cell_type") == "code":
            cell["outputs"], cell["execution_count"] = [], None
