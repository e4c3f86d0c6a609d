#!/usr/bin/env bash
# Runs the whole test suite on a fresh machine: installs what the tests need when it is missing
# (mosquitto and its clients from Debian's packages, paho-mqtt from PyPI), checks formatting, builds
# with warnings as errors, builds the docs, then runs `swift test`.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v mosquitto >/dev/null 2>&1 || [ -x /usr/sbin/mosquitto ] || need_apt+=(mosquitto)
command -v mosquitto_pub >/dev/null 2>&1 || need_apt+=(mosquitto-clients)
if [ ${#need_apt[@]} -gt 0 ]; then
    echo "==> installing ${need_apt[*]}"
    sudo_cmd=""
    [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
if ! python3 -c "import paho.mqtt.client" >/dev/null 2>&1; then
    echo "==> installing paho-mqtt"
    python3 -m pip install -q paho-mqtt
fi

echo "==> swift format lint (fix with: bash Scripts/format.sh)"
swift format lint --strict --parallel --recursive Package.swift Sources Tests Examples Benchmarks/Package.swift Benchmarks/Sources
echo "==> swift build"
swift build --build-tests -Xswiftc -warnings-as-errors --explicit-target-dependency-import-check error
echo "==> docs (DocC catalogues, warnings as errors)"
bash Scripts/docs.sh
echo "==> swift test"
# A cap far above the ~10 s the suite takes: a hang fails the run instead of eating the CI budget.
timeout 1500 swift test --skip-build "$@"
