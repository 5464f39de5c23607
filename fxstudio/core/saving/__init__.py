"""What fxstudio writes: ``export`` (a standalone ``.py`` with its
safetensors, code, TorchScript, ``.pt2``, ONNX), ``verify`` (a saved module checked in a
fresh process: what the editor's model computes; outputs compared), ``codegen`` (forward code with a
node -> line map, the standalone module), ``codeimports`` (the import lines generated code
needs), ``constructors`` (the call that rebuilds an ``nn`` module), ``tensorfiles`` (tensors
in safetensors files), ``recent`` (the models opened lately).  Sessions, written and
reopened, are :mod:`fxstudio.core.sessions`."""
