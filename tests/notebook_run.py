"""Running a notebook headless as the tests do, and reading what it showed: cell outputs,
errors, and the outputs and charts of the widgets it displayed.

Each run has a fresh kernel of its own. `Runs` starts the runs a session's tests will
read ahead of them, a few kernels at a time (`WORKBENCH_NOTEBOOK_JOBS`; by default one per
core, the cores shared out among xdist's workers)."""

from __future__ import annotations

import contextlib
import os
import tempfile
import threading
from collections.abc import Callable, Hashable
from concurrent.futures import Future
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.output_widget import OutputWidget

from tests.xdist_groups import group_suffix

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
NAMES = sorted(path.stem for path in NOTEBOOKS.glob("*.ipynb"))


def cores_of_this_worker() -> int:
    """The cores this process may use, shared with the other xdist workers: how many
    kernels (or browser tabs) to keep busy at once without crowding them out."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, cores // int(os.environ.get("PYTEST_XDIST_WORKER_COUNT") or 1))


JOBS = int(os.environ.get("WORKBENCH_NOTEBOOK_JOBS") or cores_of_this_worker())


class OutputWidgetRecorder(OutputWidget):
    """Records what an Output widget shows without echoing it back to the kernel: nbclient
    sends that echo on the shell channel while it waits there for the execute reply,
    and now and then the cell then stalls until the timeout (jupyter/nbclient#312)."""

    def sync_state(self) -> None:
        pass


# Run silently in each kernel before the notebook (no execution count, no output, no name
# left behind): vl-convert's `javascript_bundle`, a pure function of its arguments that
# takes 1.5-3 s (altair's `JupyterChart.enable_offline` calls it in every kernel, and so
# does an inline HTML export), answers from files the first kernel to ask wrote. The
# notebook still calls it as always and gets the same text.
_MEMOISE_BUNDLES = """
def memoise(folder):
    import contextlib, hashlib, json, os, pathlib, vl_convert

    try:
        from fcntl import LOCK_EX, flock
    except ImportError:  # no file locks: kernels that ask at once each make it
        def flock(file, operation):
            pass
        LOCK_EX = 0

    bundle = vl_convert.javascript_bundle

    def javascript_bundle(snippet=None, vl_version=None):
        key = json.dumps([getattr(vl_convert, "__version__", ""), snippet, vl_version])
        path = pathlib.Path(folder) / (hashlib.sha256(key.encode()).hexdigest() + ".js")
        with open(path.with_suffix(".lock"), "w") as lock:
            flock(lock, LOCK_EX)  # the first kernel to ask makes it; the others wait for it
            with contextlib.suppress(FileNotFoundError):
                return path.read_text()
            text = bundle(snippet, vl_version=vl_version) if snippet is not None else bundle(vl_version=vl_version)
            part = path.with_suffix(".part")
            part.write_text(text)
            os.replace(part, path)  # a kernel killed while it writes leaves no half a bundle
            return text

    vl_convert.javascript_bundle = javascript_bundle
"""


def run_notebook(name: str, db: Path, bundles: Path | None = None) -> nbformat.NotebookNode:
    """`name` run top to bottom in a fresh kernel whose $WORKBENCH_DB is `db`; with
    `bundles`, a folder that keeps vl-convert's JavaScript bundles across kernels."""
    nb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    # "immediate": the kernel is killed once the last cell is done, not asked to stop and
    # waited for (a second or so per run).
    client = NotebookClient(
        nb,
        timeout=180,
        kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOKS)}},
        shutdown_kernel="immediate",
    )
    client.widget_registry["@jupyter-widgets/output"]["OutputModel"] = OutputWidgetRecorder
    if bundles is not None:
        setup = _MEMOISE_BUNDLES + f"memoise({str(bundles)!r})\n"

        async def memoise_bundles(**_) -> None:
            code = f"exec({setup!r}, {{}})"  # in a namespace of its own: the notebook's stays empty
            reply = await client.async_wait_for_reply(client.kc.execute(code, silent=True, store_history=False))
            assert reply and reply["content"]["status"] == "ok", reply and reply["content"]

        client.on_notebook_start = memoise_bundles
    # The kernel's own messages (a warning as it starts, a crash) go to a file of its own
    # and not to the worker's terminal, which a run started between tests writes to;
    # a run that fails says what its kernel wrote.
    with tempfile.TemporaryFile() as said:
        try:
            client.execute(env=dict(os.environ, WORKBENCH_DB=str(db)), stderr=said)  # the kernel's environment
        except Exception as exc:
            said.seek(0)
            exc.add_note(f"{name}'s kernel wrote: {said.read()[-2000:].decode(errors='replace')}")
            raise
    return nb


def _import_what_a_run_imports() -> None:
    """Import in this thread what a first run imports: a package that two threads import
    at once can be found half made by one of them (IPython's circular imports then fail)."""
    import IPython  # noqa: F401
    from jupyter_client.kernelspec import KernelSpecManager

    KernelSpecManager().get_kernel_spec("python3")
    NotebookClient(nbformat.v4.new_notebook(), kernel_name="python3").create_kernel_manager()
    with contextlib.suppress(ImportError):
        import psutil  # noqa: F401 - jupyter_client's kernel shutdown imports it


class Runs:
    """Work (notebook runs) started ahead of the tests that read it, `jobs` at a time in
    threads of their own, in the order it was asked for; what a test waits for goes first.
    One per session (`shared`), so that no more than `jobs` kernels run at once."""

    _shared: Runs | None = None

    def __init__(self, jobs: int = JOBS) -> None:
        _import_what_a_run_imports()
        self._ready = threading.Condition()
        self._queue: list[Hashable] = []  # not started yet, next first
        self._work: dict[Hashable, tuple[Callable, tuple]] = {}
        self._futures: dict[Hashable, Future] = {}
        for _ in range(max(1, jobs)):
            threading.Thread(target=self._worker, daemon=True, name="notebook-runs").start()

    @classmethod
    def shared(cls) -> Runs:
        if cls._shared is None:
            cls._shared = cls()
        return cls._shared

    def start(self, key: Hashable, work: Callable, *args, first: bool = False) -> Future:
        """Start `work(*args)` when a worker is free (before all else if `first`); the
        one future of `key`, however often it is started."""
        with self._ready:
            future = self._futures.get(key)
            if future is None:
                future = self._futures[key] = Future()
                self._work[key] = (work, args)
                self._queue.append(key)
            if first and key in self._queue:
                self._queue.remove(key)
                self._queue.insert(0, key)
            self._ready.notify()
            return future

    def forget(self, keys) -> None:
        """Drop the work of `keys` that has not started: it never will. (What runs ends on
        its own; its kernel with it.)"""
        with self._ready:
            for key in keys:
                if key in self._queue:
                    self._queue.remove(key)
                    del self._work[key]
                    self._futures.pop(key).cancel()

    def _worker(self) -> None:
        while True:
            with self._ready:
                while not self._queue:
                    self._ready.wait()
                key = self._queue.pop(0)
                work, args = self._work.pop(key)
                future = self._futures[key]
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(work(*args))
                except BaseException as exc:  # noqa: BLE001 - handed to the test that waits
                    with self._ready:  # and run again for the next test that asks for it
                        self._futures.pop(key, None)
                    future.set_exception(exc)


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
    for cell in nb.cells[at + 1 :]:
        if cell.cell_type == "markdown" and cell.source.startswith("## "):
            break
        outputs += cell.get("outputs", [])
    return outputs + widget_outputs(nb, outputs)


def widget_models(nb, outputs) -> list[dict]:
    """The widget models (name and state) reachable from `outputs`: each widget shown,
    the children of its boxes and what its Output widgets show, however deeply nested."""
    state = nb.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {}).get("state", {})

    def shown_in(outs) -> list[str]:
        return [
            out["data"]["application/vnd.jupyter.widget-view+json"]["model_id"]
            for out in outs
            if "application/vnd.jupyter.widget-view+json" in out.get("data", {})
        ]

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
    return [
        model["state"].get("value", "")
        for model in widget_models(nb, outputs)
        if model.get("model_name") == "HTMLModel"
    ]


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


def bundle_folder(tmp_path_factory) -> Path:
    """The session's folder of vl-convert bundles, shared by its kernels (`run_notebook`),
    those of every xdist worker too (a worker's temporary folder is in the session's)."""
    base = tmp_path_factory.getbasetemp()
    folder = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "vl-convert-bundles"
    folder.mkdir(exist_ok=True)
    return folder


def ahead(request, fixture: str, params: tuple[str, ...]) -> list[tuple]:
    """The values of `params` of each selected test that uses `fixture`, in the order the
    tests run, each once: what to start ahead of them (none where this process may not run
    those tests: `sent_here`)."""
    items = [item for item in request.session.items if fixture in getattr(item, "fixturenames", ())]
    if not sent_here(request.config, items):
        return []
    wanted = []
    for item in items:
        values = getattr(getattr(item, "callspec", None), "params", {})
        if all(param in values for param in params):
            value = tuple(values[param] for param in params)
            if value not in wanted:
                wanted.append(value)
    return wanted


def sent_here(config, items) -> bool:
    """Whether this process runs all of `items` (selected tests), or at least all of their
    `xdist_group`: without xdist it does; an xdist worker does when `--dist loadgroup` sends
    each group whole to one worker, which it shows by the group's name after every node id
    (`...@notebooks`, `group_suffix`; tests/xdist_groups.py warns where it does not): a
    worker that was not sent a whole group starts nothing ahead."""
    if not hasattr(config, "workerinput"):
        return True
    return bool(config.getvalue("loadgroup")) and all(
        (suffix := group_suffix(item)) and item.nodeid.endswith(suffix) for item in items
    )


@contextlib.contextmanager
def started_ahead(
    request, fixture: str, params: tuple[str, ...], work: Callable, wanted: Callable[..., bool] = lambda *values: True
):
    """For a fixture that gives `work(*values)`, once per values of `params`: the work of
    the selected tests that use `fixture` (`ahead`, where `wanted`), started on the shared
    `Runs` before the first of them; yields the function that waits for one, first in line.
    What has not started when the fixture ends never will."""
    runs, started = Runs.shared(), set()

    def start(*values, first: bool = False) -> Future:
        started.add((fixture, *values))
        return runs.start((fixture, *values), work, *values, first=first)

    for values in ahead(request, fixture, params):
        if wanted(*values):
            start(*values)
    try:
        yield lambda *values: start(*values, first=True).result()
    finally:
        runs.forget(started)
