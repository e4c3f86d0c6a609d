import CoatyCore
import Testing

struct ErrorDescriptionTests {
    private struct Cause: Error, CustomStringConvertible {
        var description: String { "connect(127.0.0.1:1) failed: Connection refused (errno 111)" }
    }

    @Test func aCauseTheMessageDoesNotQuoteIsAdded() {
        let text = describeError(
            code: "connect failed",
            message: "cannot connect to mqtt://127.0.0.1:1",
            underlying: Cause()
        )
        #expect(
            text
                == "connect failed: cannot connect to mqtt://127.0.0.1:1 (connect(127.0.0.1:1) failed: Connection refused (errno 111))"
        )
    }

    @Test func aCauseTheMessageQuotesAlreadyIsNotRepeated() {
        let text = describeError(
            code: "connect failed",
            message: "cannot connect to mqtt://127.0.0.1:1: \(Cause())",
            underlying: Cause()
        )
        #expect(
            text
                == "connect failed: cannot connect to mqtt://127.0.0.1:1: connect(127.0.0.1:1) failed: Connection refused (errno 111)"
        )
    }

    @Test func withoutACauseItIsCodeAndMessage() {
        #expect(describeError(code: "timed out", message: "no answer", underlying: nil) == "timed out: no answer")
    }
}
