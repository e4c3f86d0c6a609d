/// One entry of an ``ObjectFilter``'s `orderByProperties`, sent as `[property, "Asc" | "Desc"]`.
public struct FilterOrdering: Sendable, Hashable {
    /// The property to order by. Unlike a condition's property, the empty string is valid here.
    public var property: FilterProperty
    /// The direction.
    public var order: FilterSortOrder

    /// Creates an ordering.
    ///
    /// - Parameters:
    ///   - property: The property to order by.
    ///   - order: The direction. Defaults to ascending.
    public init(_ property: FilterProperty, _ order: FilterSortOrder = .ascending) {
        self.property = property
        self.order = order
    }
}

extension FilterOrdering: Codable {
    /// Decodes `[property, "Asc" | "Desc"]`.
    ///
    /// - Throws: `DecodingError.dataCorrupted` naming the reason if the value has another shape.
    public init(from decoder: any Decoder) throws {
        let value = try decoder.singleValueContainer().decode(AnyCodable.self)
        self = try FilterParser.ordering(value, at: decoder.codingPath)
    }

    /// Encodes `[property, "Asc" | "Desc"]`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        try container.encode(self.property)
        try container.encode(self.order)
    }
}
