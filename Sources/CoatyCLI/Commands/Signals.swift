import Dispatch

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Waits for SIGINT or SIGTERM, so that commands shut down gracefully on Ctrl-C.
///
/// Dispatch signal sources are used here, in the executable only: the library itself has no
/// signal handling and no dispatch queues.
enum Signals {
    /// Runs `work` until it returns or the process is interrupted; on SIGINT/SIGTERM `work` is cancelled
    /// and this returns normally once it has ended (so the caller exits with status 0).
    ///
    /// The signals are caught before `work` starts, so an early Ctrl-C cannot kill the process abruptly.
    static func runUntilInterrupted(_ work: @escaping @Sendable () async throws -> Void) async throws {
        let (stream, continuation) = AsyncStream.makeStream(of: Int32.self, bufferingPolicy: .bufferingNewest(1))
        var sources: [any DispatchSourceSignal] = []
        for signalNumber in [SIGINT, SIGTERM] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler { continuation.yield(signalNumber) }
            source.resume()
            sources.append(source)
        }
        defer {
            for source in sources { source.cancel() }
        }
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                try await work()
                return true
            }
            group.addTask {
                for await _ in stream { break }
                return false
            }
            defer { group.cancelAll() }
            _ = try await group.next()
        }
    }
}
