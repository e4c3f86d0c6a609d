/// Decodes the frames a peer sends, checking them against RFC 6455 and size limits.
///
/// Feed it bytes with ``append(_:)`` and take frames with ``next()``. It checks what RFC 6455 §5
/// requires of a receiver: no reserved bits (no extension is negotiated), known opcodes, control
/// frames unfragmented and at most 125 bytes, masking as the ``WebSocketRole`` demands, 64-bit
/// lengths without the top bit, continuation frames only inside a fragmented message and no new data
/// message inside one, and valid close payloads. Lengths need not be minimal.
///
/// Memory is bounded: a frame whose header announces a payload above ``maximumFrameSize`` is refused
/// before its payload is buffered, and a fragmented message whose payloads add up to more than
/// ``maximumMessageSize`` is refused, both with close code 1009. The decoder buffers at most one
/// frame, 14 bytes of header plus ``maximumFrameSize``, beside the bytes appended and not yet decoded.
package struct WebSocketFrameDecoder: Sendable {
    /// What this side is: a server requires masked frames, a client unmasked ones.
    package let role: WebSocketRole
    /// The largest payload of one frame.
    package let maximumFrameSize: Int
    /// The largest sum of the payloads of one fragmented message.
    package let maximumMessageSize: Int

    private var buffer: [UInt8] = []
    private var start = 0
    /// The opcode of the fragmented message in progress, and its payload bytes so far.
    private var fragmented: (opcode: WebSocketOpcode, size: Int)?

    /// Creates a decoder.
    ///
    /// - Parameters:
    ///   - role: This side's role.
    ///   - maximumFrameSize: The largest frame payload accepted.
    ///   - maximumMessageSize: The largest message accepted (the sum of its frames' payloads).
    package init(role: WebSocketRole, maximumFrameSize: Int, maximumMessageSize: Int) {
        self.role = role
        self.maximumFrameSize = max(WebSocketFrame.maximumControlPayload, maximumFrameSize)
        self.maximumMessageSize = max(self.maximumFrameSize, maximumMessageSize)
    }

    /// The opcode of the message a continuation frame belongs to (text or binary), while one is in
    /// progress.
    package var fragmentedOpcode: WebSocketOpcode? { self.fragmented?.opcode }

    /// Whether bytes are buffered that do not make a whole frame yet.
    package var hasBufferedBytes: Bool { self.start < self.buffer.count }

    /// Adds received bytes.
    package mutating func append(_ bytes: [UInt8]) {
        if self.start == self.buffer.count {
            self.buffer = bytes
            self.start = 0
            return
        }
        if self.start > 0 && self.start >= self.buffer.count / 2 {
            self.buffer.removeSubrange(0..<self.start)
            self.start = 0
        }
        self.buffer.append(contentsOf: bytes)
    }

    /// Decodes the next whole frame, or returns `nil` when more bytes are needed.
    ///
    /// - Throws: ``WebSocketError`` with the close code to send: 1002 for a protocol violation, 1007
    ///   for a close reason that is not UTF-8, 1009 for a frame or message too large. The decoder is
    ///   unusable afterwards.
    package mutating func next() throws(WebSocketError) -> WebSocketFrame? {
        let available = self.buffer.count - self.start
        guard available >= 2 else { return nil }
        let first = self.buffer[self.start]
        let second = self.buffer[self.start + 1]
        guard first & 0x70 == 0 else { throw Self.violation("reserved bits set without a negotiated extension") }
        guard let opcode = WebSocketOpcode(rawValue: first & 0x0F) else {
            throw Self.violation("unknown opcode \(first & 0x0F)")
        }
        let fin = first & 0x80 != 0
        let masked = second & 0x80 != 0
        switch (self.role, masked) {
        case (.server, false): throw Self.violation("a client frame is not masked")
        case (.client, true): throw Self.violation("a server frame is masked")
        default: break
        }
        var headerLength = 2
        var length = UInt64(second & 0x7F)
        if length == 126 {
            guard available >= 4 else { return nil }
            length = UInt64(self.buffer[self.start + 2]) << 8 | UInt64(self.buffer[self.start + 3])
            headerLength = 4
        } else if length == 127 {
            guard available >= 10 else { return nil }
            length = 0
            for index in 2..<10 { length = length << 8 | UInt64(self.buffer[self.start + index]) }
            guard length >> 63 == 0 else { throw Self.violation("a 64-bit payload length has its top bit set") }
            headerLength = 10
        }
        if opcode.isControl {
            guard fin else { throw Self.violation("a fragmented control frame") }
            guard length <= UInt64(WebSocketFrame.maximumControlPayload) else {
                throw Self.violation("a control frame of \(length) bytes (at most 125)")
            }
        } else if opcode == .continuation {
            guard self.fragmented != nil else { throw Self.violation("a continuation frame outside a message") }
        } else if self.fragmented != nil {
            throw Self.violation("a new data frame inside a fragmented message")
        }
        guard length <= UInt64(self.maximumFrameSize) else {
            throw WebSocketError(
                .messageTooBig,
                closeCode: 1009,
                "a frame of \(length) bytes (at most \(self.maximumFrameSize))"
            )
        }
        let payloadLength = Int(length)
        if !opcode.isControl {
            let messageSize = (self.fragmented?.size ?? 0) + payloadLength
            guard messageSize <= self.maximumMessageSize else {
                throw WebSocketError(
                    .messageTooBig,
                    closeCode: 1009,
                    "a message of more than \(self.maximumMessageSize) bytes"
                )
            }
        }
        var maskingKey: UInt32?
        if masked {
            guard available >= headerLength + 4 else { return nil }
            var key: UInt32 = 0
            for index in headerLength..<headerLength + 4 { key = key << 8 | UInt32(self.buffer[self.start + index]) }
            maskingKey = key
            headerLength += 4
        }
        // Memory grows with the bytes that arrive (appending grows the buffer geometrically), not
        // with what a header announces: a peer that sends a header and stalls costs little.
        guard available >= headerLength + payloadLength else { return nil }
        let payloadStart = self.start + headerLength
        var payload = Array(self.buffer[payloadStart..<payloadStart + payloadLength])
        if let maskingKey {
            payload.withUnsafeMutableBufferPointer { WebSocketFrame.mask($0, key: maskingKey, offset: 0) }
        }
        self.start = payloadStart + payloadLength
        if self.start == self.buffer.count {
            // Release a large frame's buffer rather than keep its capacity for the connection's life.
            if self.buffer.capacity > 1 << 16 { self.buffer = [] } else { self.buffer.removeAll(keepingCapacity: true) }
            self.start = 0
        }
        if !opcode.isControl {
            if fin {
                self.fragmented = nil
            } else {
                let kind = opcode == .continuation ? self.fragmented!.opcode : opcode
                self.fragmented = (kind, (self.fragmented?.size ?? 0) + payloadLength)
            }
        }
        if opcode == .close { try Self.validateClosePayload(payload) }
        return WebSocketFrame(fin: fin, opcode: opcode, payload: payload)
    }

    /// Checks a close frame's payload: empty, or a status code a peer may send and a UTF-8 reason.
    private static func validateClosePayload(_ payload: [UInt8]) throws(WebSocketError) {
        guard !payload.isEmpty else { return }
        guard payload.count >= 2 else { throw Self.violation("a close payload of one byte") }
        let code = UInt16(payload[0]) << 8 | UInt16(payload[1])
        guard Self.isValidReceivedCloseCode(code) else { throw Self.violation("close code \(code) is not allowed") }
        guard String(validating: payload[2...], as: UTF8.self) != nil else {
            throw WebSocketError(.protocolViolation, closeCode: 1007, "a close reason that is not UTF-8")
        }
    }

    /// Whether a peer may send `code` in a close frame (RFC 6455 §7.4): 1000–1003, 1007–1011
    /// (1012–1014 are registered since) and 3000–4999. 1004–1006 and 1015 are reserved.
    package static func isValidReceivedCloseCode(_ code: UInt16) -> Bool {
        switch code {
        case 1000...1003, 1007...1014, 3000...4999: true
        default: false
        }
    }

    private static func violation(_ message: String) -> WebSocketError {
        WebSocketError(.protocolViolation, closeCode: 1002, message)
    }

    /// The close code a frame carries, if any.
    package static func closeCode(of frame: WebSocketFrame) -> UInt16? {
        guard frame.opcode == .close, frame.payload.count >= 2 else { return nil }
        return UInt16(frame.payload[0]) << 8 | UInt16(frame.payload[1])
    }
}
