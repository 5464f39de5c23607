"""Hostile and broken model files: every failure of the user's code is one message naming
their file and line, and nothing is left half done."""

import subprocess
import sys
import threading
import traceback

import pytest
import torch

from fxstudio.core.errors import LoadError, UserError
from fxstudio.core.graph.request import OpenRequest
from fxstudio.core.model.loading import load_model
from fxstudio.core.model.modelspec import make_inputs
from fxstudio.core.process.guard import OutOfMemory, Stopped, stop_thread, where_is
from fxstudio.core.sessions.documents import open_document

NET = (
    "class Net(torch.nn.Module):\n"
    "    def forward(self, x):\n"
    "        return x + 1\n"
    "def example_inputs():\n"
    "    return (torch.randn(2, 3),)\n"
)


def _module_name(path):
    """The name fxstudio imports a model file under."""
    import hashlib
    import os

    return f"fxstudio_user_model_{hashlib.sha1(os.path.abspath(path).encode()).hexdigest()[:10]}"


def test_sys_exit_at_import_is_a_user_error_and_the_old_module_stays(write_model):
    path = write_model("import sys, torch\n" + NET + "sys.exit(3)\n")
    with pytest.raises(LoadError) as info:
        load_model(f"{path}:Net")
    text = str(info.value)
    assert f"called sys.exit(3) at {path}:7" in text and "must not exit" in text
    assert info.value.location.lineno == 7
    assert _module_name(path) not in sys.modules


@pytest.mark.parametrize("frontend", ["fx", "export"])
def test_sys_exit_in_forward(write_model, frontend):
    path = write_model(
        "import sys, torch\n"
        "class Net(torch.nn.Module):\n"
        "    def forward(self, x):\n"
        "        sys.exit()\n"
        "def example_inputs():\n    return (torch.randn(2),)\n"
    )
    with pytest.raises(UserError, match=rf"called sys.exit\(\) at {path}:4"):
        open_document(OpenRequest(f"{path}:Net", frontend))


def test_keyboard_interrupt_raised_by_the_model_is_its_error(write_model):
    path = write_model(
        "import torch\n"
        "class Net(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        raise KeyboardInterrupt\n"
    )
    with pytest.raises(LoadError, match=rf"Building Net\(\) raised KeyboardInterrupt at {path}:5"):
        load_model(f"{path}:Net")


def test_memory_error_in_the_constructor(write_model):
    path = write_model(
        "import torch\n"
        "class Net(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        raise MemoryError()\n"
    )
    with pytest.raises(OutOfMemory, match=rf"Out of memory while building Net\(\).*\nAt {path}:5"):
        load_model(f"{path}:Net")


def test_a_tensor_too_large_made_as_the_model_is_built_is_never_allocated(write_model):
    """Every tensor a build makes is sized before it is allocated (issue 54): one of 400 TB
    -- not a weight -- stops the build, and the model opens structure only, saying why."""
    path = write_model(
        "import torch\n"
        "class Net(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.table = torch.empty(10**7, 10**7)  # not a weight\n"
        "    def forward(self, x):\n"
        "        return x + self.table[:1, :1]\n"
    )
    loaded = load_model(f"{path}:Net", ["2x3"])
    assert loaded.module.table.is_meta
    assert loaded.example_inputs[0].is_meta  # shapes only: nothing to run
    assert (
        "structure only, no weights: building it with its weights would take more than"
        in (loaded.notes[0])
    )


def test_inputs_larger_than_memory_are_refused_before_they_are_made():
    with pytest.raises(OutOfMemory) as info:
        make_inputs(["100000x100000x100"])
    assert info.value.requested == 4 * 10**12
    assert "100000x100000x100:float32" in str(info.value) and "smaller --input" in str(info.value)


def test_out_of_memory_while_running_the_model(write_model):
    path = write_model(
        "import torch\n"
        "class Net(torch.nn.Module):\n"
        "    def forward(self, x):\n"
        "        return x + x.new_zeros((x.shape[0] * 10**7, 10**7))\n"
        "def example_inputs():\n    return (torch.randn(2),)\n"
    )
    with pytest.raises(OutOfMemory, match=r"Out of memory while running the model at node"):
        open_document(f"{path}:Net")


def test_runaway_recursion(write_model):
    path = write_model(
        "import torch\n"
        "def deeper(x):\n"
        "    return deeper(x)\n"
        "class Net(torch.nn.Module):\n"
        "    def forward(self, x):\n"
        "        return deeper(x)\n"
        "def example_inputs():\n    return (torch.randn(2),)\n"
    )
    with pytest.raises(UserError, match=rf"recursed without end at {path}:3"):
        open_document(f"{path}:Net")


def _run_in_thread(fn):
    box: dict = {}

    def run():
        try:
            box["result"] = fn()
        except BaseException as exc:  # noqa: BLE001
            box["error"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t, box


def stop_when_in_users_code(ident, attempts=200_000):
    """stop_thread sends only while the thread runs the user's own lines: ask until then."""
    return any(stop_thread(ident) for _ in range(attempts))


def test_code_that_never_returns_is_located_and_stopped(write_model):
    """An import that loops forever: where_is finds its line, stop_thread ends it there, and
    the half-run module is not left behind."""
    path = write_model(
        "import threading, torch\n"
        "started = threading.Event()\n"
        "import builtins\n"
        "builtins._fxstudio_started.set()\n"
        "while True:\n"
        "    pass\n"
    )
    import builtins

    builtins._fxstudio_started = threading.Event()
    try:
        thread, box = _run_in_thread(lambda: load_model(f"{path}:Net"))
        assert builtins._fxstudio_started.wait(60)
        loc = where_is(thread.ident, str(path))
        while loc is None or loc.lineno not in (5, 6):  # between its two lines
            loc = where_is(thread.ident, str(path))
        assert loc.filename == str(path)
        assert stop_when_in_users_code(thread.ident)
        thread.join(60)
        assert not thread.is_alive()
        assert isinstance(box.get("error"), Stopped)
        assert _module_name(path) not in sys.modules
    finally:
        del builtins._fxstudio_started


def test_a_forward_that_loops_forever_is_stopped(write_model):
    """Tracing it makes nodes for ever, in torch.fx's code (where no stop is sent): the
    tracer stops at the next node once the work is no longer wanted."""
    path = write_model(
        "import builtins, torch\n"
        "class Net(torch.nn.Module):\n"
        "    def forward(self, x):\n"
        "        builtins._fxstudio_started.set()\n"
        "        while True:\n"
        "            x = x + 1\n"
        "def example_inputs():\n    return (torch.randn(2),)\n"
    )
    import builtins

    from fxstudio.core.process.guard import set_cancel_check

    builtins._fxstudio_started = threading.Event()
    unwanted = threading.Event()

    def open_it():
        set_cancel_check(unwanted.is_set)
        return open_document(f"{path}:Net")

    try:
        thread, box = _run_in_thread(open_it)
        assert builtins._fxstudio_started.wait(60)
        unwanted.set()
        thread.join(60)
        assert isinstance(box.get("error"), Stopped)
    finally:
        del builtins._fxstudio_started
    assert torch.fx.Proxy.__add__  # torch's tracer patches were undone: tracing works again
    doc = open_document("examples:simple")
    assert doc.graph_module(*doc.example_inputs).shape == (2, 4)


def test_code_made_at_run_time_is_not_stopped_as_if_it_were_the_users():
    """A dataclass's ``__init__`` (made by exec, file ``<string>``) runs inside the import of
    the library that defines it: a stop sent there would leave that import half-done."""
    made = {}
    exec(
        compile(
            "def spin(flag):\n    while not flag.is_set():\n        pass\n", "<string>", "exec"
        ),
        made,
    )
    running, done = threading.Event(), threading.Event()

    def work():
        running.set()
        made["spin"](done)

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    try:
        assert running.wait(30)
        assert not any(stop_thread(thread.ident) for _ in range(2000))
    finally:
        done.set()
        thread.join(30)
    assert not thread.is_alive()


def test_a_model_is_loaded_only_when_no_other_model_code_runs(write_model):
    """Loading imports what the model imports, and two threads importing torch's lazy
    modules at once can each get the other's half-made ones: an open waits for the turn
    before it loads (here another thread holds it, as a capture under way does)."""
    import builtins

    from fxstudio.core.process import modelcode

    path = write_model(
        "import builtins, torch\n"
        "builtins._fxstudio_loaded.set()\n"
        "class Net(torch.nn.Module):\n"
        "    def forward(self, x):\n"
        "        return x.relu()\n"
        "def example_inputs():\n    return (torch.randn(2),)\n"
    )
    builtins._fxstudio_loaded = threading.Event()
    holding, release = threading.Event(), threading.Event()

    def hold():
        with modelcode.one_turn():
            holding.set()
            release.wait(60)

    holder = threading.Thread(target=hold, daemon=True)
    holder.start()
    try:
        assert holding.wait(30)
        thread, box = _run_in_thread(lambda: open_document(f"{path}:Net"))
        assert not builtins._fxstudio_loaded.wait(1.0)  # waits for the turn: not loaded yet
        release.set()
        thread.join(60)
        assert builtins._fxstudio_loaded.is_set()
        assert [r.name for r in box["result"].rows()] == ["x", "relu", "output"]
    finally:
        release.set()
        del builtins._fxstudio_loaded


@pytest.mark.parametrize(
    ("stage", "inside"), [("Exporting", "/torch/export/"), ("Loading", "/transformers/")]
)
def test_cancel_stops_library_code_between_two_modules(stage, inside):
    """Cancel lands inside torch.export (at the next module it calls) and inside a build from
    a configuration (at the next parameter it registers) -- code with no line of the user's
    -- rather than letting a big model's open run on in the background; once the open is
    over, no hook is left: a module called later, in a thread whose check says stop, runs."""
    from fxstudio.core.process import progress
    from fxstudio.core.process.guard import set_cancel_check

    unwanted = threading.Event()
    spec = (
        "hf:llama(num_hidden_layers=4, hidden_size=64, intermediate_size=128, "
        "num_attention_heads=4, num_key_value_heads=2, vocab_size=128)"
    )

    def told(said, done, total):
        if said.startswith(stage):
            unwanted.set()

    def open_it():
        set_cancel_check(unwanted.is_set)
        with progress.listening(told):
            return open_document(OpenRequest(spec, "export", weights=False))

    thread, box = _run_in_thread(open_it)
    thread.join(120)
    assert isinstance(box.get("error"), Stopped), box
    frames = traceback.extract_tb(box["error"].__traceback__)
    assert any(inside in f.filename.replace("\\", "/") for f in frames)  # stopped in there

    def call_after():
        set_cancel_check(lambda: True)
        return torch.nn.Linear(2, 2)(torch.ones(1, 2)).shape

    thread, box = _run_in_thread(call_after)
    thread.join(60)
    assert box == {"result": (1, 2)}


_OPEN_WHILE_THE_ZOO_IS_READ = """
import threading
from fxstudio.core.flows.open import zoo_specs
from fxstudio.core.sessions.documents import open_document

listed = []
reader = threading.Thread(target=lambda: listed.append(len(zoo_specs())))
reader.start()  # (the Open dialog reads them as it opens; the user opens at once)
doc = open_document("hf:llama(num_hidden_layers=1, hidden_size=32, intermediate_size=64, "
                    "num_attention_heads=2, num_key_value_heads=1, vocab_size=64)")
reader.join()
print(len(doc), listed[0])
"""


def test_a_model_opened_while_the_zoo_names_are_read_is_not_handed_half_made_modules():
    """The Open dialog reads the zoos' names (importing timm, torchvision, transformers) in
    a thread; an hf: model opened meanwhile imports transformers too, and was handed its
    half-made modules ("cannot import name 'AutoModel' from 'transformers'").  In a fresh
    process: nothing imported yet."""
    pytest.importorskip("transformers")
    pytest.importorskip("timm")
    done = subprocess.run(
        [sys.executable, "-c", _OPEN_WHILE_THE_ZOO_IS_READ], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]
    nodes, names = map(int, done.stdout.split())
    assert nodes > 20 and names > 100
