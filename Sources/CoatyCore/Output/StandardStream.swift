#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Standard output or standard error, written without buffering, so each line reaches a pipe at once
/// (scripts and tests follow our tools live). Used by ``StandardErrorLogHandler``, the `coaty` tool and the
/// examples.
package enum StandardStream {
    case output
    case error

    private var descriptor: Int32 {
        switch self {
        case .output: 1
        case .error: 2
        }
    }

    /// Writes all of `text`, retrying after interrupted or partial writes; gives up silently if the
    /// stream is closed.
    package func write(_ text: String) {
        var bytes = Array(text.utf8)
        bytes.withUnsafeMutableBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            var offset = 0
            while offset < buffer.count {
                #if canImport(Glibc)
                    let written = Glibc.write(self.descriptor, base + offset, buffer.count - offset)
                #elseif canImport(Musl)
                    let written = Musl.write(self.descriptor, base + offset, buffer.count - offset)
                #else
                    let written = Darwin.write(self.descriptor, base + offset, buffer.count - offset)
                #endif
                if written < 0, errno == EINTR { continue }
                if written <= 0 { return }
                offset += written
            }
        }
    }

    /// Whether the stream is a terminal (for choosing colour).
    package var isTerminal: Bool { isatty(self.descriptor) == 1 }

    /// The local wall-clock time of day as `HH:MM:SS.mmm`, for human-readable event lines.
    package static func timeOfDay() -> String {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        var seconds = spec.tv_sec
        var parts = tm()
        localtime_r(&seconds, &parts)
        func padded(_ value: Int, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(padded(Int(parts.tm_hour), 2)):\(padded(Int(parts.tm_min), 2)):\(padded(Int(parts.tm_sec), 2))."
            + padded(Int(spec.tv_nsec / 1_000_000), 3)
    }
}
