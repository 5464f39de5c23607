"""fxstudio's Qt views and controllers.  They read the document and call core functions;
they never change a ``torch.fx.Graph`` themselves."""
