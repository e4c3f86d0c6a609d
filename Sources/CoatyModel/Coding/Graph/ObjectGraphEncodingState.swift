import Synchronization

/// The bookkeeping of one graph encode: the table of objects and the strong edges between them.
final class ObjectGraphEncodingState: Sendable {
    private struct State {
        var indices: [ObjectIdentifier: Int] = [:]
        var objects: [CoatyObject] = []
        var current = 0
        var strongEdges: [Int: [Int]] = [:]
    }

    private let state = Mutex(State())

    func index(for object: CoatyObject) -> Int {
        self.state.withLock { state in
            if let index = state.indices[ObjectIdentifier(object)] { return index }
            state.objects.append(object)
            state.indices[ObjectIdentifier(object)] = state.objects.count - 1
            return state.objects.count - 1
        }
    }

    func object(at index: Int) -> CoatyObject? {
        self.state.withLock { index < $0.objects.count ? $0.objects[index] : nil }
    }

    func setCurrent(_ index: Int) {
        self.state.withLock { $0.current = index }
    }

    /// Writes `{"$ref": n}` (plus `objectId` for links) for `object`, adding it to the table.
    func encodeReference(to object: CoatyObject, strong: Bool, encoder: any Encoder) throws {
        let index = self.index(for: object)
        if strong {
            self.state.withLock { $0.strongEdges[$0.current, default: []].append(index) }
        }
        var container = encoder.container(keyedBy: ObjectFamily.DiscriminatorKeys.self)
        try container.encode(index, forKey: .reference)
        if !strong {
            var extra = encoder.container(keyedBy: AnyCodingKey.self)
            try extra.encode(object.objectID, forKey: AnyCodingKey("objectId"))
        }
    }

    /// A cycle of strong references, as table indices, if there is one.
    func strongCycle() -> [Int]? {
        let edges = self.state.withLock { $0.strongEdges }
        var color: [Int: Int] = [:]  // 1 = on the stack, 2 = done
        var stack: [Int] = []
        func visit(_ node: Int) -> [Int]? {
            color[node] = 1
            stack.append(node)
            for next in edges[node] ?? [] {
                if color[next] == 1, let start = stack.firstIndex(of: next) { return Array(stack[start...]) + [next] }
                if color[next] == nil, let cycle = visit(next) { return cycle }
            }
            stack.removeLast()
            color[node] = 2
            return nil
        }
        for node in edges.keys.sorted() where color[node] == nil {
            if let cycle = visit(node) { return cycle }
        }
        return nil
    }
}
