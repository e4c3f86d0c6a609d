import CoatyWebSocket
import Testing

/// The frame codec against RFC 6455 §5.7's examples and hostile input.
struct FrameCodecTests {
    private static func decoder(
        _ role: WebSocketRole,
        maximumFrameSize: Int = 1 << 20,
        maximumMessageSize: Int = 1 << 20
    ) -> WebSocketFrameDecoder {
        WebSocketFrameDecoder(role: role, maximumFrameSize: maximumFrameSize, maximumMessageSize: maximumMessageSize)
    }

    /// Decodes every frame in `bytes`, fed one byte at a time, so every partial state is exercised.
    private static func decodeAll(_ bytes: [UInt8], role: WebSocketRole) throws(WebSocketError) -> [WebSocketFrame] {
        var decoder = Self.decoder(role)
        var frames: [WebSocketFrame] = []
        for byte in bytes {
            decoder.append([byte])
            while let frame = try decoder.next() { frames.append(frame) }
        }
        return frames
    }

    /// The close code `bytes` make the decoder fail with.
    private static func failure(_ bytes: [UInt8], role: WebSocketRole, maximumFrameSize: Int = 1 << 20) -> UInt16? {
        var decoder = Self.decoder(role, maximumFrameSize: maximumFrameSize, maximumMessageSize: maximumFrameSize)
        decoder.append(bytes)
        do {
            while try decoder.next() != nil {}
            return nil
        } catch {
            return error.closeCode
        }
    }

    static let maskedHello: [UInt8] = [0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58]
    static let hello = Array("Hello".utf8)

    @Test func rfcMaskedHelloFromAClient() throws {
        #expect(
            try Self.decodeAll(Self.maskedHello, role: .server) == [WebSocketFrame(opcode: .text, payload: Self.hello)]
        )
        #expect(WebSocketFrame(opcode: .text, payload: Self.hello).encoded(maskingKey: 0x37FA_213D) == Self.maskedHello)
    }

    @Test func rfcUnmaskedExamplesFromAServer() throws {
        let unmasked: [UInt8] = [0x81, 0x05] + Self.hello
        #expect(try Self.decodeAll(unmasked, role: .client) == [WebSocketFrame(opcode: .text, payload: Self.hello)])
        #expect(WebSocketFrame(opcode: .text, payload: Self.hello).encoded() == unmasked)
        // A fragmented text message, and a ping.
        let fragmented: [UInt8] = [0x01, 0x03, 0x48, 0x65, 0x6C, 0x80, 0x02, 0x6C, 0x6F]
        #expect(
            try Self.decodeAll(fragmented, role: .client) == [
                WebSocketFrame(fin: false, opcode: .text, payload: Array("Hel".utf8)),
                WebSocketFrame(opcode: .continuation, payload: Array("lo".utf8)),
            ]
        )
        #expect(
            try Self.decodeAll([0x89, 0x05] + Self.hello, role: .client) == [
                WebSocketFrame(opcode: .ping, payload: Self.hello)
            ]
        )
    }

    @Test(arguments: [(256, [0x82, 0x7E, 0x01, 0x00]), (65_536, [0x82, 0x7F, 0, 0, 0, 0, 0, 1, 0, 0])])
    func extendedLengths(count: Int, header: [UInt8]) throws {
        let payload = (0..<count).map { UInt8(truncatingIfNeeded: $0) }
        let bytes = WebSocketFrame(opcode: .binary, payload: payload).encoded()
        #expect(Array(bytes.prefix(header.count)) == header)
        var decoder = Self.decoder(.client)
        decoder.append(bytes)
        #expect(try decoder.next() == WebSocketFrame(opcode: .binary, payload: payload))
        // Masked by a client, unmasked by the server, at every offset of the key.
        let masked = WebSocketFrame(opcode: .binary, payload: payload).encoded(maskingKey: 0xDEAD_BEEF)
        var server = Self.decoder(.server)
        server.append(masked)
        #expect(try server.next()?.payload == payload)
    }

    @Test func nonMinimalLengthsAreAccepted() throws {
        let frames = try Self.decodeAll(
            [0x82, 0x7E, 0x00, 0x02, 1, 2, 0x82, 0x7F, 0, 0, 0, 0, 0, 0, 0, 1, 3],
            role: .client
        )
        #expect(frames.map(\.payload) == [[1, 2], [3]])
    }

    @Test func controlFramesBetweenDataFragments() throws {
        let bytes: [UInt8] = [0x02, 0x01, 0xAA, 0x89, 0x00, 0x8A, 0x01, 0x07, 0x80, 0x01, 0xBB]
        let frames = try Self.decodeAll(bytes, role: .client)
        #expect(frames.map(\.opcode) == [.binary, .ping, .pong, .continuation])
        #expect(frames.map(\.fin) == [false, true, true, true])
    }

    @Test(arguments: [
        // A client frame must be masked.
        ([0x82, 0x01, 0x00] as [UInt8], WebSocketRole.server, UInt16(1002)),
        // A server frame must not be.
        ([0x82, 0x81, 0, 0, 0, 0, 0x00], .client, 1002),
        // Reserved bits, unknown opcodes.
        ([0xC2, 0x00], .client, 1002),
        ([0x83, 0x00], .client, 1002),
        ([0x8B, 0x00], .client, 1002),
        // A control frame of 126 bytes, a fragmented ping.
        ([0x89, 0x7E, 0x00, 0x7E] + [UInt8](repeating: 0, count: 126), .client, 1002),
        ([0x09, 0x00], .client, 1002),
        // A 64-bit length with the top bit set.
        ([0x82, 0x7F, 0x80, 0, 0, 0, 0, 0, 0, 1], .client, 1002),
        // A continuation without a message, a new message inside a fragmented one.
        ([0x80, 0x01, 0x00], .client, 1002),
        ([0x02, 0x01, 0x00, 0x82, 0x01, 0x00], .client, 1002),
        // Close payloads: one byte, reserved codes, a reason that is not UTF-8.
        ([0x88, 0x01, 0x03], .client, 1002),
        ([0x88, 0x02, 0x03, 0xED], .client, 1002),
        ([0x88, 0x02, 0x03, 0xE7], .client, 1002),
        ([0x88, 0x02, 0x03, 0xE4], .client, 1002),
        ([0x88, 0x04, 0x03, 0xE8, 0xC3, 0x28], .client, 1007),
    ])
    func hostileFrames(bytes: [UInt8], role: WebSocketRole, closeCode: UInt16) {
        #expect(Self.failure(bytes, role: role) == closeCode)
    }

    @Test func validCloseFrames() throws {
        let frames = try Self.decodeAll(
            [0x88, 0x00, 0x88, 0x02, 0x03, 0xE8, 0x88, 0x04, 0x0F, 0xA0, 0x6F, 0x6B],
            role: .client
        )
        #expect(frames.map(WebSocketFrameDecoder.closeCode(of:)) == [nil, 1000, 4000])
        #expect(WebSocketFrame.close(code: 1000).encoded() == [0x88, 0x02, 0x03, 0xE8])
    }

    /// A frame larger than the limit is refused from its header, before its payload is buffered.
    @Test func oversizedFrameIsRefusedFromItsHeader() {
        #expect(Self.failure([0x82, 0x7E, 0x04, 0x01], role: .client, maximumFrameSize: 1024) == 1009)
        #expect(Self.failure([0x82, 0x7F, 0, 0, 0, 1, 0, 0, 0, 0], role: .client, maximumFrameSize: 1 << 20) == 1009)
        #expect(Self.failure([0x82, 0x7E, 0x04, 0x00], role: .client, maximumFrameSize: 1024) == nil)
    }

    @Test func oversizedFragmentedMessageIsRefused() throws {
        var decoder = Self.decoder(.client, maximumFrameSize: 200, maximumMessageSize: 300)
        let fragment = [UInt8](repeating: 1, count: 150)
        decoder.append(WebSocketFrame(fin: false, opcode: .binary, payload: fragment).encoded())
        decoder.append(WebSocketFrame(fin: false, opcode: .continuation, payload: fragment).encoded())
        decoder.append(WebSocketFrame(fin: true, opcode: .continuation, payload: [1]).encoded())
        #expect(try decoder.next()?.payload.count == 150)
        #expect(try decoder.next()?.payload.count == 150)
        #expect(throws: WebSocketError.self) { try decoder.next() }
        // Whole messages of up to the limit each are fine.
        var fresh = Self.decoder(.client, maximumFrameSize: 200, maximumMessageSize: 300)
        for _ in 0..<5 { fresh.append(WebSocketFrame(opcode: .binary, payload: fragment).encoded()) }
        for _ in 0..<5 { #expect(try fresh.next()?.payload.count == 150) }
    }
}
