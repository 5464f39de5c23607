"""The window's other top-level windows, each opened from the main window or a dock and
living beside it: ``compare`` (the Compare window: two graphs side by side, aligned by
:func:`fxstudio.core.flows.diff_flow`; ``compare_side``: one of its graphs, on a canvas of its
own).  They sit below the panels (a dock may open one) and
above the canvas they draw on."""
