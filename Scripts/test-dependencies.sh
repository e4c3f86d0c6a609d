#!/usr/bin/env bash
# Installs what the tests need when it is missing: mosquitto and its clients, openssl (the command
# makes the TLS tests' certificates) and libssl3 (OpenSSL 3, loaded at run time for mqtts://), and
# python3 and pip if absent, from Debian's packages; paho-mqtt 2 from PyPI. Used by Scripts/test.sh and
# Scripts/sanitizers.sh.
set -euo pipefail

need_apt=()
command -v mosquitto >/dev/null 2>&1 || [ -x /usr/sbin/mosquitto ] || need_apt+=(mosquitto)
command -v mosquitto_pub >/dev/null 2>&1 || need_apt+=(mosquitto-clients)
command -v openssl >/dev/null 2>&1 || need_apt+=(openssl)
# The package is libssl3 on Debian 12 and libssl3t64 on Debian 13 and Ubuntu 24.04.
if ! ldconfig -p 2>/dev/null | grep -q 'libssl\.so\.3 '; then
    if apt-cache show libssl3t64 >/dev/null 2>&1; then need_apt+=(libssl3t64); else need_apt+=(libssl3); fi
fi
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
