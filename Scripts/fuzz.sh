#!/usr/bin/env bash
# Builds one libFuzzer harness with ASan and runs it: bash Scripts/fuzz.sh <harness> [seconds] [libFuzzer flags…]
#
# <harness> is a file under Fuzz/*/ (by path, or by name without folder and extension, e.g.
# MQTTPacketDecoderFuzz). The harness names the package's modules it needs, in dependency order, on
# one line, and may give default libFuzzer flags on another:
#
#     // fuzz-modules: CoatyCore CoatyMQTTPackets
#     // fuzz-options: -max_len=4096
#
# The script compiles each module but the last from Sources/<Module> as its own module (instrumented
# for coverage), then compiles the harness together with the last module's sources into one module, so
# the harness sees that module's internal and package declarations. A libFuzzer dictionary beside the
# harness (same name, extension .dict) is passed with -dict; seed inputs in Fuzz/<folder>/Seeds/<harness>/
# are read with the corpus; the Swift files in Fuzz/Support/ are compiled into every harness, and those
# in Fuzz/<folder>/Support/ into every harness of that folder. The binary, the corpus and crash files go
# to .build/fuzz/<harness>/; nothing else under .build is touched, so `swift build` and `swift test` are
# unaffected. Default run time:
# 300 s. Extra arguments go to libFuzzer. To replay a crash file, run the built binary on it:
# .build/fuzz/<harness>/<harness> <file>. See Docs/Fuzzing.md.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -lt 1 ]; then
    echo "usage: bash Scripts/fuzz.sh <harness> [seconds] [libFuzzer flags...]" >&2
    echo "harnesses:" >&2
    ls Fuzz/*/*.swift >&2
    exit 2
fi
harness_arg=$1
shift
seconds=300
if [ $# -gt 0 ] && [[ $1 =~ ^[0-9]+$ ]]; then
    seconds=$1
    shift
fi

if [ -f "$harness_arg" ]; then
    harness=$harness_arg
else
    matches=(Fuzz/*/"$harness_arg".swift)
    if [ ! -f "${matches[0]}" ]; then
        echo "no harness $harness_arg under Fuzz/*/" >&2
        exit 2
    fi
    harness=${matches[0]}
fi
name=$(basename "$harness" .swift)
modules_line=$(grep -m1 '^// fuzz-modules:' "$harness" || true)
if [ -z "$modules_line" ]; then
    echo "$harness has no '// fuzz-modules: Module…' line" >&2
    exit 2
fi
read -r -a modules <<<"${modules_line#// fuzz-modules:}"
options_line=$(grep -m1 '^// fuzz-options:' "$harness" || true)
read -r -a options <<<"${options_line#// fuzz-options:}"

out=.build/fuzz/$name
mkdir -p "$out/modules" "$out/corpus" "$out/artifacts"
flags=(
    -swift-version 6 -package-name CoatySwift -parse-as-library -O -g
    -sanitize=fuzzer,address
    -enable-upcoming-feature ExistentialAny
    -enable-upcoming-feature InternalImportsByDefault
    -enable-upcoming-feature MemberImportVisibility
    -I "$out/modules"
)
objects=()
last=$((${#modules[@]} - 1))
for ((i = 0; i < last; i++)); do
    module=${modules[$i]}
    echo "==> $module"
    swiftc "${flags[@]}" -module-name "$module" -wmo -c \
        -emit-module -emit-module-path "$out/modules/$module.swiftmodule" \
        -o "$out/modules/$module.o" $(find "Sources/$module" -name '*.swift' | sort)
    objects+=("$out/modules/$module.o")
done
home=${modules[$last]}
# Code shared by every harness lives in Fuzz/Support/, code shared by the harnesses of one folder in
# that folder's Support/; both go into every harness they serve.
support=()
while IFS= read -r file; do support+=("$file"); done < <(find Fuzz/Support -name '*.swift' | sort)
if [ -d "$(dirname "$harness")/Support" ]; then
    while IFS= read -r file; do support+=("$file"); done < <(find "$(dirname "$harness")/Support" -name '*.swift' | sort)
fi
echo "==> $home + $harness"
swiftc "${flags[@]}" -module-name "$home" \
    -o "$out/$name" $(find "Sources/$home" -name '*.swift' | sort) "$harness" ${support[@]+"${support[@]}"} "${objects[@]}"

seeds=$(dirname "$harness")/Seeds/$name
corpora=("$out/corpus")
[ -d "$seeds" ] && corpora+=("$seeds")
dictionary=${harness%.swift}.dict
[ -f "$dictionary" ] && options+=("-dict=$dictionary")
echo "==> fuzzing $name for $seconds s (corpus $out/corpus, crashes in $out/artifacts)"
# The Swift runtime's backtracer would hold each crash for seconds; libFuzzer reports it.
export SWIFT_BACKTRACE=enable=no
exec nice -n 10 "$out/$name" -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 \
    -artifact_prefix="$out/artifacts/" -print_final_stats=1 ${options[@]+"${options[@]}"} "$@" "${corpora[@]}"
