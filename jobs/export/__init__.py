"""The snapshot exporter: a live Kafka cluster to the planner's four input tables."""
