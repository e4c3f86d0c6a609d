#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Unbuffered output: each line reaches a pipe at once, so scripts and tests can follow the tool live.
enum Console {
    /// Writes `text` and a newline to standard output.
    static func line(_ text: String) {
        self.write(text + "\n", to: 1)
    }

    /// Writes `text` to standard error as is.
    static func error(_ text: String) {
        self.write(text, to: 2)
    }

    private static func write(_ text: String, to descriptor: Int32) {
        var bytes = Array(text.utf8)
        bytes.withUnsafeMutableBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                #if canImport(Glibc)
                let written = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                #else
                let written = Darwin.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                #endif
                if written < 0, errno == EINTR { continue }
                if written <= 0 { return }
                offset += written
            }
        }
    }
}
