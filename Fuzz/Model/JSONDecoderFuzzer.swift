// libFuzzer harness: the package's JSON parser and CoatyJSONDecoder on arbitrary bytes, with Foundation's
// JSONSerialization as a differential oracle.
//
// fuzz-modules: CoatyCore CoatyModel
// fuzz-options: -max_len=4096 -dict=Fuzz/Model/json.dict
//
// Run: bash Scripts/fuzz.sh JSONDecoderFuzzer [seconds]. The harness is compiled into CoatyModel, so it sees
// that module's internal declarations.
//
// Oracle:
// - `AnyCodable(json:)` and `JSONSerialization` (with `.fragmentsAllowed`) accept the same texts and
//   build the same values, except where the parser documents a deliberate difference: nesting deeper
//   than 512, more than 30 combining marks in a row, numbers beyond `Double`'s range (refused by both
//   since the fix this harness found), and Foundation's leniencies (NUL bytes, UTF-16/32, a byte order
//   mark, trailing commas).
// - A parsed value re-encodes with CoatyJSONEncoder and parses back to the same value (a `double` with
//   an integral value may come back as an `int`, as documented on `AnyCodable`).
// - The same bytes decoded as a `CoatyObject` (polymorphically, identity tracking on) and as
//   `[CoatyObject]`: whatever decodes re-encodes, decodes again, and its second encoding is the same
//   JSON value as the first.
// - Nothing crashes, hangs or grows without bound.

import CoatyCore
import Foundation

/// Compares two parsed values as JSON values, treating an integral `double` and the equal `int` alike.
func sameJSON(_ lhs: AnyCodable, _ rhs: AnyCodable) -> Bool {
    switch (lhs, rhs) {
    case (.null, .null): return true
    case (.bool(let a), .bool(let b)): return a == b
    case (.string(let a), .string(let b)): return a.unicodeScalars.elementsEqual(b.unicodeScalars)
    case (.int, _), (.uint, _), (.double, _):
        guard let a = lhs.doubleValue, let b = rhs.doubleValue else { return false }
        if case .int(let x) = lhs, case .int(let y) = rhs { return x == y }
        if case .uint(let x) = lhs, case .uint(let y) = rhs { return x == y }
        return a == b
    case (.array(let a), .array(let b)):
        return a.count == b.count && zip(a, b).allSatisfy { sameJSON($0, $1) }
    case (.object(let a), .object(let b)):
        return a.count == b.count && a.allSatisfy { key, value in b[key].map { sameJSON(value, $0) } ?? false }
    default: return false
    }
}

/// Compares a parsed value with what JSONSerialization made of the same text.
func sameAsFoundation(_ value: AnyCodable, _ other: Any) -> Bool {
    switch value {
    case .null: return other is NSNull
    case .bool(let flag):
        guard let number = other as? NSNumber else { return false }
        return number.boolValue == flag && (number.intValue == 0 || number.intValue == 1)
    case .int(let int):
        guard let number = other as? NSNumber else { return false }
        return number.int64Value == Int64(int) || number.doubleValue == Double(int)
    case .uint(let uint):
        // An integer above Int64.max: Foundation keeps it as a UInt64 or a Decimal.
        if let decimal = other as? Decimal { return decimal == Decimal(uint) }
        guard let number = other as? NSNumber else { return false }
        return number.uint64Value == uint
    case .double(let double):
        if let decimal = other as? Decimal {
            // Foundation keeps an integer too large for Int64 as a Decimal of 38 digits; the parser
            // rounds it to the nearest Double, as JavaScript does. Only their magnitudes can agree.
            let approximate = NSDecimalNumber(decimal: decimal).doubleValue
            return abs(approximate - double) <= 1e-9 * max(abs(double), abs(approximate))
        }
        guard let number = other as? NSNumber else { return false }
        return number.doubleValue == double
    case .string(let string):
        guard let other = other as? String else { return false }
        return string.unicodeScalars.elementsEqual(other.unicodeScalars)
    case .array(let elements):
        guard let others = other as? [Any], others.count == elements.count else { return false }
        return zip(elements, others).allSatisfy { sameAsFoundation($0, $1) }
    case .object(let members):
        guard let others = other as? [String: Any] else { return false }
        // Foundation may keep either duplicate; the parser keeps the last. Compare the keys both have.
        guard Set(others.keys) == Set(members.keys) else { return false }
        return members.allSatisfy { key, value in others[key].map { sameAsFoundation(value, $0) } ?? false }
    }
}

/// Whether a `,` is followed (after white space) by `]` or `}` anywhere, even inside a string: Foundation
/// accepts such trailing commas, which RFC 8259 and `JSON.parse` refuse.
func hasTrailingComma(_ bytes: [UInt8]) -> Bool {
    var afterComma = false
    for byte in bytes {
        switch byte {
        case UInt8(ascii: ","): afterComma = true
        case 0x20, 0x0A, 0x0D, 0x09: continue
        case UInt8(ascii: "]"), UInt8(ascii: "}"): if afterComma { return true }
        default: afterComma = false
        }
    }
    return false
}

/// Whether the text is one the parser documents as treated differently from Foundation, or one where
/// Foundation departs from RFC 8259 and `JSON.parse`; then acceptance and values are not compared.
///
/// Foundation guesses UTF-16 and UTF-32 from NUL bytes, ignores anything after a NUL that follows a
/// value (`8<NUL>o` is `8`), skips a UTF-8 byte order mark and allows trailing commas; the parser,
/// like `JSON.parse`, takes UTF-8 only and refuses all of these. Foundation also drops a U+FEFF
/// (written raw) from inside a string, which the parser keeps, as `JSON.parse` does.
func isDocumentedDifference(_ bytes: [UInt8], _ error: (any Error)?) -> Bool {
    let hasByteOrderMark = bytes.indices.dropLast(2).contains { bytes[$0...].starts(with: [0xEF, 0xBB, 0xBF]) }
    if bytes.contains(0) || hasByteOrderMark || hasTrailingComma(bytes) { return true }
    if let error, case DecodingError.dataCorrupted(let context) = error {
        let reason = context.debugDescription
        if reason.contains("nesting deeper") || reason.contains("combining marks") || reason.contains("out of range") {
            return true
        }
    }
    return false
}

/// Encodes and decodes an object (or objects) twice and checks that the second round changes nothing.
func checkObjectRoundTrip<T>(_ decode: ([UInt8]) throws -> T, _ bytes: [UInt8], encode: (T) throws -> [UInt8]) {
    guard let decoded = try? decode(bytes) else { return }
    let first: [UInt8]
    do { first = try encode(decoded) } catch { fatalError("a decoded object does not re-encode: \(error)") }
    let again: T
    do { again = try decode(first) } catch {
        fatalError("a re-encoded object does not decode: \(error)\n\(String(decoding: first, as: UTF8.self))")
    }
    let second: [UInt8]
    do { second = try encode(again) } catch { fatalError("a re-decoded object does not re-encode: \(error)") }
    guard first != second else { return }
    guard let a = try? AnyCodable(json: first), let b = try? AnyCodable(json: second), sameJSON(a, b) else {
        fatalError(
            "object round trip unstable:\n\(String(decoding: first, as: UTF8.self))\n"
                + String(decoding: second, as: UTF8.self)
        )
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSONDecoder(_ data: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: data, count: count))
    let parsed: AnyCodable?
    var parseError: (any Error)?
    do { parsed = try AnyCodable(json: bytes) } catch {
        parsed = nil
        parseError = error
    }
    let foundation = try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
    if !isDocumentedDifference(bytes, parseError) {
        switch (parsed, foundation) {
        case (let value?, let other?):
            if !sameAsFoundation(value, other) {
                fatalError("values differ from JSONSerialization: \(value) vs \(other)")
            }
        case (_?, nil):
            fatalError("accepted, but JSONSerialization refuses: \(String(decoding: bytes, as: UTF8.self))")
        case (nil, _?):
            fatalError("refused (\(parseError!)), but JSONSerialization accepts")
        case (nil, nil):
            break
        }
    }
    if let parsed {
        let encoded: [UInt8]
        do { encoded = Array(try CoatyJSONEncoder().encode(parsed)) } catch {
            fatalError("a parsed value does not re-encode: \(error)")
        }
        guard let reparsed = try? AnyCodable(json: encoded), sameJSON(parsed, reparsed) else {
            fatalError("value round trip differs: \(String(decoding: encoded, as: UTF8.self))")
        }
    }
    let decoder = CoatyJSONDecoder()
    let encoder = CoatyJSONEncoder()
    checkObjectRoundTrip({ try decoder.decode(CoatyObject.self, from: $0) }, bytes) { Array(try encoder.encode($0)) }
    checkObjectRoundTrip({ try decoder.decode([CoatyObject].self, from: $0) }, bytes) { Array(try encoder.encode($0)) }
    return 0
}
