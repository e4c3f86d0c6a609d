import Dispatch
package import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A child process started with `posix_spawn`, for tests that run other programs (mosquitto, its
/// clients, paho-mqtt, our own executables).
///
/// **Why not Foundation's `Process`.** On Linux with Swift 6.3.1, `Process.run()` closes the child's
/// inherited descriptors by reading `/proc/self/fd` with a `dirent` copy that over-reads glibc's
/// buffer, and it crashes when the record sits at the end of a page
/// (swiftlang/swift-corelibs-foundation#5472), also under a process-wide lock. Here the spawn itself closes every descriptor above standard error in the child
/// (`posix_spawn_file_actions_addclosefrom_np`, no directory scan), and the child's standard streams
/// are opened by the spawn.
///
/// Standard output and error go to temporary files when captured (so a chatty child can never block
/// on a full pipe), otherwise to `/dev/null`. The child starts with an empty signal mask and default
/// signal actions, whatever the spawning thread had. A thread per child waits for its exit.
package final class ChildProcess: Sendable {
    /// What the child reads on its standard input.
    package enum Input: Sendable {
        /// `/dev/null`.
        case none
        /// These bytes, then end of file.
        case bytes([UInt8])
        /// The file at this path, then end of file (for large inputs, which ``bytes(_:)`` would copy).
        case file(String)
        /// A pipe kept open until ``closeInput()``: closing it is the child's end of input.
        case pipe
    }

    private struct State {
        var exitStatus: Int32?
        var waiters: [CheckedContinuation<Int32, Never>] = []
        var blockingWaiters: [DispatchSemaphore] = []
        var inputWriter: Int32?
    }

    /// The child's process id.
    package let processIdentifier: Int32
    private let outputPath: String?
    private let errorPath: String?
    private let inputPath: String?
    private let state: Mutex<State>

    private init(pid: Int32, outputPath: String?, errorPath: String?, inputPath: String?, inputWriter: Int32?) {
        self.processIdentifier = pid
        self.outputPath = outputPath
        self.errorPath = errorPath
        self.inputPath = inputPath
        self.state = Mutex(State(inputWriter: inputWriter))
    }

    deinit {
        for path in [self.outputPath, self.errorPath, self.inputPath].compactMap({ $0 }) { unlink(path) }
        if let writer = self.state.withLock({ $0.inputWriter }) { close(writer) }
    }

    /// The path of an executable product built next to the running test bundle (SwiftPM puts every
    /// product of a package in the same folder), or `nil` if it is not there or not on Linux.
    ///
    /// - Parameter name: The product name, for example `"coaty"`.
    package static func builtExecutable(named name: String) -> String? {
        guard let test = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else {
            return nil
        }
        let path = URL(fileURLWithPath: test).deletingLastPathComponent().appendingPathComponent(name).path
        return FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }

    /// Starts `executable` with `arguments`, inheriting this process's environment.
    ///
    /// - Parameters:
    ///   - executable: The absolute path of the program.
    ///   - arguments: Its arguments, without the program name.
    ///   - input: What it reads on standard input.
    ///   - captureOutput: Whether to keep standard output and error for ``output`` and ``errorOutput``.
    ///   - environment: Variables to set (or, with an empty value, to set empty) on top of the
    ///     inherited environment.
    /// - Throws: ``ChildProcessError`` if the program cannot be started.
    package static func spawn(
        _ executable: String,
        _ arguments: [String],
        input: Input = .none,
        captureOutput: Bool = false,
        environment: [String: String] = [:]
    ) throws -> ChildProcess {
        let directory = FileManager.default.temporaryDirectory.path
        let stem = "\(directory)/coaty-child-\(UUID().uuidString)"
        let outputPath = captureOutput ? stem + ".out" : nil
        let errorPath = captureOutput ? stem + ".err" : nil
        var inputPath: String?
        var pipeEnds: (read: Int32, write: Int32)?

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // The file standard input is opened from, unless it is a pipe.
        var inputFile: String?
        switch input {
        case .none:
            inputFile = "/dev/null"
        case .bytes(let bytes):
            let path = stem + ".in"
            guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else {
                throw ChildProcessError("cannot write the input file \(path)")
            }
            inputPath = path
            inputFile = path
        case .file(let path):
            inputFile = path
        case .pipe:
            // Both ends close-on-exec, so no other child inherits them (the spawn lock keeps our own
            // spawns out of the window between pipe() and fcntl(); `pipe2` is not in Swift's Glibc).
            let fds = try spawnLock.withLock { _ throws(ChildProcessError) -> [Int32] in
                var fds: [Int32] = [-1, -1]
                guard pipe(&fds) == 0 else { throw ChildProcessError("pipe failed with errno \(errno)") }
                for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
                return fds
            }
            pipeEnds = (fds[0], fds[1])
            posix_spawn_file_actions_adddup2(&actions, fds[0], 0)
        }
        if let inputFile { posix_spawn_file_actions_addopen(&actions, 0, inputFile, O_RDONLY, 0) }
        // Close every other descriptor in the child, whatever its close-on-exec flag: a socket this
        // process accepts in parallel is close-on-exec only after a separate fcntl.
        Self.closeOtherDescriptors(in: &actions)
        let writeFlags = O_WRONLY | O_CREAT | O_TRUNC
        posix_spawn_file_actions_addopen(&actions, 1, outputPath ?? "/dev/null", writeFlags, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errorPath ?? "/dev/null", writeFlags, 0o600)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        let merged = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let envp: [UnsafeMutablePointer<CChar>?] = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for variable in envp { free(variable) } }
        var pid: pid_t = 0
        let result = spawnLock.withLock { _ in posix_spawn(&pid, executable, &actions, &attributes, argv, envp) }
        if let pipeEnds { close(pipeEnds.read) }
        guard result == 0 else {
            if let pipeEnds { close(pipeEnds.write) }
            if let inputPath { unlink(inputPath) }
            throw ChildProcessError("cannot start \(executable): \(String(cString: strerror(result)))")
        }
        let child = ChildProcess(
            pid: pid,
            outputPath: outputPath,
            errorPath: errorPath,
            inputPath: inputPath,
            inputWriter: pipeEnds?.write
        )
        Thread.detachNewThread { child.reap() }
        return child
    }

    /// Adds "close every descriptor from 3 up" to the spawn's file actions, where the C library has
    /// `posix_spawn_file_actions_addclosefrom_np` (glibc 2.34 and later; looked up at run time, since
    /// Swift's Glibc module does not declare it). Elsewhere children rely on close-on-exec alone.
    private static func closeOtherDescriptors(in actions: inout posix_spawn_file_actions_t) {
        guard let addCloseFrom = Self.addCloseFrom else { return }
        _ = withUnsafeMutablePointer(to: &actions) { addCloseFrom(UnsafeMutableRawPointer($0), 3) }
    }

    private typealias AddCloseFrom = @convention(c) (UnsafeMutableRawPointer?, Int32) -> Int32

    private static let addCloseFrom: AddCloseFrom? = {
        guard let library = dlopen(nil, RTLD_NOW),
            let symbol = dlsym(library, "posix_spawn_file_actions_addclosefrom_np")
        else { return nil }
        return unsafeBitCast(symbol, to: AddCloseFrom.self)
    }()

    /// Waits for the child to exit (on its own thread) and records the status.
    private func reap() {
        var status: Int32 = 0
        while waitpid(self.processIdentifier, &status, 0) < 0 && errno == EINTR {}
        // Exited: the exit code. Killed by a signal: 128 + the signal, as shells report it.
        let exitStatus = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        let (waiters, blockingWaiters) = self.state.withLock { state in
            state.exitStatus = exitStatus
            defer {
                state.waiters = []
                state.blockingWaiters = []
            }
            return (state.waiters, state.blockingWaiters)
        }
        for waiter in waiters { waiter.resume(returning: exitStatus) }
        for semaphore in blockingWaiters { semaphore.signal() }
    }

    /// Whether the child has not exited yet.
    package var isRunning: Bool { self.state.withLock { $0.exitStatus == nil } }

    /// The exit code, or 128 + the signal that ended it; `nil` while it runs.
    package var exitStatus: Int32? { self.state.withLock { $0.exitStatus } }

    /// Suspends until the child has exited; returns ``exitStatus``.
    package func waitForExit() async -> Int32 {
        await withCheckedContinuation { (continuation: CheckedContinuation<Int32, Never>) in
            let status = self.state.withLock { state -> Int32? in
                if let status = state.exitStatus { return status }
                state.waiters.append(continuation)
                return nil
            }
            if let status { continuation.resume(returning: status) }
        }
    }

    /// Blocks the calling thread until the child has exited. For clean-up in `defer`, after ``kill(_:)``.
    package func waitUntilExit() {
        let semaphore = DispatchSemaphore(value: 0)
        let hasExited = self.state.withLock { state -> Bool in
            if state.exitStatus != nil { return true }
            state.blockingWaiters.append(semaphore)
            return false
        }
        if !hasExited { semaphore.wait() }
    }

    /// Sends a signal (by default `SIGKILL`) if the child still runs.
    package func kill(_ signal: Int32 = SIGKILL) {
        guard self.isRunning else { return }
        #if canImport(Glibc)
            _ = Glibc.kill(self.processIdentifier, signal)
        #else
            _ = Darwin.kill(self.processIdentifier, signal)
        #endif
    }

    /// Closes the child's standard input (``Input/pipe`` only): it reads end of file.
    package func closeInput() {
        let writer = self.state.withLock { state -> Int32? in
            defer { state.inputWriter = nil }
            return state.inputWriter
        }
        if let writer { close(writer) }
    }

    /// Everything the child wrote to standard output so far (captured children only).
    package var output: String { Self.read(self.outputPath) }

    /// Everything the child wrote to standard error so far (captured children only).
    package var errorOutput: String { Self.read(self.errorPath) }

    /// Reads a captured stream's file with `read(2)`. `FileManager.contents(atPath:)` leaks a 4 KiB
    /// buffer for every read of an empty file with Swift 6.3.1 on Linux, and tests read captured
    /// streams that are often empty, repeatedly.
    private static func read(_ path: String?) -> String {
        guard let path else { return "" }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return "" }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { buffer in
                #if canImport(Glibc)
                    Glibc.read(fd, buffer.baseAddress, buffer.count)
                #else
                    Darwin.read(fd, buffer.baseAddress, buffer.count)
                #endif
            }
            if count > 0 {
                bytes += chunk[..<count]
            } else if count == 0 || errno != EINTR {
                break
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// Held while creating inheritable-for-a-moment descriptors and while spawning.
private let spawnLock = Mutex(())

/// The resident set size of process `pid` in KiB (`VmRSS` in /proc/PID/status; 0 if unreadable).
package func residentKiB(ofProcess pid: Int32) -> Int {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
    else { return 0 }
    return Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
}

/// Why a ``ChildProcess`` could not be started.
package struct ChildProcessError: Error, CustomStringConvertible {
    /// What went wrong.
    package var description: String

    init(_ description: String) { self.description = description }
}

/// The result of a finished child process.
package struct ProcessResult: Sendable {
    /// The exit code, or 128 + the signal that ended it.
    package var status: Int32
    /// Everything written to standard output.
    package var output: String
    /// Everything written to standard error.
    package var errorOutput: String
}

/// Runs an executable to completion and captures its output.
///
/// Suspends until the process exits. Bound the run with the tool's own options (for example
/// `mosquitto_sub -W`); cancelling the task (for example a test's time limit) kills the child, so a hung
/// child fails the test instead of hanging the whole run.
///
/// - Parameters:
///   - executable: The path of the executable.
///   - arguments: Its arguments.
///   - input: Bytes for its standard input, which then reaches end of file.
///   - environment: Variables to set on top of the inherited environment.
/// - Throws: ``ChildProcessError`` if it cannot be started.
package func runProcess(
    _ executable: String,
    _ arguments: [String],
    input: Data? = nil,
    environment: [String: String] = [:]
) async throws -> ProcessResult {
    let child = try ChildProcess.spawn(
        executable,
        arguments,
        input: input.map { .bytes(Array($0)) } ?? .none,
        captureOutput: true,
        environment: environment
    )
    let status = await withTaskCancellationHandler {
        await child.waitForExit()
    } onCancel: {
        child.kill()
    }
    return ProcessResult(status: status, output: child.output, errorOutput: child.errorOutput)
}
