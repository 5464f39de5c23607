"""The Compile dock: where torch.compile breaks the model into graphs and why, and which
kernels run which nodes.

- ``panel`` -- :class:`CompilePanel`, the dock (graph breaks); ``kernels`` (its *Kernels* tab).
"""
