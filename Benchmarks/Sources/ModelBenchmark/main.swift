// Placeholder until the benchmark is written.
print("ModelBenchmark: not written yet")
