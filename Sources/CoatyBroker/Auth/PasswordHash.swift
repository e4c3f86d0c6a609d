import CoatyWebSocket

/// One user's entry of a mosquitto password file: the hash scheme, the salt and the hash.
///
/// mosquitto 2's `mosquitto_passwd` writes `$7$<iterations>$<salt>$<hash>`: PBKDF2-HMAC-SHA512 of
/// the password with that many iterations (101 by default). Older files hold `$6$<salt>$<hash>`: the
/// SHA-512 of the password's bytes followed by the salt's. Salt and hash are padded base64 of 12 and
/// 64 bytes.
struct PasswordHash: Sendable, Hashable {
    enum Scheme: Sendable, Hashable {
        /// `$6$`: SHA-512 of password + salt.
        case sha512
        /// `$7$`: PBKDF2-HMAC-SHA512 with this many iterations.
        case pbkdf2(iterations: Int)
    }

    /// The salt length mosquitto uses and requires.
    static let saltCount = 12

    var scheme: Scheme
    var salt: [UInt8]
    var hash: [UInt8]

    /// Parses the field after the user name, or returns why it is not a hash mosquitto would accept.
    ///
    /// The reason never quotes the field, so it can be logged.
    static func parse(_ field: Substring) -> Result<PasswordHash, AuthFileProblem> {
        guard field.first == "$" else { return .failure(AuthFileProblem("the hash does not start with '$'")) }
        let parts = field.dropFirst().split(separator: "$", omittingEmptySubsequences: false)
        let scheme: Scheme
        let encodedSalt: Substring
        let encodedHash: Substring
        switch parts.first {
        case "6":
            guard parts.count == 3 else { return .failure(AuthFileProblem("a $6$ hash needs a salt and a hash")) }
            scheme = .sha512
            (encodedSalt, encodedHash) = (parts[1], parts[2])
        case "7":
            guard parts.count == 4 else {
                return .failure(AuthFileProblem("a $7$ hash needs iterations, a salt and a hash"))
            }
            guard let iterations = Int(parts[1]), iterations >= 1 else {
                return .failure(AuthFileProblem("the iteration count is not a positive number"))
            }
            scheme = .pbkdf2(iterations: iterations)
            (encodedSalt, encodedHash) = (parts[2], parts[3])
        default:
            return .failure(AuthFileProblem("unknown hash type (only $6$ and $7$ are supported)"))
        }
        guard let salt = Base64.decode(encodedSalt), salt.count == Self.saltCount else {
            return .failure(AuthFileProblem("the salt is not base64 of \(Self.saltCount) bytes"))
        }
        guard let hash = Base64.decode(encodedHash), hash.count == SHA512.digestCount else {
            return .failure(AuthFileProblem("the hash is not base64 of \(SHA512.digestCount) bytes"))
        }
        return .success(PasswordHash(scheme: scheme, salt: salt, hash: hash))
    }

    /// Whether `password` hashes to this entry's hash, compared in constant time.
    func verifies(_ password: [UInt8]) -> Bool {
        Self.constantTimeEquals(self.digest(of: password), self.hash)
    }

    /// The hash of `password` under this entry's scheme and salt.
    func digest(of password: [UInt8]) -> [UInt8] {
        switch self.scheme {
        case .sha512:
            SHA512.hash(password + self.salt)
        case .pbkdf2(let iterations):
            PBKDF2.sha512(password: password, salt: self.salt, iterations: iterations)
        }
    }

    /// Compares two byte strings in time that depends only on their lengths, so that a client cannot
    /// learn a hash byte by byte from how long a refusal takes.
    static func constantTimeEquals(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for index in lhs.indices { difference |= lhs[index] ^ rhs[index] }
        return difference == 0
    }
}
