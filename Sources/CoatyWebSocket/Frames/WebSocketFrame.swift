/// One WebSocket frame (RFC 6455 §5.2), with its payload unmasked.
package struct WebSocketFrame: Sendable, Hashable {
    /// Whether this is the last frame of its message.
    package var fin: Bool
    package var opcode: WebSocketOpcode
    package var payload: [UInt8]

    /// The largest payload of a control frame.
    package static let maximumControlPayload = 125

    package init(fin: Bool = true, opcode: WebSocketOpcode, payload: [UInt8] = []) {
        self.fin = fin
        self.opcode = opcode
        self.payload = payload
    }

    /// A close frame carrying `code` and `reason`, or no payload when `code` is `nil`.
    package static func close(code: UInt16?, reason: String = "") -> WebSocketFrame {
        guard let code else { return WebSocketFrame(opcode: .close) }
        var payload = [UInt8(code >> 8), UInt8(code & 0xFF)]
        payload += reason.utf8.prefix(Self.maximumControlPayload - 2)
        return WebSocketFrame(opcode: .close, payload: payload)
    }

    /// The frame's bytes; masked with `maskingKey` when given (a client's frames), unmasked otherwise.
    package func encoded(maskingKey: UInt32? = nil) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(self.payload.count + 14)
        Self.appendHeader(
            fin: self.fin,
            opcode: self.opcode,
            payloadLength: self.payload.count,
            maskingKey: maskingKey,
            to: &bytes
        )
        Self.appendPayload(self.payload, maskingKey: maskingKey, offset: 0, to: &bytes)
        return bytes
    }

    /// Appends a frame header with the shortest length encoding.
    package static func appendHeader(
        fin: Bool,
        opcode: WebSocketOpcode,
        payloadLength: Int,
        maskingKey: UInt32?,
        to bytes: inout [UInt8]
    ) {
        bytes.append((fin ? 0x80 : 0) | opcode.rawValue)
        let mask: UInt8 = maskingKey == nil ? 0 : 0x80
        switch payloadLength {
        case 0...125:
            bytes.append(mask | UInt8(payloadLength))
        case 126...0xFFFF:
            bytes.append(mask | 126)
            bytes.append(UInt8(payloadLength >> 8))
            bytes.append(UInt8(payloadLength & 0xFF))
        default:
            bytes.append(mask | 127)
            for shift in stride(from: 56, through: 0, by: -8) {
                bytes.append(UInt8(truncatingIfNeeded: UInt64(payloadLength) >> UInt64(shift)))
            }
        }
        if let maskingKey {
            for shift in stride(from: 24, through: 0, by: -8) {
                bytes.append(UInt8(truncatingIfNeeded: maskingKey >> UInt32(shift)))
            }
        }
    }

    /// Appends `payload`, masked with `maskingKey` from byte `offset` of the frame's payload on.
    package static func appendPayload(
        _ payload: [UInt8],
        maskingKey: UInt32?,
        offset: Int,
        to bytes: inout [UInt8]
    ) {
        guard let maskingKey else {
            bytes.append(contentsOf: payload)
            return
        }
        let start = bytes.count
        bytes.append(contentsOf: payload)
        bytes.withUnsafeMutableBufferPointer { buffer in
            Self.mask(UnsafeMutableBufferPointer(rebasing: buffer[start...]), key: maskingKey, offset: offset)
        }
    }

    /// XORs `buffer` with the masking key (RFC 6455 §5.3), starting at key byte `offset % 4`;
    /// masking twice unmasks.
    package static func mask(_ buffer: UnsafeMutableBufferPointer<UInt8>, key: UInt32, offset: Int) {
        let keyBytes: (UInt8, UInt8, UInt8, UInt8) = (
            UInt8(truncatingIfNeeded: key >> 24), UInt8(truncatingIfNeeded: key >> 16),
            UInt8(truncatingIfNeeded: key >> 8), UInt8(truncatingIfNeeded: key)
        )
        // The key rotated so that buffer[0] takes key byte `offset % 4`, repeated over 8 bytes.
        let rotation = offset & 3
        var rotated: [UInt8] = [keyBytes.0, keyBytes.1, keyBytes.2, keyBytes.3]
        rotated = Array(rotated[rotation...] + rotated[..<rotation])
        var word: UInt64 = 0
        withUnsafeMutableBytes(of: &word) { for index in 0..<8 { $0[index] = rotated[index & 3] } }
        var index = 0
        let count = buffer.count
        if let base = buffer.baseAddress {
            let raw = UnsafeMutableRawPointer(base)
            while index + 8 <= count {
                let value = raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                raw.storeBytes(of: value ^ word, toByteOffset: index, as: UInt64.self)
                index += 8
            }
        }
        while index < count {
            buffer[index] ^= rotated[index & 3]
            index += 1
        }
    }
}
