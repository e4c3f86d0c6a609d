import Testing

@testable import CoatyCLI

/// `coaty broker --data-dir` and `--sync-interval`: parsed, validated and documented in the help.
struct BrokerPersistenceOptionsTests {
    @Test func dataDirectoryAndSyncIntervalAreParsed() throws {
        var expected = BrokerOptions()
        #expect(expected.dataDirectory == nil && expected.syncIntervalSeconds == 1)
        expected.dataDirectory = "/var/lib/coaty"
        expected.syncIntervalSeconds = 0.25
        #expect(
            try Command(parsing: ["broker", "--data-dir", "/var/lib/coaty", "--sync-interval=0.25"])
                == .broker(expected)
        )
    }

    @Test(arguments: ["0", "-1", "x", "3601"])
    func anInvalidSyncIntervalIsAUsageError(_ value: String) {
        #expect(
            throws: UsageError(
                "'--sync-interval' must be a number of seconds from 0 to 3600, not '\(value)'",
                subcommand: "broker"
            )
        ) {
            try Command(parsing: ["broker", "--data-dir", "d", "--sync-interval", value])
        }
    }

    @Test func aSyncIntervalNeedsADataDirectory() {
        #expect(throws: UsageError("'--sync-interval' needs '--data-dir'", subcommand: "broker")) {
            try Command(parsing: ["broker", "--sync-interval", "2"])
        }
    }

    @Test func theHelpNamesTheOptions() {
        #expect(Help.broker.contains("--data-dir <dir>"))
        #expect(Help.broker.contains("--sync-interval <seconds>"))
    }
}
