"""What the user asked to open: one record, from the Open dialog or the command line to the
document (``doc.request``), the session file and the recent list.

Example:
    >>> r = OpenRequest("examples:simple", inputs=("3x16",))
    >>> r.frontend, r.chosen_frontend, r.is_session
    ('auto', None, False)
    >>> OpenRequest("examples:simple", frontend_named("export")).chosen_frontend
    'export'
    >>> frontend_named("neither"), frontend_named(None, "fx")
    ('auto', 'fx')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

#: How a model is captured: ``symbolic_trace`` (torch.fx) or ``torch.export`` (ATen ops).
Frontend = Literal["fx", "export"]
FRONTENDS: tuple[Frontend, ...] = ("fx", "export")

#: A session file's suffix: a spec ending so names a session, not a model.
SESSION_SUFFIX = ".fxstudio"


@dataclass(frozen=True)
class OpenRequest:
    """What the user asked to open: the MODEL spec and how to capture it.  On a document
    (``doc.request``) the frontend is the one the capture used, never ``"auto"``."""

    spec: str
    frontend: Frontend | Literal["auto"] = "auto"  # auto: export for hf: models, fx otherwise
    inputs: tuple[str, ...] = ()
    seed: int = 0
    leaf_modules: tuple[str, ...] = field(default_factory=tuple)
    train: bool = False
    weights: bool = True  # False: structure only (shapes, no weights: any size, nothing to run)

    @property
    def chosen_frontend(self) -> Frontend | None:
        """The frontend this request fixes; ``None`` for ``"auto"``."""
        return self.frontend if self.frontend in FRONTENDS else None

    @property
    def is_session(self) -> bool:
        """Whether the spec names a session file (reopened, not captured as a model)."""
        return self.spec.endswith(SESSION_SUFFIX)


def frontend_named(
    value: object, default: Frontend | Literal["auto"] = "auto"
) -> Frontend | Literal["auto"]:
    """A frontend read from a file or a field: ``"fx"``, ``"export"`` or ``"auto"``;
    ``default`` when it is missing (``None``); anything else is ``"auto"``."""
    if value is None:
        return default
    return value if value in FRONTENDS else "auto"
