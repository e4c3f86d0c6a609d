/// Writes an ``EncodedJSON`` tree as compact UTF-8 JSON, byte for byte as Foundation's `JSONEncoder`
/// writes each value with `.withoutEscapingSlashes`:
///
/// - strings escape `"`, `\` and the control characters U+0000–U+001F (`\b`, `\t`, `\n`, `\f`, `\r`,
///   the others as `\u00XX`), and nothing else;
/// - a floating-point number is its shortest round-trip `description`, without a trailing `.0`
///   (`2`, `0.1`, `1e-05`, `1e+20`), which is exactly what `JSONEncoder` prints for every finite
///   value (checked against it on random bit patterns in the tests).
///
/// With `sortedKeys`, every object's keys are written in ``JSONKeyOrder``; otherwise in the order they
/// were encoded.
enum JSONWriter {
    static func write(_ value: EncodedJSON, sortedKeys: Bool = false) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(256)
        Self.write(value, into: &output, sortedKeys: sortedKeys)
        return output
    }

    static func write(_ value: EncodedJSON, into output: inout [UInt8], sortedKeys: Bool = false) {
        switch value {
        case .null: output.append(contentsOf: "null".utf8)
        case .bool(let value): output.append(contentsOf: value ? "true".utf8 : "false".utf8)
        case .integer(let value): Self.writeInteger(value, into: &output)
        case .unsigned(let value): Self.writeUnsigned(value, into: &output)
        case .double(let value): output.append(contentsOf: Self.format(value).utf8)
        case .float(let value): output.append(contentsOf: Self.format(value).utf8)
        case .number(let text): output.append(contentsOf: text.utf8)
        case .string(let value): Self.writeString(value, into: &output)
        case .array(let array):
            output.append(UInt8(ascii: "["))
            for (index, element) in array.elements.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                Self.write(element, into: &output, sortedKeys: sortedKeys)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let object):
            output.append(UInt8(ascii: "{"))
            if sortedKeys {
                let order = JSONKeyOrder.sortedIndices(of: object.keys)
                for (position, index) in order.enumerated() {
                    Self.writeMember(of: object, at: index, isFirst: position == 0, into: &output, sortedKeys: true)
                }
            } else {
                for index in object.keys.indices {
                    Self.writeMember(of: object, at: index, isFirst: index == 0, into: &output, sortedKeys: false)
                }
            }
            output.append(UInt8(ascii: "}"))
        case .deferred(let encoder):
            Self.write(encoder.result, into: &output, sortedKeys: sortedKeys)
        }
    }

    private static func writeMember(
        of object: EncodedObject,
        at index: Int,
        isFirst: Bool,
        into output: inout [UInt8],
        sortedKeys: Bool
    ) {
        if !isFirst { output.append(UInt8(ascii: ",")) }
        Self.writeString(object.keys[index], into: &output)
        output.append(UInt8(ascii: ":"))
        Self.write(object.values[index], into: &output, sortedKeys: sortedKeys)
    }

    /// The JSON text of a finite floating-point number.
    static func format(_ value: some BinaryFloatingPoint & CustomStringConvertible) -> String {
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        return text
    }

    private static func writeInteger(_ value: Int64, into output: inout [UInt8]) {
        if value < 0 {
            output.append(UInt8(ascii: "-"))
            // The magnitude of Int64.min does not fit in Int64, but does in UInt64.
            Self.writeUnsigned(value.magnitude, into: &output)
        } else {
            Self.writeUnsigned(UInt64(value), into: &output)
        }
    }

    private static func writeUnsigned(_ value: UInt64, into output: inout [UInt8]) {
        if value < 10 {
            output.append(UInt8(ascii: "0") + UInt8(value))
            return
        }
        // At most 20 digits, written backwards into scratch space on the stack.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { scratch in
            var remaining = value
            var position = 20
            while remaining > 0 {
                position -= 1
                scratch[position] = UInt8(ascii: "0") + UInt8(remaining % 10)
                remaining /= 10
            }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: scratch[position..<20]))
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    private static func writeString(_ value: String, into output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { bytes in
            var runStart = 0
            for index in 0..<bytes.count {
                let byte = bytes[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
                runStart = index + 1
                output.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""): output.append(UInt8(ascii: "\""))
                case UInt8(ascii: "\\"): output.append(UInt8(ascii: "\\"))
                case 0x08: output.append(UInt8(ascii: "b"))
                case 0x09: output.append(UInt8(ascii: "t"))
                case 0x0A: output.append(UInt8(ascii: "n"))
                case 0x0C: output.append(UInt8(ascii: "f"))
                case 0x0D: output.append(UInt8(ascii: "r"))
                default:
                    output.append(contentsOf: "u00".utf8)
                    output.append(Self.hexDigits[Int(byte >> 4)])
                    output.append(Self.hexDigits[Int(byte & 0xF)])
                }
            }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<bytes.count]))
        }
        output.append(UInt8(ascii: "\""))
    }
}
