import Testing

@testable import CoatyCommunication

struct InlineListTests {
    @Test func keepsOrderWhileElementsComeAndGo() {
        func elements(_ list: InlineList<Int>) -> [Int] {
            var result: [Int] = []
            list.forEach { result.append($0) }
            return result
        }
        var list = InlineList(1)
        list.append(2)
        list.append(3)
        #expect(elements(list) == [1, 2, 3])
        var emptied = [list.removeAll(1)]
        #expect(elements(list) == [2, 3])
        emptied += [list.removeAll(3), list.removeAll(7)]
        #expect(elements(list) == [2])
        emptied.append(list.removeAll(2))
        #expect(emptied == [false, false, false, true])
        #expect(list.isEmpty && Array(list).isEmpty)
        let emptyAgain = list.removeAll(2)
        #expect(emptyAgain)
    }

    @Test func startsEmptyAndSortsInPlace() {
        var list = InlineList<Int>()
        #expect(list.isEmpty)
        list.sort(by: <)
        #expect(Array(list).isEmpty)
        list.append(5)
        list.sort(by: <)
        #expect(!list.isEmpty && Array(list) == [5])
        for element in [3, 9, 1] { list.append(element) }
        #expect(Array(list) == [5, 3, 9, 1])
        list.sort(by: <)
        #expect(Array(list) == [1, 3, 5, 9])
        let emptied = list.removeAll(1)
        #expect(!emptied)
        #expect(Array(list) == [3, 5, 9])
    }

    @Test func containsLooksAtTheInlineElementAndTheRest() {
        var list = InlineList<Int>()
        #expect(!list.contains { _ in true })
        list.append(4)
        #expect(list.contains { $0 == 4 } && !list.contains { $0 == 6 })
        list.append(6)
        list.append(8)
        #expect(list.contains { $0 == 8 } && !list.contains { $0 > 8 })
    }
}
