"""Example models, icons and themes shipped with fxstudio (found through importlib.resources)."""
