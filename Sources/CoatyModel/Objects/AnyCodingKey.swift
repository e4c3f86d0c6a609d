/// A coding key for any string, used for custom properties and dynamic containers.
package struct AnyCodingKey: CodingKey, Hashable, Sendable {
    package var stringValue: String
    package var intValue: Int?

    package init(_ string: String) {
        self.stringValue = string
        self.intValue = nil
    }

    package init(index: Int) {
        self.stringValue = "Index \(index)"
        self.intValue = index
    }

    package init?(stringValue: String) {
        self.init(stringValue)
    }

    package init?(intValue: Int) {
        self.stringValue = String(intValue)
        self.intValue = intValue
    }
}
