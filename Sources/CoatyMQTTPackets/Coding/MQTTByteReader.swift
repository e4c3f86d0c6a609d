/// Reads the fields of one packet body, throwing typed decoding errors on truncation.
struct MQTTByteReader {
    private let bytes: ArraySlice<UInt8>
    private var index: Int
    private let type: MQTTPacketType

    init(_ bytes: ArraySlice<UInt8>, type: MQTTPacketType) {
        self.bytes = bytes
        self.index = bytes.startIndex
        self.type = type
    }

    /// The number of unread bytes.
    var remainingCount: Int { self.bytes.endIndex - self.index }

    var isAtEnd: Bool { self.index == self.bytes.endIndex }

    mutating func readByte() throws(MQTTDecodingError) -> UInt8 {
        guard self.index < self.bytes.endIndex else { throw .truncatedPacket(self.type) }
        defer { self.index += 1 }
        return self.bytes[self.index]
    }

    mutating func readUInt16() throws(MQTTDecodingError) -> UInt16 {
        let high = try self.readByte()
        let low = try self.readByte()
        return UInt16(high) << 8 | UInt16(low)
    }

    /// Reads a non-zero packet identifier.
    mutating func readPacketID() throws(MQTTDecodingError) -> UInt16 {
        let id = try self.readUInt16()
        guard id != 0 else { throw .zeroPacketIdentifier }
        return id
    }

    mutating func readBytes(_ count: Int) throws(MQTTDecodingError) -> ArraySlice<UInt8> {
        guard count <= self.remainingCount else { throw .truncatedPacket(self.type) }
        defer { self.index += count }
        return self.bytes[self.index..<self.index + count]
    }

    /// Reads length-prefixed binary data.
    mutating func readLengthPrefixed() throws(MQTTDecodingError) -> ArraySlice<UInt8> {
        let count = try self.readUInt16()
        return try self.readBytes(Int(count))
    }

    /// Reads a length-prefixed, validated UTF-8 string.
    mutating func readString() throws(MQTTDecodingError) -> String {
        try MQTTString.decode(self.readLengthPrefixed())
    }

    mutating func readRest() -> [UInt8] {
        defer { self.index = self.bytes.endIndex }
        return Array(self.bytes[self.index...])
    }

    func expectEnd() throws(MQTTDecodingError) {
        guard self.isAtEnd else { throw .unexpectedTrailingBytes(self.type, self.remainingCount) }
    }
}
