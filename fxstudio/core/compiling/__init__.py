"""torch.compile insight: where Dynamo breaks the user's model into several graphs and why
(``breaks``)."""
