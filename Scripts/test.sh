#!/usr/bin/env bash
# Runs the whole test suite on a fresh machine: installs what the tests need when it is missing
# (Scripts/test-dependencies.sh: mosquitto and its clients from Debian's packages, paho-mqtt from
# PyPI), checks formatting, builds with warnings as errors, builds the docs, then runs `swift test`.
set -euo pipefail
cd "$(dirname "$0")/.."

bash Scripts/test-dependencies.sh

echo "==> swift format lint (fix with: bash Scripts/format.sh)"
swift format lint --strict --parallel --recursive Package.swift Sources Tests Examples Benchmarks/Package.swift Benchmarks/Sources Fuzz
echo "==> swift build"
swift build --build-tests -Xswiftc -warnings-as-errors --explicit-target-dependency-import-check error
echo "==> docs (DocC catalogues, warnings as errors)"
bash Scripts/docs.sh
# The suites that hold real-time deadlines (keep-alives, graceful-close and slow-consumer windows, the
# CLI's waits, the IO scene) and the one that measures the test process's memory (a TLS flood) run
# afterwards, one test at a time (about 60 s): beside the CPU-heavy suites (TLS handshakes,
# 20,000-event bursts, pipelining floods) and each other on two cores, their deadlines measured the
# machine's load, not the code, and the memory figure other tests' allocations.
timed='MQTTConnectionFakeBrokerTests|CommandsOverMQTTTests|JoinFailureTests|CallOverMosquittoTests|MonitorOverMosquittoTests|MQTTBrokerTests|SlowConsumerTests|MQTTPersistentSessionTests|IORoutingSceneTests|TLSFloodTests'
echo "==> swift test"
# A cap far above the ~20 s the suite takes: a hang fails the run instead of eating the CI budget.
timeout 1500 swift test --skip-build --skip "$timed" "$@"
echo "==> swift test: the suites with real-time deadlines"
timeout 1500 swift test --skip-build --no-parallel --filter "$timed" "$@"
echo "==> swift test again on the poll reactor: the socket, WebSocket, TLS, MQTT and broker suites"
COATY_REACTOR=poll timeout 1500 swift test --skip-build --skip "$timed" \
    --filter 'CoatySocketsTests|CoatyWebSocketTests|CoatyTLSTests|CoatyMQTTTests|CoatyBrokerTests'
echo "==> swift test on the poll reactor: the suites with real-time deadlines"
COATY_REACTOR=poll timeout 1500 swift test --skip-build --no-parallel --filter "$timed"
