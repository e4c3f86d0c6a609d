import Foundation
import TestSupport
import Testing

/// `coaty broker` refuses to start with an ACL or password file it cannot use, naming the problem.
@Suite(.timeLimit(.minutes(1)))
struct BrokerAuthFilesTests {
    @Test func anInvalidACLFileStopsTheBrokerListingItsLines() async throws {
        let executable = try #require(InterruptTests.executable, "coaty is not built")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coaty-cli-acl-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let acl = directory.appendingPathComponent("acl")
        try "user alice\ntopic maybe a/#\nbogus line\n".write(to: acl, atomically: true, encoding: .utf8)
        let result = try await runProcess(executable, ["broker", "--port", "0", "--acl-file", acl.path])
        #expect(result.status == 1)
        #expect(
            result.errorOutput.contains("line 2:") && result.errorOutput.contains("line 3:"),
            "\(result.errorOutput)"
        )
        #expect(!result.output.contains("listening"))
    }

    @Test func aMissingPasswordFileStopsTheBroker() async throws {
        let executable = try #require(InterruptTests.executable, "coaty is not built")
        let result = try await runProcess(
            executable,
            ["broker", "--port", "0", "--password-file", "/nonexistent/coaty-passwords"]
        )
        #expect(result.status == 1)
        #expect(result.errorOutput.contains("cannot read the password file"), "\(result.errorOutput)")
    }
}
