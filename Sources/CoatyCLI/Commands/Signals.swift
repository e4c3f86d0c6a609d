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
    /// Suspends until the process receives SIGINT or SIGTERM, then returns the signal number.
    /// Returns early with `nil` if the task is cancelled.
    static func waitForTermination() async -> Int32? {
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
        for await signalNumber in stream {
            return signalNumber
        }
        return nil
    }

    /// Runs `work` until it returns or the process is interrupted; on SIGINT/SIGTERM `work` is cancelled.
    static func runUntilInterrupted(_ work: @escaping @Sendable () async throws -> Void) async throws {
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                try await work()
                return true
            }
            group.addTask {
                _ = await Signals.waitForTermination()
                return false
            }
            defer { group.cancelAll() }
            _ = try await group.next()
        }
    }
}
