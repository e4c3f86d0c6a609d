/// PBKDF2 (RFC 8018 §5.2) with HMAC-SHA512, the hash of mosquitto 2's `$7$` password entries.
package enum PBKDF2 {
    /// Derives `keyCount` bytes from `password` and `salt` with `iterations` rounds of HMAC-SHA512.
    ///
    /// - Precondition: `iterations` and `keyCount` are at least 1.
    package static func sha512(
        password: some Collection<UInt8>,
        salt: some Collection<UInt8>,
        iterations: Int,
        keyCount: Int = SHA512.digestCount
    ) -> [UInt8] {
        precondition(iterations >= 1 && keyCount >= 1)
        let hmac = HMACSHA512(key: password)
        var key: [UInt8] = []
        key.reserveCapacity(keyCount + SHA512.digestCount)
        var blockIndex: UInt32 = 1
        while key.count < keyCount {
            let counter = (0..<4).map { UInt8(truncatingIfNeeded: blockIndex >> (24 - 8 * UInt32($0))) }
            var u = hmac.authenticationCode(for: Array(salt) + counter)
            var block = u
            for _ in 1..<iterations {
                u = hmac.authenticationCode(for: u)
                for index in block.indices { block[index] ^= u[index] }
            }
            key += block
            blockIndex += 1
        }
        return Array(key.prefix(keyCount))
    }
}
