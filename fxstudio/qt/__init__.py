"""fxstudio's Qt views and controllers.  They read the document and call core functions;
they never change a ``torch.fx.Graph`` themselves.

``app`` starts the window (``startup``: before torch is imported, the application and a
``.pt2``'s first picture drawn from its archive); ``window`` (the main window and what it
composes) > ``panels`` (the docks) > ``windows`` (the other top-level windows: Compare) >
``canvas`` > ``editing`` import one way down, and all may use the shared pieces: ``workers``
(slow work off the GUI thread), ``copies`` (work on a copy of the document, its result taken
only if the document is still as read), ``turns`` (a big change's views one per turn of the
event loop), ``selection`` (the one selection), ``theme``, ``forms`` (Designer forms and
small widget makers), ``fitting`` (result areas sized in rows and lines), ``screen``
(windows fitted to the screen), ``wrapped_text`` (long values wrapped, never cut),
``resources`` (icons and files shipped in the package), ``share`` (a picture's SVG written
as SVG, PDF or PNG), ``file_dialogs`` (save dialogs whose file name and type agree),
``seams`` (the window's own objects as the lower layers see them, typed as Protocols)."""
