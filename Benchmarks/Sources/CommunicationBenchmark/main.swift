// Placeholder until the benchmark is written.
print("CommunicationBenchmark: not written yet")
