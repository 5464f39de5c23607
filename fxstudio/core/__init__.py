"""The Qt-free core of fxstudio, in rooms by what they do.

Nothing under ``fxstudio.core`` may import PySide6 (a test enforces it), so every part of
it runs headless, from scripts and from the command line.  The rooms are floors: each
imports only the rooms below it (import-linter's ``layers`` contract in ``pyproject.toml``;
the README's contributors section shows them).

- ``flows`` -- the front door: one function per user flow (open, layout, rewrite, explain,
  profile, step, diff, compile, export), one request in, one result out;
- ``sessions`` -- a document opened: a model, or a session with its edits made again;
- ``model`` -- from what the user names to a captured graph; ``graph`` -- the document and
  what is read off a graph; ``layout`` -- the canvas's plan; ``saving`` -- what is written;
  ``process`` -- the user's code inside fxstudio's process;
- the features: ``edits`` (every change, undoable), ``patterns`` (find, explain, replace,
  check), ``runtime`` (run and time), ``stepping`` (node by node), ``compare`` (two graphs),
  ``compiling`` (torch.compile insight), ``memory`` (where the bytes go), ``share`` (the
  drawing and the report, for someone else), ``lesson`` (Learn FX), ``console`` (the Python
  console's session);
- on their own: ``errors`` (what a user can act on), ``fxcompat`` (torch's private APIs, the
  one module that touches them), ``wording`` (core's messages worded for the window),
  ``results`` (what a flow's result promises: JSON, words, a file).
"""
