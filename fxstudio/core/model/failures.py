"""Capture failures in words: which rule of symbolic tracing the forward broke, why
``torch.export`` failed -- and, before any advice about tracing, whether the model fails on
its inputs when simply run, which no frontend or leaf module can fix.

:mod:`fxstudio.core.model.capture` raises what these functions make.

Example:
    >>> import torch
    >>> inputs = (torch.zeros(2, 5),)
    >>> failed = eager_failure(torch.nn.Linear(16, 4), inputs, real=True)
    >>> type(failed).__name__, describe_value(inputs[0])
    ('RuntimeError', '2x5:float32')
    >>> eager_failure(torch.nn.Linear(5, 4), inputs, real=False)
    True
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from fxstudio.core.errors import CaptureError, short_location, user_frame
from fxstudio.core.fxcompat import tree_map
from fxstudio.core.graph.shapes import describe_value
from fxstudio.core.graph.weights import faked
from fxstudio.core.process.guard import special_failure
from fxstudio.core.process.noise import quiet_torch_logs

INPUT_ADVICE = (
    "If they are not what its forward expects, give others: one --input per argument, in "
    "order, with its dtype where it is not float32 (e.g. --input 1x3x224x224, --input "
    "1x16:int64). If they are, the model's own code or configuration fails: no frontend or "
    "leaf module can change that."
)


def clip(text: str, limit: int = 1200) -> str:
    return text if len(text) <= limit else text[:limit] + " ..."


# --- symbolic tracing ----------------------------------------------------------------------


def trace_error(exc: Exception, source_file: str | None) -> CaptureError:
    """The :class:`CaptureError` for a failed ``symbolic_trace``, located in the user's code,
    with ``rule`` naming the rule of symbolic tracing it broke."""
    loc = user_frame(exc.__traceback__, prefer_file=source_file)
    rule, message = _explained(exc, short_location(loc))
    error = CaptureError(message, loc)
    error.rule = rule
    return error


def _explained(exc: Exception, where: str) -> tuple[str, str]:
    """Which rule of symbolic tracing ``exc`` says was broken, and the message for it."""
    text = str(exc)
    if "cannot be used as inputs to control flow" in text:
        return "tensor-if", (
            f"The forward branches on a tensor value at {where}"
            "Symbolic tracing cannot follow it: the value is unknown while tracing.\n"
            "Try: the export frontend (--frontend export) with torch.cond for the branch, "
            "making the module that branches a leaf module, or concrete_args to fix the "
            "argument it depends on."
        )
    if "cannot be iterated" in text or "Proxy object cannot be iterated" in text:
        return "iterate", (
            f"The forward iterates over (or unpacks) a traced value at {where}"
            "Symbolic tracing cannot know how many items it has.\n"
            "Try: index explicitly (x.size(0), x[0]), the export frontend (--frontend "
            "export), or a leaf module around that code."
        )
    if "'len' is not supported" in text or ("len(" in text and "Proxy" in text):
        return "len", (
            f"The forward calls len() on a traced value at {where}"
            'Symbolic tracing cannot know it.\nTry: x.size(0), torch.fx.wrap("len") at module '
            "scope, the export frontend (--frontend export), or a leaf module around that code."
        )
    return "trace", (
        f"Symbolic tracing failed at {where}{type(exc).__name__}: {clip(text)}\n"
        "Try the export frontend (--frontend export), or make the failing module a leaf module."
    )


# --- torch.export --------------------------------------------------------------------------


def export_error(
    exc: BaseException,
    module: nn.Module,
    example_inputs: tuple[Any, ...],
    source_file: str | None,
    real: bool,
) -> CaptureError:
    """The :class:`CaptureError` for a failed ``torch.export`` of ``module`` on
    ``example_inputs``.  When the model fails on those inputs without export too (a wrong
    input size, a config the model refuses), that is the message -- with the inputs and how
    to give others -- not advice about tracing, which cannot help.  ``real``: whether that
    is told by a real run (a small model in eval mode) or on fake tensors."""
    loc = user_frame(exc.__traceback__, prefer_file=source_file)
    text = str(exc).strip()
    first = text.splitlines()[0] if text else type(exc).__name__
    if "data-dependent" in text or "data dependent" in text:
        return CaptureError(
            f"The forward branches on a tensor value at {short_location(loc)}"
            f"torch.export cannot follow it ({first}).\n"
            "Try: torch.cond for the branch, or compute the condition from sizes, not values.",
            loc,
        )
    eager = eager_failure(module, example_inputs, real)
    if isinstance(eager, Exception):
        at = user_frame(eager.__traceback__, prefer_file=source_file)
        said = str(eager).strip() or type(eager).__name__
        given = ", ".join(describe_value(v) for v in example_inputs)
        return CaptureError(
            "The model fails on its example inputs when simply run (without torch.export), "
            f"at {short_location(at)}{type(eager).__name__}: {clip(said)}\n"
            f"The inputs were: {given}. {INPUT_ADVICE}",
            at,
        )
    return CaptureError(
        f"torch.export failed at {short_location(loc)}{type(exc).__name__}: {clip(text)}\n"
        f"{export_advice(text, runs_eagerly=eager is True)}",
        loc,
    )


def eager_failure(
    module: nn.Module, example_inputs: tuple[Any, ...], real: bool
) -> Exception | bool:
    """Run ``module`` on copies of ``example_inputs`` as it is (no tracing, no gradients):
    the exception it raises, ``True`` when it runs, ``False`` when this cannot tell (a run on
    fake tensors that needs real data, or out of memory).  ``real``: run it for real (a small
    model in eval mode), else on fake tensors (shapes and dtypes, no compute, and no change
    to the model's batch-norm statistics)."""
    try:
        with torch.no_grad(), quiet_torch_logs():
            if real:
                module(*tree_map(_copy, example_inputs))
            else:
                _run_fake(module, example_inputs)
    except Exception as exc:  # the model's own error (sys.exit, Ctrl+C, Cancel go on up)
        if special_failure("Running the model", exc) is not None:
            return False  # out of memory or runaway recursion: no verdict on the inputs
        if not real and _fake_tensor_limit(exc):
            return False
        return exc
    return True


def _copy(v: Any) -> Any:
    """A copy of a tensor input: an in-place op must not change the example inputs."""
    return v.clone() if isinstance(v, torch.Tensor) else v


def _run_fake(module: nn.Module, example_inputs: tuple[Any, ...]) -> None:
    with faked(module, example_inputs) as fakes:
        module(*fakes)


def _fake_tensor_limit(exc: BaseException) -> bool:
    """Whether ``exc`` says fake tensors cannot run an op (it needs real data, or has no fake
    implementation), rather than that the model refuses its inputs."""
    kind = type(exc)
    return kind.__module__.startswith(
        ("torch._subclasses", "torch.fx.experimental.symbolic_shapes")
    ) or ("data-dependent" in str(exc) or "data dependent" in str(exc))


_SHAPE_WORDS = ("shape", "size mismatch", "must match the size", "mat1 and mat2", "dimension")


def export_advice(text: str, runs_eagerly: bool = False) -> str:
    """What to do about a torch.export failure, for the causes that can be told from its
    message -- and no advice that does not apply: none about the inputs when the model runs
    on them (``runs_eagerly``), and the fx frontend or a leaf module only for what is about
    tracing.

    >>> export_advice("Found <class 'transformers.cache_utils.DynamicCache'> in output, "
    ...               "register a pytree")[:60]
    'The model returns a transformers cache object (DynamicCache)'
    """
    if "cache_utils" in text or ("Cache" in text and "pytree" in text):
        cls = next((w.strip("<>'\",.") for w in text.split() if w.endswith("Cache'>")), "")
        name = cls.rsplit(".", 1)[-1] or "a Cache"
        return (
            f"The model returns a transformers cache object ({name}), which torch.export "
            "cannot output. Build it with use_cache=False (hf: specs do): set "
            "config.use_cache = False in your factory."
        )
    if "pytree" in text:
        return (
            "The model takes or returns a type torch.export cannot take apart: return tensors "
            "(or tuples, lists and dicts of them), or register the type with "
            "torch.utils._pytree.register_pytree_node."
        )
    if not runs_eagerly and any(w in text for w in _SHAPE_WORDS):
        return "Check the --input shapes and dtypes (one --input per forward argument)."
    return (
        "The model runs on these inputs without torch.export: the failure is in tracing it. "
        if runs_eagerly
        else ""
    ) + "Try the fx frontend (--frontend fx), or make the failing module a leaf module."
