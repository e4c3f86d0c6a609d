import CoatyTesting
import Foundation
import Testing

@Suite(.timeLimit(.minutes(1)))
struct ChildProcessTests {
    /// A child started by the tests inherits nothing but its standard streams, not even a descriptor
    /// without close-on-exec (like a socket accepted a moment before its fcntl).
    @Test func childrenInheritOnlyTheirStandardStreams() async throws {
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
}
