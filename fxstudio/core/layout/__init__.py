"""Placing a graph on the canvas: ``placing`` (graphviz, hierarchically by module, cached
per structure), ``dot`` (running graphviz's dot without the GIL, and the plain layered
layout), ``groups`` (which modules are drawn as groups, what the first picture shows),
``repeats`` (identical blocks found by a structural hash, folded ×N), ``drawing`` (what the
canvas draws for a layout: texts, frames, edges, stubs), ``labels`` (how wide the canvas's
labels are), ``routes`` (edges drawn around the boxes they bypass), ``boxes`` (what a layout
places: boxes, their sizes), ``preview`` (a ``.pt2``'s first picture read from
its archive's JSON, before torch is imported).  ``boxes``, ``labels``, ``dot``, ``routes``
and ``preview`` never import torch."""
