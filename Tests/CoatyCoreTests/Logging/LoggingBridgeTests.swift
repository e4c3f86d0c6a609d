import CoatyCore
import Synchronization
import Testing

/// A stand-in with the shapes of swift-log's API that the bridge in Docs/Logging.md uses, so the
/// bridge compiles here as an app would compile it against swift-log (which this package cannot
/// depend on). Inside the namespace `Logging`, as the module of that name qualifies them.
enum Logging {
    struct Logger: Sendable {
        enum Level: String, Sendable, CaseIterable {
            case trace, debug, info, notice, warning, error, critical
        }

        enum MetadataValue: Sendable, Equatable {
            case string(String)
        }

        typealias Metadata = [String: MetadataValue]

        struct Message: Sendable, ExpressibleByStringInterpolation, Equatable {
            let text: String

            init(stringLiteral value: String) { self.text = value }
            init(stringInterpolation: DefaultStringInterpolation) {
                self.text = String(stringInterpolation: stringInterpolation)
            }
        }

        struct Record: Sendable, Equatable {
            let level: Level
            let message: Message
            let metadata: Metadata?
            let source: String
            let file: String
            let function: String
            let line: UInt
        }

        let label: String
        let records = Records()

        init(label: String) { self.label = label }

        final class Records: Sendable {
            let all = Mutex<[Record]>([])
        }

        func log(
            level: Level,
            _ message: @autoclosure () -> Message,
            metadata: @autoclosure () -> Metadata? = nil,
            source: @autoclosure () -> String? = nil,
            file: String = #fileID,
            function: String = #function,
            line: UInt = #line
        ) {
            let record = Record(
                level: level,
                message: message(),
                metadata: metadata(),
                source: source() ?? "",
                file: file,
                function: function,
                line: line
            )
            self.records.all.withLock { $0.append(record) }
        }
    }
}

// The bridge, word for word as Docs/Logging.md shows it.

/// Hands every CoatySwift log entry to a swift-log logger.
struct SwiftLogHandler: CoatyLogHandler {
    let logger: Logging.Logger

    func log(_ entry: CoatyLogEntry) {
        var metadata = Logging.Logger.Metadata()
        for (key, value) in entry.metadata { metadata[key] = .string(value) }
        metadata["label"] = .string(entry.label)
        self.logger.log(
            level: Logging.Logger.Level(rawValue: entry.level.description) ?? .info,
            "\(entry.message)",
            metadata: metadata,
            source: entry.source.module,
            file: entry.source.file,
            function: entry.source.function,
            line: entry.source.line
        )
    }
}

struct LoggingBridgeTests {
    @Test func entriesReachSwiftLogWithLevelMetadataAndSourceLocation() throws {
        let target = Logging.Logger(label: "coaty")
        let logger = CoatyLogger(label: "coaty.mqtt", level: .trace, handler: SwiftLogHandler(logger: target))
        let line: UInt = #line + 1
        logger.warning("connection lost", metadata: ["broker": "mqtt://127.0.0.1:1883"])
        let record = try #require(target.records.all.withLock { $0 }.first)
        #expect(record.level == .warning)
        #expect(record.message == "connection lost")
        #expect(record.metadata == ["broker": .string("mqtt://127.0.0.1:1883"), "label": .string("coaty.mqtt")])
        #expect(record.source == "CoatyCoreTests")
        #expect(record.file == #fileID)
        #expect(record.function == #function)
        #expect(record.line == line)
    }

    @Test(arguments: CoatyLogger.Level.allCases)
    func everyLevelMapsToSwiftLogsLevelOfTheSameName(level: CoatyLogger.Level) throws {
        let target = Logging.Logger(label: "coaty")
        CoatyLogger(label: "x", level: .trace, handler: SwiftLogHandler(logger: target)).log(level: level, "m")
        let record = try #require(target.records.all.withLock { $0 }.first)
        #expect(record.level.rawValue == level.description)
    }

    @Test func entriesBelowTheLevelAreNotBuilt() {
        let handler = InMemoryLogHandler()
        let logger = CoatyLogger(label: "x", level: .warning, handler: handler)
        logger.info("\(Self.mustNotRun())")
        logger.error("kept")
        #expect(handler.entries.map(\.message) == ["kept"])
        #expect(handler.entries.first?.source.module == "CoatyCoreTests")
    }

    private static func mustNotRun() -> String {
        Issue.record("the message of a disabled level was built")
        return ""
    }
}
