"""The Qt-free core of fxstudio: loading, capture, the document and its edits.

Nothing under ``fxstudio.core`` may import PySide6 (a test enforces it), so every part of
it runs headless, from scripts and from the command line.
"""
