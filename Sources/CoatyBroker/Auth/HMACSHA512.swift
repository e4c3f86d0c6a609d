/// HMAC with SHA-512 (RFC 2104, RFC 4231), the pseudo-random function of ``PBKDF2``.
///
/// The key is absorbed once: each ``authenticationCode(for:)`` copies the two hashes that have taken
/// the padded key, so PBKDF2's thousands of calls hash only their messages.
package struct HMACSHA512: Sendable {
    private let inner: SHA512
    private let outer: SHA512

    /// Prepares an HMAC for `key`; a key longer than a SHA-512 block is hashed first.
    package init(key: some Collection<UInt8>) {
        var block = key.count > SHA512.blockCount ? SHA512.hash(key) : Array(key)
        block += [UInt8](repeating: 0, count: SHA512.blockCount - block.count)
        var inner = SHA512()
        inner.update(block.map { $0 ^ 0x36 })
        var outer = SHA512()
        outer.update(block.map { $0 ^ 0x5c })
        self.inner = inner
        self.outer = outer
    }

    /// The 64-byte authentication code of `message`.
    package func authenticationCode(for message: some Sequence<UInt8>) -> [UInt8] {
        var inner = self.inner
        inner.update(message)
        var outer = self.outer
        outer.update(inner.finalize())
        return outer.finalize()
    }
}
