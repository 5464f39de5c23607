"""The Qt bindings themselves must hold up in a long session."""

import sys

import pytest


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="None is immortal from Python 3.12")
def test_calls_returning_nothing_keep_none_alive(qapp):
    # PySide6 6.12.0 dropped a reference to None on each such call: the canvas, which makes
    # thousands of them, aborted the editor with "Fatal Python error: deallocating None".
    from PySide6.QtWidgets import QGraphicsRectItem, QGraphicsScene

    scene = QGraphicsScene()
    item = QGraphicsRectItem(0, 0, 10, 10)
    scene.addItem(item)
    before = sys.getrefcount(None)
    for i in range(1000):
        item.setZValue(i % 3)
        item.setPos(i, i)
        item.setToolTip("x")
    assert sys.getrefcount(None) - before > -50
