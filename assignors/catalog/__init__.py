"""Which strategies exist: built-ins, plugins loaded by name, the coordinator's election."""
