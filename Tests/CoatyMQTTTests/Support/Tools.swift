import CoatyTransport
import Foundation
import TestSupport

/// Runs an external tool (mosquitto_pub/sub, python3) through CoatyTesting's serialised launcher and
/// returns its exit status and standard output.
func runTool(_ path: String, _ arguments: [String], input: Data? = nil) async throws -> (status: Int32, output: String)
{
    let result = try await runProcess(path, arguments, input: input)
    return (result.status, result.output)
}
