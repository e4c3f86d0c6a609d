/// The CRC-32 checksum of zlib, PNG and Ethernet (IEEE 802.3: reflected polynomial 0xEDB88320,
/// initial value and final XOR 0xFFFFFFFF), which the persistence log puts on every record so that a
/// torn or flipped record is detected before it is replayed.
///
/// It detects every burst error of up to 32 bits and all but one in 2³² of the others, plenty for
/// telling a damaged record from a valid one; it is not a defence against deliberate tampering.
enum CRC32 {
    /// The checksum of `bytes`.
    static func checksum(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        Self.table.withUnsafeBufferPointer { table in
            bytes.withUnsafeBufferPointer { bytes in
                for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
            }
        }
        return crc ^ 0xFFFF_FFFF
    }

    /// The checksum of `bytes`.
    static func checksum(_ bytes: [UInt8]) -> UInt32 { Self.checksum(bytes[...]) }

    /// The checksum of each byte value, computed once: one lookup per byte instead of eight shifts.
    private static let table: [UInt32] = (0..<256).map { value in
        var crc = UInt32(value)
        for _ in 0..<8 {
            crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1
        }
        return crc
    }
}
