/// The file format of the broker's persistence log: a header, then framed ``PersistenceRecord``s.
///
/// ```
/// header:  "CoatyDB" 0x01                         (8 bytes: magic and format version 1)
/// record:  length  UInt32 big-endian              (bytes of the body)
///          crc     UInt32 big-endian              (CRC-32 of the body, see CRC32)
///          body    kind byte, then its fields     (see PersistenceRecord.encodeBody(into:))
/// ```
///
/// A snapshot is the same format: the records that rebuild a state from nothing. Decoding keeps the
/// longest valid prefix: it stops at the first record that is cut short, fails its checksum or is
/// malformed, and reports where and why (``Damage``), so that a log torn by a crash or damaged on
/// disk yields every record before the damage and never a record that was not written.
enum PersistenceLogCodec {
    /// The first bytes of every log: "CoatyDB" and the format version.
    static let header: [UInt8] = Array("CoatyDB".utf8) + [1]

    /// The bytes of a frame before its body: length and checksum.
    static let frameOverhead = 8

    /// The largest body accepted: a record with a 256 MiB payload and two 64 KiB strings, so that a
    /// damaged length field is not mistaken for a record still being written.
    static let maximumBodySize = 268_435_455 + 2 * 65_537 + 16

    /// Appends one framed record.
    static func encode(_ record: PersistenceRecord, into buffer: inout [UInt8]) {
        let start = buffer.count
        buffer.append(contentsOf: [0, 0, 0, 0, 0, 0, 0, 0])
        record.encodeBody(into: &buffer)
        // No slice of `buffer` may outlive the checksum: storing into it would copy the whole buffer.
        let length = buffer.count - start - Self.frameOverhead
        let checksum = CRC32.checksum(buffer[(start + Self.frameOverhead)...])
        Self.store(UInt32(truncatingIfNeeded: length), at: start, in: &buffer)
        Self.store(checksum, at: start + 4, in: &buffer)
    }

    /// A whole log: the header, then `records`.
    static func encodeLog(_ records: some Sequence<PersistenceRecord>) -> [UInt8] {
        var buffer = Self.header
        for record in records { Self.encode(record, into: &buffer) }
        return buffer
    }

    /// Where a log stops being valid, and why.
    struct Damage: Sendable, Equatable, CustomStringConvertible {
        /// Why decoding stopped.
        enum Reason: Sendable, Equatable {
            /// The file does not start with ``PersistenceLogCodec/header``.
            case unknownHeader
            /// The last record is cut short (a crash while it was written).
            case truncated
            /// A record's checksum does not match its body.
            case checksumMismatch
            /// A record's length is impossible, or its body is not a valid record.
            case malformed
        }

        /// The offset of the first byte not used.
        var offset: Int
        /// The bytes from ``offset`` to the end of the log, all discarded.
        var discardedBytes: Int
        var reason: Reason

        var description: String {
            let what =
                switch self.reason {
                case .unknownHeader: "the file is not a Coaty broker log (unknown header)"
                case .truncated: "the last record is incomplete"
                case .checksumMismatch: "a record fails its checksum"
                case .malformed: "a record is malformed"
                }
            return "\(what) at byte \(self.offset); \(self.discardedBytes) bytes discarded"
        }
    }

    /// The valid records of a log, in order, and the damage that ended it early, if any.
    ///
    /// An empty input is an empty, undamaged log.
    static func decode(_ bytes: [UInt8]) -> (records: [PersistenceRecord], damage: Damage?) {
        guard !bytes.isEmpty else { return ([], nil) }
        func damage(_ reason: Damage.Reason, at offset: Int) -> Damage {
            Damage(offset: offset, discardedBytes: bytes.count - offset, reason: reason)
        }
        guard bytes.starts(with: Self.header) else {
            // A header cut short by a crash right after the file was created is only truncated.
            let reason: Damage.Reason = Self.header.starts(with: bytes) ? .truncated : .unknownHeader
            return ([], damage(reason, at: 0))
        }
        var records: [PersistenceRecord] = []
        var offset = Self.header.count
        while offset < bytes.count {
            guard bytes.count - offset >= Self.frameOverhead else { return (records, damage(.truncated, at: offset)) }
            let length = Int(Self.load(at: offset, in: bytes))
            guard length > 0, length <= Self.maximumBodySize else { return (records, damage(.malformed, at: offset)) }
            let bodyStart = offset + Self.frameOverhead
            guard bytes.count - bodyStart >= length else { return (records, damage(.truncated, at: offset)) }
            let body = bytes[bodyStart..<(bodyStart + length)]
            guard CRC32.checksum(body) == Self.load(at: offset + 4, in: bytes) else {
                return (records, damage(.checksumMismatch, at: offset))
            }
            guard let record = PersistenceRecord(body: body) else { return (records, damage(.malformed, at: offset)) }
            records.append(record)
            offset = bodyStart + length
        }
        return (records, nil)
    }

    private static func store(_ value: UInt32, at offset: Int, in buffer: inout [UInt8]) {
        for index in 0..<4 { buffer[offset + index] = UInt8(truncatingIfNeeded: value >> (24 - 8 * index)) }
    }

    private static func load(at offset: Int, in bytes: [UInt8]) -> UInt32 {
        (0..<4).reduce(0) { $0 << 8 | UInt32(bytes[offset + $1]) }
    }
}
