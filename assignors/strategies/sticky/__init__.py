"""Kafka's StickyAssignor and CooperativeStickyAssignor (AbstractStickyAssignor's two paths)."""
