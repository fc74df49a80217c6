"""Performance harness: simulated provider server, throughput and resume benchmarks."""
