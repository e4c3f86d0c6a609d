import CoatyCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The users of a mosquitto password file and their password hashes.
///
/// Each line is `username:hash`, as mosquitto 2's `mosquitto_passwd` writes it, so operators can
/// reuse their files: `$7$<iterations>$<salt>$<hash>` (PBKDF2-HMAC-SHA512, what mosquitto 2 writes)
/// or `$6$<salt>$<hash>` (salted SHA-512, from older files), salt and hash in base64.
///
/// ```
/// # made with: mosquitto_passwd -c -b passwords alice secret
/// alice:$7$101$q2RJ1cS0oCmYyG3B$Z6Xj…==
/// ```
///
/// Blank lines and lines starting with `#` are ignored. A malformed line (no `:`, an empty user name,
/// an unknown hash type, a salt or hash of the wrong length, a repeated user name) is skipped and
/// listed in ``skippedLines`` with its number and reason, as mosquitto skips it with a warning: a
/// skipped line only locks its user out. Reasons never quote the line, so they can be logged.
public struct PasswordFile: Sendable {
    /// A line of the file that was not used, and why.
    public struct SkippedLine: Sendable, Hashable, CustomStringConvertible {
        /// The line number, from 1.
        public var number: Int
        /// Why the line was skipped; never contains the line's text.
        public var reason: String

        /// `line <number>: <reason>`.
        public var description: String { "line \(self.number): \(self.reason)" }
    }

    /// User name (UTF-8 bytes) → hash.
    private var entries: [[UInt8]: PasswordHash] = [:]

    /// The malformed lines that were skipped, in file order.
    public private(set) var skippedLines: [SkippedLine] = []

    /// Parses the text of a password file; malformed lines are skipped and listed in ``skippedLines``.
    ///
    /// - Parameter text: The file's contents.
    public init(parsing text: String) {
        var number = 0
        for rawLine in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
            number += 1
            let line = rawLine.trimmingBlanks
            if line.isEmpty || line.first == "#" { continue }
            guard let colon = line.firstIndex(of: ":") else {
                self.skip(number, "no ':' between the user name and the hash")
                continue
            }
            let username = line[..<colon].trimmingBlanks
            guard !username.isEmpty else {
                self.skip(number, "empty user name")
                continue
            }
            // As mosquitto reads it: the hash runs to the next ':', if any.
            let field = line[line.index(after: colon)...].prefix { $0 != ":" }.trimmingBlanks
            guard !field.isEmpty else {
                self.skip(number, "no password hash")
                continue
            }
            switch PasswordHash.parse(field) {
            case .failure(let error):
                self.skip(number, error.reason)
            case .success(let hash):
                let key = Array(username.utf8)
                guard self.entries[key] == nil else {
                    self.skip(number, "the user name appears on an earlier line, which is used")
                    continue
                }
                self.entries[key] = hash
            }
        }
    }

    /// Reads and parses a password file (see ``init(parsing:)``).
    ///
    /// - Parameter path: The file's path.
    /// - Throws: ``BrokerError`` with code `.invalidPasswordFile` if the file cannot be read or is not
    ///   UTF-8. Malformed lines do not throw; see ``skippedLines``.
    public init(contentsOfFile path: String) throws(BrokerError) {
        self.init(parsing: try readTextFile(path, code: .invalidPasswordFile, what: "password file"))
    }

    private mutating func skip(_ number: Int, _ reason: String) {
        self.skippedLines.append(SkippedLine(number: number, reason: reason))
    }

    /// The user names the file holds, sorted.
    public var usernames: [String] {
        self.entries.keys.map { String(decoding: $0, as: UTF8.self) }.sorted()
    }

    /// A ``BrokerError`` (code `.invalidPasswordFile`) listing the skipped lines, or `nil` if none
    /// were skipped, for callers that report them.
    public var skippedLinesError: BrokerError? {
        guard !self.skippedLines.isEmpty else { return nil }
        let numbers = self.skippedLines.map { String($0.number) }.joined(separator: ", ")
        let reasons = self.skippedLines.map(\.description).joined(separator: "; ")
        return BrokerError(.invalidPasswordFile, "malformed lines skipped: \(numbers) (\(reasons))")
    }

    /// Whether `username` is in the file and `password` matches its hash.
    ///
    /// The hash is compared in constant time, and an unknown user costs a hash as a known one does,
    /// so that the time taken does not reveal which user names exist.
    public func authenticates(username: String, password: [UInt8]) -> Bool {
        guard let entry = self.entries[Array(username.utf8)] else {
            _ = Self.unknownUser.verifies(password)
            return false
        }
        return entry.verifies(password)
    }

    /// Hashed in place of an unknown user's entry, with mosquitto's default cost.
    private static let unknownUser = PasswordHash(
        scheme: .pbkdf2(iterations: 101),
        salt: [UInt8](repeating: 0, count: PasswordHash.saltCount),
        hash: [UInt8](repeating: 0, count: SHA512.digestCount)
    )
}

extension Substring {
    /// Without leading and trailing spaces, tabs and carriage returns.
    var trimmingBlanks: Substring {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
        guard let first = self.firstIndex(where: { !isBlank($0) }),
            let last = self.lastIndex(where: { !isBlank($0) })
        else { return self[self.endIndex...] }
        return self[first...last]
    }
}

/// Reads a UTF-8 text file for the broker's configuration.
func readTextFile(_ path: String, code: BrokerError.Code, what: String) throws(BrokerError) -> String {
    let data: Data
    do {
        data = try Data(contentsOf: URL(filePath: path))
    } catch {
        throw BrokerError(code, "cannot read the \(what) '\(path)'", underlying: error)
    }
    guard let text = String(validating: data, as: UTF8.self) else {
        throw BrokerError(code, "the \(what) '\(path)' is not UTF-8 text")
    }
    return text
}
