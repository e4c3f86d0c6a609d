/// Metatypes of generic types that the coders compare a value's type against on every value.
///
/// Spelling `[String: AnyCodable].self` in unspecialised generic code looks the dictionary's metadata
/// up in the runtime's cache each time; held here, it is looked up once.
enum JSONKnownTypes {
    static let anyCodableDictionary: any Any.Type = [String: AnyCodable].self
}
