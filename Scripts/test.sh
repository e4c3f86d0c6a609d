#!/usr/bin/env bash
# Runs the whole test suite on a fresh machine: installs what the tests need when it is missing
# (mosquitto and its clients from Debian's packages, paho-mqtt from PyPI), checks formatting, builds
# with warnings as errors, builds the docs, then runs `swift test`.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v mosquitto >/dev/null 2>&1 || [ -x /usr/sbin/mosquitto ] || need_apt+=(mosquitto)
command -v mosquitto_pub >/dev/null 2>&1 || need_apt+=(mosquitto-clients)
command -v python3 >/dev/null 2>&1 || need_apt+=(python3)
python3 -m pip --version >/dev/null 2>&1 || need_apt+=(python3-pip)
if [ ${#need_apt[@]} -gt 0 ]; then
    echo "==> installing ${need_apt[*]}"
    sudo_cmd=""
    [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
# The interop test uses paho-mqtt 2's API (CallbackAPIVersion); Debian ships 1.6, so it comes from
# PyPI. Debian 12 marks its Python as externally managed (PEP 668): pip then needs
# --break-system-packages to install it.
if ! python3 -c "import paho.mqtt.client as m; m.CallbackAPIVersion" >/dev/null 2>&1; then
    echo "==> installing paho-mqtt 2"
    python3 -m pip install -q --upgrade "paho-mqtt>=2" 2>/dev/null \
        || python3 -m pip install -q --upgrade --break-system-packages "paho-mqtt>=2"
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
