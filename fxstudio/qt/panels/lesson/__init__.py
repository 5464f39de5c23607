"""The Learn FX dock (*Help ▸ Learn FX*): the lesson of :mod:`fxstudio.core.lesson`, step by
step, over the real window.

- ``panel`` -- :class:`LessonPanel`, the dock; ``form`` (its widgets); ``replay`` (step 2's
  trace, shown node by node).
"""
