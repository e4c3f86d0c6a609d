extension Array {
    /// Stores `element` in a slot that `free` lists, or appends it; returns its index. The node arenas
    /// of ``SubscriptionTrie`` and ``RetainedTopicTree`` reuse the slots of pruned nodes this way.
    mutating func store(_ element: Element, reusing free: inout [Int]) -> Int {
        if let index = free.popLast() {
            self[index] = element
            return index
        }
        self.append(element)
        return self.count - 1
    }
}
