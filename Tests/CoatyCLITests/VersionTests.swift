import CoatyCore
import TestSupport
import Testing

/// `coaty --version` prints the package's version constant.
@Suite(.timeLimit(.minutes(1)))
struct VersionTests {
    @Test func versionPrintsThePackageVersion() async throws {
        let executable = try #require(ChildProcess.builtExecutable(named: "coaty"), "coaty is not built")
        let result = try await runProcess(executable, ["--version"])
        #expect(result.status == 0)
        #expect(result.output == "coaty \(CoatyVersion.string) (Coaty MQTT protocol version 3)\n")
    }

    @Test func theVersionIsSemantic() throws {
        let core = CoatyVersion.string.split(separator: "-", maxSplits: 1)[0]
        let parts = core.split(separator: ".")
        #expect(parts.count == 3)
        #expect(parts.allSatisfy { UInt($0) != nil })
    }
}
