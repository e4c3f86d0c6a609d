/// A filter with ordering and paging, sent as the `objectFilter` of a Query event:
/// `{"conditions"?: …, "orderByProperties"?: [[property, "Asc"|"Desc"]…], "skip"?: n, "take"?: n}`.
///
/// ```swift
/// let filter = ObjectFilter(
///     conditions: .and([.init("floor", .between(6, 8)), .init("name", .like("Thing%"))]),
///     orderBy: [("name", .ascending)],
///     take: 10
/// )
/// let page = filter.apply(to: objects)
/// ```
///
/// Decoding validates exactly as coaty-js's `isObjectFilterValid` (see ``ContextFilter`` for the
/// conditions), with one deliberate restriction: `skip` and `take` must be integers (coaty-js accepts
/// any number, but a fractional count has no meaning).
public struct ObjectFilter: Sendable, Hashable {
    /// The conditions; `nil` matches everything.
    public var conditions: FilterConditions?
    /// The properties to order the results by, most significant first; `nil` keeps the input order.
    public var orderByProperties: [FilterOrdering]?
    /// The number of matching objects to skip after ordering; `nil` or negative skips none.
    public var skip: Int?
    /// The maximum number of objects to return after skipping; `nil` or `0` means no limit (as in
    /// coaty-js's in-memory adapter), a negative value returns nothing.
    public var take: Int?

    /// Creates a filter.
    ///
    /// - Parameters:
    ///   - conditions: The conditions; `nil` matches everything.
    ///   - orderByProperties: The orderings, most significant first.
    ///   - skip: The number of matching objects to skip.
    ///   - take: The maximum number of objects to return; `0` means no limit.
    public init(
        conditions: FilterConditions? = nil,
        orderByProperties: [FilterOrdering]? = nil,
        skip: Int? = nil,
        take: Int? = nil
    ) {
        self.conditions = conditions
        self.orderByProperties = orderByProperties
        self.skip = skip
        self.take = take
    }

    /// Creates a filter, giving the orderings as pairs.
    ///
    /// - Parameters:
    ///   - conditions: The conditions; `nil` matches everything.
    ///   - orderBy: Pairs of property and direction, most significant first, e.g.
    ///     `[("name", .ascending)]`.
    ///   - skip: The number of matching objects to skip.
    ///   - take: The maximum number of objects to return; `0` means no limit.
    public init(
        conditions: FilterConditions? = nil,
        orderBy: [(FilterProperty, FilterSortOrder)],
        skip: Int? = nil,
        take: Int? = nil
    ) {
        self.init(
            conditions: conditions,
            orderByProperties: orderBy.map { FilterOrdering($0.0, $0.1) },
            skip: skip,
            take: take
        )
    }

    /// The conditions alone, as a ``ContextFilter``.
    public var contextFilter: ContextFilter { ContextFilter(conditions: self.conditions) }
}

extension ObjectFilter: Codable {
    private enum CodingKeys: String, CodingKey {
        case conditions
        case orderByProperties
        case skip
        case take
    }

    /// Decodes and validates a filter object; unknown keys are ignored.
    ///
    /// - Throws: `DecodingError` naming the field and the reason: the filter is not an object,
    ///   `conditions` is `null` or invalid, `skip` or `take` is not an integer (e.g. `"10"`),
    ///   `orderByProperties` is not an array of `[property, "Asc"|"Desc"]`.
    public init(from decoder: any Decoder) throws {
        let container = try FilterParser.filterContainer(decoder, keyedBy: CodingKeys.self)
        self.conditions = try FilterParser.decodeConditions(container, forKey: .conditions)
        self.skip = try FilterParser.decodeCount(container, forKey: .skip)
        self.take = try FilterParser.decodeCount(container, forKey: .take)
        if container.contains(.orderByProperties) {
            let value = try container.decode(AnyCodable.self, forKey: .orderByProperties)
            let path = container.codingPath + [CodingKeys.orderByProperties]
            guard case .array(let elements) = value else {
                throw FilterParser.error(path, "orderByProperties must be an array, found \(FilterParser.kind(value))")
            }
            self.orderByProperties = try elements.enumerated().map { index, element in
                try FilterParser.ordering(element, at: path + [FilterParser.IndexKey(index)])
            }
        } else {
            self.orderByProperties = nil
        }
    }

    /// Encodes the filter, omitting absent fields.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(self.conditions, forKey: .conditions)
        try container.encodeIfPresent(self.orderByProperties, forKey: .orderByProperties)
        try container.encodeIfPresent(self.skip, forKey: .skip)
        try container.encodeIfPresent(self.take, forKey: .take)
    }
}
