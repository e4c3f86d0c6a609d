// fuzz-modules: CoatyCore CoatySockets CoatyWebSocket
// fuzz-options: -max_len=4096
//
// libFuzzer harness for the WebSocket frame decoder and the opening handshake, compiled into the
// CoatyWebSocket module by Scripts/fuzz.sh. Input: one byte choosing the decoder's role and what the
// rest is, two bytes choosing the frame and message limits, one byte seeding the chunk sizes, then the
// bytes. Oracle, any violation traps:
// - no crash or hang, whatever the bytes;
// - frames: the stream decodes to the same frames and the same final error whether it arrives in one
//   chunk or in input-derived chunks; no frame exceeds the frame limit, no data message the message
//   limit; control frames are final and at most 125 bytes; continuation frames only inside a message;
//   every frame, encoded as its sender would (masked from a client, unmasked from a server), decodes
//   to itself;
// - handshake: a request head that parses is answered; an accepted one gets 101 with the
//   Sec-WebSocket-Accept computed from its key and an MQTT subprotocol or none, a refused one a 4xx;
//   a head that parses encodes to bytes that parse to the same head.

/// What a decoder made of a whole stream.
private struct Outcome: Equatable {
    var frames: [WebSocketFrame] = []
    var error: String?
}

private func describe(_ error: WebSocketError) -> String {
    "\(error.code) \(String(describing: error.closeCode))"
}

/// Decodes the stream, in one chunk (`seed` nil) or in chunks of 1 to 64 bytes, checking each frame.
private func decode(_ stream: [UInt8], role: WebSocketRole, frameLimit: Int, messageLimit: Int, seed: UInt64?)
    -> Outcome
{
    var decoder = WebSocketFrameDecoder(role: role, maximumFrameSize: frameLimit, maximumMessageSize: messageLimit)
    var outcome = Outcome()
    var random = seed ?? 0
    var position = 0
    var messageSize = 0
    var isInMessage = false
    while true {
        do {
            if let frame = try decoder.next() {
                check(frame.payload.count <= decoder.maximumFrameSize, "a frame of \(frame.payload.count) bytes")
                if frame.opcode.isControl {
                    check(frame.fin && frame.payload.count <= 125, "control frame \(frame)")
                } else {
                    check((frame.opcode == .continuation) == isInMessage, "continuation out of place: \(frame)")
                    messageSize = (isInMessage ? messageSize : 0) + frame.payload.count
                    check(messageSize <= decoder.maximumMessageSize, "a message of \(messageSize) bytes")
                    isInMessage = !frame.fin
                }
                checkRoundTrip(frame, role: role, frameLimit: frameLimit, messageLimit: messageLimit, random: &random)
                outcome.frames.append(frame)
                continue
            }
        } catch {
            outcome.error = describe(error)
            return outcome
        }
        guard position < stream.count else { return outcome }
        let size = seed == nil ? stream.count : 1 + Int(nextRandom(&random) % 64)
        let end = min(stream.count, position + size)
        decoder.append(Array(stream[position..<end]))
        position = end
    }
}

/// Encodes `frame` as its sender would and decodes it alone.
private func checkRoundTrip(
    _ frame: WebSocketFrame,
    role: WebSocketRole,
    frameLimit: Int,
    messageLimit: Int,
    random: inout UInt64
) {
    let key: UInt32? = role == .server ? UInt32(truncatingIfNeeded: nextRandom(&random)) : nil
    var decoder = WebSocketFrameDecoder(role: role, maximumFrameSize: frameLimit, maximumMessageSize: messageLimit)
    if frame.opcode == .continuation {
        // Alone, a continuation needs a message to continue: put an empty unfinished one first.
        decoder.append(WebSocketFrame(fin: false, opcode: .binary).encoded(maskingKey: key))
        check((try? decoder.next()) != nil, "an empty unfinished frame does not decode")
    }
    decoder.append(frame.encoded(maskingKey: key))
    do {
        let again = try decoder.next()
        check(again == frame, "round trip differs: \(String(describing: again)) vs \(frame)")
        check(!decoder.hasBufferedBytes, "bytes left after a round trip of \(frame)")
    } catch {
        fatalError("an encoded frame does not decode: \(error): \(frame)")
    }
}

private func checkHandshake(_ bytes: [UInt8]) {
    guard let end = HTTPHead.end(in: bytes), let head = HTTPHead(parsing: bytes[..<end]) else { return }
    let encoded = head.encoded
    guard let reparsedEnd = HTTPHead.end(in: encoded), let reparsed = HTTPHead(parsing: encoded[..<reparsedEnd])
    else { fatalError("an encoded head does not parse: \(head)") }
    check(reparsed == head, "head round trip differs: \(reparsed) vs \(head)")
    switch WebSocketHandshake.answer(to: head) {
    case .accept(let response, let subprotocol):
        check(response.startLine.hasPrefix("HTTP/1.1 101"), "accepted with \(response.startLine)")
        guard let key = head.value(of: "Sec-WebSocket-Key") else { fatalError("accepted without a key: \(head)") }
        check(
            response.value(of: "Sec-WebSocket-Accept") == WebSocketHandshake.acceptValue(forKey: key),
            "wrong accept value for \(key)"
        )
        check(subprotocol.map(WebSocketHandshake.mqttSubprotocols.contains) ?? true, "subprotocol \(subprotocol!)")
    case .refuse(let response, _):
        check(response.startLine.hasPrefix("HTTP/1.1 4"), "refused with \(response.startLine)")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWebSocket(_ data: UnsafeRawPointer, _ size: Int) -> CInt {
    var input = FuzzInput(data, count: size)
    let mode = input.next()
    let frameLimit = 125 + Int(input.next()) * 8
    let messageLimit = frameLimit + Int(input.next()) * 16
    let seed = UInt64(input.next())
    let rest = Array(input.bytes[min(input.index, input.bytes.count)...])
    if mode & 1 == 1 {
        checkHandshake(rest)
        return 0
    }
    let role: WebSocketRole = mode & 2 == 0 ? .server : .client
    let whole = decode(rest, role: role, frameLimit: frameLimit, messageLimit: messageLimit, seed: nil)
    let chunked = decode(rest, role: role, frameLimit: frameLimit, messageLimit: messageLimit, seed: seed)
    check(whole == chunked, "chunking changed the outcome: \(whole) vs \(chunked)")
    return 0
}
