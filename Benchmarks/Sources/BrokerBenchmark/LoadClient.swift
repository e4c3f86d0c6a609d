import Glibc

/// A minimal blocking MQTT 3.1.1 client for load generation, one per thread.
///
/// The benchmark package cannot see the framework's `package` socket and codec modules, so the load
/// generator speaks raw MQTT over blocking POSIX sockets. It is the same code for both brokers, which
/// is what matters for the comparison.
final class LoadClient {
    let fd: Int32
    private var buffer: [UInt8] = []
    private var readIndex = 0
    private var chunk = [UInt8](repeating: 0, count: 256 * 1024)

    enum Failure: Error, CustomStringConvertible {
        case system(String, Int32)
        case protocolError(String)
        case idle

        var description: String {
            switch self {
            case .system(let call, let code): "\(call) failed: errno \(code)"
            case .protocolError(let what): what
            case .idle: "no data within the receive timeout"
            }
        }
    }

    /// Connects, sends CONNECT (clean session, keep-alive 60) and waits for CONNACK 0.
    init(port: Int, clientID: String) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure.system("socket", errno) }
        self.fd = fd
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard rc == 0 else {
            let code = errno
            Glibc.close(fd)
            throw Failure.system("connect", code)
        }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        try self.send(Packets.connect(clientID: clientID))
        let (type, body) = try self.nextPacket()
        guard type == 2, body.count == 2, body.last == 0 else { throw Failure.protocolError("CONNACK refused") }
    }

    deinit { Glibc.close(self.fd) }

    /// Makes blocking reads give up (throwing ``Failure/idle``) after `seconds` without data.
    func setReceiveTimeout(seconds: Int) {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(self.fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { raw in
                Glibc.send(self.fd, raw.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            }
            if written < 0 {
                if errno == EINTR { continue }
                throw Failure.system("send", errno)
            }
            offset += written
        }
    }

    /// Reads the next packet: its type (high nibble) and body. Blocks.
    func nextPacket() throws -> (type: UInt8, body: ArraySlice<UInt8>) {
        while true {
            if let packet = self.parse() { return packet }
            try self.fill()
        }
    }

    /// Returns every complete packet already buffered, reading once from the socket if none is.
    func nextPackets(_ handle: (UInt8, UInt8, ArraySlice<UInt8>) throws -> Void) throws {
        var parsed = 0
        while true {
            while let (first, body) = self.parseWithFlags() {
                try handle(first >> 4, first & 0x0F, body)
                parsed += 1
            }
            if parsed > 0 { return }
            try self.fill()
        }
    }

    private func fill() throws {
        if self.readIndex > 0 {
            self.buffer.removeSubrange(0..<self.readIndex)
            self.readIndex = 0
        }
        let count = self.chunk.withUnsafeMutableBytes { recv(self.fd, $0.baseAddress, $0.count, 0) }
        if count < 0 {
            if errno == EINTR { return }
            if errno == EAGAIN || errno == EWOULDBLOCK { throw Failure.idle }
            throw Failure.system("recv", errno)
        }
        if count == 0 { throw Failure.protocolError("connection closed by the broker") }
        self.buffer.append(contentsOf: self.chunk[0..<count])
    }

    private func parse() -> (type: UInt8, body: ArraySlice<UInt8>)? {
        self.parseWithFlags().map { ($0.0 >> 4, $0.1) }
    }

    private func parseWithFlags() -> (UInt8, ArraySlice<UInt8>)? {
        var index = self.readIndex
        guard index < self.buffer.count else { return nil }
        let first = self.buffer[index]
        index += 1
        var length = 0
        var shift = 0
        while true {
            guard index < self.buffer.count else { return nil }
            let byte = self.buffer[index]
            index += 1
            length |= Int(byte & 0x7F) << shift
            shift += 7
            if byte & 0x80 == 0 { break }
        }
        guard index + length <= self.buffer.count else { return nil }
        let body = self.buffer[index..<(index + length)]
        self.readIndex = index + length
        return (first, body)
    }
}

/// Hand-encoded MQTT 3.1.1 packets for the load generator.
enum Packets {
    static func string(_ text: String) -> [UInt8] {
        let bytes = Array(text.utf8)
        return [UInt8(bytes.count >> 8), UInt8(bytes.count & 0xFF)] + bytes
    }

    static func frame(_ first: UInt8, _ body: [UInt8]) -> [UInt8] {
        var result = [first]
        var value = body.count
        repeat {
            var byte = UInt8(value & 0x7F)
            value >>= 7
            if value > 0 { byte |= 0x80 }
            result.append(byte)
        } while value > 0
        return result + body
    }

    static func connect(clientID: String) -> [UInt8] {
        frame(0x10, string("MQTT") + [0x04, 0x02, 0x00, 0x3C] + string(clientID))
    }

    static func subscribe(_ filter: String, qos: UInt8) -> [UInt8] {
        frame(0x82, [0x00, 0x01] + string(filter) + [qos])
    }

    static func publish(topic: String, payload: [UInt8], qos: UInt8, packetID: UInt16) -> [UInt8] {
        let id: [UInt8] = qos > 0 ? [UInt8(packetID >> 8), UInt8(packetID & 0xFF)] : []
        return frame(0x30 | (qos << 1), string(topic) + id + payload)
    }

    static func puback(_ body: ArraySlice<UInt8>) -> [UInt8] {
        [0x40, 0x02] + body.prefix(2)
    }
}
