"""Editing from the window: the edit controller, the Edit menu's dialogs, the undo commands."""
