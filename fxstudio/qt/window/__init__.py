"""The main window and what it composes: the document session, actions as data, the
status bar, saving, the desktop conventions (``main_window`` imports the rest)."""
