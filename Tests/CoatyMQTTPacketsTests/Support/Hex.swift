/// Parses a hex string such as `"82 06 1234 0001 70 02"`; spaces are ignored.
func hex(_ string: String) -> [UInt8] {
    let digits = Array(string.utf8.filter { $0 != UInt8(ascii: " ") })
    precondition(digits.count % 2 == 0, "odd number of hex digits in test vector")
    return stride(from: 0, to: digits.count, by: 2).map { index in
        UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16) ?? 0
    }
}

/// A length-prefixed MQTT string field built from raw UTF-8 bytes.
func stringField(_ bytes: [UInt8]) -> [UInt8] {
    [UInt8(bytes.count >> 8), UInt8(bytes.count & 0xFF)] + bytes
}

/// A complete packet from a first byte and a body, with a minimal remaining length.
func packet(_ firstByte: UInt8, _ body: [UInt8]) -> [UInt8] {
    var length: [UInt8] = []
    var remaining = body.count
    repeat {
        var byte = UInt8(remaining & 0x7F)
        remaining >>= 7
        if remaining > 0 { byte |= 0x80 }
        length.append(byte)
    } while remaining > 0
    return [firstByte] + length + body
}
