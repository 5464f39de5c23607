"""Pattern rewriting: find a pattern everywhere, say why a place did not match, replace all
matches as one undoable edit, and check the rewritten model numerically.

The modules: ``ops`` (what an op is, whatever its spelling), ``pattern`` (patterns from boxed
nodes or code, the matching rules), ``matcher`` (all matches, linear in the graph),
``reasons`` and ``explain`` (near misses, ranked, each with its first failing check),
``replace`` (replacements, one commit of edit steps), ``check`` (the numerical check),
``builtins`` (the built-in rewrites).
"""
