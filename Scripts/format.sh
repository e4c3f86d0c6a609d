#!/usr/bin/env bash
# Formats the sources in place with the toolchain's swift-format and the repository's .swift-format.
set -euo pipefail
cd "$(dirname "$0")/.."
swift format format --in-place --parallel --recursive Package.swift Sources Tests Examples Benchmarks/Package.swift Benchmarks/Sources Fuzz
