/// SHA-1 (FIPS 180-4), for the `Sec-WebSocket-Accept` header of the opening handshake.
///
/// RFC 6455 uses SHA-1 only to prove that the server understood the WebSocket handshake, not for
/// security, so a broken hash function is fine here; do not use it for anything else.
package struct SHA1: Sendable {
    private var state: (UInt32, UInt32, UInt32, UInt32, UInt32) = (
        0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0
    )
    /// Bytes not yet hashed: less than one 64-byte block.
    private var pending: [UInt8] = []
    private var length: UInt64 = 0

    /// Creates an empty hash.
    package init() {}

    /// The 20-byte digest of `bytes`.
    package static func hash(_ bytes: some Sequence<UInt8>) -> [UInt8] {
        var sha = SHA1()
        sha.update(bytes)
        return sha.finalize()
    }

    /// Adds bytes to the message.
    package mutating func update(_ bytes: some Sequence<UInt8>) {
        for byte in bytes {
            self.pending.append(byte)
            self.length &+= 1
            if self.pending.count == 64 {
                self.compress(self.pending)
                self.pending.removeAll(keepingCapacity: true)
            }
        }
    }

    /// Pads the message and returns its 20-byte digest.
    package mutating func finalize() -> [UInt8] {
        let bitLength = self.length &* 8
        var padding: [UInt8] = [0x80]
        while (self.pending.count + padding.count) % 64 != 56 { padding.append(0) }
        for shift in stride(from: 56, through: 0, by: -8) {
            padding.append(UInt8(truncatingIfNeeded: bitLength >> shift))
        }
        self.update(padding)
        precondition(self.pending.isEmpty)
        var digest: [UInt8] = []
        digest.reserveCapacity(20)
        for word in [self.state.0, self.state.1, self.state.2, self.state.3, self.state.4] {
            for shift in stride(from: 24, through: 0, by: -8) {
                digest.append(UInt8(truncatingIfNeeded: word >> shift))
            }
        }
        return digest
    }

    private mutating func compress(_ block: [UInt8]) {
        var w = [UInt32](repeating: 0, count: 80)
        for index in 0..<16 {
            w[index] =
                UInt32(block[4 * index]) << 24 | UInt32(block[4 * index + 1]) << 16
                | UInt32(block[4 * index + 2]) << 8 | UInt32(block[4 * index + 3])
        }
        for index in 16..<80 {
            w[index] = Self.rotateLeft(w[index - 3] ^ w[index - 8] ^ w[index - 14] ^ w[index - 16], by: 1)
        }
        var (a, b, c, d, e) = self.state
        for index in 0..<80 {
            let f: UInt32
            let k: UInt32
            switch index {
            case 0..<20:
                f = (b & c) | (~b & d)
                k = 0x5A82_7999
            case 20..<40:
                f = b ^ c ^ d
                k = 0x6ED9_EBA1
            case 40..<60:
                f = (b & c) | (b & d) | (c & d)
                k = 0x8F1B_BCDC
            default:
                f = b ^ c ^ d
                k = 0xCA62_C1D6
            }
            let temp = Self.rotateLeft(a, by: 5) &+ f &+ e &+ k &+ w[index]
            e = d
            d = c
            c = Self.rotateLeft(b, by: 30)
            b = a
            a = temp
        }
        self.state = (
            self.state.0 &+ a, self.state.1 &+ b, self.state.2 &+ c, self.state.3 &+ d, self.state.4 &+ e
        )
    }

    private static func rotateLeft(_ value: UInt32, by count: UInt32) -> UInt32 {
        (value << count) | (value >> (32 - count))
    }
}
