#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The `coaty` command-line tool. `main` only parses, dispatches and maps errors to exit codes.
@main
enum CoatyCLI {
    static func main() async {
        let arguments = CommandLine.arguments.dropFirst()
        let command: Command
        do {
            command = try Command(parsing: arguments)
        } catch {
            writeError("\(error)\n\n\(Help.text(for: error.subcommand))\n")
            exit(64)  // EX_USAGE
        }
        switch command {
        case .help(let subcommand):
            print(Help.text(for: subcommand))
        case .version:
            print(Help.version)
        default:
            do {
                try await CommandRunner.run(command)
            } catch is CancellationError {
                exit(0)
            } catch {
                writeError("error: \(error)\n")
                exit(1)
            }
        }
    }

    static func writeError(_ text: String) {
        var bytes = Array(text.utf8)
        bytes.withUnsafeMutableBytes { buffer in
            _ = write(2, buffer.baseAddress, buffer.count)
        }
    }
}
