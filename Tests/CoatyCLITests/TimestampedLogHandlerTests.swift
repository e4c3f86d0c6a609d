import CoatyCore
import Foundation
import Testing

@testable import CoatyCLI

/// `coaty broker`'s log lines start with their time in ISO 8601 UTC.
struct TimestampedLogHandlerTests {
    @Test func aLineStartsWithItsUTCTimeInMilliseconds() {
        let entry = CoatyLogEntry(
            label: "coaty.broker",
            level: .notice,
            message: "client dropped",
            metadata: ["client": "c1"]
        )
        let line = TimestampedLogHandler.line(for: entry, at: Date(timeIntervalSince1970: 1_795_000_000.25))
        #expect(line == "2026-11-18T11:06:40.250Z notice coaty.broker: client dropped client=c1")
    }
}
