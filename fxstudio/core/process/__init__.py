"""Running the user's code inside fxstudio's process: ``guard`` (however it fails, one
message; stopping it), ``noise`` (libraries' chatter kept away), ``modelcode`` (model code
one thread at a time: loading, capture and runs take turns), ``collector`` (Python's cycle
collector kept out of big graphs' way), ``crashlog`` (what a crash left, for the next start),
``progress`` (what a long job is doing now, told to whoever listens), ``files`` (atomic
writes, no silent overwrite), ``budget`` (the memory
the process may still take -- the machine's, its control group's, its address-space limit --
and model code held to it), ``archives`` (a zip archive sized from its directory before it is
read)."""
