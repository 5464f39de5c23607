"""Desktop conventions: standard shortcuts and the F1 list, the command palette, dropping
files on the window, the prompt when the model's file changes, closing the model."""

from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QAction, QDragEnterEvent, QDropEvent, QKeySequence
from PySide6.QtWidgets import QAbstractScrollArea, QApplication

from fxstudio.qt.window.actions import ACTIONS, Action
from fxstudio.qt.window.command_palette import CommandPalette
from fxstudio.qt.window.desktop import ShortcutsDialog, request_for_file
from tests.qt.conftest import open_and_wait

MODEL = """import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)


def example_inputs():
    return (torch.randn(1, 4),)
"""


def test_standard_shortcuts_and_the_shortcut_list(qtbot, window):
    standard = [
        a for a in ACTIONS if isinstance(a, Action) and isinstance(a.keys, QKeySequence.StandardKey)
    ]
    assert {a.id for a in standard} >= {"actionOpen", "actionSaveSession", "actionFind"}
    for entry in standard:
        bindings = QKeySequence.keyBindings(entry.keys)
        action = window.findChild(QAction, entry.id)
        assert action is not None, entry.id
        if bindings:
            assert action.shortcuts() == bindings, entry.id
    dialog = ShortcutsDialog(window)
    qtbot.addWidget(dialog)
    rows = {
        dialog.table.item(r, 0).text(): dialog.table.item(r, 1).text()
        for r in range(dialog.table.rowCount())
    }
    assert rows["Open model…"].startswith("Ctrl+O") or "Ctrl+O" in rows["Open model…"]
    assert "F11" in rows["Step ▶"] and "Ctrl+Shift+P" in rows["Command palette…"]


def test_the_command_palette_finds_and_runs_an_action(qtbot, window):
    palette = CommandPalette(window)
    qtbot.addWidget(palette)
    undo = next(
        i for i in range(palette.list.count()) if palette.list.item(i).text().startswith("Undo")
    )
    assert (
        not palette.list.item(undo).flags() & Qt.ItemFlag.ItemIsEnabled
    )  # greyed: nothing to undo
    qtbot.keyClicks(palette.edit, "learn fx")
    assert palette.list.currentItem().text().startswith("Learn FX")
    assert "Help" in palette.list.currentItem().text()
    with qtbot.waitSignal(window.layoutShown, timeout=60000):
        qtbot.keyClick(palette.edit, Qt.Key.Key_Return)
    assert window.panels["lesson"].active and not palette.isVisible()


def _drop(window, path):
    """A drag onto the window and its drop, as Qt delivers them (enter first)."""
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    enter = QDragEnterEvent(
        QPoint(10, 10),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
    )
    QApplication.sendEvent(window, enter)
    event = QDropEvent(
        QPointF(10, 10),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
    )
    QApplication.sendEvent(window, event)
    return event


def test_a_dropped_model_file_opens_and_other_files_are_refused(qtbot, window, tmp_path):
    model = tmp_path / "net.py"
    model.write_text(MODEL)
    with qtbot.waitSignal(window.session.loaded, timeout=60000) as loaded:
        event = _drop(window, model)
    assert event.isAccepted() and loaded.args[0].request.spec == f"{model}:Net"
    (tmp_path / "notes.txt").write_text("hello")
    with qtbot.assertNotEmitted(window.session.loaded, wait=100):
        assert not _drop(window, tmp_path / "notes.txt").isAccepted()  # not taken
    assert ".fxstudio sessions" in request_for_file(str(tmp_path / "notes.txt"))
    empty = tmp_path / "helpers.py"
    empty.write_text("def f():\n    return 1\n")
    assert "no nn.Module class" in request_for_file(str(empty))


def test_a_change_on_disk_is_noticed_and_the_document_stays(qtbot, window, tmp_path):
    model = tmp_path / "net.py"
    model.write_text(MODEL)
    from fxstudio.core.graph.request import OpenRequest

    with qtbot.waitSignal(window.layoutShown, timeout=60000):
        window.session.open(OpenRequest(f"{model}:Net"))
    code = window.document.code()
    with qtbot.waitSignal(window.file_watcher.changedOnDisk, timeout=10000) as changed:
        model.write_text(MODEL.replace("nn.Linear(4, 2)", "nn.Linear(4, 3)"))
    assert changed.args[0] == str(model)
    assert "changed on disk" in window.statusBar().currentMessage()
    assert window.document.code() == code  # nothing reloaded behind the user's back
    with qtbot.waitSignal(window.layoutShown, timeout=60000):
        window.session.reload()
    assert window.document.row("fc").shape == "1x3"


def test_close_model_leaves_an_empty_window(qtbot, window):
    open_and_wait(qtbot, window, "examples:simple", signal="layoutShown")
    window.findChild(QAction, "actionClose").trigger()
    assert window.document is None and window.windowTitle() == "fxstudio"
    assert not window.panels["step"].into_action.isEnabled()


def _cards(examples):
    """Where each example's card is, in the list's viewport."""
    return [examples.visualItemRect(examples.item(i)) for i in range(examples.count())]


def test_the_welcome_page_uses_the_width_and_scrolls_as_one_page(qtbot, window):
    """The examples take as many columns as the width holds and share it (no wide empty
    strip), every thumbnail at one size, and nothing scrolls inside the page."""
    page, examples = window.welcome, window.welcome.examples
    seen = {}
    for size in ((1600, 1000), (1000, 700)):
        window.resize(*size)
        qtbot.waitUntil(lambda s=size: window.size().width() == s[0])
        qtbot.waitUntil(lambda: examples.columns() == len({r.x() for r in _cards(examples)}))
        viewport = examples.viewport().rect()
        cards = _cards(examples)
        columns = len({r.x() for r in cards})
        seen[size] = columns
        assert all(viewport.contains(r) for r in cards)  # the list never hides a card
        assert viewport.width() - max(r.right() for r in cards) < viewport.width() / columns
        assert len({(r.width(), r.height()) for r in cards}) == 1
        assert examples.iconSize().width() >= 128
        icons = {
            examples.item(i).icon().actualSize(examples.iconSize()).toTuple()
            for i in range(examples.count())
        }
        assert len(icons) == 1  # every thumbnail drawn at one size, the "does not trace" too
        nested = [
            a
            for a in page.findChildren(QAbstractScrollArea)
            if a.verticalScrollBar().isVisible() or a.horizontalScrollBar().isVisible()
        ]
        assert nested == []  # only the page's own scroll area scrolls
    assert seen[(1600, 1000)] >= 4 and seen[(1000, 700)] >= 2
    assert seen[(1600, 1000)] > seen[(1000, 700)]  # the columns follow the width


def test_the_welcome_page_shows_while_nothing_is_open(qtbot, window):
    stack = window.centralWidget()
    assert stack.currentIndex() == 0 and window.welcome.isVisible()  # nothing open yet
    names = [window.welcome.examples.item(i).text() for i in range(window.welcome.examples.count())]
    assert {"resnet", "fxdocs", "trap_if"} <= set(names)
    item = window.welcome.examples.item(names.index("simple"))
    assert not item.icon().isNull() and "Linear" in item.toolTip()
    with qtbot.waitSignal(window.layoutShown, timeout=60000):
        window.welcome.examples.itemClicked.emit(item)
    assert stack.currentWidget() is window.canvas
    window.close_document()
    assert stack.currentIndex() == 0
    recent = [window.welcome.recent.item(i).text() for i in range(window.welcome.recent.count())]
    assert recent[0] == "examples:simple"
