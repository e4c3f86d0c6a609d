import CoatyModel
import FoundationEssentials

/// Parses JSON text into a value.
func parseJSON(_ text: String) throws -> AnyCodable {
    try JSONDecoder().decode(AnyCodable.self, from: Data(text.utf8))
}

/// Decodes `type` from JSON text.
func decodeJSON<Value: Decodable>(_ type: Value.Type, _ text: String) throws -> Value {
    try JSONDecoder().decode(type, from: Data(text.utf8))
}

/// Encodes a value and parses the result back, for comparing wire forms independent of key order.
func encodeJSON<Value: Encodable>(_ value: Value) throws -> AnyCodable {
    try JSONDecoder().decode(AnyCodable.self, from: JSONEncoder().encode(value))
}
