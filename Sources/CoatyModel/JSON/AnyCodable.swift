/// A JSON value of any shape: the type of free-form data such as `privateData`, Call parameters
/// and results, and the custom properties of objects.
///
/// A number's case follows its value, as JavaScript sees it, not its spelling: an integral value that
/// fits in `Int` is ``int(_:)`` (`1`, `1.0`, `1e3`), one above `Int.max` that fits in `UInt64` is
/// ``uint(_:)`` (kept exact: `18446744073709551615`), every other number is ``double(_:)``. So every
/// decoder reads the same text into the same value: ``CoatyJSONDecoder``, Foundation's `JSONDecoder`
/// (which cannot tell `1.0` from `1`) and JavaScript's `JSON.parse`, for which they are one number. A
/// value printed (``description``) is its compact JSON text. Build values with literals:
///
/// ```swift
/// let parameters: AnyCodable = ["color": "red", "luminosity": 0.75, "tags": [1, 2], "extra": nil]
/// ```
///
/// ## Decoding without failed attempts
///
/// A `Decoder` cannot tell which kind of JSON value comes next, so a generic `init(from:)` must try
/// kinds one after another and catch the failures. ``CoatyJSONDecoder`` avoids that entirely: it parses
/// the bytes into `AnyCodable` first and hands values out directly, so no error is thrown on valid
/// input. With another decoder (for example Foundation's `JSONDecoder`) `init(from:)` still works, trying
/// `null`, then string, integer, floating point, boolean, array and object in that order.
///
/// A value built by hand may hold an integral ``double(_:)`` such as `.double(2)`: it is written `2`,
/// as `JSON.stringify` writes it, and reads back as ``int(_:)``.
public enum AnyCodable: Sendable, Hashable {
    /// JSON `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number with an integral value that fits in `Int`.
    case int(Int)
    /// A number with an integral value above `Int.max` that fits in `UInt64`, kept exact.
    case uint(UInt64)
    /// Any other number.
    case double(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([AnyCodable])
    /// An object.
    case object([String: AnyCodable])
}

extension AnyCodable {
    /// The value if this is a string.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The value if this is an integer that fits in `Int`, or a double with an exact integer value.
    public var intValue: Int? {
        switch self {
        case .int(let value): return value
        case .double(let value): return Int(exactly: value)
        default: return nil
        }
    }

    /// The value if this is a number (integers are converted, to the nearest `Double` for those beyond
    /// 2^53).
    public var doubleValue: Double? {
        switch self {
        case .int(let value): return Double(value)
        case .uint(let value): return Double(value)
        case .double(let value): return value
        default: return nil
        }
    }

    /// The value if this is a boolean.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The elements if this is an array.
    public var arrayValue: [AnyCodable]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The members if this is an object.
    public var objectValue: [String: AnyCodable]? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// Whether this is JSON `null`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The member named `key` if this is an object, else `nil`.
    public subscript(key: String) -> AnyCodable? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    /// The element at `index` if this is an array and the index is in range, else `nil`.
    public subscript(index: Int) -> AnyCodable? {
        if case .array(let elements) = self, elements.indices.contains(index) { return elements[index] }
        return nil
    }
}

extension AnyCodable: ExpressibleByNilLiteral {
    /// Creates JSON `null`.
    public init(nilLiteral: ()) { self = .null }
}

extension AnyCodable: ExpressibleByBooleanLiteral {
    /// Creates a boolean.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension AnyCodable: ExpressibleByIntegerLiteral {
    /// Creates an integer.
    public init(integerLiteral value: Int) { self = .int(value) }
}

extension AnyCodable: ExpressibleByFloatLiteral {
    /// Creates a floating-point number.
    public init(floatLiteral value: Double) { self = .double(value) }
}

extension AnyCodable: ExpressibleByStringLiteral {
    /// Creates a string.
    public init(stringLiteral value: String) { self = .string(value) }
}

extension AnyCodable: ExpressibleByArrayLiteral {
    /// Creates an array.
    public init(arrayLiteral elements: AnyCodable...) { self = .array(elements) }
}

extension AnyCodable: ExpressibleByDictionaryLiteral {
    /// Creates an object; a repeated key keeps its last value.
    public init(dictionaryLiteral elements: (String, AnyCodable)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

extension AnyCodable: CustomStringConvertible {
    /// The compact JSON text of the value, as ``jsonString``.
    public var description: String { self.jsonString }
}
