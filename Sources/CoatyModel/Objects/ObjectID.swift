import Synchronization

#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// The identity of a Coaty object, of an agent (its identity's object id) or of a request (a correlation id).
///
/// Coaty generates lower-case UUID v4 strings, but coaty-js accepts any non-empty string as an id and
/// compares ids as exact, case-sensitive strings; so does this type. ``random()`` makes a lower-case
/// UUID v4 as coaty-js does.
public struct ObjectID: Sendable, Hashable, Codable, Comparable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    /// The id as it appears on the wire.
    public let rawValue: String

    /// Wraps an id string. Coaty requires ids to be non-empty; validation happens when objects are decoded.
    public init(_ rawValue: String) {
        self.rawValue = rawValue
    }

    /// Wraps a UUID, lower-cased as Coaty writes UUIDs.
    public init(_ uuid: UUID) {
        self.rawValue = uuid.uuidString.lowercased()
    }

    /// Wraps an id string literal.
    public init(stringLiteral value: String) {
        self.rawValue = value
    }

    /// A new random lower-case UUID v4.
    ///
    /// Written directly from 128 random bits: every request makes one (its correlation id), and going
    /// through `UUID().uuidString.lowercased()` costs a formatted print and two string copies. The bits
    /// come from the kernel's generator through a shared pool (see `RandomBytePool`).
    public static func random() -> ObjectID {
        var (high, low) = RandomBytePool.shared.withLock { $0.nextPair() }
        high = (high & ~0xF000) | 0x4000  // version 4 (bits 48–51 of the first half)
        low = (low & ~(0xC000 << 48)) | (0x8000 << 48)  // RFC 4122 variant (10xx)
        let text = String(unsafeUninitializedCapacity: 36) { buffer in
            var index = 0
            func put(_ value: UInt64, nibbles: Int) {
                for shift in stride(from: (nibbles - 1) * 4, through: 0, by: -4) {
                    let nibble = UInt8(truncatingIfNeeded: (value >> UInt64(shift)) & 0xF)
                    buffer[index] = nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") - 10 + nibble
                    index += 1
                }
            }
            func dash() {
                buffer[index] = UInt8(ascii: "-")
                index += 1
            }
            put(high >> 32, nibbles: 8)
            dash()
            put((high >> 16) & 0xFFFF, nibbles: 4)
            dash()
            put(high & 0xFFFF, nibbles: 4)
            dash()
            put(low >> 48, nibbles: 4)
            dash()
            put(low & 0xFFFF_FFFF_FFFF, nibbles: 12)
            return index
        }
        return ObjectID(text)
    }

    /// The id as a UUID, if it is one.
    public var uuid: UUID? { UUID(uuidString: self.rawValue) }

    /// Decodes the id string.
    ///
    /// - Throws: `DecodingError` if the value is not a string.
    public init(from decoder: any Decoder) throws {
        self.rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    /// Encodes the id string verbatim.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(self.rawValue)
    }

    /// Orders ids by their raw strings.
    public static func < (lhs: ObjectID, rhs: ObjectID) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The raw id.
    public var description: String { self.rawValue }
}
