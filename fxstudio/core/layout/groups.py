"""The module tree as the canvas draws it: which modules are groups (a module of one node,
or of calls and no weights, is not), what the first picture collapses, and a group's label.

Example:
    >>> from fxstudio.core.sessions.documents import open_document
    >>> doc = open_document("examples:resnet")
    >>> sorted(top_level_groups(doc))[:3]
    ['layer1', 'layer2', 'layer3']
"""

from __future__ import annotations

from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.graph.graphviews import ModuleGroup, format_target
from fxstudio.core.graph.notation import format_shape
from fxstudio.core.graph.shapes import node_shape


def top_level_groups(doc: GraphDocument) -> set[str]:
    """The first picture: every top-level module collapsed to one box."""
    return {g.path for g in drawn_tree(doc).children.values()}


#: Graphs with more nodes than this open with their top-level modules collapsed.
COLLAPSE_ABOVE = 300


def collapse_big_graph(doc: GraphDocument) -> None:
    """A freshly opened graph of more than :data:`COLLAPSE_ABOVE` nodes shows its top-level
    modules collapsed: a quick first picture to expand from."""
    if len(doc) > COLLAPSE_ABOVE and not doc.collapsed:
        doc.set_collapsed_groups(top_level_groups(doc))


def all_groups(doc: GraphDocument) -> set[str]:
    """Every module that is drawn as a group (a module holding one node is just that node)."""
    return {g.path for g in drawn_tree(doc).walk() if g.path}


def drawn_tree(doc: GraphDocument) -> ModuleGroup:
    """The module tree as drawn: a leaf module that holds one node, or only calls and no
    weights (an activation used twice), is not a group -- its nodes join the parent's."""

    def holds_weights(group: ModuleGroup) -> bool:
        return any(doc.node(n).op == "get_attr" for n in group.nodes)

    def prune(group: ModuleGroup) -> ModuleGroup:
        out = ModuleGroup(group.path, group.type_name, {}, list(group.nodes))
        for path, child in group.children.items():
            if not child.children and (len(child.nodes) == 1 or not holds_weights(child)):
                out.nodes.extend(child.nodes)
            else:
                out.children[path] = prune(child)
        return out

    return aside(doc, prune(doc.module_tree()))


def group_label(group: ModuleGroup) -> str:
    return f"{group.path} : {group.type_name}" if group.type_name else group.path


def node_label(doc: GraphDocument, name: str) -> tuple[str, str, str]:
    """A node's box as drawn: its op, its target and its shape, as text (made once per
    version of the graph: a layout sizes the boxes by it, the canvas writes it)."""
    labels = doc.memo("drawn.labels", dict)
    label = labels.get(name)
    if label is None:
        node = doc.node(name)
        label = labels[name] = (node.op, format_target(node), format_shape(node_shape(node)))
    return label


#: The frame of the top level's nodes off its main path (masks, position ids), when it has
#: at least :data:`ASIDE_AT` of them: the main path leads the picture, they sit beside it.
ASIDE, ASIDE_AT = "(off the main path)", 8


def aside(doc: GraphDocument, tree: ModuleGroup) -> ModuleGroup:
    """``tree`` with the top level's nodes off its main path in a group of their own
    (:data:`ASIDE`) -- where the main path goes through modules and they are many.

    The main path runs back from the output through each item's first input (the first
    argument of its first node taking one from outside; a weight or an input only where it
    has no other): ``input_ids -> embed_tokens -> layers -> norm -> output`` in a LLaMA,
    not the attention mask built on the way."""
    if not tree.children or len(tree.nodes) < ASIDE_AT:
        return tree
    top = {n: path for path, child in tree.children.items() for n in child.all_nodes()}
    first: dict[str, str] = {}  # item -> the item its first input comes from
    leaves: dict[str, str] = {}  # (its first input that is a weight or an input)
    for node in doc.graph.nodes:
        item = top.get(node.name, node.name)
        if item in first:
            continue
        for arg in node.all_input_nodes:
            source = top.get(arg.name, arg.name)
            if source == item:
                continue
            if arg.op in ("placeholder", "get_attr"):
                leaves.setdefault(item, source)
            else:
                first[item] = source
                break
    main: set[str] = set()
    item = next((n for n in reversed(tree.nodes) if doc.node(n).op == "output"), None)
    while item is not None and item not in main:
        main.add(item)
        item = first.get(item, leaves.get(item))
    off = [
        n for n in tree.nodes if n not in main and doc.node(n).op not in ("placeholder", "output")
    ]
    through = sum(len(tree.children[m].all_nodes()) for m in main if m in tree.children)
    if len(off) < ASIDE_AT or not through or len(off) >= through:
        return tree
    out = ModuleGroup(tree.path, tree.type_name, dict(tree.children), [])
    gone = set(off)
    out.nodes = [n for n in tree.nodes if n not in gone]
    out.children[ASIDE] = ModuleGroup(ASIDE, "", {}, off)
    return out
