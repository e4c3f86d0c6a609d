import CoatyModel
import Foundation
import Synchronization
import Testing

/// A node whose child is set after both exist, through a mutable box: the one way immutable objects
/// can end up in a strong reference cycle.
final class LoopNode: CoatyObject, @unchecked Sendable {
    override class var objectType: String { "com.example.LoopNode" }
    override class var propertyKeys: Set<String> { ["child"] }

    final class Box: Sendable {
        let child = Mutex<CoatyObject?>(nil)
    }

    let box = Box()

    init(name: String) {
        super.init(name: name)
    }

    required init(from decoder: any Decoder) throws {
        try super.init(from: decoder)
    }

    override func encode(to encoder: any Encoder) throws {
        try super.encode(to: encoder)
        try encoder.encodePropertyIfPresent(self.box.child.withLock { $0 }, forKey: "child")
    }
}

/// A plain class cycle written by synthesized `Encodable`.
private final class SelfChain: Encodable, @unchecked Sendable {
    var next: SelfChain?
}

/// A value that contains itself is an error, never a stack overflow.
struct EncodingCycleTests {
    @Test func objectThatContainsItselfIsAnErrorNamingTheCycle() throws {
        let a = LoopNode(name: "a")
        let b = LoopNode(name: "b")
        a.box.child.withLock { $0 = b }
        b.box.child.withLock { $0 = a }
        defer { a.box.child.withLock { $0 = nil } }
        #expect {
            try CoatyJSONEncoder().encode(a)
        } throws: { error in
            guard case EncodingError.invalidValue(_, let context)? = error as? EncodingError else { return false }
            return context.debugDescription.contains("strong reference cycle")
                && context.debugDescription.contains("'\(a.objectID)'")
                && context.debugDescription.contains("'\(b.objectID)'")
        }
        // Inside an event, and through a synthesized property, too.
        struct Event: Encodable { let object: CoatyObject }
        #expect(throws: EncodingError.self) { try CoatyJSONEncoder().encode(Event(object: b)) }
        #expect(throws: EncodingError.self) { try AnyCodable(encoding: [a]) }
        // The graph encoder writes references, and reports the strong cycle as before.
        #expect(throws: EncodingError.self) { try ObjectGraphEncoder().encode(a) }
    }

    @Test func classCycleWrittenBySynthesizedEncodableIsAnError() throws {
        let chain = SelfChain()
        chain.next = chain
        defer { chain.next = nil }
        #expect {
            try CoatyJSONEncoder().encode(chain)
        } throws: { error in
            "\(error)".contains("nest deeper than 512")
        }
    }

    @Test func deepButFiniteNestingIsStillWritten() throws {
        var head = LoopNode(name: "0")
        for index in 1..<200 {
            let node = LoopNode(name: "\(index)")
            node.box.child.withLock { $0 = head }
            head = node
        }
        let json = try AnyCodable(json: CoatyJSONEncoder().encode(head))
        var depth = 0
        var current: AnyCodable? = json
        while let next = current?["child"] {
            depth += 1
            current = next
        }
        #expect(depth == 199)
    }
}
