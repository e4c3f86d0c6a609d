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
echo "==> swift test"
# A cap far above the ~10 s the suite takes: a hang fails the run instead of eating the CI budget.
timeout 1500 swift test --skip-build "$@"
echo "==> swift test again on the poll reactor: the socket, WebSocket, TLS, MQTT and broker suites"
COATY_REACTOR=poll timeout 1500 swift test --skip-build \
    --filter 'CoatySocketsTests|CoatyWebSocketTests|CoatyTLSTests|CoatyMQTTTests|CoatyBrokerTests'
