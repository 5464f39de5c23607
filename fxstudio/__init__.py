"""fxstudio: a desktop editor for PyTorch torch.fx graphs.

``core`` (Qt-free: everything that is not a window), ``qt`` (the window), and the command
line: ``cli`` (the ``fxstudio`` command and the window's start, a package: ``cli.common``
-- options, exit codes, error reports shared by the subcommands -- and one module per
subcommand); ``__main__`` runs ``python -m fxstudio``."""

__version__ = "0.1.0"
