/// The head of an HTTP/1.1 message: its start line and header fields, as the opening handshake
/// needs them (RFC 7230 §3, without obsolete line folding).
package struct HTTPHead: Sendable, Hashable {
    /// The request line or status line, for example `GET /mqtt HTTP/1.1`.
    package var startLine: String
    /// The header fields in order, names as sent.
    package var fields: [(name: String, value: String)]

    package init(startLine: String, fields: [(name: String, value: String)]) {
        self.startLine = startLine
        self.fields = fields
    }

    /// The values of every field called `name` (case-insensitive), joined with `", "` as RFC 7230
    /// §3.2.2 allows for list-valued fields; `nil` if there is none.
    package func value(of name: String) -> String? {
        let values = self.fields.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
        return values.isEmpty ? nil : values.joined(separator: ", ")
    }

    /// The comma-separated tokens of the fields called `name`, trimmed and lowercased.
    package func tokens(of name: String) -> [String] {
        guard let value = self.value(of: name) else { return [] }
        return value.split(separator: ",").map { $0.trimmingASCIISpaces().lowercased() }.filter { !$0.isEmpty }
    }

    /// Where the head ends in `bytes`: the index after the blank line (`CRLF CRLF`), or `nil` if it is
    /// not complete yet.
    ///
    /// - Parameter searched: How many leading bytes an earlier call already found no end in: only a
    ///   blank line ending after them is looked for, so a head that arrives a byte at a time costs
    ///   linear time, not quadratic.
    package static func end(in bytes: [UInt8], searched: Int = 0) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in max(3, searched)..<bytes.count
        where bytes[index] == 0x0A && bytes[index - 1] == 0x0D && bytes[index - 2] == 0x0A
            && bytes[index - 3] == 0x0D
        {
            return index + 1
        }
        return nil
    }

    /// Parses a complete head (up to and including the blank line); `nil` if it is malformed.
    package init?(parsing bytes: ArraySlice<UInt8>) {
        guard let text = String(validating: bytes, as: UTF8.self) else { return nil }
        var lines = text.split(separator: "\r\n", omittingEmptySubsequences: false)
        // The blank line that ends the head leaves two empty strings at the end.
        guard lines.count >= 3, lines.removeLast().isEmpty, lines.removeLast().isEmpty else { return nil }
        let startLine = lines.removeFirst()
        guard !startLine.isEmpty, !startLine.contains("\n") else { return nil }
        var fields: [(name: String, value: String)] = []
        for line in lines {
            guard let colon = line.firstIndex(of: ":"), !line.contains("\n") else { return nil }
            let name = line[..<colon]
            // A field name is a token: no spaces (a folded line starts with one).
            guard !name.isEmpty, !name.contains(" "), !name.contains("\t") else { return nil }
            fields.append((String(name), String(line[line.index(after: colon)...].trimmingASCIISpaces())))
        }
        self.init(startLine: String(startLine), fields: fields)
    }

    /// The head's bytes, ending with the blank line.
    package var encoded: [UInt8] {
        var text = self.startLine + "\r\n"
        for field in self.fields { text += "\(field.name): \(field.value)\r\n" }
        text += "\r\n"
        return Array(text.utf8)
    }

    package static func == (lhs: HTTPHead, rhs: HTTPHead) -> Bool {
        lhs.startLine == rhs.startLine && lhs.fields.elementsEqual(rhs.fields) { $0 == $1 }
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(self.startLine)
        for field in self.fields {
            hasher.combine(field.name)
            hasher.combine(field.value)
        }
    }
}

extension StringProtocol {
    /// The string without leading and trailing spaces and tabs.
    func trimmingASCIISpaces() -> Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = self.firstIndex(where: { !isSpace($0) }) else { return "" }
        let last = self.lastIndex(where: { !isSpace($0) })!
        return Substring(self[first...last])
    }
}
