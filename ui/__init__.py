"""Qt Designer forms shipped with fxstudio (found through importlib.resources)."""
