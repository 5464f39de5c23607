"""Pattern rewriting: find a pattern everywhere, say why a place did not match, replace all
matches as one undoable edit, and check the rewritten model numerically.

The modules, by what they do:

- what a pattern is: ``ops`` (what an op is, whatever its spelling), ``pattern`` (a pattern
  and its matching rules), ``making`` (patterns made from boxed nodes, a function or code),
  ``patternfiles`` (a pattern, its replacement and rules as a plain Python file), ``constants``
  (what a value always is, so a rewrite may bake it in);
- finding: ``nodematch`` (one pattern node against one graph node), ``attempt`` (one attempt
  at an anchor), ``walk`` (pattern and graph walked together), ``matcher`` (all matches,
  linear in the graph), ``found`` (what a search found: matches, places skipped);
- near misses: ``reasons`` (typed reasons, the culprit named), ``explain`` (the nearest
  partial matches, ranked), ``here`` (*Why not here?* told from the node asked about);
- replacing: ``replacements`` (what a match becomes), ``replace`` (every accepted match as one
  edit), ``provenance`` (where each new node comes from), ``check`` (the numerical check),
  ``apply`` (a rewrite as the window and the command line run it, and again from its record);
- the built-ins: ``builtins`` (each one edit), ``folds`` (fold-conv-bn, fold-linear-bn),
  ``attention`` (attention written out, found), ``fuse_attention`` (into SDPA), ``softcap``
  (a tanh soft-cap, and flex_attention's ``score_mod`` for it).
"""
