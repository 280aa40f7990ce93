"""Running a notebook headless as the tests do, and reading what it showed: cell outputs,
errors, and the outputs and charts of the widgets it displayed."""

from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.output_widget import OutputWidget

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
NAMES = sorted(path.stem for path in NOTEBOOKS.glob("*.ipynb"))


class OutputWidgetRecorder(OutputWidget):
    """Records what an Output widget shows without echoing it back to the kernel: nbclient
    sends that echo on the shell channel while it waits there for the execute reply,
    and now and then the cell then stalls until the timeout (jupyter/nbclient#312)."""

    def sync_state(self) -> None:
        pass


def run_notebook(name: str, db: Path, monkeypatch) -> nbformat.NotebookNode:
    monkeypatch.setenv("WORKBENCH_DB", str(db))  # the kernel inherits the environment
    nb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    client = NotebookClient(nb, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOKS)}})
    client.widget_registry["@jupyter-widgets/output"]["OutputModel"] = OutputWidgetRecorder
    client.execute()
    return nb


def errors_in(nb) -> list[str]:
    """Error outputs of cells and of Output widgets (callbacks of interactive views)."""
    outputs = [out for cell in nb.cells for out in cell.get("outputs", [])]
    state = nb.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {}).get("state", {})
    outputs += [out for model in state.values() for out in model.get("state", {}).get("outputs") or []]
    return [f"{out.get('ename')}: {out.get('evalue')}" for out in outputs if out.get("output_type") == "error"]


def section_outputs(nb, heading: str) -> list:
    """The outputs of the code cells under the markdown heading `heading`, up to the next."""
    at = next(i for i, cell in enumerate(nb.cells) if cell.cell_type == "markdown" and cell.source.startswith(heading))
    outputs = []
    for cell in nb.cells[at + 1:]:
        if cell.cell_type == "markdown" and cell.source.startswith("## "):
            break
        outputs += cell.get("outputs", [])
    return outputs + widget_outputs(nb, outputs)


def widget_models(nb, outputs) -> list[dict]:
    """The widget models (name and state) reachable from `outputs`: each widget shown,
    the children of its boxes and what its Output widgets show, however deeply nested."""
    state = nb.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {}).get("state", {})

    def shown_in(outs) -> list[str]:
        return [out["data"]["application/vnd.jupyter.widget-view+json"]["model_id"]
                for out in outs if "application/vnd.jupyter.widget-view+json" in out.get("data", {})]

    todo, models, seen = shown_in(outputs), [], set()
    while todo:
        model_id = todo.pop()
        if model_id in seen or model_id not in state:
            continue
        seen.add(model_id)
        models.append(state[model_id])
        model = state[model_id].get("state", {})
        todo += [child.removeprefix("IPY_MODEL_") for child in model.get("children") or []]
        todo += shown_in(model.get("outputs") or [])
    return models


def widget_outputs(nb, outputs) -> list:
    """What the widgets among `outputs` show: the outputs of every Output widget in them
    (the charts that follow a control live there), and each JupyterChart's spec."""
    shown = []
    for model in widget_models(nb, outputs):
        state = model.get("state", {})
        shown += state.get("outputs") or []
        if isinstance(state.get("spec"), dict):  # a JupyterChart: its spec, as a display would carry it
            shown.append({"data": {"application/vnd.vegalite.v5+json": state["spec"]}})
    return shown


def widget_texts(nb, outputs) -> list[str]:
    """The text of every HTML widget reachable from `outputs`."""
    return [model["state"].get("value", "") for model in widget_models(nb, outputs)
            if model.get("model_name") == "HTMLModel"]


def chart_titles(outputs) -> list[str]:
    """The titles of the Vega-Lite charts among `outputs` (a concatenation's own title)."""
    specs = [data for out in outputs for mime, data in out.get("data", {}).items() if "vegalite" in mime]
    titles = []
    for spec in specs:
        title = spec.get("title", "")
        titles.append(title.get("text", "") if isinstance(title, dict) else title)
    return titles


def all_outputs(nb) -> list:
    """Every output of every cell, with what its widgets show."""
    outputs = [out for cell in nb.cells for out in cell.get("outputs", [])]
    return outputs + widget_outputs(nb, outputs)
