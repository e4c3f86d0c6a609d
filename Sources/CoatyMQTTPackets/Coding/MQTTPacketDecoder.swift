/// A streaming MQTT 3.1.1 decoder: feed it bytes as they arrive, take out complete packets.
///
/// Call ``append(_:)`` with each chunk read from the connection, then ``next()`` until it returns
/// `nil`. Packets may be split across chunks at any byte, and one chunk may hold several packets.
///
/// Memory stays bounded: the fixed header is validated (type, flags, fixed sizes) and the packet
/// size is checked against ``maximumPacketSize`` as soon as the header is complete, before any of the
/// body is buffered beyond the chunk that carried it. Consumed bytes are discarded by advancing a read
/// index and compacting the buffer only when at least half of it is consumed, so decoding is linear.
///
/// After an error the decoder is failed: ``next()`` throws the same error again and further input is
/// discarded, because an MQTT byte stream cannot be resynchronised. Close the connection.
package struct MQTTPacketDecoder: Sendable {
    /// The largest accepted packet, in bytes, including the fixed header.
    package let maximumPacketSize: Int

    private var buffer: [UInt8] = []
    private var readIndex = 0
    private var header: Header?
    private var storedFailure: Failure?

    /// The fixed header of the packet at `readIndex`, once it is complete and validated. Packed into
    /// eight bytes, as every broker connection keeps a decoder.
    private struct Header {
        var firstByte: UInt8
        /// 2 to 5.
        var storedHeaderLength: UInt8
        /// At most 268,435,455.
        var storedBodyLength: UInt32

        init(firstByte: UInt8, headerLength: Int, bodyLength: Int) {
            self.firstByte = firstByte
            self.storedHeaderLength = UInt8(headerLength)
            self.storedBodyLength = UInt32(bodyLength)
        }

        var headerLength: Int { Int(self.storedHeaderLength) }
        var bodyLength: Int { Int(self.storedBodyLength) }
    }

    /// The error, out of line: a word in every decoder rather than the error's 33 bytes.
    private indirect enum Failure: Sendable {
        case failed(MQTTDecodingError)
    }

    private var failure: MQTTDecodingError? {
        get {
            guard case .failed(let error) = self.storedFailure else { return nil }
            return error
        }
        set { self.storedFailure = newValue.map { .failed($0) } }
    }

    /// The largest possible MQTT 3.1.1 packet: 1 type byte, 4 length bytes, 268,435,455 body bytes.
    package static let largestPossiblePacketSize = 1 + 4 + MQTTRemainingLength.maximum

    /// Creates a decoder.
    ///
    /// - Parameter maximumPacketSize: the largest packet accepted, fixed header included; larger
    ///   packets fail with ``MQTTDecodingError/packetTooLarge(_:)``. At least 2.
    package init(maximumPacketSize: Int = MQTTPacketDecoder.largestPossiblePacketSize) {
        self.maximumPacketSize = max(2, maximumPacketSize)
    }

    /// The number of received bytes not yet returned as packets.
    package var bufferedByteCount: Int { self.buffer.count - self.readIndex }

    /// The error the decoder has failed with, if any; ``next()`` then throws it.
    package var error: MQTTDecodingError? { self.failure }

    /// The type of the next packet, as soon as its first byte is buffered (and valid).
    ///
    /// A broker can use this to close a connection whose first packet is not CONNECT without
    /// waiting for the rest of the packet [MQTT-3.1.0-1].
    package var nextPacketType: MQTTPacketType? {
        guard self.failure == nil, self.readIndex < self.buffer.count else { return nil }
        return try? MQTTPacketType(validatingFirstByte: self.buffer[self.readIndex])
    }

    /// The total number of unconsumed bytes moved to the front of the buffer by compaction so far.
    ///
    /// A diagnostic: compaction moves at most as many bytes as were consumed, so this never exceeds
    /// the number of bytes decoded, which keeps decoding linear in the input.
    package private(set) var compactedByteCount = 0

    /// Adds bytes received from the connection.
    ///
    /// If this completes the fixed header of the next packet, the header is validated at once; an
    /// invalid or oversized header fails the decoder (reported by ``next()``) and the input is dropped.
    ///
    /// Readers hand over arrays: this overload spares them, in other modules, the generic and
    /// unspecialised append of the one below on every read.
    package mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { self.append($0) }
    }

    /// Adds bytes received from the connection, from where the reader read them (see the overload for
    /// arrays).
    package mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard self.failure == nil else { return }
        self.compactIfNeeded()
        self.buffer.append(contentsOf: bytes)
        if self.header == nil {
            do throws(MQTTDecodingError) {
                _ = try self.readHeader()
            } catch {
                self.fail(error)
            }
        }
    }

    /// Adds bytes received from the connection (see the overload for arrays).
    package mutating func append(_ bytes: some Collection<UInt8>) {
        self.append(Array(bytes))
    }

    /// Returns the next complete packet, or `nil` if more bytes are needed.
    ///
    /// - Throws: ``MQTTDecodingError`` if the stream holds an invalid packet. The error is sticky.
    package mutating func next() throws(MQTTDecodingError) -> MQTTPacket? {
        if let failure = self.failure { throw failure }
        do throws(MQTTDecodingError) {
            guard let header = try self.readHeader() else { return nil }
            let bodyStart = self.readIndex + header.headerLength
            let bodyEnd = bodyStart + header.bodyLength
            guard bodyEnd <= self.buffer.count else { return nil }
            self.header = nil
            self.readIndex = bodyEnd
            let packet = try MQTTPacket(firstByte: header.firstByte, body: self.buffer[bodyStart..<bodyEnd])
            if self.readIndex == self.buffer.count { self.compactIfNeeded() }
            return packet
        } catch {
            self.fail(error)
            throw error
        }
    }

    /// Parses and validates the fixed header at `readIndex` if it is complete and not yet parsed.
    private mutating func readHeader() throws(MQTTDecodingError) -> Header? {
        if let header = self.header { return header }
        guard self.readIndex < self.buffer.count else { return nil }
        let firstByte = self.buffer[self.readIndex]
        let type = try MQTTPacketType(validatingFirstByte: firstByte)
        guard let (length, lengthBytes) = try MQTTRemainingLength.decode(self.buffer[(self.readIndex + 1)...])
        else { return nil }
        try type.validateRemainingLength(length)
        let size = 1 + lengthBytes + length
        guard size <= self.maximumPacketSize else { throw .packetTooLarge(size) }
        let header = Header(firstByte: firstByte, headerLength: 1 + lengthBytes, bodyLength: length)
        self.header = header
        return header
    }

    private mutating func fail(_ error: MQTTDecodingError) {
        self.failure = error
        self.header = nil
        self.buffer = []
        self.readIndex = 0
    }

    /// Frees the buffer if every byte in it was decoded, for a connection about to wait long with
    /// nothing buffered (an idle one): the next ``append(_:)`` allocates again.
    package mutating func releaseBufferIfEmpty() {
        guard self.readIndex == self.buffer.count, self.header == nil else { return }
        self.buffer = []
        self.readIndex = 0
    }

    /// Drops consumed bytes when that moves no more bytes than were consumed (amortised O(1) per byte).
    private mutating func compactIfNeeded() {
        guard self.readIndex > 0 else { return }
        if self.readIndex == self.buffer.count {
            // Release a large buffer (left by a big packet) rather than keep it for good.
            if self.buffer.capacity > 1 << 20 {
                self.buffer = []
            } else {
                self.buffer.removeAll(keepingCapacity: true)
            }
            self.readIndex = 0
        } else if self.readIndex >= 4096, self.readIndex * 2 >= self.buffer.count {
            self.compactedByteCount += self.buffer.count - self.readIndex
            self.buffer.removeSubrange(0..<self.readIndex)
            self.readIndex = 0
        }
    }
}
