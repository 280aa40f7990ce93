"""The form notebooks are stored in: what JupyterLab itself writes when it saves one
that was only opened, so that opening a notebook leaves `git status` clean.

JupyterLab fills the notebook's `kernelspec` and `language_info` from the kernel it
starts and saves with nbformat's layout (sorted keys, one-space indent). Stored that
way, with no outputs, a notebook opened and saved is byte for byte the same file
(`language_info.version` excepted, on a Python other than the one it was stored with).

`python -m tests.notebook_form` rewrites every notebook under `notebooks/` in this form.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


def kernel_metadata() -> dict:
    """`kernelspec` and `language_info` as the installed python3 kernel reports them."""
    from ipykernel.ipkernel import IPythonKernel
    from jupyter_client.kernelspec import KernelSpecManager

    spec = KernelSpecManager().get_kernel_spec("python3")
    return {
        "kernelspec": {"display_name": spec.display_name, "language": spec.language, "name": "python3"},
        "language_info": dict(IPythonKernel.language_info),
    }


def canonical(text: str) -> str:
    """The notebook `text` as JupyterLab would save it right after opening it."""
    nb = nbformat.reads(text, as_version=4)
    nb.metadata.update(kernel_metadata())
    return nbformat.writes(nb) + "\n"


def main() -> int:
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        text = path.read_text()
        if canonical(text) != text:
            path.write_text(canonical(text))
            print(f"rewrote {path.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
