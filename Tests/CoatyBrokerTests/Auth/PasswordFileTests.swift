import Testing

@testable import CoatyBroker

/// Parsing mosquitto password files and checking passwords against them.
struct PasswordFileTests {
    /// `secret` with salt bytes 0…11, hashed by Python's hashlib as mosquitto hashes it.
    static let salt = "AAECAwQFBgcICQoL"
    static let pbkdf2Line =
        "alice:$7$101$\(salt)$Xr99N9ym9ys8TWxis5ajETJq6EVYzmc6nb8t3pUYnPBbCAbICS4xejTltonXWCtJNBvA+By+TXUqU6qCblO00w=="
    static let sha512Line =
        "bob:$6$\(salt)$JqsxEv/ucyxjA5DKsQ+Y8CDWaQDNQI9FpAkmfwAqWfwZLk/JEGgM0EpylrJHAZKKyFQjJeZ3nFaHjPzOzPPmPw=="
    /// Written by `mosquitto_passwd -c -b FILE alice secret` (mosquitto 2).
    static let mosquittoLine =
        "carol:$7$101$qGWnP4hnUfEfUvSk$P5khssT107tModFicFW+Xco0W3cEDJiwWO57lyueFDofJksAwKZx7zF5kupPP4SGVcTVqCCHWfjcQSnEL+LZlA=="

    private func secret(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test func acceptsPBKDF2AndSaltedSHA512Entries() {
        let file = PasswordFile(parsing: "\(Self.pbkdf2Line)\n\(Self.sha512Line)\n\(Self.mosquittoLine)\n")
        #expect(file.skippedLines.isEmpty)
        #expect(file.usernames == ["alice", "bob", "carol"])
        for user in ["alice", "bob", "carol"] {
            #expect(file.authenticates(username: user, password: self.secret("secret")), "\(user)")
            #expect(!file.authenticates(username: user, password: self.secret("Secret")), "\(user)")
            #expect(!file.authenticates(username: user, password: []), "\(user)")
        }
        #expect(!file.authenticates(username: "dave", password: self.secret("secret")))
    }

    @Test func iterationsComeFromTheEntry() {
        let hash = "MwursaYocn25Qyw9UpQmhHyRLEDBQcCjsCIRgmXnL29mCOoTflZNvKqR70yRxQJt760tdwkqbfeyqCIaYZlwEw=="
        let file = PasswordFile(parsing: "alice:$7$3$\(Self.salt)$\(hash)")
        #expect(file.authenticates(username: "alice", password: self.secret("secret")))
        let wrongCount = PasswordFile(parsing: "alice:$7$4$\(Self.salt)$\(hash)")
        #expect(!wrongCount.authenticates(username: "alice", password: self.secret("secret")))
    }

    @Test func ignoresCommentsBlankLinesAndSurroundingBlanks() {
        let text = "# users\n\n   \n  \(Self.pbkdf2Line)  \r\n# end"
        let file = PasswordFile(parsing: text)
        #expect(file.skippedLines.isEmpty)
        #expect(file.authenticates(username: "alice", password: self.secret("secret")))
    }

    @Test func skipsMalformedLinesAndListsThem() throws {
        let hash = "Xr99N9ym9ys8TWxis5ajETJq6EVYzmc6nb8t3pUYnPBbCAbICS4xejTltonXWCtJNBvA+By+TXUqU6qCblO00w=="
        let text = [
            Self.pbkdf2Line,  // 1: fine
            "no separator",  // 2
            ":$7$101$\(Self.salt)$\(hash)",  // 3: empty user name
            "erin:",  // 4: no hash
            "erin:plain-text",  // 5: not a hash
            "erin:$5$\(Self.salt)$\(hash)",  // 6: unknown type
            "erin:$7$0$\(Self.salt)$\(hash)",  // 7: iterations
            "erin:$7$101$AAEC$\(hash)",  // 8: short salt
            "erin:$7$101$\(Self.salt)$AAEC",  // 9: short hash
            "erin:$7$101$\(Self.salt)$not base64!",  // 10
            "erin:$6$\(Self.salt)",  // 11: missing hash
            "alice:$7$101$\(Self.salt)$\(hash)",  // 12: repeated user
            Self.sha512Line,  // 13: fine
        ].joined(separator: "\n")
        let file = PasswordFile(parsing: text)
        #expect(file.skippedLines.map(\.number) == Array(2...12))
        #expect(file.usernames == ["alice", "bob"])
        #expect(file.authenticates(username: "bob", password: self.secret("secret")))
        for skipped in file.skippedLines {
            #expect(!skipped.reason.contains(hash) && !skipped.reason.contains("plain-text"), "\(skipped)")
        }
        let error = try #require(file.skippedLinesError)
        #expect(error.code == .invalidPasswordFile)
        #expect(error.message.contains("2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12"))
        #expect(PasswordFile(parsing: Self.pbkdf2Line).skippedLinesError == nil)
    }

    @Test func aMissingFileIsAnError() {
        #expect {
            try PasswordFile(contentsOfFile: "/nonexistent/coaty-passwords")
        } throws: { ($0 as? BrokerError)?.code == .invalidPasswordFile }
    }
}
