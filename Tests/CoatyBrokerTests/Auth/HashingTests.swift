import Testing

@testable import CoatyBroker

/// SHA-512, HMAC-SHA512 and PBKDF2-HMAC-SHA512 against published vectors.
struct HashingTests {
    private static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    /// FIPS 180-4 examples (one block, two blocks), the empty message, and 1,000 bytes over many blocks.
    @Test(arguments: [
        (
            "abc",
            "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"
        ),
        (
            "",
            "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e"
        ),
        (
            "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
            "8e959b75dae313da8cf4f72814fc143f8f7779c6eb9f7fa17299aeadb6889018501d289e4900f7e4331b99dec4b5433ac7d329eeb6dd26545e96e55b874be909"
        ),
        (
            String(repeating: "a", count: 1000),
            "67ba5535a46e3f86dbfbed8cbbaf0125c76ed549ff8b0b9e03e0c88cf90fa634fa7b12b47d77b694de488ace8d9a65967dc96df599727d3292a8d9d447709c97"
        ),
    ])
    func sha512(message: String, digest: String) {
        #expect(Self.hex(SHA512.hash(Array(message.utf8))) == digest)
    }

    @Test func sha512IsTheSameWhenFedInPieces() {
        let message = Array(String(repeating: "0123456789", count: 30).utf8)
        var sha = SHA512()
        sha.update(message[..<7])
        sha.update(message[7..<200])
        sha.update(message[200...])
        #expect(sha.finalize() == SHA512.hash(message))
    }

    /// RFC 4231 test cases 1, 2, 3, 6 and 7 (HMAC-SHA-512), including keys longer than a block.
    @Test(arguments: [
        (
            [UInt8](repeating: 0x0b, count: 20), Array("Hi There".utf8),
            "87aa7cdea5ef619d4ff0b4241a1d6cb02379f4e2ce4ec2787ad0b30545e17cdedaa833b7d6b8a702038b274eaea3f4e4be9d914eeb61f1702e696c203a126854"
        ),
        (
            Array("Jefe".utf8), Array("what do ya want for nothing?".utf8),
            "164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea2505549758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737"
        ),
        (
            [UInt8](repeating: 0xaa, count: 20), [UInt8](repeating: 0xdd, count: 50),
            "fa73b0089d56a284efb0f0756c890be9b1b5dbdd8ee81a3655f83e33b2279d39bf3e848279a722c806b485a47e67c807b946a337bee8942674278859e13292fb"
        ),
        (
            [UInt8](repeating: 0xaa, count: 131), Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
            "80b24263c7c1a3ebb71493c1dd7be8b49b46d1f41b4aeec1121b013783f8f3526b56d037e05f2598bd0fd2215d6a1e5295e64f73f63f0aec8b915a985d786598"
        ),
        (
            [UInt8](repeating: 0xaa, count: 131),
            Array(
                "This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm."
                    .utf8
            ),
            "e37b6a775dc87dbaa4dfa9f96e5e3ffddebd71f8867289865df5a32d20cdc944b6022cac3c4982b10d5eeb55c3e4de15134676fb6de0446065c97440fa8c6a58"
        ),
    ])
    func hmacSHA512(key: [UInt8], message: [UInt8], code: String) {
        let hmac = HMACSHA512(key: key)
        #expect(Self.hex(hmac.authenticationCode(for: message)) == code)
        #expect(Self.hex(hmac.authenticationCode(for: message)) == code, "the prepared key is reusable")
    }

    /// Checked with `python3 -c "import hashlib; print(hashlib.pbkdf2_hmac('sha512', p, s, n).hex())"`.
    @Test(arguments: [
        (
            "password", Array("salt".utf8), 1,
            "867f70cf1ade02cff3752599a3a53dc4af34c7a669815ae5d513554e1c8cf252c02d470a285a0501bad999bfe943c08f050235d7d68b1da55e63f73b60a57fce"
        ),
        (
            "password", Array("salt".utf8), 2,
            "e1d9c16aa681708a45f5c7c4e215ceb66e011a2e9f0040713f18aefdb866d53cf76cab2868a39b9f7840edce4fef5a82be67335c77a6068e04112754f27ccf4e"
        ),
        (
            "pass", Array(0..<12), 101,
            "61f8bbc311002a0fe2b2954ee23686aa70646aec094674a880256c9c47f50cbe4c705228e37f13b0400af0be21809e4e661ca216b38f251cdc1a006cc97d7385"
        ),
    ])
    func pbkdf2SHA512(password: String, salt: [UInt8], iterations: Int, key: String) {
        #expect(Self.hex(PBKDF2.sha512(password: Array(password.utf8), salt: salt, iterations: iterations)) == key)
    }

    @Test func pbkdf2DerivesLongerAndShorterKeys() {
        let long = PBKDF2.sha512(password: Array("p".utf8), salt: Array("s".utf8), iterations: 2, keyCount: 100)
        let short = PBKDF2.sha512(password: Array("p".utf8), salt: Array("s".utf8), iterations: 2, keyCount: 10)
        #expect(long.count == 100)
        #expect(Array(long.prefix(10)) == short)
    }

    @Test func constantTimeComparison() {
        #expect(PasswordHash.constantTimeEquals([1, 2, 3], [1, 2, 3]))
        #expect(!PasswordHash.constantTimeEquals([1, 2, 3], [1, 2, 4]))
        #expect(!PasswordHash.constantTimeEquals([1, 2, 3], [1, 2]))
        #expect(PasswordHash.constantTimeEquals([], []))
    }
}
