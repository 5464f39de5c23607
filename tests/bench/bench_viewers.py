"""First picture side by side (issue 38): process start to the first picture of the same
``.pt2`` files in fxstudio's window, in Netron (PyPI ``netron``) and in Google's Model Explorer
(PyPI ``ai-edge-model-explorer``), the web viewers in headless Chromium.

The files: resnet18 (torchvision, ~200 nodes), a 48-layer GPT-2 (transformers, from its config,
random weights, ~2.5k nodes) and the 10k-node nested graph of ``synthetic.py``, each exported
with ``torch.export`` once and kept in ``$XDG_CACHE_HOME/fxstudio-bench/viewers`` (named by
torch's version).

Each measurement starts its viewer's process and stops at its first picture:

- fxstudio: ``fxstudio FILE --first-picture OUT.png`` on an X display (Xvfb, started here
  when there is none); the first picture is the PNG on disk: the graph drawn from the
  archive's JSON before torch is imported (``fxstudio.qt.startup``), the window a user sees
  while the editor loads.  Beside it, ``fxstudio_editor``: ``--screenshot``, the editor's
  window with its canvas drawn (taken 50 ms after: a little after, never before).
- Netron: ``netron FILE --port N``; once it answers, Chromium loads its page, which reads the
  file from the server; the first picture is the first ``g.node`` in its SVG (``#canvas``).
- Model Explorer: ``model-explorer FILE --no_open_in_browser --port N``; Chromium loads the
  page it prints; the first picture is its WebGL renderer's first frame with nodes: the
  ``canvas`` inside ``webgl-renderer`` is there and the loading indicators are gone
  (see :func:`_model_explorer_drawn`).

Chromium is started once, before the runs (a browser the user already has open): the web
viewers' clocks start at their servers' start, not the browser's.  Three runs, alternating
the viewers, medians; every wait has a timeout, recorded as such.  A viewer that is not
installed (or no Chromium) gives one JSON line saying so.

    python tests/bench/bench_viewers.py          # every file and viewer (run.py viewers)
    python tests/bench/bench_viewers.py resnet18  # one file (resnet18, gpt2_48, nested_10000)
    python tests/bench/bench_viewers.py build NAME OUT.pt2   # export one file (a subprocess)
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
RUNS = 3
#: Seconds a viewer gets for its first picture before the run is recorded as a timeout.
TIMEOUT_S = 300.0
CHROMIUM = ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome")


# --- the files ---------------------------------------------------------------------------------


def build(name: str, out: str) -> None:
    """Export ``name``'s model to ``out`` (run in a subprocess: the bench stays light) and
    write its node count beside it."""
    sys.path.insert(0, str(ROOT))
    import torch

    if name == "resnet18":
        import torchvision

        model, inputs = torchvision.models.resnet18(weights=None), (torch.randn(1, 3, 224, 224),)
    elif name == "gpt2_48":
        from transformers import GPT2Config, GPT2Model

        # outputs a tuple: a ModelOutput's pytree node is registered only where transformers
        # is imported, and torch.export.load (Model Explorer's reader) fails without it
        config = GPT2Config(n_layer=48, use_cache=False, return_dict=False)
        model, inputs = GPT2Model(config), (torch.zeros(1, 16, dtype=torch.int64),)
    elif name == "nested_10000":
        from tests.bench.synthetic import nested_10000, nested_example_inputs

        model, inputs = nested_10000(), nested_example_inputs()
    else:
        raise SystemExit(f"unknown model {name!r}")
    program = torch.export.export(model.eval(), inputs, strict=False)
    torch.export.save(program, out)
    Path(out).with_suffix(".json").write_text(json.dumps({"nodes": len(program.graph.nodes)}))


FILES = ("resnet18", "gpt2_48", "nested_10000")


def files(emit, names: tuple[str, ...] = FILES) -> list[tuple[str, Path, int]]:
    import torch

    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    folder = cache / "fxstudio-bench" / "viewers" / f"torch-{torch.__version__}"
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for name in names:
        path = folder / f"{name}.pt2"
        meta = path.with_suffix(".json")
        if not meta.exists():
            done = subprocess.run(
                [sys.executable, __file__, "build", name, str(path)],
                capture_output=True,
                text=True,
                timeout=1800,
            )
            if done.returncode != 0 or not meta.exists():
                emit(bench="viewers", model=name, skipped=f"export failed: {done.stderr[-300:]}")
                continue
        out.append((name, path, json.loads(meta.read_text())["nodes"]))
    return out


# --- the viewers -------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _answers(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _until(ready: Callable[[], bool], deadline: float, step: float = 0.02) -> bool:
    while time.perf_counter() < deadline:
        if ready():
            return True
        time.sleep(step)
    return False


def _stop(proc: subprocess.Popen) -> None:
    """End a viewer this bench started, and whatever it started (its own session)."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, 15)
            proc.wait(timeout=10)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(proc.pid, 9)
            proc.wait()


class Outcome:
    """One run: seconds to the first picture, or why there was none."""

    def __init__(self, seconds: float | None = None, failed: str | None = None) -> None:
        self.seconds, self.failed = seconds, failed


def fxstudio_run(path: Path, display_env: dict[str, str], flag: str = "--first-picture") -> Outcome:
    """``fxstudio FILE --first-picture OUT.png`` (the graph drawn from the archive, before
    torch is imported), or with ``--screenshot`` (the editor's window, its canvas drawn):
    process start until the PNG is on disk."""
    with tempfile.TemporaryDirectory(prefix="fxs-viewers-") as work:
        png = Path(work) / "shot.png"
        t0 = time.perf_counter()
        log = open(Path(work) / "log", "w+b")  # noqa: SIM115 (closed below)
        proc = subprocess.Popen(
            [str(BIN / "fxstudio"), str(path), flag, str(png)],
            env=display_env,
            stdout=log,
            stderr=log,
            start_new_session=True,
        )
        try:
            drawn = _until(
                lambda: (png.exists() and png.stat().st_size > 0) or proc.poll() is not None,
                t0 + TIMEOUT_S,
            )
            seconds = time.perf_counter() - t0
            if not drawn:
                return Outcome(failed=f"timeout: no picture within {TIMEOUT_S:.0f} s")
            if not (png.exists() and png.stat().st_size > 0):
                return Outcome(failed=f"exit {proc.returncode} without a picture{_error_in(log)}")
            return Outcome(seconds)
        finally:
            _stop(proc)
            log.close()


#: Netron's browser host blocks ``window.eval``, which Playwright's waits use: keep it (the
#: assignment is ignored; Netron's drawing does not depend on it).
_KEEP_EVAL = (
    "(() => { const e = window.eval; Object.defineProperty(window, 'eval', "
    "{get() { return e; }, set(_) {}, configurable: true}); })()"
)
#: Two animation frames after the condition: the frame with the picture has been painted.
_PAINTED = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"
#: Netron: its view shows the graph (body class ``default``, set once ``render`` is done:
#: nodes laid out and placed) and the SVG has nodes.
_NETRON_DRAWN = (
    "() => document.body.classList.contains('default') && "
    "document.querySelector('#canvas g.node') !== null"
)
#: Model Explorer: the graph panel's WebGL renderer is there, the model's loading spinner and
#: the "Processing graph..." overlay (layout in its web worker) are gone.
_MODEL_EXPLORER_DRAWN = (
    "() => document.querySelector('webgl-renderer canvas') !== null && "
    "document.querySelector('mat-spinner') === null && "
    "!document.body.innerText.includes('Processing graph')"
)


def _error_in(log) -> str:
    """The last line of a server's log that names an error, if any."""
    log.seek(0)
    lines = log.read().decode(errors="replace").splitlines()
    found = [line.strip() for line in lines if "Error" in line or "error" in line]
    return f" (the server logged: {found[-1][-200:]})" if found else ""


def web_run(browser, command: list[str], port: int, url: str, drawn: str) -> Outcome:
    """A web viewer: its server's start until ``drawn`` holds in a page of ``url`` and that
    frame is painted."""
    with tempfile.TemporaryFile() as log:
        return _web_run(browser, command, port, url, drawn, log)


def _web_run(browser, command, port, url, drawn, log) -> Outcome:
    t0 = time.perf_counter()
    deadline = t0 + TIMEOUT_S
    proc = subprocess.Popen(
        command,
        stdout=log,
        stderr=log,
        start_new_session=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    context = browser.new_context(viewport={"width": 1400, "height": 860})
    try:
        if not _until(lambda: _answers(port) or proc.poll() is not None, deadline):
            return Outcome(failed=f"timeout: the server did not answer within {TIMEOUT_S:.0f} s")
        if proc.poll() is not None:
            return Outcome(failed=f"server exited {proc.returncode}{_error_in(log)}")
        # A returning user has accepted Netron's cookie notice (it waits for a click).
        context.add_cookies([{"name": "consent", "value": "1", "url": f"http://localhost:{port}"}])
        page = context.new_page()
        page.add_init_script(_KEEP_EVAL)
        left_ms = lambda: max(1.0, (deadline - time.perf_counter()) * 1000)  # noqa: E731
        try:
            page.goto(url, timeout=left_ms())
            page.wait_for_function(drawn, polling=50, timeout=left_ms())
            page.evaluate(_PAINTED)
        except Exception as exc:  # playwright's TimeoutError and page errors
            kind = "timeout" if "Timeout" in type(exc).__name__ else "error"
            return Outcome(failed=f"{kind}: {str(exc).splitlines()[0][:200]}{_error_in(log)}")
        return Outcome(time.perf_counter() - t0)
    finally:
        context.close()
        _stop(proc)


def netron_run(browser, path: Path) -> Outcome:
    port = _free_port()
    command = [str(BIN / "netron"), str(path), "--port", str(port), "--verbosity", "quiet"]
    return web_run(browser, command, port, f"http://localhost:{port}/", _NETRON_DRAWN)


def model_explorer_run(browser, path: Path) -> Outcome:
    from urllib.parse import quote

    port = _free_port()
    command = [str(BIN / "model-explorer"), str(path), "--no_open_in_browser"]
    command += ["--port", str(port), "--skip_health_check"]
    # the address it prints for the browser
    data = quote(json.dumps({"models": [{"url": str(path)}]}))
    url = f"http://localhost:{port}/?data={data}"
    return web_run(browser, command, port, url, _MODEL_EXPLORER_DRAWN)


# --- the bench ---------------------------------------------------------------------------------


def _display() -> tuple[dict[str, str], subprocess.Popen | None, str]:
    """An environment with an X display for fxstudio: this one's, or an Xvfb started here;
    Qt's offscreen platform where there is neither."""
    env = {k: v for k, v in os.environ.items() if k != "QT_QPA_PLATFORM"}
    if os.environ.get("DISPLAY"):
        return env, None, "X display " + os.environ["DISPLAY"]
    xvfb = shutil.which("Xvfb")
    if xvfb is None:
        return {**env, "QT_QPA_PLATFORM": "offscreen"}, None, "offscreen (no Xvfb)"
    for number in range(90, 110):
        if Path(f"/tmp/.X11-unix/X{number}").exists() or Path(f"/tmp/.X{number}-lock").exists():
            continue
        proc = subprocess.Popen(
            [xvfb, f":{number}", "-screen", "0", "1600x1000x24", "-nolisten", "tcp"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        if _until(lambda n=number: Path(f"/tmp/.X11-unix/X{n}").exists(), time.perf_counter() + 10):
            return {**env, "DISPLAY": f":{number}"}, proc, f"Xvfb :{number}"
        _stop(proc)
    return {**env, "QT_QPA_PLATFORM": "offscreen"}, None, "offscreen (Xvfb did not start)"


def _web_viewers(emit) -> list[str]:
    """The web viewers installed, each missing one reported."""
    found = []
    for name, script in (("netron", "netron"), ("model_explorer", "model-explorer")):
        if (BIN / script).exists():
            found.append(name)
        else:
            emit(
                bench="viewers",
                viewer=name,
                skipped=f"{script} is not installed (make bench installs it: .[bench])",
            )
    return found


def _chromium() -> str | None:
    return next((c for c in CHROMIUM if Path(c).exists()), None) or shutil.which("chromium")


def bench_viewers(emit, timed=None, names: tuple[str, ...] = FILES) -> None:
    made = files(emit, names)
    web = _web_viewers(emit)
    chromium = _chromium()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        sync_playwright = None
    if web and (chromium is None or sync_playwright is None):
        why = (
            "no Chromium (apt install chromium, as make bench does)"
            if chromium is None
            else ("playwright is not installed (pip install -e '.[bench]', as make bench does)")
        )
        for name in web:
            emit(bench="viewers", viewer=name, skipped=why)
        web = []
    env, xvfb, display = _display()
    try:
        if web:
            assert sync_playwright is not None
            with sync_playwright() as pw:
                browser = pw.chromium.launch(
                    executable_path=chromium,
                    # no GPU here: WebGL (Model Explorer's renderer) on SwiftShader
                    args=["--use-angle=swiftshader", "--enable-unsafe-swiftshader"],
                )
                try:
                    _measure(emit, made, web, env, display, browser)
                finally:
                    browser.close()
        else:
            _measure(emit, made, web, env, display, None)
    finally:
        if xvfb is not None:
            _stop(xvfb)


def _measure(emit, made, web, env, display, browser) -> None:
    runners: dict[str, Callable[[Path], Outcome]] = {
        "fxstudio": lambda p: fxstudio_run(p, env),
        "fxstudio_editor": lambda p: fxstudio_run(p, env, "--screenshot"),
    }
    if "netron" in web:
        runners["netron"] = lambda p: netron_run(browser, p)
    if "model_explorer" in web:
        runners["model_explorer"] = lambda p: model_explorer_run(browser, p)
    names = list(runners)
    for model, path, nodes in made:
        outcomes: dict[str, list[Outcome]] = {name: [] for name in names}
        for run in range(RUNS):  # alternating: each run starts with the next viewer
            for name in names[run % len(names) :] + names[: run % len(names)]:
                outcomes[name].append(runners[name](path))
        common = {"bench": "viewers", "model": model, "nodes": nodes, "runs": RUNS}
        medians: dict[str, float | None] = {}
        for name in names:
            got = [o.seconds for o in outcomes[name] if o.seconds is not None]
            failed = [o.failed for o in outcomes[name] if o.failed is not None]
            medians[name] = round(statistics.median(got), 2) if len(got) > len(failed) else None
            record = {**common, "viewer": name, "what": "process start to first picture"}
            record["median_s"] = medians[name]
            record["runs_s"] = [
                round(o.seconds, 2) if o.seconds is not None else o.failed for o in outcomes[name]
            ]
            if name.startswith("fxstudio"):
                record["display"] = display
            if name == "fxstudio_editor":
                record["what"] = "process start to the editor's window, its canvas drawn"
            emit(**record)
        ours = medians["fxstudio"]
        editor = medians["fxstudio_editor"]
        ratios = {
            f"{mine}_vs_{name}": round(seconds / medians[name], 2)
            for mine, seconds in (("fxstudio", ours), ("editor", editor))
            for name in names[2:]
            if seconds is not None and medians[name]
        }
        emit(
            **common,
            what="first picture: fxstudio / each viewer (goal: <= 1 Netron, <= 0.5 Model Explorer)",
            **ratios,
        )


if __name__ == "__main__":
    if sys.argv[1:2] == ["build"]:
        build(sys.argv[2], sys.argv[3])
    else:
        sys.path.insert(0, str(ROOT))
        chosen = tuple(sys.argv[1:]) or FILES
        bench_viewers(lambda **record: print(json.dumps(record), flush=True), names=chosen)
