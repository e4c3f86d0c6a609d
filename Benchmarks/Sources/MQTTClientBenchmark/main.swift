// Placeholder until the benchmark is written.
print("MQTTClientBenchmark: not written yet")
