"""The window's docks, one module each, every one a
:class:`~fxstudio.qt.panels.base.DocumentPanel` (``base``: told of the session's document and
its changes, says status, offers actions; given a ``PanelContext``, never the window).

- ``table`` (the *Nodes* dock) over ``table_model``; ``code`` (the generated code);
  ``inspector``; ``history`` (the undo stack);
- ``patterns`` (the Patterns dock) and the presenters it gives its widgets to:
  ``patterns_form`` (its widgets), ``rewrite_list`` (the built-ins and their preview),
  ``pattern_matches`` (the matches shown, why a node did not match), ``pattern_rules`` (the
  matching rules), ``pattern_files`` (pattern files), ``patterns_check`` (a replacement's
  check, held back when it fails);
- ``run`` (the Run dock) with ``run_form``, ``run_summary``, ``bar_chart`` and ``run_module``
  (one module of the model run alone);
- ``step`` (the Step dock) with ``step_form``; ``lesson`` (Learn FX) with ``lesson_form`` and
  ``lesson_replay`` (its trace replay);
- ``compile`` (graph breaks under torch.compile) with ``compile_kernels`` (its Kernels tab);
  ``console`` (the Python console);
- ``memory`` (the Memory dock: where the bytes go) with ``memory_form`` (its widgets) and
  ``memory_plot`` (the timeline of live bytes, drawn with pyqtgraph) and ``memory_step`` (a
  training step: its whole timeline, the backward's nodes, what is live at its peak).
"""
