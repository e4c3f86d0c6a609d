public import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Serialises `Process.run()` for the whole test process: concurrent launches from parallel tests
/// crashed inside Foundation's `Process.run()` on Linux. Every launch in our tests goes through here.
private let launchLock = Mutex(())

/// Starts `process` while holding the process-wide launch lock.
///
/// - Throws: What `Process.run()` throws.
public func launch(_ process: Process) throws {
    try launchLock.withLock { _ in try process.run() }
}

/// The result of a finished child process.
public struct ProcessResult: Sendable {
    /// The exit status.
    public var status: Int32
    /// Everything written to standard output.
    public var output: String
    /// Everything written to standard error.
    public var errorOutput: String
}

/// Runs an executable to completion and captures its output.
///
/// Suspends until the process exits. Bound the run with the tool's own options (for example
/// `mosquitto_sub -W`); there is nothing to cancel.
///
/// - Parameters:
///   - executable: The path of the executable.
///   - arguments: Its arguments.
///   - input: Bytes written to its standard input, which is then closed.
/// - Throws: What `Process.run()` throws.
public func runProcess(_ executable: String, _ arguments: [String], input: Data? = nil) async throws -> ProcessResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let stdout = Pipe()
    let stderr = Pipe()
    let stdin = Pipe()
    process.standardOutput = stdout
    process.standardError = stderr
    process.standardInput = input == nil ? FileHandle.nullDevice : stdin
    // Cancellation (for example a test's time limit) kills the child, so a hung child fails the test
    // instead of hanging the whole test run.
    let status: Int32 = try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Int32, any Error>) in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do {
                try launch(process)
            } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: error)
                return
            }
            if let input {
                stdin.fileHandleForWriting.write(input)
                try? stdin.fileHandleForWriting.close()
            }
        }
    } onCancel: {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
    let output = String(decoding: stdout.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    let errorOutput = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    return ProcessResult(status: status, output: output, errorOutput: errorOutput)
}
