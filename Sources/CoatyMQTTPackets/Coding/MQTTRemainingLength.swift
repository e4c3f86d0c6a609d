/// The variable-length "remaining length" of the MQTT fixed header (§2.2.3).
///
/// Seven bits per byte, least significant group first, continuation bit 0x80, 1 to 4 bytes.
package enum MQTTRemainingLength {
    /// The largest encodable value, 268,435,455 (`FF FF FF 7F`).
    package static let maximum = 268_435_455

    /// The number of bytes the minimal encoding of `value` takes (1 to 4), for `0...maximum`.
    package static func byteCount(for value: Int) -> Int {
        switch value {
        case ..<128: 1
        case ..<16_384: 2
        case ..<2_097_152: 3
        default: 4
        }
    }

    /// Appends the minimal encoding of `value`.
    ///
    /// - Throws: ``MQTTEncodingError/packetTooLarge(_:)`` if `value` is negative or above ``maximum``.
    package static func encode(_ value: Int, into buffer: inout [UInt8]) throws(MQTTEncodingError) {
        guard value >= 0, value <= maximum else { throw .packetTooLarge(value) }
        self.append(value, to: &buffer)
    }

    /// Appends the minimal encoding of a value the caller has already bounded to `0...maximum` (for
    /// example the broker re-encoding a PUBLISH it accepted under its maximum packet size).
    package static func append(_ value: Int, to buffer: inout [UInt8]) {
        assert(value >= 0 && value <= maximum, "remaining length \(value) out of range")
        var remaining = value
        repeat {
            var byte = UInt8(remaining & 0x7F)
            remaining >>= 7
            if remaining > 0 { byte |= 0x80 }
            buffer.append(byte)
        } while remaining > 0
    }

    /// Decodes a remaining length from the start of `bytes`.
    ///
    /// Non-minimal encodings (such as `80 00` for 0) are accepted, as MQTT 3.1.1 does not forbid them.
    ///
    /// - Returns: the value and the number of bytes it took, or `nil` if `bytes` ends before the
    ///   length is complete.
    /// - Throws: ``MQTTDecodingError/malformedRemainingLength`` if the fourth byte has its
    ///   continuation bit set; this is detected without waiting for a fifth byte.
    package static func decode<Bytes: Collection<UInt8>>(
        _ bytes: Bytes
    ) throws(MQTTDecodingError) -> (value: Int, byteCount: Int)? {
        var value = 0
        var shift = 0
        var count = 0
        for byte in bytes {
            value |= Int(byte & 0x7F) << shift
            count += 1
            if byte & 0x80 == 0 { return (value, count) }
            if count == 4 { throw .malformedRemainingLength }
            shift += 7
        }
        return nil
    }
}
