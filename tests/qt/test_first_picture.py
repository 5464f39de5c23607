"""``fxstudio FILE.pt2``: the graph drawn from the archive before torch is imported
(``qt.startup``), then replaced by the main window once its canvas is drawn -- or at once
when the open fails, its message over the window."""

import os
import subprocess
import sys
import zipfile

import pytest
import shiboken6
import torch
from PySide6.QtGui import QImage
from torch import nn

from fxstudio.core.flows.picture import first_picture
from fxstudio.core.graph.request import OpenRequest
from fxstudio.qt import app as app_module
from fxstudio.qt.canvas.items import EdgeItem, NodeItem
from fxstudio.qt.startup import FirstPictureWindow
from fxstudio.qt.window.main_window import MainWindow


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(4, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x))) + x


@pytest.fixture(scope="module")
def pt2(tmp_path_factory):
    path = tmp_path_factory.mktemp("pt2") / "blocks.pt2"
    model = nn.Sequential(*[Block() for _ in range(6)]).eval()
    program = torch.export.export(model, (torch.randn(1, 4, 16, 16),), strict=False)
    torch.export.save(program, str(path))
    return str(path)


def test_the_first_picture_draws_every_node_and_edge_with_the_canvas_items(qtbot, pt2):
    picture = first_picture(pt2)
    first = FirstPictureWindow(picture)
    qtbot.addWidget(first)
    first.show()
    first.first_view()
    items = first.view.scene().items()
    nodes = [i for i in items if isinstance(i, NodeItem)]
    assert sorted(n.name for n in nodes) == sorted(n.name for n in picture.nodes)
    assert len([i for i in items if isinstance(i, EdgeItem)]) == len(picture.edges)
    assert "blocks.pt2" in first.windowTitle()
    assert "opening it for editing" in first.status.text()
    assert 0.5 < first.view.transform().m11() <= 1.5  # readable: its top, or all of it
    entry = next(n.name for n in picture.nodes if n.op == "placeholder")
    x = next(n for n in nodes if n.name == entry)
    assert (
        first.view.viewport()
        .rect()
        .contains(first.view.mapFromScene(x.sceneBoundingRect().center()))
    )


def _hidden_window(qtbot, tmp_path):
    window = MainWindow(interactive=False, autosave_s=0, recovery=tmp_path / "recovery")
    qtbot.addWidget(window)
    return window


def test_the_main_window_replaces_the_picture_once_its_canvas_is_drawn(qtbot, tmp_path, pt2):
    window = _hidden_window(qtbot, tmp_path)
    first = FirstPictureWindow(first_picture(pt2))  # (handed over: it deletes itself)
    first.show()
    app_module._replace_when_drawn(window, first)
    assert not window.isVisible()
    with qtbot.waitSignal(window.layoutShown, timeout=60000):
        window.session.open(OpenRequest(pt2))
    assert window.isVisible() and first.handed_over and not first.dismissed
    assert not first.isVisible()
    qtbot.waitUntil(lambda: not shiboken6.isValid(first))  # deleted, its scene with it


def test_a_failed_open_shows_the_main_window_with_its_message(qtbot, tmp_path, pt2):
    """The archive's graph reads, its weights are gone: the picture is drawn, the open
    fails, and the window comes up saying why (the picture does not stay alone)."""
    cut = tmp_path / "no-weights.pt2"
    with zipfile.ZipFile(pt2) as src, zipfile.ZipFile(cut, "w") as z:
        for name in src.namelist():
            if "/data/weights/" not in name:
                z.writestr(name, src.read(name))
    picture = first_picture(str(cut))
    assert picture is not None
    window = _hidden_window(qtbot, tmp_path)
    first = FirstPictureWindow(picture)
    first.show()
    app_module._replace_when_drawn(window, first)
    with qtbot.waitSignal(window.session.loadFailed, timeout=60000):
        window.session.open(OpenRequest(str(cut)))
    assert window.isVisible() and first.handed_over


def test_fxstudio_writes_the_first_picture_before_importing_torch(tmp_path, pt2):
    """``fxstudio FILE.pt2 --first-picture OUT.png``: the picture on disk, and no torch
    module in the process's imports (``-X importtime`` lists every one)."""
    png = tmp_path / "first.png"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "fxstudio", pt2, "--first-picture", str(png)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    image = QImage(str(png))
    assert not image.isNull() and image.width() > 600
    imported = [line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines()]
    assert "PySide6.QtWidgets" in imported
    assert [m for m in imported if m == "torch" or m.startswith("torch.")] == []


def test_a_file_not_read_that_way_opens_as_before(tmp_path):
    """A ``.pt2`` that is not an archive: no picture; the normal start says what is wrong."""
    bad = tmp_path / "cut.pt2"
    bad.write_bytes(b"PK\x03\x04 not really a zip")
    png = tmp_path / "first.png"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    result = subprocess.run(
        [sys.executable, "-m", "fxstudio", str(bad), "--first-picture", str(png)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert result.returncode == 2, result.stderr
    assert "not a readable" in result.stderr and not png.exists()
