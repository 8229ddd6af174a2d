"""Kafka's assignors and ours: each module one strategy, pure functions over the group model."""
