extension BrokerSessions {
    /// What the table keeps per connection. Two words: the will, which most clients do not set, is
    /// held out of line, as each entry also takes room in the table's free slots.
    struct ConnectionRecord: Sendable {
        /// The will, out of line.
        private indirect enum Will: Sendable {
            case message(BrokerMessage)
        }

        var sessionKey: ByteKey
        private var storedWill: Will?

        init(sessionKey: ByteKey, will: BrokerMessage?) {
            self.sessionKey = sessionKey
            self.storedWill = will.map { .message($0) }
        }

        var will: BrokerMessage? {
            get {
                guard case .message(let message) = self.storedWill else { return nil }
                return message
            }
            set { self.storedWill = newValue.map { .message($0) } }
        }
    }
}
