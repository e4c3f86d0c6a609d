#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The JSON tree an encoding with ``JSONTreeEncoder`` builds, written out by ``JSONWriter``.
///
/// Containers are reference boxes, so a container handed out by an encoder keeps writing into the
/// tree after the call that created it returned, as `Encoder`'s containers must.
enum EncodedJSON {
    case null
    case bool(Bool)
    case integer(Int64)
    case unsigned(UInt64)
    case double(Double)
    case float(Float)
    case string(String)
    /// A number written as is (a `Decimal`'s description).
    case number(String)
    case array(EncodedArray)
    case object(EncodedObject)
    /// The value of a nested encoder (`superEncoder()` and friends), taken when the tree is read, since
    /// the encoder may still be written to after it was handed out.
    case deferred(JSONTreeEncoder)

    /// The value with deferred encoders replaced by what they encoded.
    var resolved: EncodedJSON {
        if case .deferred(let encoder) = self { return encoder.result.resolved }
        return self
    }
}

/// An array under construction.
final class EncodedArray {
    // Unchecked: see `EncodedObject`.
    @exclusivity(unchecked) var elements: [EncodedJSON] = []

    init() {}
}

/// An object under construction. Keys keep the order they were first written in; writing a key again
/// replaces its value, as `JSONEncoder` does.
final class EncodedObject {
    // A class's stored properties are checked for exclusive access at run time, on every access,
    // unless marked unchecked. An encoded tree belongs to the one encoding that builds it, on one
    // thread, and no access here overlaps another, so the checks only cost time (Docs/Benchmarks.md).
    @exclusivity(unchecked) private(set) var keys: [String] = []
    @exclusivity(unchecked) private(set) var values: [EncodedJSON] = []
    /// Positions by key, built once the object is large enough for linear search to cost more.
    @exclusivity(unchecked) private var index: [String: Int]?

    init() {}

    init(uniqueKeys keys: [String], values: [EncodedJSON]) {
        self.keys = keys
        self.values = values
    }

    func set(_ value: EncodedJSON, forKey key: String) {
        if let position = self.position(of: key) {
            self.values[position] = value
            return
        }
        self.keys.append(key)
        self.values.append(value)
        self.index?[key] = self.keys.count - 1
    }

    private func position(of key: String) -> Int? {
        if let index = self.index { return index[key] }
        if self.keys.count < 16 { return self.keys.firstIndex(of: key) }
        var index: [String: Int] = [:]
        index.reserveCapacity(self.keys.count * 2)
        for (position, key) in self.keys.enumerated() { index[key] = position }
        self.index = index
        return index[key]
    }
}

extension EncodedJSON {
    /// The tree as an ``AnyCodable`` value, with numbers as ``JSONParser`` would read them back.
    var anyCodable: AnyCodable {
        switch self.resolved {
        case .null: return .null
        case .bool(let value): return .bool(value)
        case .integer(let value): return Int(exactly: value).map(AnyCodable.int) ?? .double(Double(value))
        case .unsigned(let value): return Int(exactly: value).map(AnyCodable.int) ?? .uint(value)
        case .double(let value): return Self.reread(JSONWriter.format(value), value)
        case .float(let value): return Self.reread(JSONWriter.format(value), Double(value))
        case .string(let value): return .string(value)
        case .number(let text): return (try? JSONParser.parse(text.utf8)) ?? .string(text)
        case .array(let array): return .array(array.elements.map(\.anyCodable))
        case .object(let object):
            var members: [String: AnyCodable] = [:]
            members.reserveCapacity(object.keys.count)
            for (key, value) in zip(object.keys, object.values) { members[key] = value.anyCodable }
            return .object(members)
        case .deferred: return .null  // `resolved` never returns `.deferred`.
        }
    }

    /// A number as ``JSONParser`` reads its written form back (`2.0` is written `2` and read as `int`).
    private static func reread(_ text: String, _ value: Double) -> AnyCodable {
        (try? JSONParser.parse(text.utf8)) ?? .double(value)
    }
}
