"""``DocumentSession``: the open document and everything about having it open -- the request
it came from and the session file it is saved in, opening (in a stoppable worker), its
undo stack ("modified" is ``not undo_stack.isClean()``), saving, autosave and recovery, the
big graph's catch-up, and one Qt signal for its change events that every view listens to.

The window and its panels never hold a document of their own: they read
``session.document`` and redraw on ``documentChanged`` (another document is open) and
``changed(event)`` (this one changed).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import QUndoStack

from fxstudio.core.errors import SourceLocation, UserError
from fxstudio.core.flows.open import RecentModels, model_file, open_prepared
from fxstudio.core.flows.save import save_session
from fxstudio.core.graph.document import ChangeKind, DocumentEvent, GraphDocument
from fxstudio.core.graph.request import OpenRequest
from fxstudio.core.process import collector
from fxstudio.qt.editing.commands import EditCommand
from fxstudio.qt.turns import Turns
from fxstudio.qt.window.autosave import Autosaver
from fxstudio.qt.window.catch_up import CatchUpRunner
from fxstudio.qt.window.graph_state import GraphStates
from fxstudio.qt.workers import UserCodeTask

#: Graphs with more nodes than this show an edit at once and get its code and shapes from a
#: worker thread, starting DEFER_MS after the last edit (fxstudio.core.edits.catchup).
DEFER_ABOVE = 2000
DEFER_MS = 30


#: An open superseded by another is let run this long before its code is stopped.
SUPERSEDED_GRACE_MS = 5000
#: A cancelled open's code still running this long after Cancel: the status bar says so.
LINGER_MS = 500
#: A cancelled open that ran this long made enough garbage to keep out of the next sweep.
KEEP_AFTER_S = 0.5


SPEC_CHARS = 60  # a longer spec is shortened in the middle while it opens


def shortened(spec: str, chars: int = SPEC_CHARS) -> str:
    """``spec`` in at most ``chars`` characters: its start and end (a file's name, a
    configuration's last settings), ``…`` between."""
    if len(spec) <= chars:
        return spec
    head = (chars - 1) * 2 // 3
    return f"{spec[:head]}…{spec[len(spec) - (chars - 1 - head) :]}"


def open_stage(request: OpenRequest, stage: str) -> str:
    """The open's stage as the bar says it: loading the model (building it without weights,
    when asked for the structure only) -- not the spec again -- or as the core told it."""
    if stage == f"Loading {request.spec}":
        bare = request.weights is False
        return "Building the model without weights" if bare else "Loading the model"
    return stage


class DocumentSession(QObject):
    """Signals: ``documentChanged(document)`` (another document, or ``None``, is open),
    ``changed(event)`` (the open one changed), ``loaded(document)`` and ``loadFailed(exc)``
    (an open ended), ``status(text, ms)`` (for the status bar; 0 ms: until replaced),
    ``busy(bool)`` (opening or saving runs), ``openProgress(stage, done, total)`` (what the
    open runs now, e.g. "Shapes: 2,048/50,000 nodes"; total 0: not known),
    ``modifiedChanged(bool)``, ``lockChanged()``
    (editing is locked or unlocked), ``saved(path)``, ``caughtUp()``, ``profileChanged``
    (the profile, or whether it is of the graph as it is now, changed), ``graphStateChanged()``
    (an edit, undo or redo made the graph another one: :meth:`graph_state` says which).

    Results are tied to the graph they were computed on by :meth:`graph_state`
    (:mod:`~fxstudio.qt.window.graph_state`): a result stamped with it is current while
    :meth:`is_current` says so (an undo back to that graph makes it current again), stale
    otherwise."""

    documentChanged = Signal(object)  # noqa: N815
    changed = Signal(object)
    loaded = Signal(object)
    loadFailed = Signal(object)  # noqa: N815
    status = Signal(str, int)
    busy = Signal(bool)
    openProgress = Signal(str, int, int)  # noqa: N815
    modifiedChanged = Signal(bool)  # noqa: N815
    lockChanged = Signal()  # noqa: N815
    saved = Signal(str)
    caughtUp = Signal()  # noqa: N815 - a big graph's deferred code and shapes are done
    profileChanged = Signal(object)  # noqa: N815 - the per-node profile now shown (or None)
    graphStateChanged = Signal()  # noqa: N815 - graph_state() is another one

    def __init__(self, recovery: Path, autosave_s: float, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.document: GraphDocument | None = None
        self.request: OpenRequest | None = None  # what the document was opened from
        self.failed_request: OpenRequest | None = None  # the user's last open, if it failed
        self.path: Path | None = None  # the session file it is saved in
        self.undo_stack = QUndoStack(self)
        self.undo_stack.cleanChanged.connect(self._clean_changed)
        self.locked: str | None = None  # why edits wait (a save is reading the document)
        self.profile: Any = None  # the last per-node profile of this document
        self.graph_states = GraphStates(self.undo_stack, self)
        self.graph_states.changed.connect(self._graph_state_changed)
        self.profile_state: object = None  # the graph state it was measured on
        self.autosave_pending = False  # changes the recovery file does not hold yet
        self.autosaver = Autosaver(self, recovery, autosave_s, self)
        self.recent = RecentModels(self.autosaver.directory.parent / "recent.json")
        self.catch_up = CatchUpRunner(DEFER_MS, self)
        self.turns = Turns(self)  # views' shares of a big graph's change, a turn each
        # told once the views have shown what was caught up (their turns come first)
        self.catch_up.caughtUp.connect(lambda: self.soon(self.caughtUp.emit))
        self.catch_up.failed.connect(self._catch_up_failed)
        self._unsubscribe: Any = None
        self._task: UserCodeTask | None = None  # the open under way
        self.lingering: UserCodeTask | None = None  # a cancelled open whose code runs on
        self._opening: OpenRequest | None = None
        self._started = 0.0
        self.open_stage = ""  # what the open under way runs now, in words
        self._restored_from: Path | None = None
        self.tell_failure = True  # the window shows a failure to open in a message box
        #: Asked before :meth:`replace` drops the open document: True to go on.  The window's
        #: asks whether to save unsaved changes (Save, Discard or Cancel).
        self.may_replace: Callable[[], bool] = lambda: True
        collector.keep()  # torch, Qt and the rest, imported by now

    # --- state ---------------------------------------------------------------------------------

    def _clean_changed(self, clean: bool) -> None:
        self.modifiedChanged.emit(not clean)

    def _catch_up_failed(self, text: str) -> None:
        self.status.emit(text, 15000)

    @property
    def modified(self) -> bool:
        """Changes no session file holds (asked about before they are lost)."""
        return self.document is not None and not self.undo_stack.isClean()

    def mark_modified(self) -> None:
        """Changes that are not on the undo stack (a restored recovery file)."""
        self.undo_stack.resetClean()

    def lock(self, reason: str) -> None:
        """No edit, undo or redo until :meth:`unlock` (a worker reads the graph)."""
        self.locked = reason
        self.lockChanged.emit()

    def unlock(self) -> None:
        self.locked = None
        self.lockChanged.emit()

    def graph_state(self) -> object:
        """Which graph the document holds now, to stamp a result computed on it with."""
        return self.graph_states.now()

    def is_current(self, state: object) -> bool:
        """Whether a result stamped with ``state`` is of the graph as it is now."""
        return self.document is not None and self.graph_states.is_current(state)

    def _graph_state_changed(self) -> None:
        if self.profile is not None:
            self.profileChanged.emit(self.profile)  # stale now, or current again
        self.graphStateChanged.emit()

    def set_profile(self, profile: Any, state: object = None) -> None:
        """The per-node profile the table, inspector and canvas show (None: none), measured
        on the graph at ``state`` (by default: as it is now)."""
        self.profile = profile
        self.profile_state = self.graph_state() if state is None else state
        self.profileChanged.emit(profile)

    @property
    def profile_current(self) -> bool:
        """Whether the profile is of the graph as it is now (else its times are stale)."""
        return self.profile is not None and self.is_current(self.profile_state)

    def title(self) -> str:
        """What the window's title calls the document."""
        doc = self.document
        if doc is None:
            return "fxstudio"
        name = self.path.name if self.path else (doc.request.spec or "untitled")
        bare = "" if doc.weights else " (structure only)"  # no weights: nothing to run
        return f"{name}{'*' if self.modified else ''}{bare} — fxstudio"

    # --- opening -------------------------------------------------------------------------------

    @property
    def opening(self) -> OpenRequest | None:
        """The request being opened now, if any."""
        return self._opening if self._task is not None else None

    @property
    def open_task(self) -> UserCodeTask | None:
        """The worker of the open under way, if any."""
        return self._task

    def open(self, request: OpenRequest, tell: bool = True) -> None:
        """Load and capture in a worker thread; the current document stays until it is done
        (and stays when it fails).  An open started while another runs supersedes it.
        ``tell=False``: a failure is the caller's to show (the window shows none)."""
        if self._task is not None:  # superseded: let it end (or stop it if it runs away)
            self._task.abandon(SUPERSEDED_GRACE_MS)
            self._task = None
        self.tell_failure = tell
        first = not request.is_session
        task = UserCodeTask(lambda: open_prepared(request, first_open=first), self)
        task.succeeded.connect(lambda doc: self._loaded(task, request, doc))
        started = time.perf_counter()
        task.finished.connect(lambda: self._ended(task, time.perf_counter() - started))
        task.failed.connect(lambda exc: self._failed(task, request, exc))
        task.stage.connect(lambda text: self._told(task, text))
        task.progress.connect(
            lambda done, total: (
                self.openProgress.emit(self.open_stage, done, total) if task is self._task else None
            )
        )
        self._task, self._opening = task, request
        self.open_stage = ""
        self._started = time.perf_counter()
        self.busy.emit(True)
        self.status.emit(f"Opening {shortened(request.spec)} ({request.frontend})…", 0)
        task.start()

    def _told(self, task: UserCodeTask, text: str) -> None:
        """A stage told by the open's core code; its ``progress`` (the count, or (0, 0))
        follows in the same turn and says it (``openProgress``)."""
        if task is self._task:
            self.open_stage = text

    def replace(self, request: OpenRequest, tell: bool = True) -> bool:
        """Open ``request`` in place of the open document -- what every command that opens
        another model does -- once :attr:`may_replace` lets the document go (the window asks
        to save its changes; Cancel keeps it, with its undo history).  True when the open
        started.  (:meth:`open` asks nothing: for a caller that asked already.)"""
        if self.document is not None and not self.may_replace():
            return False
        self.open(request, tell)
        return True

    def reload(self) -> bool:
        """Open the document's model again, in its place (asking first, as :meth:`replace`
        does); True when the open started."""
        return self.request is not None and self.replace(self.request)

    def seconds_opening(self) -> float:
        return time.perf_counter() - self._started

    def where(self) -> SourceLocation | None:
        """The line of the model's code the open runs now, if one is under way."""
        task, request = self._task, self._opening
        if task is None or request is None:
            return None
        return task.where(model_file(request.spec))

    def cancel_open(self, quiet: bool = False) -> None:
        """Stop opening: the model's code is stopped at its next line, its result dropped --
        the document open before stays.  A build from a configuration and ``torch.export``
        stop at the next module they build or call (``core.process.modelcode.stoppable``);
        what cannot be stopped mid-call (one long C call, torch's steps between modules)
        ends in the background, and if it is still running a moment later the status bar
        says so."""
        task, self._task = self._task, None
        if task is None:
            return
        task.stop()
        self.lingering = task
        self.busy.emit(False)
        if quiet:
            return
        kept = "the model open before stays" if self.document is not None else "nothing opened"
        self.status.emit(f"Opening cancelled; {kept}.", 0)  # (until the next message)
        stage = open_stage(self._opening, self.open_stage) if self._opening else ""
        QTimer.singleShot(LINGER_MS, lambda: self._still_running(task, kept, stage))

    def _still_running(self, task: UserCodeTask, kept: str, stage: str) -> None:
        if task is self.lingering and self._task is None:
            what = f" ({stage})" if stage else ""
            self.status.emit(
                f"Opening cancelled; {kept}. Its library code{what} cannot be stopped "
                "mid-call: it ends in the background, its result dropped.",
                10000,
            )

    def _ended(self, task: UserCodeTask, seconds: float) -> None:
        """An open's thread is over, after ``seconds``.  One cancelled or superseded after
        a while leaves its garbage (a big model's export: a million objects, a 250 ms scan)
        out of the collector's sight -- the idle window's full collection takes it --
        rather than in the next sweep's; a quick one's is left to that sweep."""
        if task is self.lingering:
            self.lingering = None
        if task.cancelled and seconds >= KEEP_AFTER_S:  # (an open set_document took: not)
            collector.keep()
            collector.owe()  # what it took goes back to the machine once the window is idle

    def restore(self, path: Path) -> None:
        """Open a recovery file; once it is shown the file is deleted (its changes stay
        unsaved)."""
        self._restored_from = Path(path)
        self.open(OpenRequest(str(path)))

    def dialog_request(self) -> OpenRequest | None:
        """What the Open dialog starts with: the user's last open if it failed (to fix its
        typo), else the open model's own request -- a session's or a restored recovery
        file's model, not the file it was read from."""
        if self.failed_request is not None:
            return self.failed_request
        return self.document.request if self.document is not None else None

    def _loaded(self, task: UserCodeTask, request: OpenRequest, document: GraphDocument) -> None:
        if task is not self._task:
            return  # superseded or cancelled meanwhile
        self._task = None
        self.busy.emit(False)
        self.failed_request = None
        restored, self._restored_from = self._restored_from, None
        # A recovery file is deleted once shown: reloading opens its model again.
        self.request = request if restored is None else document.request
        is_session = request.is_session
        self.set_document(document)
        self._push_replayed(document)
        self.path = Path(request.spec) if is_session and restored is None else None
        if restored is not None:
            restored.unlink(missing_ok=True)
            self.mark_modified()
        self.autosave_pending = not is_session or restored is not None
        seconds = time.perf_counter() - self._started
        note = f" — {document.notes[0]}" if document.notes else ""
        self.status.emit(f"Opened in {seconds:.2f} s: {request.spec}{note}", 0)  # time first
        self.recent.add(request)
        self.modifiedChanged.emit(self.modified)
        self.loaded.emit(document)

    def _failed(self, task: UserCodeTask, request: OpenRequest, exc: BaseException) -> None:
        if task is not self._task:
            return
        self._task = None
        self.busy.emit(False)
        if self.tell_failure and self._restored_from is None:  # the user's own open
            self.failed_request = request
        self._restored_from = None
        self.status.emit(f"Could not open {request.spec}.", 10000)
        self.loadFailed.emit(exc)

    def _push_replayed(self, document: GraphDocument) -> None:
        """A session's edits, made again on opening it, as the undo stack's steps (undo
        undoes them one by one); the stack is clean there, at the session as saved."""
        edits, document.replayed = document.replayed, []
        for edit in edits:
            self.undo_stack.push(EditCommand(edit))
        self.undo_stack.setClean()

    # --- the document --------------------------------------------------------------------------

    def set_document(self, document: GraphDocument | None) -> None:
        """Show ``document`` (None: close): the undo stack starts empty and clean, and no
        profile is shown (it was of the document before)."""
        profiled, self.profile = self.profile is not None, None
        self.graph_states.new_document()  # (before the stack is cleared: no change to tell)
        self.undo_stack.clear()  # commands belong to the document they changed
        self.undo_stack.setClean()
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        self.document = document
        if document is not None:
            document.defer_heavy = len(document) > DEFER_ABOVE
            self._unsubscribe = document.subscribe(self._document_event)
        self.catch_up.set_document(document)
        self.documentChanged.emit(document)
        if profiled:
            self.profileChanged.emit(None)
        if document is not None and document.defer_heavy:
            # A big graph: out of the collector's sight (with the one it replaces, which
            # the idle window collects); a small one is left to the collector as usual.
            collector.keep()
        else:  # the one replaced goes next turn, once its last holders let go
            QTimer.singleShot(0, collector.sweep)

    def soon(self, fn: Any) -> None:
        """Call ``fn`` (a view bringing itself up to date) in a turn of its own when the
        document is big, so that one change does not hold the window for every view's share
        in one turn (see :mod:`fxstudio.qt.turns`); at once when it is small."""
        if self.document is not None and self.document.defer_heavy:
            self.turns.soon(fn)
        else:
            fn()

    def close(self) -> None:
        """Close the model (the caller asked about unsaved changes)."""
        self.set_document(None)
        self.request = None
        self.path = None
        self.autosave_pending = False
        self.autosaver.discard()

    def _document_event(self, event: DocumentEvent) -> None:
        self.autosave_pending = True
        self.graph_states.document_changed(event)
        big = self.document is not None and self.document.defer_heavy
        if event.kind is ChangeKind.GRAPH_REPLACED and big:
            collector.keep()  # a big rewrite's new graph: out of the collector's sight
        self.changed.emit(event)
        if event.kind is not ChangeKind.VIEW_CHANGED:
            self.catch_up.schedule()

    # --- saving --------------------------------------------------------------------------------

    def save(self, path: Path, **extra: Any) -> None:
        """Write the session file (raises UserError, changing nothing, when it cannot)."""
        if self.document is None:
            raise UserError("There is no model to save: open one first.")
        save_session(self.document, path, **extra)
        self.path = path
        self.undo_stack.setClean()
        self.autosave_pending = False
        self.autosaver.discard()
        self.status.emit(f"Saved {path}", 5000)
        self.modifiedChanged.emit(False)
        self.saved.emit(str(path))

    def suggest(self, suffix: str) -> str:
        """A file name to offer in a save dialog: the session's, or the model's."""
        doc, stem = self.document, "model"
        if self.path is not None:
            stem = self.path.stem
        elif doc is not None and doc.request.spec:
            stem = Path(doc.request.spec.rpartition(":")[2] or stem).stem
        return str(Path.cwd() / f"{stem}{suffix}")
