"""Every change to the graph: each edit all-or-nothing, undoable, and recorded.

An edit is a list of small reversible steps (create a node, erase one, set a node's inputs,
its target or its name, add or drop a submodule).  :func:`commit` applies them, then checks
the result -- ``Graph.lint()``, the targets, the arguments against the signature or torch's
schemas, each changed call run on fake tensors shaped like its inputs, ``recompile()`` -- and
puts everything back if any step or check fails, raising :class:`EditError` with a message for
the user.  The returned :class:`Edit` undoes and redoes exactly (the generated code comes back
character for character), re-propagates shapes, and emits one document event.

Nodes are named, never held: steps refer to nodes by name and arguments use :class:`Ref`, so
an undo that re-creates a node (a new ``fx.Node`` object) is still followed correctly.

The modules: ``steps`` (the reversible steps, :class:`Ref`), ``engine`` (:func:`commit`,
undo and redo), ``calls`` (whether a changed call can work), ``naming`` (names, targets,
submodules for new nodes), ``user`` (the edits users make), ``language`` (edits written as
text), ``registry`` (the edit set declared once: each edit's function, record and text form,
:data:`EDIT_KINDS`), ``records`` (records as JSON; :mod:`fxstudio.core.sessions.replay` makes
them again), ``snapshots`` (a copy at a version for a worker, adopted back as one edit:
adopting a copy is an edit), ``catchup`` (a big graph's code, rows and shapes after edits,
off the GUI thread).

Example:
    >>> from fxstudio.core.sessions.documents import open_document
    >>> doc = open_document("examples:negrelu")
    >>> e = set_target(doc, "relu", "torch.nn.functional.gelu")
    >>> "gelu" in doc.code(), e.label
    (True, 'Change relu to torch.nn.functional.gelu')
    >>> e.undo(); "gelu" in doc.code()
    False
    >>> set_inputs(doc, "neg", [Ref("mul")])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    fxstudio.core.errors.EditError: 'neg' would use 'mul', which comes after it ...
"""

from fxstudio.core.edits.calls import check_call, check_shapes
from fxstudio.core.edits.engine import (
    Edit,
    commit,
    recheck_shapes,
)
from fxstudio.core.edits.language import (
    COMMANDS,
    add_input_from_text,
    parse_arguments,
    parse_input_declaration,
    parse_kwargs,
    run_command,
)
from fxstudio.core.edits.naming import (
    build_module,
    resolve_function,
    unique_name,
)
from fxstudio.core.edits.records import (
    decode,
    decode_record,
    encode,
    encode_record,
)
from fxstudio.core.edits.registry import EDIT_KINDS, TEXT_FORMS, EditKind, TextForm
from fxstudio.core.edits.steps import (
    CreateNode,
    EraseNode,
    MoveNode,
    NodeSpec,
    Ref,
    RenameNode,
    SetInputs,
    SetSubmodule,
    SetTarget,
    Step,
    check_name,
    from_refs,
    node_of,
    refs_in,
    spec_of,
    to_refs,
)
from fxstudio.core.edits.user import (
    add_input,
    delete,
    insert,
    insert_module,
    move_input,
    paste,
    rename,
    rewire,
    set_inputs,
    set_outputs,
    set_target,
    splice,
)
from fxstudio.core.errors import EditError

__all__ = [
    "EditError",
    "Ref",
    "NodeSpec",
    "node_of",
    "check_name",
    "to_refs",
    "from_refs",
    "refs_in",
    "Step",
    "CreateNode",
    "EraseNode",
    "SetInputs",
    "SetTarget",
    "RenameNode",
    "MoveNode",
    "SetSubmodule",
    "spec_of",
    "Edit",
    "commit",
    "check_call",
    "check_shapes",
    "recheck_shapes",
    "unique_name",
    "resolve_function",
    "build_module",
    "rename",
    "set_target",
    "set_inputs",
    "insert",
    "insert_module",
    "splice",
    "delete",
    "paste",
    "add_input",
    "rewire",
    "move_input",
    "set_outputs",
    "parse_arguments",
    "parse_kwargs",
    "COMMANDS",
    "add_input_from_text",
    "parse_input_declaration",
    "run_command",
    "EDIT_KINDS",
    "TEXT_FORMS",
    "EditKind",
    "TextForm",
    "encode_record",
    "decode_record",
    "encode",
    "decode",
]
