// libFuzzer harness: ObjectFilter and ContextFilter decoded from the input and applied to values and
// objects decoded from the input.
//
// fuzz-modules: CoatyCore CoatyModel
// fuzz-options: -max_len=4096 -dict=Fuzz/Model/json.dict
//
// Run: bash Scripts/fuzz.sh FilterFuzzer [seconds]. The harness is compiled into CoatyModel, so it sees
// that module's internal declarations.
//
// Input: the filter's JSON, a NUL byte, then a JSON array of values (or one value) to filter.
//
// Oracle: nothing crashes, hangs or grows without bound (`-timeout` catches super-linear matching such
// as `Like` patterns or deep paths); the filter re-encodes and decodes to an equal filter; `apply(to:)`
// returns at most its input, in the filter's order; the ordering comparator is a strict weak ordering
// on the values' sort keys (antisymmetric and transitive), and so is `FilterCollation.compare` on the
// strings among them.

import CoatyCore

/// Checks that `compare` is antisymmetric and transitive (with transitive ties) on `items`.
func checkOrdering<T>(_ items: [T], _ compare: (T, T) -> Int, _ describe: (T) -> String) {
    let sample = Array(items.prefix(8))
    for a in sample {
        guard compare(a, a) == 0 else { fatalError("not irreflexive: \(describe(a))") }
        for b in sample {
            let ab = compare(a, b).signum()
            guard ab == -compare(b, a).signum() else {
                fatalError("not antisymmetric: \(describe(a)) vs \(describe(b))")
            }
            for c in sample {
                let bc = compare(b, c).signum()
                let ac = compare(a, c).signum()
                if ab <= 0 && bc <= 0 && !(ac <= 0) || ab == 0 && bc == 0 && ac != 0 {
                    fatalError("not transitive: \(describe(a)), \(describe(b)), \(describe(c))")
                }
            }
        }
    }
}

/// Every string in a value, up to a limit.
func strings(in value: AnyCodable, into result: inout [String]) {
    guard result.count < 8 else { return }
    switch value {
    case .string(let string): result.append(string)
    case .array(let elements): for element in elements { strings(in: element, into: &result) }
    case .object(let members):
        for (key, member) in members {
            result.append(key)
            strings(in: member, into: &result)
        }
    default: break
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFilter(_ data: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: count)
    let filterBytes: [UInt8]
    let valueBytes: [UInt8]
    if let nul = bytes.firstIndex(of: 0) {
        filterBytes = Array(bytes[..<nul])
        valueBytes = Array(bytes[(nul + 1)...])
    } else {
        filterBytes = Array(bytes)
        valueBytes = []
    }
    let parsedValues = (try? AnyCodable(json: valueBytes)) ?? .array([])
    let values = parsedValues.arrayValue ?? [parsedValues]
    let decoder = CoatyJSONDecoder(options: ObjectDecodingOptions(elementFailurePolicy: .skip { _ in }))
    let objects = (try? decoder.decode([CoatyObject].self, from: valueBytes)) ?? []

    if let context = try? decoder.decode(ContextFilter.self, from: filterBytes) {
        for value in values { _ = context.matches(value) }
        for object in objects { _ = context.matches(object) }
        guard let encoded = try? CoatyJSONEncoder().encode(context) else { fatalError("filter does not encode") }
        guard let again = try? decoder.decode(ContextFilter.self, from: encoded), again == context else {
            fatalError("context filter round trip differs: \(String(decoding: encoded, as: UTF8.self))")
        }
    }
    guard let filter = try? decoder.decode(ObjectFilter.self, from: filterBytes) else { return 0 }
    guard let encoded = try? CoatyJSONEncoder().encode(filter) else { fatalError("filter does not encode") }
    guard let again = try? decoder.decode(ObjectFilter.self, from: encoded), again == filter else {
        fatalError("object filter round trip differs: \(String(decoding: encoded, as: UTF8.self))")
    }
    let selected = filter.apply(to: values)
    guard selected.count <= values.count else { fatalError("apply returned more than its input") }
    let selectedObjects = filter.apply(to: objects)
    guard selectedObjects.count <= objects.count else { fatalError("apply returned more than its input") }

    if let orderings = filter.orderByProperties, !orderings.isEmpty {
        for ordering in orderings {
            let keys = values.map { JavaScriptSemantics.lookup(ordering.property.segments, in: $0) }
            checkOrdering(keys, ObjectFilter.orderCompare) { "\($0.map { "\($0)" } ?? "missing")" }
        }
    }
    var texts: [String] = []
    for value in values { strings(in: value, into: &texts) }
    checkOrdering(texts, FilterCollation.compare) { "\(Array($0.unicodeScalars.map(\.value)))" }
    return 0
}
