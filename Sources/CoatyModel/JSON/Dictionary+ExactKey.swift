extension Dictionary where Key == String {
    /// The index of the entry whose key has exactly the code points of `key`, or `nil`.
    ///
    /// A plain lookup also finds a key that is only canonically equivalent (`é` for `e` + U+0301), since
    /// `String` compares that way; JSON and JavaScript keep such keys apart.
    func exactIndex(forKey key: String) -> Index? {
        guard let index = self.index(forKey: key), self[index].key.utf8.elementsEqual(key.utf8) else { return nil }
        return index
    }
}
