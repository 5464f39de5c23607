"""Editing from the window: the edit ``controller`` (every edit goes through it, one undo step
each), the Edit menu's ``dialogs`` and the insert ``palette``, the undo ``commands``."""
