import CoatyCore

extension AccessControlList {
    /// Parses the text of a mosquitto ACL file (see ``AccessControlList``).
    ///
    /// Words are separated by spaces or tabs; a filter runs to the end of its line and may contain
    /// spaces. Unlike a password file, a malformed ACL file is refused as a whole, as mosquitto
    /// refuses to start with one: skipping a `deny` line would grant what it denies.
    ///
    /// - Parameter text: The file's contents.
    /// - Throws: ``BrokerError`` with code `.invalidAccessControlList`, listing every invalid line
    ///   with its number and reason: an unknown keyword, a `user` line without a name, a `topic` or
    ///   `pattern` line without a filter or with an unknown access, or an invalid topic filter.
    public init(parsing text: String) throws(BrokerError) {
        var problems: [String] = []
        var currentUser: [UInt8]?
        var number = 0
        for rawLine in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
            number += 1
            let line = rawLine.trimmingBlanks
            if line.isEmpty || line.first == "#" { continue }
            let (keyword, rest) = Self.firstWord(of: line)
            switch keyword {
            case "user":
                guard !rest.isEmpty else {
                    problems.append("line \(number): 'user' without a user name")
                    continue
                }
                currentUser = Array(rest.utf8)
                if self.userRules[Array(rest.utf8)] == nil { self.userRules[Array(rest.utf8)] = [] }
            case "topic", "pattern":
                let rule: Rule
                switch Self.rule(rest) {
                case .failure(let error):
                    problems.append("line \(number): '\(keyword)' \(error.reason)")
                    continue
                case .success(let parsed):
                    rule = parsed
                }
                if keyword == "pattern" {
                    self.patterns.append(rule)
                } else if let currentUser {
                    self.userRules[currentUser, default: []].append(rule)
                } else {
                    self.anonymousRules.append(rule)
                }
            default:
                problems.append("line \(number): unknown keyword '\(keyword)' (expected user, topic or pattern)")
            }
        }
        guard problems.isEmpty else {
            throw BrokerError(.invalidAccessControlList, "invalid lines: \(problems.joined(separator: "; "))")
        }
    }

    /// Reads and parses an ACL file (see ``init(parsing:)``).
    ///
    /// - Parameter path: The file's path.
    /// - Throws: ``BrokerError`` with code `.invalidAccessControlList` if the file cannot be read, is
    ///   not UTF-8 or has invalid lines.
    public init(contentsOfFile path: String) throws(BrokerError) {
        let text = try readTextFile(path, code: .invalidAccessControlList, what: "ACL file")
        do {
            try self.init(parsing: text)
        } catch {
            throw BrokerError(error.code, "ACL file '\(path)': \(error.message)")
        }
    }

    /// The first word of `line` and the rest, without surrounding blanks.
    private static func firstWord(of line: Substring) -> (Substring, Substring) {
        let end = line.firstIndex { $0 == " " || $0 == "\t" } ?? line.endIndex
        return (line[..<end], line[end...].trimmingBlanks)
    }

    /// The rule of a `topic` or `pattern` line, from the words after the keyword.
    ///
    /// As mosquitto reads it: with one word, that word is the filter and the access `readwrite`.
    private static func rule(_ words: Substring) -> Result<Rule, AuthFileProblem> {
        guard !words.isEmpty else { return .failure(AuthFileProblem("without a topic filter")) }
        let (first, rest) = Self.firstWord(of: words)
        let access: Access
        let filter: Substring
        if rest.isEmpty {
            (access, filter) = (.readWrite, first)
        } else {
            switch first {
            case "read": access = .read
            case "write": access = .write
            case "readwrite": access = .readWrite
            case "deny": access = .deny
            default:
                return .failure(
                    AuthFileProblem("with unknown access '\(first)' (expected read, write, readwrite or deny)")
                )
            }
            filter = rest
        }
        guard (try? TopicFilter(String(filter))) != nil else {
            return .failure(AuthFileProblem("with an invalid topic filter '\(filter)'"))
        }
        return .success(Rule(access: access, filter: String(filter)))
    }
}
