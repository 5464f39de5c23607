"""The lesson's state and verdicts, and the models it uses (shared by its steps and checks).

>>> LessonState.from_json({"step": 99, "done": ["pick"]}).step
9
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.results import Json

STEP_COUNT = 10  # (steps.STEPS has them)
DEFAULT_MODEL = "examples:fxdocs"
PASS_MODEL = "examples:resnet"
TRAPS = (
    ("trap_if", "examples:trap_if", "a branch on a tensor's value"),
    ("trap_len", "examples:trap_len", "len() of a traced tensor"),
    ("trap_random", "examples:trap_random", "torch.randn baked in as a constant"),
    ("trap_dropout", "examples:trap_dropout", "the training flag baked into dropout"),
)
#: What the window saw the learner do on one model (a node picked, how far the Step dock ran,
#: a measured speed-up): of the model open then, dropped when another opens.
MODEL_FACTS: tuple[str, ...] = ("selected", "step_position", "step_total", "step_differs")
MODEL_FACTS += ("replayed", "speedup", "ci", "significant", "matched")
RELUS = ("torch.relu", "torch.nn.functional.relu", "relu", "torch.relu_")


_WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


def count_word(n: int) -> str:
    """``n`` as the lesson's sentences say a small count ("four traps"): a word up to ten,
    digits above.

    >>> count_word(len(TRAPS)), count_word(12)
    ('four', '12')
    """
    return _WORDS[n] if 0 <= n < len(_WORDS) else str(n)


def edits_word(n: int) -> str:
    """``n`` edits, in words: "1 edit", "3 edits"."""
    return f"{n} edit{'' if n == 1 else 's'}"


@dataclass(frozen=True)
class Verdict:
    ok: bool
    message: str


@dataclass
class LessonState:
    """Where the learner is; saved in the session (``to_json``) so the lesson resumes."""

    step: int = 0
    done: list[str] = field(default_factory=list)
    answers: dict[str, str] = field(default_factory=dict)
    facts: dict[str, Any] = field(default_factory=dict)  # what the window saw the learner do
    baseline: dict[str, Any] = field(default_factory=dict)  # recorded when a step began
    model: str = DEFAULT_MODEL
    facts_of: str = ""  # the spec of the model the facts of MODEL_FACTS were seen on

    def to_json(self) -> Json:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LessonState:
        known = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        state = cls(**known)
        state.step = max(0, min(int(state.step), STEP_COUNT - 1))
        return state

    def seen_model(self, spec: str | None) -> None:
        """The window shows the model ``spec`` (None: none): what was seen on another
        model is forgotten (it must not be saved with, or checked on, this one).

        >>> state = LessonState(facts={"selected": "fc1", "fixed": ["trap_if"]}, facts_of="a")
        >>> state.seen_model("b"); state.facts, state.facts_of
        ({'fixed': ['trap_if']}, 'b')
        """
        if spec != self.facts_of:
            for key in MODEL_FACTS:
                self.facts.pop(key, None)
            self.facts_of = spec or ""

    def mark(self, step_id: str) -> None:
        if step_id not in self.done:
            self.done.append(step_id)


Check = Callable[[GraphDocument | None, LessonState], Verdict]
Text = Callable[[GraphDocument | None, LessonState], str]
