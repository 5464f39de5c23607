"""*File ▸ Export report…*: the session as one HTML page, made in a worker from a copy of the
document, with its rewrite checked and what the docks hold of the graph as it is now (the
Memory dock's estimate here); the action is in the File menu."""

from __future__ import annotations

import json
import re

from fxstudio.core.flows import RewriteRequest, RewriteSpec, rewrite_flow
from fxstudio.qt.panels.memory.panel import MemoryPanel
from fxstudio.qt.window import report_export
from tests.qt.conftest import open_and_wait


def test_export_report_writes_the_session_with_the_docks_results(qtbot, window, tmp_path):
    open_and_wait(qtbot, window, "examples:resnet", signal="layoutShown")
    doc = window.document
    rewrite_flow(doc, RewriteRequest(RewriteSpec(builtin="fold-conv-bn")))
    memory = window.panel(MemoryPanel)
    with qtbot.waitSignal(memory.finished, timeout=60000):
        memory.run()
    assert window.action("actionExportReport").isEnabled()
    assert window.action("actionExportReport") in window.menuBar().actions()[0].menu().actions()
    out = tmp_path / "report.html"
    task = report_export.export_report_to(window, out)
    with qtbot.waitSignal(task.finished, timeout=120000):
        pass
    qtbot.waitUntil(out.exists, timeout=10000)
    page = out.read_text()
    data = json.loads(re.search(r'id="fx-data">(.*?)</script>', page, re.S).group(1))
    assert data["history"][0]["check"]["ok"]
    assert data["memory"]["peak_node"]
    assert page.count('<g class="node"') == len(doc) == 39
    assert "Saved the report" in window.status.bar.currentMessage()


def test_a_result_of_an_earlier_graph_is_left_out_and_said(qtbot, window, tmp_path):
    open_and_wait(qtbot, window, "examples:resnet", signal="layoutShown")
    memory = window.panel(MemoryPanel)
    with qtbot.waitSignal(memory.finished, timeout=60000):
        memory.run()
    rewrite_flow(window.document, RewriteRequest(RewriteSpec(builtin="fold-conv-bn")))
    assert memory.stale  # estimated before the fold
    held, stale = report_export.what_the_docks_hold(window)
    assert held == {} and stale == ["memory"]
    out = tmp_path / "report.html"
    task = report_export.export_report_to(window, out)
    with qtbot.waitSignal(task.finished, timeout=120000):
        pass
    qtbot.waitUntil(out.exists, timeout=10000)
    assert '<section id="memory">' not in out.read_text()
    message = window.status.bar.currentMessage()
    assert "left out, of an earlier graph: memory" in message
