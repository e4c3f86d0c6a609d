import Foundation

/// The result of a finished child process.
struct ProcessResult: Sendable {
    var status: Int32
    var output: String
    var errorOutput: String
}

/// Runs an executable to completion and captures its output.
///
/// Suspends until the process exits; callers bound the run with the tool's own timeout option
/// (`mosquitto_sub -W`, a Python deadline), so there is nothing to cancel.
func runProcess(_ executable: String, _ arguments: [String]) async throws -> ProcessResult {
    let process = Process()
    process.executableURL = URL(filePath: executable)
    process.arguments = arguments
    let stdout = Pipe()
    let stderr = Pipe()
    process.standardOutput = stdout
    process.standardError = stderr
    process.standardInput = FileHandle.nullDevice
    let status: Int32 = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Int32, any Error>) in
        process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
        do {
            try process.run()
        } catch {
            process.terminationHandler = nil
            continuation.resume(throwing: error)
        }
    }
    let output = String(decoding: stdout.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    let errorOutput = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    return ProcessResult(status: status, output: output, errorOutput: errorOutput)
}

