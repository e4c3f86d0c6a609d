/// A coding path stored as a linked list, so that nesting costs no array copies; the array is built only
/// when someone asks for it (usually to report an error).
indirect enum CodingPathNode {
    case root
    case key(String, CodingPathNode)
    case index(Int, CodingPathNode)
    case prefix([any CodingKey])

    var path: [any CodingKey] {
        switch self {
        case .root: return []
        case .prefix(let keys): return keys
        case .key(let key, let parent): return parent.path + [AnyCodingKey(key)]
        case .index(let index, let parent): return parent.path + [AnyCodingKey(index: index)]
        }
    }
}
