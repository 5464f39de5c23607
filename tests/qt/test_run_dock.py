"""The Run dock: the model runs in a worker on a snapshot; the window stays usable."""

from tests.qt.conftest import open_and_wait


def test_run_and_time_in_a_worker_without_changing_the_document(qtbot, window):
    open_and_wait(qtbot, window, "examples:negrelu", signal="layoutShown")
    panel = window.run_panel
    code = window.document.code()
    panel.min_time.setValue(0.05)
    panel.threads.setValue(1)
    with qtbot.waitSignal(panel.finished, timeout=60000) as done:
        panel.run_button.click()
        assert not panel.run_button.isEnabled()  # running: one run at a time
    result = done.args[0]
    assert result.timing.threads == 1 and result.check.ok
    assert "median" in panel.result.toPlainText() and "items/s" in panel.status.text()
    assert window.document.code() == code and panel.run_button.isEnabled()


def test_a_run_that_fails_says_why(qtbot, window):
    open_and_wait(qtbot, window, "examples:negrelu", signal="layoutShown")
    panel = window.run_panel
    window.document.example_inputs = ()
    with qtbot.waitSignal(panel.finished, timeout=60000):
        panel.run_button.click()
    assert "--input" in panel.result.toPlainText()
    assert panel.status.text() == "The run failed."
