// Placeholder until the benchmark is written.
print("BrokerBenchmark: not written yet")
