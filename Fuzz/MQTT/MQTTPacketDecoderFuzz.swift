// fuzz-modules: CoatyCore CoatyMQTTPackets
// fuzz-options: -max_len=4096
//
// libFuzzer harness for MQTTPacketDecoder, compiled into the CoatyMQTTPackets module by
// Scripts/fuzz.sh. Input: two bytes choosing the maximum packet size, one byte seeding the chunk
// sizes, then the byte stream. Oracle, any violation traps:
// - no crash or hang, whatever the bytes;
// - the stream decodes to the same packets and the same final error whether it arrives in one chunk
//   or in input-derived chunks, and the buffered bytes stay within the maximum packet size plus one chunk;
// - a failed decoder stays failed: next() throws the same error again and input is discarded;
// - no packet exceeds the maximum size, nextPacketType announces each packet's type;
// - every decoded packet encodes, the encoding has the original first byte and body byte for byte
//   (only the remaining length may differ: MQTT 3.1.1 allows a non-minimal one, the encoder writes the
//   minimal one), and it decodes, whole and through MQTTPacket(decoding:), to a packet that encodes
//   to the same bytes.

/// What a decoder made of a whole stream.
private struct Outcome: Equatable {
    var packets: [[UInt8]] = []
    var error: MQTTDecodingError?
}

private func encode(_ packet: MQTTPacket) -> [UInt8] {
    do {
        return try packet.encoded()
    } catch {
        fatalError("decoded packet does not encode: \(error): \(packet)")
    }
}

/// Checks one packet decoded from `original`, its complete wire bytes.
private func checkRoundTrip(_ packet: MQTTPacket, original: ArraySlice<UInt8>) {
    let encoded = encode(packet)
    guard let (_, originalLengthBytes) = try? MQTTRemainingLength.decode(original.dropFirst()),
        let (_, encodedLengthBytes) = try? MQTTRemainingLength.decode(encoded.dropFirst())
    else { fatalError("no remaining length") }
    check(encoded.first == original.first, "first byte changed: \(original) -> \(encoded)")
    check(
        encoded.dropFirst(1 + encodedLengthBytes).elementsEqual(original.dropFirst(1 + originalLengthBytes)),
        "body changed: \(Array(original)) -> \(encoded) for \(packet)"
    )
    let whole: MQTTPacket
    do {
        whole = try MQTTPacket(decoding: Array(original))
    } catch {
        fatalError("MQTTPacket(decoding:) rejects what the decoder accepted: \(error): \(Array(original))")
    }
    check(encode(whole) == encoded, "MQTTPacket(decoding:) differs: \(whole) vs \(packet)")
    do {
        let again = try MQTTPacket(decoding: encoded)
        check(again == packet, "round trip differs: \(again) vs \(packet)")
        check(encode(again) == encoded, "round trip differs in bytes: \(again) vs \(packet)")
    } catch {
        fatalError("re-encoded packet does not decode: \(error): \(encoded)")
    }
}

/// Decodes the stream in one chunk, checking each packet against the bytes it came from.
private func decodeWhole(_ stream: ArraySlice<UInt8>, maximumPacketSize: Int) -> Outcome {
    var decoder = MQTTPacketDecoder(maximumPacketSize: maximumPacketSize)
    decoder.append(stream)
    var outcome = Outcome()
    var consumed = stream.startIndex
    while true {
        let announced = decoder.nextPacketType
        let before = decoder.bufferedByteCount
        do {
            guard let packet = try decoder.next() else { break }
            let size = before - decoder.bufferedByteCount
            check(size >= 2 && size <= decoder.maximumPacketSize, "packet of \(size) bytes")
            check(announced == packet.type, "nextPacketType \(String(describing: announced)) for \(packet)")
            checkRoundTrip(packet, original: stream[consumed..<consumed + size])
            consumed += size
            outcome.packets.append(encode(packet))
        } catch {
            outcome.error = error
            break
        }
    }
    if outcome.error == nil {
        check(decoder.bufferedByteCount == stream.endIndex - consumed, "buffered bytes lost")
    }
    return outcome
}

/// Decodes the stream in chunks whose sizes come from `seed`.
private func decodeChunked(_ stream: ArraySlice<UInt8>, maximumPacketSize: Int, seed: UInt8) -> Outcome {
    var decoder = MQTTPacketDecoder(maximumPacketSize: maximumPacketSize)
    var outcome = Outcome()
    var random = UInt64(seed)
    var index = stream.startIndex
    var decodedBytes = 0
    let largestChunk = Int(seed % 16) + 1
    while index < stream.endIndex, outcome.error == nil {
        let size = min(Int(nextRandom(&random) % UInt64(largestChunk)) + 1, stream.endIndex - index)
        decoder.append(stream[index..<index + size])
        index += size
        while true {
            let before = decoder.bufferedByteCount
            do {
                guard let packet = try decoder.next() else { break }
                decodedBytes += before - decoder.bufferedByteCount
                outcome.packets.append(encode(packet))
            } catch {
                outcome.error = error
                break
            }
        }
        if outcome.error == nil {
            // Whatever is buffered is one incomplete packet, bounded by the maximum size (or a fixed
            // header of at most 5 bytes, not yet complete enough to check) plus the chunk.
            check(
                decoder.bufferedByteCount <= max(decoder.maximumPacketSize, 5) + size,
                "buffered \(decoder.bufferedByteCount) bytes with maximum \(decoder.maximumPacketSize)"
            )
            check(decoder.compactedByteCount <= decodedBytes, "compaction moved more than was decoded")
        }
    }
    if let error = outcome.error {
        // Sticky: the same error again, and later input is discarded.
        check(decoder.error == error, "error property \(String(describing: decoder.error)) vs \(error)")
        decoder.append(stream)
        check(decoder.bufferedByteCount == 0, "a failed decoder buffers input")
        check(decoder.nextPacketType == nil, "a failed decoder announces a packet")
        do {
            let packet = try decoder.next()
            fatalError("a failed decoder returned \(String(describing: packet))")
        } catch {
            check(error == outcome.error, "a failed decoder threw \(error), then \(String(describing: outcome.error))")
        }
    }
    return outcome
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMQTTPacketDecoder(_ data: UnsafeRawPointer, _ count: Int) -> CInt {
    let input = Array(UnsafeRawBufferPointer(start: data, count: count))
    guard input.count >= 3 else { return 0 }
    // 0xFFFF: no limit beyond MQTT's own; otherwise 2 to 65,534 bytes (the initializer raises 0 and 1 to 2).
    let sizeChoice = Int(input[0]) << 8 | Int(input[1])
    let maximumPacketSize = sizeChoice == 0xFFFF ? MQTTPacketDecoder.largestPossiblePacketSize : sizeChoice
    let stream = input[3...]
    let whole = decodeWhole(stream, maximumPacketSize: maximumPacketSize)
    let chunked = decodeChunked(stream, maximumPacketSize: maximumPacketSize, seed: input[2])
    check(whole == chunked, "chunking changed the outcome: \(whole) vs \(chunked)")
    return 0
}
