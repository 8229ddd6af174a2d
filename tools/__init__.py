"""Developer tools (benchmarks, the sample estate): never shipped to executors."""
