"""The Step dock: the graph run node by node, each node's value shown.

- ``panel`` -- :class:`StepPanel`, the dock; ``form`` (its controls, slider and value card).
"""
