/// One log entry as handed to a ``CoatyLogHandler``.
public struct CoatyLogEntry: Sendable {
    /// Where in the source an entry was logged.
    public struct Source: Sendable, Equatable {
        /// The file, as `#fileID` gives it (`Module/File.swift`).
        public var file: String
        /// The function, as `#function` gives it.
        public var function: String
        /// The line.
        public var line: UInt

        /// Creates a source location.
        public init(file: String, function: String, line: UInt) {
            self.file = file
            self.function = function
            self.line = line
        }

        /// The module, the first component of ``file`` (swift-log's `source`).
        public var module: String {
            self.file.split(separator: "/", maxSplits: 1).first.map(String.init) ?? self.file
        }
    }

    /// The logger's label.
    public var label: String
    /// The entry's severity.
    public var level: CoatyLogger.Level
    /// The message.
    public var message: String
    /// Structured context.
    public var metadata: CoatyLogger.Metadata
    /// Where it was logged.
    public var source: Source

    /// Creates an entry.
    public init(
        label: String,
        level: CoatyLogger.Level,
        message: String,
        metadata: CoatyLogger.Metadata,
        source: Source = Source(file: "", function: "", line: 0)
    ) {
        self.label = label
        self.level = level
        self.message = message
        self.metadata = metadata
        self.source = source
    }

    /// The entry as one line: `level label: message key=value …`, metadata sorted by key.
    public var formatted: String {
        var line = "\(self.level) \(self.label): \(self.message)"
        for key in self.metadata.keys.sorted() {
            line += " \(key)=\(self.metadata[key]!)"
        }
        return line
    }
}
