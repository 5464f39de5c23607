"""Share: what fxstudio knows about a graph, written for someone else to read.

Qt-free, like all of ``fxstudio.core``; the window and the command line reach it only through
``fxstudio.core.flows.render`` (and the report's flow): one request in, one result out.

The modules: ``svg`` (the document's drawing as SVG, from the same layout the canvas draws --
node boxes with their labels and shapes, module groups, ``×N`` folds, edges' routes, the
canvas's colours, an optional heat overlay -- text as ``<text>`` so it stays searchable, and a
semantic structure a script can read: ``<g class="node" data-name=... data-op=...>``,
``<g class="group" data-module=...>``, ``<g class="edge" data-from=... data-to=...>``);
``picturelayout`` (the document laid out for a picture as the canvas lays it out: which groups are
one box, the user's moves applied); ``palette`` (the canvas's light colours, its fonts and
their measured widths, text cut to fit, the heat's colours -- plain values, no Qt);
``heats`` (a heat overlay from a per-node profile, the memory estimate or a compare);
``htmlreport`` (the self-contained HTML report: the SVG inline, its style and plain script --
``report.css``, ``report.js``, shipped in the wheel -- and the page's JSON), ``sections`` (the
report's sections as HTML: rewrite history, profile, compare, compiled kernels, memory),
``gather`` (what a session holds, as the report's JSON: the history with each check made
again, a compare with its first divergence and structural count).
"""
