/// A decoder that ``ObjectFamily`` hands to the class it chose for an object, so that
/// ``CoatyObject/init(from:)`` knows it need not check whether the object keeps its class.
///
/// Our own decoder carries a flag (``JSONValueDecoder/isObjectEntry``); another decoder, such as
/// Foundation's `JSONDecoder`, is wrapped in this one, which only forwards. Containers come from the
/// wrapped decoder, so the objects nested in this one are not marked.
struct ChosenClassDecoder: Decoder {
    let base: any Decoder

    var codingPath: [any CodingKey] { self.base.codingPath }
    var userInfo: [CodingUserInfoKey: Any] { self.base.userInfo }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        try self.base.container(keyedBy: type)
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try self.base.unkeyedContainer()
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        try self.base.singleValueContainer()
    }

    /// `decoder`, marked as handed to the class the family chose.
    static func marking(_ decoder: any Decoder) -> any Decoder {
        if let tree = decoder as? JSONValueDecoder { return tree.asObjectEntry }
        if decoder is ChosenClassDecoder { return decoder }
        return ChosenClassDecoder(base: decoder)
    }

    /// Whether `decoder` was marked by ``marking(_:)``.
    static func isMarked(_ decoder: any Decoder) -> Bool {
        if let tree = decoder as? JSONValueDecoder { return tree.isObjectEntry }
        return decoder is ChosenClassDecoder
    }
}
