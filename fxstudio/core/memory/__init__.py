"""Memory: where the bytes go -- per node, per module, over the run.

Qt-free, like all of ``fxstudio.core``; the window and the command line reach it only through
``fxstudio.core.flows.memory`` (one request in, one result out).

The modules: ``estimate`` (the static estimate from the graph, no real compute: each node's new
storage on fake tensors -- views, in-place ops and aliases allocate nothing -- freed after its
last user, the live activation bytes after each node, the peak and what is live there;
parameters and buffers counted apart; per-module roll-ups), ``storages`` (which storages
each node's output holds: from the recorded values with each kind of call run once alone, or
the graph run on fake tensors -- the cheapest that holds), ``fakerun`` (the graph run whole
on fake tensors, each kind of call run once: alike calls' values made from the first's).
``measure`` (the same bytes measured in a real run, node by node: the CPU profiler's memory
events, the CUDA caching allocator's counters; each kernel's scratch apart).
``agreement`` (the estimate and the measurement side by side: the peaks, their ratio, each
node where they part and why -- scratch, allocator rounding, a copy).
``fits`` (whether a run fits, asked before it starts: what it would take, from the estimate,
against what is available; refused with both numbers).
``training`` (a training step: parameters, gradients, optimizer state and the activations
saved for the backward, from the joint graph AOTAutograd partitions on fake tensors; the
step's peak and what is live there), ``training_run`` (one real training step measured:
the CPU profiler's memory events, CUDA's max_memory_allocated), ``lifetimes`` (how long each
storage of the step's forward and backward graphs lives, node by node).
"""
