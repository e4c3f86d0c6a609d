import CoatyModel
import Foundation
import Testing

struct ObjectIDTests {
    @Test func randomIDsAreLowerCaseVersion4UUIDs() throws {
        let ids = (0..<2_000).map { _ in ObjectID.random().rawValue }
        #expect(Set(ids).count == ids.count)
        let hex = Set("0123456789abcdef")
        for id in ids {
            let characters = Array(id)
            #expect(characters.count == 36)
            #expect([8, 13, 18, 23].allSatisfy { characters[$0] == "-" })
            #expect(
                characters.enumerated().allSatisfy { [8, 13, 18, 23].contains($0.offset) || hex.contains($0.element) }
            )
            #expect(characters[14] == "4", "version nibble of \(id)")
            #expect("89ab".contains(characters[19]), "variant nibble of \(id)")
            let uuid = try #require(UUID(uuidString: id))
            #expect(uuid.uuidString.lowercased() == id)
        }
        // Every position other than the fixed version and variant bits varies.
        for position in 0..<36 where ![8, 13, 14, 18, 23].contains(position) {
            #expect(Set(ids.map { Array($0)[position] }).count > 1, "position \(position) never varies")
        }
    }

    /// The ids come from a shared pool of kernel random bytes; concurrent callers never get the same bits.
    @Test func concurrentRandomIDsAreDistinct() async {
        let ids = await withTaskGroup(of: [String].self) { group in
            for _ in 0..<8 { group.addTask { (0..<1_000).map { _ in ObjectID.random().rawValue } } }
            return await group.reduce(into: []) { $0 += $1 }
        }
        #expect(ids.count == 8_000)
        #expect(Set(ids).count == ids.count)
    }
}
