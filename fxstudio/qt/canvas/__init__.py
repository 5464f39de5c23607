"""The canvas: items, scene, far-out overview, view, one class per mouse tool, and the
controller that keeps it in step with the document."""
