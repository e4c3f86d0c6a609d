/// Validation and encoding of MQTT UTF-8 encoded strings (§1.5.3).
///
/// A string is a 2-byte big-endian length followed by at most 65,535 bytes of UTF-8. On receipt it
/// must be well-formed (RFC 3629: no surrogates, no overlong forms) and free of U+0000
/// [MQTT-1.5.3-1/2]. Like mosquitto, this codec also rejects the code points the standard says a
/// string SHOULD NOT contain: controls U+0001–U+001F and U+007F–U+009F, and the non-characters
/// U+FDD0–U+FDEF and U+xxFFFE/U+xxFFFF. A byte order mark (U+FEFF) is kept [MQTT-1.5.3-3].
package enum MQTTString {
    /// The maximum number of UTF-8 bytes in a string (and of a binary field).
    package static let maximumByteCount = 65_535

    /// Whether `scalar` may appear in an MQTT string.
    package static func isAllowed(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        if value <= 0x1F || (0x7F...0x9F).contains(value) { return false }
        if (0xFDD0...0xFDEF).contains(value) { return false }
        if value & 0xFFFE == 0xFFFE { return false }
        return true
    }

    /// Decodes and validates the UTF-8 bytes of a string (without the length prefix).
    ///
    /// - Throws: ``MQTTDecodingError/invalidUTF8`` for ill-formed UTF-8,
    ///   ``MQTTDecodingError/disallowedCodePoint(_:)`` for a disallowed code point.
    package static func decode(_ bytes: ArraySlice<UInt8>) throws(MQTTDecodingError) -> String {
        // Fast path: printable ASCII needs no further checks.
        if Self.isPrintableASCII(bytes) {
            return String(decoding: bytes, as: UTF8.self)
        }
        guard let string = String(validating: bytes, as: UTF8.self) else { throw .invalidUTF8 }
        for scalar in string.unicodeScalars where !isAllowed(scalar) {
            throw .disallowedCodePoint(scalar.value)
        }
        return string
    }

    /// Checks that `string` can be sent: at most 65,535 UTF-8 bytes and no disallowed code point.
    package static func validateForEncoding(_ string: String) throws(MQTTEncodingError) {
        let utf8 = string.utf8
        let count = utf8.count
        guard count <= maximumByteCount else { throw .fieldTooLong(count) }
        if Self.isPrintableASCII(utf8) { return }
        for scalar in string.unicodeScalars where !isAllowed(scalar) {
            throw .disallowedCodePoint(scalar.value)
        }
    }

    /// Whether every byte is printable ASCII (0x20–0x7E), the strings that need no further checks.
    ///
    /// Over contiguous bytes it counts the others without an early exit, so the compiler vectorises
    /// the loop: it runs for every topic a client publishes on and every one the broker receives.
    static func isPrintableASCII(_ bytes: some Collection<UInt8>) -> Bool {
        let counted = bytes.withContiguousStorageIfAvailable { buffer in
            var others = 0
            for byte in buffer { others &+= byte &- 0x20 < 0x5F ? 0 : 1 }
            return others == 0
        }
        return counted ?? bytes.allSatisfy { $0 &- 0x20 < 0x5F }
    }

    /// Appends `string` with its 2-byte length prefix, after ``validateForEncoding(_:)``.
    package static func encode(_ string: String, into buffer: inout [UInt8]) throws(MQTTEncodingError) {
        try validateForEncoding(string)
        buffer.appendUInt16(UInt16(string.utf8.count))
        buffer.append(contentsOf: string.utf8)
    }
}

extension Array where Element == UInt8 {
    /// Appends a big-endian 16-bit integer.
    mutating func appendUInt16(_ value: UInt16) {
        self.append(UInt8(truncatingIfNeeded: value >> 8))
        self.append(UInt8(truncatingIfNeeded: value))
    }
}
