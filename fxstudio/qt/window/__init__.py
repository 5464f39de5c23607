"""The main window and what it composes (``main_window`` imports the rest).

- ``main_window`` (the form, the panels placed from a table), ``session`` (``DocumentSession``:
  the open document, its workers, undo stack and editing lock), ``catch_up`` (a big graph's
  views caught up in a worker), ``graph_state`` (which graph a result is of);
- commands: ``actions/`` (declared as data, one module per menu: menus, toolbar, palette and
  shortcut list read one table), ``command_palette``, ``toolbar_fit``, ``search`` (find nodes);
- places and dialogs: ``open_dialog``, ``welcome``, ``about``, ``messages`` (message boxes),
  ``status`` (the status bar), ``layouts`` (the task layouts, as data) and ``window_state``
  (geometry and layouts between runs), ``desktop`` (shortcuts list, dropped files, a file
  changed on disk);
- files: ``saving``, ``autosave`` (recovery files), ``image_export`` (PNG/SVG/PDF),
  ``report_export`` (*File ▸ Export report…*: the HTML report), ``node_data`` (per-node
  numbers loaded from a file), ``compare_flow`` (the ways into the Compare window);
- ``idle`` (the cycle collector run when nobody waits).
"""
