"""What each step of *Learn FX* says (computed on the learner's model) and checks: for each
step an intro (Markdown), a task, a check -> :class:`Verdict` and, for some, a ``begin`` that
records what the check compares with.  Plain functions of (document, state), no Qt.  Steps
1–7 (the graph in hand); steps 8–10 are :mod:`.beyond`'s.
"""

from __future__ import annotations

from typing import Any

from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.graph.graphviews import format_target
from fxstudio.core.lesson import demos
from fxstudio.core.lesson.state import (
    RELUS,
    LessonState,
    Verdict,
    count_word,
    edits_word,
)


def need(doc: GraphDocument | None) -> Verdict | None:
    return None if doc is not None else Verdict(False, "Open a model first (File ▸ Open model…).")


def call_nodes(doc: GraphDocument) -> list[Any]:
    return [n for n in doc.graph.nodes if n.op.startswith("call_")]


# 1. pick ------------------------------------------------------------------------------------


def pick_intro(doc: GraphDocument | None, state: LessonState) -> str:
    return (
        "**torch.fx** turns a module's `forward` into a *graph* you can read, change and "
        "turn back into Python. The lesson uses the small module of the FX documentation "
        "(`examples:fxdocs`: a parameter, a `Linear` and a `clamp`) — or your own model: open "
        "any traceable module with example inputs and every step works on it.\n\n"
        "```python\nclass MyModule(torch.nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.param = torch.nn.Parameter(torch.rand(3, 4))\n"
        "        self.linear = torch.nn.Linear(4, 5)\n\n    def forward(self, x):\n"
        "        return self.linear(x + self.param).clamp(min=0.0, max=1.0)\n```"
    )


def pick_check(doc: GraphDocument | None, state: LessonState) -> Verdict:
    if (missing := need(doc)) is not None:
        return missing
    assert doc is not None
    if not call_nodes(doc):
        return Verdict(False, "This graph has no operations: open a model that computes something.")
    if not doc.example_inputs:
        return Verdict(False, "This model has no example inputs: open it with an input shape.")
    output = next(n for n in reversed(list(doc.graph.nodes)) if n.op == "output")
    returned = output.all_input_nodes
    shape = doc.row(returned[0].name).shape if returned else ""
    gives = f" it returns {shape}" if shape else ""
    name = doc.request.spec or "The model"
    edits = len(doc.history)
    size = (
        f"{name}: {len(doc)} nodes now, after {edits_word(edits)} to its trace."
        if edits
        else f"{name} traced: {len(doc)} nodes."
    )
    return Verdict(
        True,
        f"{size} Run on its example inputs{gives}: the reference the later steps compare with.",
    )


# 2. trace -----------------------------------------------------------------------------------


def trace_intro(doc: GraphDocument | None, state: LessonState) -> str:
    return (
        "`symbolic_trace` calls your `forward` **once**, with *Proxies* in place of tensors. "
        "Each operation on a Proxy does not compute anything: it appends a **node** to the "
        "graph and returns a new Proxy. So the graph's nodes come in the order your code made "
        "them, each remembering the line of your code (`node.stack_trace`)."
    )


def trace_check(doc: GraphDocument | None, state: LessonState) -> Verdict:
    if (missing := need(doc)) is not None:
        return missing
    assert doc is not None
    seen = int(state.facts.get("replayed", 0))
    if seen < len(doc):
        return Verdict(False, f"Replay the trace to its end ({seen} of {len(doc)} nodes shown).")
    if doc.history:  # an edited graph: its order now, not the trace's
        return Verdict(True, f"All {len(doc)} nodes of the graph as it is now (edited).")
    return Verdict(True, f"All {len(doc)} nodes, in the order tracing created them.")


# 3. the IR ----------------------------------------------------------------------------------


def ir_intro(doc: GraphDocument | None, state: LessonState) -> str:
    counts = demos.opcode_counts(doc) if doc is not None else {}
    rows = "\n".join(
        f"| `{op}` | {counts.get(op, 0)} | {demos.OPCODE_MEANING[op]} |" for op in demos.OPCODES
    )
    return (
        "The **Nodes** table is `graph.print_tabular()`: one row per node — opcode, name, "
        f"target, args, kwargs. There are {count_word(len(demos.OPCODES))} opcodes; your "
        "graph has:\n\n"
        "| opcode | nodes | what it is |\n|---|---|---|\n" + rows + "\n\n"
        "Inputs are made with the real API `Graph.placeholder(name, type_expr, "
        "default_value)`; a graph with a typed and a defaulted input generates:\n\n"
        f"```python\n{demos.placeholder_demo()}\n```\n\n"
        "and a `Transformer` can change inputs by overriding `placeholder(target, args, "
        "kwargs)`."
    )


def ir_check(doc: GraphDocument | None, state: LessonState) -> Verdict:
    if (missing := need(doc)) is not None:
        return missing
    assert doc is not None
    wrong = []
    for q in demos.quiz(doc):
        given = state.answers.get(q.id)
        if given is None:
            return Verdict(False, f"Answer all {count_word(len(demos.quiz(doc)))} questions.")
        if given != q.answer:
            wrong.append(f"Not quite: {q.why}")
    if wrong:
        return Verdict(False, " ".join(wrong))
    return Verdict(True, "Right. " + " ".join(q.why for q in demos.quiz(doc)))


# 4. the code ----------------------------------------------------------------------------------


def code_target(doc: GraphDocument) -> tuple[str, int]:
    """The node the code step asks for, and its line in the generated forward."""
    lines = doc.code_line_map()
    calls = call_nodes(doc)
    node = next((n for n in calls if n.op == "call_module"), calls[0] if calls else None)
    name = node.name if node is not None else doc.node_names()[0]
    return name, lines.get(name, 1)


def code_intro(doc: GraphDocument | None, state: LessonState) -> str:
    return (
        "From the graph FX writes Python again: **Generated code** is `gm.code`, the "
        "`forward` the `GraphModule` runs. Each line computes one node, and every view is "
        "linked: a click on a line selects its node on the canvas and in the table, and the "
        "inspector shows the line of *your* code that made it."
    )


def code_task(doc: GraphDocument | None, state: LessonState) -> str:
    if doc is None:
        return "Open a model."
    name, line = code_target(doc)
    return f"In the Generated code dock, click line {line} (it computes `{name}`)."


def code_check(doc: GraphDocument | None, state: LessonState) -> Verdict:
    if (missing := need(doc)) is not None:
        return missing
    assert doc is not None
    name, line = code_target(doc)
    chosen = state.facts.get("selected")
    if chosen != name:
        return Verdict(False, f"Select the node of line {line} (now selected: {chosen or 'none'}).")
    loc = doc.source_location(name)
    where = f" — made by {loc.filename.rpartition('/')[2]}:{loc.lineno}" if loc else ""
    return Verdict(True, f"Line {line} is node {name}{where}: code, graph and source agree.")


# 5. step the Interpreter ------------------------------------------------------------------------


def interpret_intro(doc: GraphDocument | None, state: LessonState) -> str:
    return (
        "`torch.fx.Interpreter` runs a graph **one node at a time** (`run_node`), which is how "
        "the **Step** dock works: every value has a card (shape, dtype, min/max/mean/std, "
        "NaN/Inf, a histogram, a picture), and where a module boundary allows it is compared "
        "with the eager model's value at the same point (a forward hook). You can step back, "
        "run to a node, set breakpoints (F9), and step over a collapsed module."
    )


def interpret_check(doc: GraphDocument | None, state: LessonState) -> Verdict:
    if (missing := need(doc)) is not None:
        return missing
    assert doc is not None
    f = state.facts
    if f.get("step_total") != len(doc) or f.get("step_position") != len(doc):
        done = f.get("step_position", 0) if f.get("step_total") == len(doc) else 0
        return Verdict(False, f"Step to the end of the graph ({done} of {len(doc)} nodes run).")
    if f.get("step_differs"):
        return Verdict(
            True, f"At the end. The graph differs from eager first at {f['step_differs']}."
        )
    return Verdict(True, "At the end, and the graph agrees with the eager model at every boundary.")


# 6. surgery ----------------------------------------------------------------------------------


def relus(doc: GraphDocument) -> int:
    return sum(
        1
        for n in doc.graph.nodes
        if (n.op == "call_function" and format_target(n) in RELUS)
        or (n.op == "call_method" and n.target in ("relu", "relu_"))
        or (
            n.op == "call_module"
            and type(doc.graph_module.get_submodule(str(n.target))).__name__ == "ReLU"
        )
    )


def surgery_begin(doc: GraphDocument | None, state: LessonState) -> None:
    if doc is None:
        return
    state.baseline["targets"] = {
        n.name: format_target(n) for n in doc.graph.nodes if n.op == "call_function"
    }
    state.baseline["relus"] = relus(doc)
    state.baseline["spec"] = doc.request.spec


def surgery_intro(doc: GraphDocument | None, state: LessonState) -> str:
    text = (
        "Transformations change the graph: swap a node's target, insert a node with "
        "`graph.inserting_after(node)` and `replace_all_uses_with`, then `graph.lint()` and "
        "**`gm.recompile()`** — the generated `forward` is only rewritten by `recompile()`.\n\n"
    )
    demo = demos.stale_code_demo(doc) if doc is not None else None
    if demo is not None:
        text += (
            f"The classic bug, run on a copy of your graph: `{demo.node}.target = {demo.new}` "
            f"without `recompile()` — `gm.code` still says `{demo.stale_code_line}` and "
            f"the module returns {'exactly the old result' if demo.stale_same else 'a new one'}; "
            f"after `recompile()` the output changes by up to {demo.recompiled_differs:.3g}. "
            "fxstudio recompiles after every edit, so its views never go stale."
        )
    return text


def surgery_task(doc: GraphDocument | None, state: LessonState) -> str:
    return (
        "Change one node's target (select the add node; in the Inspector set target to "
        "operator.mul, or Edit ▸ Change target…), then insert a torch.relu after a node "
        "(select it, Edit ▸ Insert node…, type relu)."
    )


def surgery_check(doc: GraphDocument | None, state: LessonState) -> Verdict:
    if (missing := need(doc)) is not None:
        return missing
    assert doc is not None
    base = state.baseline
    if base.get("spec") != doc.request.spec or "targets" not in base:
        surgery_begin(doc, state)
        base = state.baseline
    now = {n.name: format_target(n) for n in doc.graph.nodes if n.op == "call_function"}
    changed = [n for n, t in base["targets"].items() if n in now and now[n] != t]
    relu_added = relus(doc) > base["relus"]
    if not changed and not relu_added:
        return Verdict(False, "Change a target and insert a relu (neither is done yet).")
    if not changed:
        return Verdict(False, "The relu is in. Now change a node's target (add → operator.mul).")
    if not relu_added:
        name = changed[0]
        return Verdict(False, f"{name} is now {now[name]}. Now insert a relu.")
    doc.graph.lint()
    name = changed[0]
    line = doc.code_line_map().get(name)
    code = doc.code().splitlines()[line - 1].strip() if line else ""
    return Verdict(
        True,
        f"{name}: {base['targets'][name]} → {now[name]}, and a relu inserted; the graph "
        f"lints and the code was regenerated: `{code}`.",
    )


# 7. replace_pattern ----------------------------------------------------------------------------


def pattern_begin(doc: GraphDocument | None, state: LessonState) -> None:
    state.baseline["rewrites"] = (
        sum(1 for r in doc.history if r.get("edit") == "rewrite") if doc is not None else 0
    )
    state.facts.pop("missed", None)
    state.facts.pop("matched", None)


def pattern_intro(doc: GraphDocument | None, state: LessonState) -> str:
    ex = demos.pattern_exercise(doc) if doc is not None else None
    text = (
        "`torch.fx.subgraph_rewriter.replace_pattern(gm, pattern, replacement)` finds every "
        "place the pattern's graph occurs and swaps in the replacement. When a pattern does "
        "not match, FX says nothing; the **Patterns** dock says *why*: the first node where "
        "op, target, literal or argument differ.\n\n"
    )
    if ex is None:
        return text + "Your model has no node with a literal to try this on: open examples:fxdocs."
    return text + (
        f"A pattern for `{ex.node}` with one literal wrong:\n\n```python\n{ex.miss}\n```\n\n"
        f"the one that matches:\n\n```python\n{ex.fix}\n```\n\nand an equivalent "
        f"replacement:\n\n```python\n{ex.replacement}\n```"
    )


def pattern_task(doc: GraphDocument | None, state: LessonState) -> str:
    return (
        "Press Try the pattern: it does not match, and the Patterns dock says why. Fix the "
        "literal in the pattern (or press Fix it), press Find, then press Replace accepted in "
        "the Patterns dock."
    )


def pattern_check(doc: GraphDocument | None, state: LessonState) -> Verdict:
    if (missing := need(doc)) is not None:
        return missing
    assert doc is not None
    if not state.facts.get("missed"):
        return Verdict(
            False, "First press Try the pattern: it does not match, and the Patterns dock says why."
        )
    rewrites = sum(1 for r in doc.history if r.get("edit") == "rewrite")
    if rewrites > int(state.baseline.get("rewrites", 0)):
        return Verdict(
            True, "Matched and replaced as one undo step, checked against the graph before."
        )
    matched = int(state.facts.get("matched") or 0)  # what the last Find found
    if matched:
        places = "1 place" if matched == 1 else f"{matched} places"
        return Verdict(
            False,
            f"Fixed: the pattern matches now ({places}). Press Replace accepted in the "
            "Patterns dock.",
        )
    return Verdict(
        False,
        f"It missed: {state.facts['missed']}. Fix the literal (or press Fix it), then press Find.",
    )
