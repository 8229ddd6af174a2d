"""What-if rebalances: the simulated triggers, their costs, and the recommended strategy."""
