#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension CoatyObject {
    /// The object's JSON form as a value: exactly what it encodes to on the wire.
    ///
    /// Filters evaluate objects through this value, so custom properties and subclass fields are all
    /// addressable by their wire names (`"objectId"`, not `objectID`).
    ///
    /// - Throws: `EncodingError` if the object cannot be encoded, for example because a custom property
    ///   holds a non-finite number.
    public var jsonValue: AnyCodable {
        get throws {
            try CoatyJSONEncoder().encodeValue(self)
        }
    }
}
