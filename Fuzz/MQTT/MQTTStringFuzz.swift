// fuzz-modules: CoatyCore CoatyMQTTPackets
// fuzz-options: -max_len=256
//
// libFuzzer harness for MQTT string decoding and encoding (§1.5.3), compiled into the
// CoatyMQTTPackets module by Scripts/fuzz.sh. The input is the string's bytes. Oracle, against the
// reference below (RFC 3629's table of well-formed UTF-8, and the code points MQTTString documents as
// refused), any disagreement traps:
// - MQTTString.decode accepts exactly well-formed UTF-8 without a refused code point, returns the same
//   bytes (a byte order mark U+FEFF is kept [MQTT-1.5.3-3]), and otherwise throws invalidUTF8 if the
//   bytes are ill-formed anywhere, else disallowedCodePoint with the first refused code point;
// - validateForEncoding accepts a string exactly when decoding its bytes would, and encode writes the
//   2-byte length and the bytes that decode back.

/// The scalars of well-formed UTF-8 (RFC 3629 §4), or `nil` if the bytes are ill-formed.
private func referenceScalars(_ bytes: [UInt8]) -> [UInt32]? {
    var scalars: [UInt32] = []
    var index = 0
    func continuation(_ offset: Int, _ range: ClosedRange<UInt8> = 0x80...0xBF) -> UInt32? {
        guard index + offset < bytes.count, range.contains(bytes[index + offset]) else { return nil }
        return UInt32(bytes[index + offset] & 0x3F)
    }
    while index < bytes.count {
        let lead = bytes[index]
        let second: ClosedRange<UInt8>
        let length: Int
        switch lead {
        case 0x00...0x7F:
            scalars.append(UInt32(lead))
            index += 1
            continue
        case 0xC2...0xDF: (second, length) = (0x80...0xBF, 2)
        case 0xE0: (second, length) = (0xA0...0xBF, 3)
        case 0xE1...0xEC, 0xEE...0xEF: (second, length) = (0x80...0xBF, 3)
        case 0xED: (second, length) = (0x80...0x9F, 3)
        case 0xF0: (second, length) = (0x90...0xBF, 4)
        case 0xF1...0xF3: (second, length) = (0x80...0xBF, 4)
        case 0xF4: (second, length) = (0x80...0x8F, 4)
        default: return nil
        }
        guard var value = continuation(1, second) else { return nil }
        for offset in 2..<length {
            guard let next = continuation(offset) else { return nil }
            value = value << 6 | next
        }
        let leadBits = UInt32(lead) & (length == 2 ? 0x1F : length == 3 ? 0x0F : 0x07)
        scalars.append(leadBits << (6 * UInt32(length - 1)) | value)
        index += length
    }
    return scalars
}

/// U+0000 is forbidden [MQTT-1.5.3-2]; MQTTString also refuses the controls and non-characters
/// that a string SHOULD NOT contain.
private func referenceIsRefused(_ value: UInt32) -> Bool {
    value <= 0x1F || (0x7F...0x9F).contains(value) || (0xFDD0...0xFDEF).contains(value)
        || value & 0xFFFF == 0xFFFE || value & 0xFFFF == 0xFFFF
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMQTTString(_ data: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: data, count: count))
    let expected: Result<[UInt8], MQTTDecodingError>
    if let scalars = referenceScalars(bytes) {
        if let refused = scalars.first(where: referenceIsRefused) {
            expected = .failure(.disallowedCodePoint(refused))
        } else {
            expected = .success(bytes)
        }
    } else {
        expected = .failure(.invalidUTF8)
    }
    let decoded = Result { () throws(MQTTDecodingError) in Array(try MQTTString.decode(bytes[...]).utf8) }
    check(decoded == expected, "decode(\(bytes)) gave \(decoded) instead of \(expected)")
    // The same bytes as an offset slice, as inside a packet.
    let padded = [0x41] + bytes
    let sliced = Result { () throws(MQTTDecodingError) in Array(try MQTTString.decode(padded[1...]).utf8) }
    check(sliced == expected, "decode of a slice of \(bytes) gave \(sliced)")

    // Encoding a Swift string (ill-formed input decodes with U+FFFD, which is allowed).
    let string = String(decoding: bytes, as: UTF8.self)
    let utf8 = Array(string.utf8)
    let encodable = referenceScalars(utf8).map { !$0.contains(where: referenceIsRefused) } ?? false
    var buffer: [UInt8] = []
    do {
        try MQTTString.encode(string, into: &buffer)
        check(encodable, "encode accepted \(utf8)")
        check(
            buffer == [UInt8(utf8.count >> 8), UInt8(utf8.count & 0xFF)] + utf8,
            "encode wrote \(buffer) for \(utf8)"
        )
        check((try? MQTTString.decode(buffer[2...])) == string, "encoded \(utf8) does not decode")
    } catch {
        check(!encodable, "encode refused \(utf8): \(error)")
        check(buffer.isEmpty, "a refused encode appended bytes")
    }
    return 0
}
