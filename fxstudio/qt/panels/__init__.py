"""The window's docks, one module each, every one a
:class:`~fxstudio.qt.panels.base.DocumentPanel`."""
