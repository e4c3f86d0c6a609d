#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The three epoll calls, bound at run time (Linux only: elsewhere ``init()`` finds none and
/// ``isAvailable`` is false, which is how ``ReactorKind`` tells the platforms apart).
///
/// Swift's `Glibc` module map does not include `<sys/epoll.h>`, and the project has no C targets, so
/// the functions are looked up once with `dlsym` in the already-loaded C library and called through
/// `@convention(c)` pointers. `struct epoll_event` is handled as raw bytes with its ABI layout: packed
/// (12 bytes, data at offset 4) on x86_64, naturally aligned (16 bytes, data at offset 8) elsewhere.
struct Epoll: Sendable {
    static let input: UInt32 = 0x001
    static let output: UInt32 = 0x004
    static let error: UInt32 = 0x008
    static let hangUp: UInt32 = 0x010
    static let readHangUp: UInt32 = 0x2000
    static let edgeTriggered: UInt32 = 1 << 31
    static let controlAdd: Int32 = 1
    static let controlDelete: Int32 = 2
    static let closeOnExec: Int32 = 0o2_000_000

    #if arch(x86_64)
        static let eventStride = 12
        static let dataOffset = 4
    #else
        static let eventStride = 16
        static let dataOffset = 8
    #endif

    private typealias CreateFunction = @convention(c) (Int32) -> Int32
    private typealias ControlFunction = @convention(c) (Int32, Int32, Int32, UnsafeMutableRawPointer?) -> Int32
    private typealias WaitFunction = @convention(c) (Int32, UnsafeMutableRawPointer?, Int32, Int32) -> Int32

    private let createFunction: CreateFunction
    private let controlFunction: ControlFunction
    private let waitFunction: WaitFunction

    /// Whether the C library has epoll.
    static var isAvailable: Bool { Epoll() != nil }

    /// Looks the functions up; `nil` if the C library lacks them (not Linux).
    init?() {
        guard let library = dlopen(nil, RTLD_NOW),
            let create = dlsym(library, "epoll_create1"),
            let control = dlsym(library, "epoll_ctl"),
            let wait = dlsym(library, "epoll_wait")
        else { return nil }
        self.createFunction = unsafeBitCast(create, to: CreateFunction.self)
        self.controlFunction = unsafeBitCast(control, to: ControlFunction.self)
        self.waitFunction = unsafeBitCast(wait, to: WaitFunction.self)
    }

    func create() -> Int32 {
        self.createFunction(Self.closeOnExec)
    }

    /// `epoll_ctl` with an event carrying `events` and the 64-bit `data`.
    func control(_ epollFD: Int32, operation: Int32, fd: Int32, events: UInt32, data: UInt64) -> Int32 {
        withUnsafeTemporaryAllocation(byteCount: Self.eventStride, alignment: 8) { buffer in
            buffer.initializeMemory(as: UInt8.self, repeating: 0)
            buffer.storeBytes(of: events, toByteOffset: 0, as: UInt32.self)
            buffer.storeBytes(of: data, toByteOffset: Self.dataOffset, as: UInt64.self)
            return self.controlFunction(epollFD, operation, fd, buffer.baseAddress)
        }
    }

    /// `epoll_wait` into `buffer`, which holds `buffer.count / eventStride` events.
    func wait(_ epollFD: Int32, into buffer: UnsafeMutableRawBufferPointer, timeoutMilliseconds: Int32) -> Int32 {
        self.waitFunction(epollFD, buffer.baseAddress, Int32(buffer.count / Self.eventStride), timeoutMilliseconds)
    }

    /// Reads event `index` of a buffer filled by ``wait(_:into:timeoutMilliseconds:)``.
    static func event(at index: Int, in buffer: UnsafeMutableRawBufferPointer) -> (events: UInt32, data: UInt64) {
        let base = index * Self.eventStride
        let events = buffer.loadUnaligned(fromByteOffset: base, as: UInt32.self)
        let data = buffer.loadUnaligned(fromByteOffset: base + Self.dataOffset, as: UInt64.self)
        return (events, data)
    }
}
