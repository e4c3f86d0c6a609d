import CoatyCore

/// A small, strict JSON parser (RFC 8259) that builds ``AnyCodable`` trees without throwing on valid input.
///
/// It exists so that AnyCodable-heavy paths (custom properties, `privateData`, Call parameters) never go
/// through a chain of failed `Decoder` attempts: the parser already knows each value's kind. Numbers with
/// an integral value that fits in `Int` become ``AnyCodable/int(_:)`` (`1`, `1.0`, `1e3`), those above
/// `Int.max` that fit in `UInt64` ``AnyCodable/uint(_:)``, exactly (an integer literal is read digit by
/// digit, never through `Double`); every other number becomes ``AnyCodable/double(_:)``. Nesting deeper than `maximumDepth` is an error, never a stack
/// overflow. Duplicate object keys keep the last value, as `JSON.parse` does; two keys of different code
/// points that are canonically equivalent (which a Swift dictionary cannot hold apart) are an error. A
/// number too large for `Double` (such as `1e400`) is an error, where JavaScript makes it `Infinity`: no
/// encoder could write the value back, since JSON has no infinities. A number too small rounds to zero,
/// as in JavaScript.
///
/// Two limits keep hostile input from taking the stack or the CPU:
/// - Nesting is capped at ``defaultMaximumDepth`` whatever a caller asks for: the parser, the decoders built
///   on it and the tree's deallocation all recurse once per level, and 50,000 levels overflowed an
///   8 MiB stack.
/// - A string may hold at most 30 combining marks (non-starters) in a row, Unicode's stream-safe limit
///   (see `StreamSafeText`): one object key of 80,000 alternating marks (320 KB) held an agent's
///   receive path for over a minute. JavaScript would accept it.
struct JSONParser {
    /// The default nesting limit for arrays and objects, which is also the deepest accepted when a
    /// caller asks for more.
    static let defaultMaximumDepth = 512

    private let bytes: [UInt8]
    private var index = 0
    private let maximumDepth: Int

    init(bytes: [UInt8], maximumDepth: Int = JSONParser.defaultMaximumDepth) {
        self.bytes = bytes
        self.maximumDepth = min(maximumDepth, Self.defaultMaximumDepth)
    }

    /// Parses one complete JSON document.
    static func parse(_ bytes: some Collection<UInt8>, maximumDepth: Int = defaultMaximumDepth) throws -> AnyCodable {
        var parser = JSONParser(bytes: Array(bytes), maximumDepth: maximumDepth)
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        guard parser.index == parser.bytes.count else { throw parser.error("unexpected data after the JSON value") }
        return value
    }

    private func error(_ reason: String) -> DecodingError {
        DecodingError.dataCorrupted(
            DecodingError.Context(codingPath: [], debugDescription: "invalid JSON at byte \(self.index): \(reason)")
        )
    }

    private mutating func skipWhitespace() {
        while self.index < self.bytes.count {
            switch self.bytes[self.index] {
            case 0x20, 0x0A, 0x0D, 0x09: self.index += 1
            default: return
            }
        }
    }

    private mutating func parseValue(depth: Int) throws -> AnyCodable {
        guard self.index < self.bytes.count else { throw self.error("unexpected end of input") }
        switch self.bytes[self.index] {
        case UInt8(ascii: "{"): return try self.parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try self.parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try self.parseString())
        case UInt8(ascii: "t"): try self.expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try self.expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try self.expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try self.parseNumber()
        default: throw self.error("unexpected character")
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws {
        let count = literal.utf8CodeUnitCount
        guard self.index + count <= self.bytes.count else { throw self.error("unexpected end of input") }
        let matches = literal.withUTF8Buffer { expected in
            for offset in 0..<count where self.bytes[self.index + offset] != expected[offset] { return false }
            return true
        }
        guard matches else { throw self.error("invalid literal") }
        self.index += count
    }

    private mutating func parseObject(depth: Int) throws -> AnyCodable {
        guard depth <= self.maximumDepth else { throw self.error("nesting deeper than \(self.maximumDepth)") }
        self.index += 1
        var members: [String: AnyCodable] = [:]
        self.skipWhitespace()
        if self.index < self.bytes.count, self.bytes[self.index] == UInt8(ascii: "}") {
            self.index += 1
            return .object(members)
        }
        while true {
            self.skipWhitespace()
            guard self.index < self.bytes.count, self.bytes[self.index] == UInt8(ascii: "\"") else {
                throw self.error("expected a member name")
            }
            let key = try self.parseString()
            self.skipWhitespace()
            guard self.index < self.bytes.count, self.bytes[self.index] == UInt8(ascii: ":") else {
                throw self.error("expected ':'")
            }
            self.index += 1
            self.skipWhitespace()
            if case _? = members.updateValue(try self.parseValue(depth: depth), forKey: key) {
                try self.checkRepeatedKey(key, in: members)
            }
            self.skipWhitespace()
            guard self.index < self.bytes.count else { throw self.error("unexpected end of input") }
            switch self.bytes[self.index] {
            case UInt8(ascii: ","): self.index += 1
            case UInt8(ascii: "}"): self.index += 1; return .object(members)
            default: throw self.error("expected ',' or '}'")
            }
        }
    }

    /// Throws unless `key`, found again in `members`, is the same code points as the key stored first.
    ///
    /// `Dictionary` takes canonically equivalent keys (`é` and `e` + U+0301) as one, where JavaScript
    /// keeps two properties; merging them would silently drop a member. An exact repeat is fine: the
    /// last value wins, as in `JSON.parse`.
    private func checkRepeatedKey(_ key: String, in members: [String: AnyCodable]) throws {
        guard members.exactIndex(forKey: key) != nil else {
            throw self.error("two member names that differ only in Unicode normalization")
        }
    }

    private mutating func parseArray(depth: Int) throws -> AnyCodable {
        guard depth <= self.maximumDepth else { throw self.error("nesting deeper than \(self.maximumDepth)") }
        self.index += 1
        var elements: [AnyCodable] = []
        self.skipWhitespace()
        if self.index < self.bytes.count, self.bytes[self.index] == UInt8(ascii: "]") {
            self.index += 1
            return .array(elements)
        }
        while true {
            self.skipWhitespace()
            elements.append(try self.parseValue(depth: depth))
            self.skipWhitespace()
            guard self.index < self.bytes.count else { throw self.error("unexpected end of input") }
            switch self.bytes[self.index] {
            case UInt8(ascii: ","): self.index += 1
            case UInt8(ascii: "]"): self.index += 1; return .array(elements)
            default: throw self.error("expected ',' or ']'")
            }
        }
    }

    private mutating func parseString() throws -> String {
        self.index += 1  // opening quote
        let start = self.index
        // Fast path: no escapes. `highBits` collects every byte's top bit: ASCII needs no UTF-8 check.
        var highBits: UInt8 = 0
        while self.index < self.bytes.count {
            let byte = self.bytes[self.index]
            if byte == UInt8(ascii: "\"") {
                let string = try self.makeString(start..<self.index, isASCII: highBits < 0x80)
                self.index += 1
                return string
            }
            highBits |= byte
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw self.error("control character in string") }
            self.index += 1
        }
        var buffer = Array(self.bytes[start..<self.index])
        while self.index < self.bytes.count {
            let byte = self.bytes[self.index]
            switch byte {
            case UInt8(ascii: "\""):
                self.index += 1
                guard let string = String(validating: buffer, as: UTF8.self) else { throw self.error("invalid UTF-8") }
                try self.checkStreamSafe(string)
                return string
            case UInt8(ascii: "\\"):
                self.index += 1
                guard self.index < self.bytes.count else { throw self.error("unexpected end of input") }
                let escape = self.bytes[self.index]
                self.index += 1
                switch escape {
                case UInt8(ascii: "\""): buffer.append(0x22)
                case UInt8(ascii: "\\"): buffer.append(0x5C)
                case UInt8(ascii: "/"): buffer.append(0x2F)
                case UInt8(ascii: "b"): buffer.append(0x08)
                case UInt8(ascii: "f"): buffer.append(0x0C)
                case UInt8(ascii: "n"): buffer.append(0x0A)
                case UInt8(ascii: "r"): buffer.append(0x0D)
                case UInt8(ascii: "t"): buffer.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try self.parseHex4()
                    if (0xD800...0xDBFF).contains(scalar) {
                        guard self.index + 1 < self.bytes.count, self.bytes[self.index] == UInt8(ascii: "\\"),
                            self.bytes[self.index + 1] == UInt8(ascii: "u")
                        else { throw self.error("unpaired surrogate") }
                        self.index += 2
                        let low = try self.parseHex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw self.error("unpaired surrogate") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00...0xDFFF).contains(scalar) {
                        throw self.error("unpaired surrogate")
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { throw self.error("invalid escape") }
                    buffer.append(contentsOf: String(Character(unicode)).utf8)
                default: throw self.error("invalid escape")
                }
            default:
                if byte < 0x20 { throw self.error("control character in string") }
                buffer.append(byte)
                self.index += 1
            }
        }
        throw self.error("unterminated string")
    }

    private func makeString(_ range: Range<Int>, isASCII: Bool) throws -> String {
        let string = self.bytes.withUnsafeBufferPointer { buffer -> String? in
            let bytes = UnsafeBufferPointer(rebasing: buffer[range])
            // ASCII is valid UTF-8, and `String(decoding:)` takes it without the generic validation.
            return isASCII ? String(decoding: bytes, as: UTF8.self) : String(validating: bytes, as: UTF8.self)
        }
        guard let string else { throw self.error("invalid UTF-8") }
        if !isASCII { try self.checkStreamSafe(string) }
        return string
    }

    /// Throws if `string` is not stream-safe (see `StreamSafeText`).
    private func checkStreamSafe(_ string: String) throws {
        guard StreamSafeText.isStreamSafe(string) else {
            throw self.error("more than \(StreamSafeText.maximumNonStarters) combining marks in a row")
        }
    }

    private mutating func parseHex4() throws -> UInt32 {
        guard self.index + 4 <= self.bytes.count else { throw self.error("unexpected end of input") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = self.bytes[self.index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw self.error("invalid \\u escape")
            }
            value = value << 4 | UInt32(digit)
            self.index += 1
        }
        return value
    }

    private mutating func parseNumber() throws -> AnyCodable {
        let start = self.index
        var isInteger = true
        if self.bytes[self.index] == UInt8(ascii: "-") { self.index += 1 }
        guard self.index < self.bytes.count else { throw self.error("invalid number") }
        if self.bytes[self.index] == UInt8(ascii: "0") {
            self.index += 1
        } else if (UInt8(ascii: "1")...UInt8(ascii: "9")).contains(self.bytes[self.index]) {
            while self.isDigit() {
                self.index += 1
            }
        } else {
            throw self.error("invalid number")
        }
        if self.index < self.bytes.count, self.bytes[self.index] == UInt8(ascii: ".") {
            isInteger = false
            self.index += 1
            let digits = self.index
            while self.isDigit() {
                self.index += 1
            }
            guard self.index > digits else { throw self.error("invalid number") }
        }
        if self.index < self.bytes.count, self.bytes[self.index] | 0x20 == UInt8(ascii: "e") {
            isInteger = false
            self.index += 1
            if self.index < self.bytes.count,
                self.bytes[self.index] == UInt8(ascii: "+") || self.bytes[self.index] == UInt8(ascii: "-")
            {
                self.index += 1
            }
            let digits = self.index
            while self.isDigit() {
                self.index += 1
            }
            guard self.index > digits else { throw self.error("invalid number") }
        }
        let range = start..<self.index
        if isInteger, let value = Self.parseInt(self.bytes, range) { return .int(value) }
        if isInteger, let value = Self.parseUInt64(self.bytes, range) { return .uint(value) }
        let text = self.bytes.withUnsafeBufferPointer { buffer in
            String(decoding: UnsafeBufferPointer(rebasing: buffer[range]), as: UTF8.self)
        }
        // A literal beyond `Double`'s range would become an infinity, which JSON cannot write back.
        guard let value = Double(text), value.isFinite else { throw self.error("number out of range") }
        // The case follows the exact value, not the spelling (`1.0` and `1e3` are integers), as
        // JavaScript sees it and as `JSONDecoder` reads it (it gives `Int` for `1.0`).
        if !isInteger, let integer = Self.exactInteger(self.bytes, range) { return integer }
        return .double(value)
    }

    /// The exact value of a validated number literal with a fraction or an exponent, if it is an integer
    /// that fits in `Int` (``AnyCodable/int(_:)``) or `UInt64` (``AnyCodable/uint(_:)``): `1.0`, `1e3`,
    /// `2.50e1`, but not `1e-400` or `9223372036854775807.5`, which a `Double` would round to integers.
    private static func exactInteger(_ bytes: [UInt8], _ range: Range<Int>) -> AnyCodable? {
        var index = range.lowerBound
        let negative = bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        func isDigit(_ position: Int) -> Bool {
            position < range.upperBound && (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position])
        }
        // The digits of the integer part and the fraction, without the point.
        let integerDigits =
            index..<{
                var end = index
                while isDigit(end) { end += 1 }
                return end
            }()
        index = integerDigits.upperBound
        var fractionDigits = index..<index
        if index < range.upperBound, bytes[index] == UInt8(ascii: ".") {
            var end = index + 1
            while isDigit(end) { end += 1 }
            fractionDigits = (index + 1)..<end
            index = end
        }
        var exponent = 0
        if index < range.upperBound {  // `e` or `E`, a sign, digits
            index += 1
            let isNegative = bytes[index] == UInt8(ascii: "-")
            if !isDigit(index) { index += 1 }
            while isDigit(index) {
                // Beyond ±10,000 the value is 0 or infinite, which the caller has ruled out or keeps as a double.
                exponent = min(exponent * 10 + Int(bytes[index] - UInt8(ascii: "0")), 10_000)
                index += 1
            }
            if isNegative { exponent = -exponent }
        }
        // The significant digits, without trailing zeros (each one raises the exponent).
        let count = integerDigits.count + fractionDigits.count
        func digit(_ offset: Int) -> UInt64 {
            let position =
                offset < integerDigits.count
                ? integerDigits.lowerBound + offset : fractionDigits.lowerBound + offset - integerDigits.count
            return UInt64(bytes[position] - UInt8(ascii: "0"))
        }
        var significant = count
        while significant > 0, digit(significant - 1) == 0 { significant -= 1 }
        if significant == 0 { return .int(0) }
        var scale = exponent - fractionDigits.count + (count - significant)
        guard scale >= 0 else { return nil }
        var magnitude: UInt64 = 0
        for offset in 0..<significant {
            let (multiplied, overflow1) = magnitude.multipliedReportingOverflow(by: 10)
            let (added, overflow2) = multiplied.addingReportingOverflow(digit(offset))
            if overflow1 || overflow2 { return nil }
            magnitude = added
        }
        while scale > 0 {
            let (multiplied, overflow) = magnitude.multipliedReportingOverflow(by: 10)
            if overflow { return nil }
            magnitude = multiplied
            scale -= 1
        }
        if negative {
            guard magnitude <= UInt64(Int.max) + 1 else { return nil }
            return .int(magnitude == UInt64(Int.max) + 1 ? Int.min : -Int(magnitude))
        }
        if let integer = Int(exactly: magnitude) { return .int(integer) }
        return .uint(magnitude)
    }

    /// Parses a validated, non-negative integer literal above `Int.max`, or returns `nil` when it is
    /// negative or overflows `UInt64`.
    private static func parseUInt64(_ bytes: [UInt8], _ range: Range<Int>) -> UInt64? {
        guard bytes[range.lowerBound] != UInt8(ascii: "-") else { return nil }
        var value: UInt64 = 0
        for index in range {
            let (multiplied, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (added, overflow2) = multiplied.addingReportingOverflow(UInt64(bytes[index] - UInt8(ascii: "0")))
            if overflow1 || overflow2 { return nil }
            value = added
        }
        return value
    }

    private func isDigit() -> Bool {
        self.index < self.bytes.count && (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self.bytes[self.index])
    }

    /// Parses a validated integer literal, or returns `nil` when it overflows `Int`.
    private static func parseInt(_ bytes: [UInt8], _ range: Range<Int>) -> Int? {
        var index = range.lowerBound
        let negative = bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        var value = 0
        while index < range.upperBound {
            let digit = Int(bytes[index] - UInt8(ascii: "0"))
            let (multiplied, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (added, overflow2) =
                negative ? multiplied.subtractingReportingOverflow(digit) : multiplied.addingReportingOverflow(digit)
            if overflow1 || overflow2 { return nil }
            value = added
            index += 1
        }
        return value
    }
}
