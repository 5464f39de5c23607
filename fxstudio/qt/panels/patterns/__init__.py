"""The Patterns dock: make a pattern from the selected nodes (or type one), see every match,
ask why a node did not match, replace the accepted matches as one undo step, checked.

- ``panel`` -- :class:`PatternsPanel`, the dock, which gives its widgets to presenters:
- ``form`` (its widgets, laid out), ``rewrites`` (the user's pattern and the built-ins, each
  previewed on a copy), ``matches`` (what a search found and left alone, stepped through; why a
  node did not match), ``rules`` (the matching rules), ``files`` (pattern files, the report's
  JSON), ``check`` (a replacement's numerical check: applied, or held back when it fails).
"""
