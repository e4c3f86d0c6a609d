import Foundation
import Testing

@testable import CoatyModel

/// ``CoatyJSONEncoder`` writes what Foundation's `JSONEncoder` writes, value for value.
struct JSONEncodingTests {
    private func ours(_ value: some Encodable) throws -> String {
        String(decoding: try CoatyJSONEncoder().encode(value), as: UTF8.self)
    }

    private func foundation(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    @Test func numbersAreWrittenByteForByteAsJSONEncoderWritesThem() throws {
        var generator = SystemRandomNumberGenerator()
        var doubles: [Double] = [
            0, -0.0, 1, -1, 2, 0.1, 1.5, 1e-5, 1e15, 1e16, 1e20, 1e21, 9_007_199_254_740_992, .leastNonzeroMagnitude,
            .greatestFiniteMagnitude, -.greatestFiniteMagnitude, .leastNormalMagnitude, 123_456.789,
        ]
        for _ in 0..<20_000 {
            let random = Double(bitPattern: generator.next())
            if random.isFinite { doubles.append(random) }
            doubles.append(Double.random(in: -1e6...1e6, using: &generator))
            doubles.append(Double(Int64.random(in: -(1 << 60)...(1 << 60), using: &generator)))
        }
        // One array each: the whole text must match.
        #expect(try self.ours(doubles) == self.foundation(doubles))
        var floats: [Float] = [0, 1.5, 0.1, 3, 1e-7, 16_777_216, 1e20, .greatestFiniteMagnitude]
        for _ in 0..<20_000 {
            let random = Float(bitPattern: UInt32.random(in: 0...UInt32.max, using: &generator))
            if random.isFinite { floats.append(random) }
        }
        #expect(try self.ours(floats) == self.foundation(floats))
        let integers: [Int64] = [0, 7, 10, -10, 99, Int64.min, Int64.max, -1]
        #expect(try self.ours(integers) == self.foundation(integers))
        let unsigned: [UInt64] = [0, 9, 10, UInt64.max]
        #expect(try self.ours(unsigned) == self.foundation(unsigned))
        let small: [Int8] = [Int8.min, Int8.max]
        #expect(try self.ours(small) == self.foundation(small))
    }

    @Test func stringsAreEscapedByteForByteAsJSONEncoderEscapesThem() throws {
        let ascii = String((0..<128).map { Character(Unicode.Scalar(UInt8($0))) })
        let strings = [
            ascii, "é😀\u{2028}\u{2029}\u{7f}/\\\"", "", "plain", "a/b", String(repeating: "\u{1}x", count: 100),
        ]
        #expect(try self.ours(strings) == self.foundation(strings))
    }

    @Test func nonFiniteNumbersAreRefusedWithTheirPath() throws {
        struct Reading: Encodable { let values: [Double] }
        #expect {
            _ = try CoatyJSONEncoder().encode(Reading(values: [1, .nan]))
        } throws: { error in
            guard case EncodingError.invalidValue(_, let context) = error else { return false }
            return context.codingPath.map(\.stringValue) == ["values", "Index 1"]
        }
        #expect(throws: EncodingError.self) { _ = try CoatyJSONEncoder().encode(AnyCodable.double(.infinity)) }
        #expect(throws: EncodingError.self) { _ = try CoatyJSONEncoder().encode([Float.nan]) }
        #expect(throws: EncodingError.self) { _ = try CoatyJSONEncoder().encode([Decimal.nan]) }
    }

    @Test func foundationTypesAreWrittenAsJSONEncoderWritesThem() throws {
        struct Mixed: Encodable {
            let data = Data([1, 2, 3, 250])
            let date = Date(timeIntervalSinceReferenceDate: 12.5)
            let url = URL(string: "http://example.com/a?b=c")!
            let decimal = Decimal(string: "12.345")!
            let absent: Int? = nil
            let byNumber = [1: "one", 2: "two"]
            let nested: [[String: [Int?]]] = [["a": [1, nil]]]
        }
        #expect(try AnyCodable(json: self.ours(Mixed())) == AnyCodable(json: self.foundation(Mixed())))
        #expect(try self.ours(Mixed()).contains(#""data":"AQID+g==""#))
        #expect(try !self.ours(Mixed()).contains("absent"))
        #expect(try self.ours(Int?.none) == "null")
    }

    @Test func classHierarchiesNestedContainersAndRepeatedKeys() throws {
        class Base: Encodable {
            enum Keys: String, CodingKey { case shared, base }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: Keys.self)
                try container.encode(1, forKey: .shared)
                try container.encode("base", forKey: .base)
            }
        }
        final class Derived: Base {
            enum MoreKeys: String, CodingKey { case shared, extra, nested, list, parent }
            override func encode(to encoder: any Encoder) throws {
                try super.encode(to: encoder)
                var container = encoder.container(keyedBy: MoreKeys.self)
                try container.encode(2, forKey: .shared)  // written again: the later value wins
                var nested = container.nestedContainer(keyedBy: MoreKeys.self, forKey: .nested)
                try nested.encode(true, forKey: .extra)
                var list = container.nestedUnkeyedContainer(forKey: .list)
                try list.encode(1)
                var inner = list.nestedContainer(keyedBy: MoreKeys.self)
                try inner.encode("x", forKey: .extra)
                try super.encode(to: container.superEncoder())
                try super.encode(to: container.superEncoder(forKey: .parent))
            }
        }
        struct Empty: Encodable { func encode(to encoder: any Encoder) throws {} }
        #expect(try AnyCodable(json: self.ours(Derived())) == AnyCodable(json: self.foundation(Derived())))
        #expect(try self.ours([Empty()]) == self.foundation([Empty()]))
        #expect(try self.ours(Derived()).hasPrefix(#"{"shared":2,"base":"base","nested":{"extra":true}"#))
    }

    /// An encoder handed out by `superEncoder` is written after the call returns, so the parent's tree
    /// keeps it. It must not keep its parent in turn: that cycle leaked every event that carries an
    /// object (the manager encodes objects through `superEncoder(forKey:)`). Its coding path is still
    /// complete.
    @Test func superEncodersAreFreedAndKnowTheirPath() throws {
        final class Watch: @unchecked Sendable {
            weak var keyed: AnyObject?
            weak var unkeyed: AnyObject?
        }
        struct Outer: Encodable {
            let watch: Watch
            let inner: Double
            enum Keys: String, CodingKey { case outer, inner, list }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: Keys.self)
                var nested = container.nestedContainer(keyedBy: Keys.self, forKey: .outer)
                let keyed = nested.superEncoder(forKey: .inner)
                self.watch.keyed = keyed as AnyObject
                var list = container.nestedUnkeyedContainer(forKey: .list)
                let unkeyed = list.superEncoder()
                self.watch.unkeyed = unkeyed as AnyObject
                try "element".encode(to: unkeyed)
                try self.inner.encode(to: keyed)
            }
        }
        let watch = Watch()
        #expect(try self.ours(Outer(watch: watch, inner: 1.5)) == #"{"outer":{"inner":1.5},"list":["element"]}"#)
        #expect(watch.keyed == nil, "the keyed super encoder outlived the encoding")
        #expect(watch.unkeyed == nil, "the unkeyed super encoder outlived the encoding")
        #expect {
            _ = try CoatyJSONEncoder().encode(Outer(watch: watch, inner: .nan))
        } throws: { error in
            guard case EncodingError.invalidValue(_, let context) = error else { return false }
            return context.codingPath.map(\.stringValue) == ["outer", "inner"]
        }
    }

    @Test func everyCapturedObjectEncodesToTheSameJSONAsWithJSONEncoder() throws {
        for captured in try Fixtures.capturedObjects() {
            let object = try CoatyJSONDecoder().decode(CoatyObject.self, fromValue: captured.json)
            let event = TestAdvertise(object: object, privateData: ["n": 1, "list": [nil, 1.5, "x"]])
            let ourJSON = try AnyCodable(json: self.ours(event))
            #expect(ourJSON == (try AnyCodable(json: self.foundation(event))))
            #expect(try CoatyJSONEncoder().encodeValue(event) == ourJSON)
            #expect(try object.jsonValue == ourJSON["object"])
        }
    }

    @Test func keysKeepTheOrderTheyWereEncodedIn() throws {
        struct Ordered: Encodable {
            let zebra = 1
            let apple = 2
            let mango = 3
        }
        #expect(try self.ours(Ordered()) == #"{"zebra":1,"apple":2,"mango":3}"#)
    }

    @Test func manyKeysInOneContainerStayUnique() throws {
        let dictionary = Dictionary(uniqueKeysWithValues: (0..<2_000).map { ("key\($0)", $0) })
        let parsed = try AnyCodable(json: self.ours(dictionary))
        #expect(parsed.objectValue?.count == 2_000)
        #expect(parsed["key1999"] == 1999)
    }
}
