import Foundation
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(1)))
struct ChildProcessTests {
    /// A child started by the tests inherits nothing but its standard streams, not even a descriptor
    /// without close-on-exec (like a socket accepted a moment before its fcntl).
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/self/fd"), "lists /proc/self/fd"))
    func childrenInheritOnlyTheirStandardStreams() async throws {
        let leaky = open("/dev/null", O_RDONLY)  // deliberately not close-on-exec
        try #require(leaky >= 0)
        defer { close(leaky) }
        let result = try await runProcess("/bin/ls", ["/proc/self/fd"])
        #expect(result.status == 0, "\(result.errorOutput)")
        let descriptors = Set(result.output.split(whereSeparator: \.isWhitespace).compactMap { Int32($0) })
        // ls itself holds one more descriptor open: the directory it lists.
        #expect(descriptors.isSuperset(of: [0, 1, 2]))
        #expect(!descriptors.contains(leaky))
        #expect(descriptors.count <= 4, "inherited: \(descriptors.sorted())")
    }

    @Test func exitStatusAndOutputAreReported() async throws {
        let result = try await runProcess("/bin/sh", ["-c", "echo out; echo err >&2; exit 3"])
        #expect(result.status == 3)
        #expect(result.output == "out\n")
        #expect(result.errorOutput == "err\n")
        let input = try await runProcess("/bin/cat", [], input: Data("piped".utf8))
        #expect(input.output == "piped")
    }

    @Test func aFileCanBeTheStandardInput() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("coaty-input-\(UUID()).txt").path
        try "line 1\nline 2\n".write(toFile: path, atomically: true, encoding: .utf8)
        defer { unlink(path) }
        let child = try ChildProcess.spawn("/usr/bin/wc", ["-l"], input: .file(path), captureOutput: true)
        #expect(await child.waitForExit() == 0)
        #expect(child.output.trimmingCharacters(in: .whitespacesAndNewlines) == "2")
    }
}
