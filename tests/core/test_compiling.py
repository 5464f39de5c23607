"""Graph breaks (fxstudio.core.compiling.breaks): Dynamo's explain on the eager model, each
break at the user's line with its kind and advice; a model without breaks says so."""

import textwrap

from fxstudio.core.compiling.breaks import explain_breaks
from fxstudio.core.loading import load_model

BRANCHY = textwrap.dedent("""
    import torch
    from torch import nn

    class Branchy(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            h = self.fc(x)
            if h.sum() > 0:
                h = h * 2
            print("h is", h.shape)
            return torch.relu(h)

    def example_inputs():
        return (torch.randn(2, 4),)
""")


def test_a_branch_and_a_print_break_the_graph_at_their_lines(write_model, capsys):
    path = write_model(BRANCHY)
    explained = explain_breaks(load_model(f"{path}:Branchy"))
    assert explained.graphs == 3 and len(explained.breaks) == 2
    branch, printed = explained.breaks
    lines = path.read_text().splitlines()
    assert (
        branch.where.file == str(path) and lines[branch.where.line - 1].strip() == "if h.sum() > 0:"
    )
    assert branch.kind == "A branch on a tensor's value" and "torch.where" in branch.advice
    assert lines[printed.where.line - 1].strip().startswith("print(")
    assert printed.kind == "print or logging" and "is_compiling" in printed.advice
    data = explained.to_json()
    assert {"reason", "file", "line", "stack"} <= set(data["graph_breaks"][0])
    assert "2 graph breaks" in explained.describe()


def test_a_model_without_breaks_says_so():
    explained = explain_breaks(load_model("examples:resnet"))
    assert explained.breaks == [] and explained.graphs == 1
    assert "no graph breaks" in explained.describe()
