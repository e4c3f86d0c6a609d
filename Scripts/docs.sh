#!/usr/bin/env bash
# Builds the DocC catalogue of every library module with the toolchain's docc, failing on any warning.
# Usage: Scripts/docs.sh [Module ...]   (default: all library modules)
set -euo pipefail
cd "$(dirname "$0")/.."
modules=("$@")
[ ${#modules[@]} -gt 0 ] || modules=(CoatyCore CoatyModel CoatyTransport CoatyCommunication CoatyControllers CoatyMQTT CoatyBroker CoatyTesting CoatyWebSocket)
docc_bin="$(command -v docc || true)"
if [ -z "$docc_bin" ]; then
    swift_bin="$(readlink -f "$(command -v swift)")"
    docc_bin="$(dirname "$swift_bin")/docc"
fi
# The symbol graphs need the test targets built too, or dump-symbol-graph fails loading them.
swift build --build-tests >/dev/null
swift package dump-symbol-graph --minimum-access-level public >/dev/null
graphs="$(swift build --show-bin-path)/symbolgraph"
[ -d "$graphs" ] || graphs="$(swift build --show-bin-path)/../symbolgraph"
for module in "${modules[@]}"; do
    staging=".build/docs/$module-symbol-graphs"
    rm -rf "$staging" && mkdir -p "$staging"
    cp "$graphs/$module".symbols.json "$staging/"
    cp "$graphs/$module"@*.symbols.json "$staging/" 2>/dev/null || true
    echo "==> docc $module"
    "$docc_bin" convert "Sources/$module/$module.docc" \
        --additional-symbol-graph-dir "$staging" \
        --output-path ".build/docs/$module.doccarchive" \
        --fallback-display-name "$module" --fallback-bundle-identifier "org.coaty.$module" \
        --warnings-as-errors >/dev/null
done
echo "docs: ${#modules[@]} catalogue(s) built without warnings"
