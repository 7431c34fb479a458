/// One frame of a decrypted packet payload (RFC 9000 §19), with the byte ranges it occupies.
enum QUICFrame {
    case padding
    case crypto(offset: UInt64, data: Range<Int>)
    case stream(id: UInt64, offset: UInt64, data: Range<Int>, fin: Bool)
    case resetStream(id: UInt64, finalSize: UInt64)
    case newConnectionID(cid: Range<Int>)
    case connectionClose
    /// Every other frame: its bytes are transport overhead.
    case other

    /// Calls `body` with each frame and its whole range (type to last byte) in `payload`; false when a frame
    /// is malformed or of an unknown type (RFC 9000 §12.4: a connection error; the rest cannot be framed).
    static func forEach(
        _ payload: UnsafeRawBufferPointer, _ body: (QUICFrame, Range<Int>) -> Void
    ) -> Bool {
        var r = QUICByteReader(payload)
        while !r.isAtEnd {
            let start = r.position
            guard let type = r.varint() else { return false }
            let frame: QUICFrame
            switch type {
            case 0x00:
                // A run of PADDING as one frame: a packet can hold a thousand of them.
                while r.position < r.end, payload[r.position] == 0 { r.position += 1 }
                frame = .padding
            case 0x01, 0x1e:  // PING, HANDSHAKE_DONE
                frame = .other
            case 0x02, 0x03:  // ACK (§19.3)
                guard r.varint() != nil, r.varint() != nil, let count = r.varint(), r.varint() != nil,
                    count <= UInt64(r.remaining)
                else { return false }
                for _ in 0..<count { guard r.varint() != nil, r.varint() != nil else { return false } }
                if type == 0x03 { guard r.varint() != nil, r.varint() != nil, r.varint() != nil else { return false } }
                frame = .other
            case 0x04:
                guard let id = r.varint(), r.varint() != nil, let size = r.varint() else { return false }
                frame = .resetStream(id: id, finalSize: size)
            case 0x05:
                guard r.varint() != nil, r.varint() != nil else { return false }  // STOP_SENDING
                frame = .other
            case 0x06:
                guard let offset = r.varint(), let length = r.length() else { return false }
                frame = .crypto(offset: offset, data: r.position..<(r.position + length))
                r.position += length
            case 0x07:  // NEW_TOKEN
                guard let length = r.length(), r.skip(length) else { return false }
                frame = .other
            case 0x08...0x0f:  // STREAM: OFF 0x04, LEN 0x02, FIN 0x01 (§19.8)
                guard let id = r.varint() else { return false }
                var offset: UInt64 = 0
                if type & 0x04 != 0 { guard let o = r.varint() else { return false }; offset = o }
                let length: Int
                if type & 0x02 != 0 { guard let l = r.length() else { return false }; length = l } else { length = r.remaining }
                // §19.8: the largest offset is 2^62 − 1.
                guard offset <= (1 << 62) - 1 - UInt64(length) else { return false }
                frame = .stream(id: id, offset: offset, data: r.position..<(r.position + length), fin: type & 1 != 0)
                r.position += length
            case 0x10, 0x12, 0x13, 0x14, 0x16, 0x17, 0x19:  // MAX_DATA, MAX_STREAMS×2, DATA_BLOCKED, STREAMS_BLOCKED×2, RETIRE_CONNECTION_ID
                guard r.varint() != nil else { return false }
                frame = .other
            case 0x11, 0x15:  // MAX_STREAM_DATA, STREAM_DATA_BLOCKED
                guard r.varint() != nil, r.varint() != nil else { return false }
                frame = .other
            case 0x18:  // NEW_CONNECTION_ID (§19.15)
                guard r.varint() != nil, r.varint() != nil, let length = r.byte().map(Int.init), length >= 1,
                    length <= 20, r.skip(length)
                else { return false }
                let cid = (r.position - length)..<r.position
                guard r.skip(16) else { return false }
                frame = .newConnectionID(cid: cid)
            case 0x1a, 0x1b:  // PATH_CHALLENGE, PATH_RESPONSE
                guard r.skip(8) else { return false }
                frame = .other
            case 0x1c, 0x1d:  // CONNECTION_CLOSE (§19.19)
                guard r.varint() != nil else { return false }
                if type == 0x1c { guard r.varint() != nil else { return false } }
                guard let length = r.length(), r.skip(length) else { return false }
                frame = .connectionClose
            case 0x30:  // DATAGRAM without length (RFC 9221)
                r.position = r.end
                frame = .other
            case 0x31:
                guard let length = r.length(), r.skip(length) else { return false }
                frame = .other
            default:
                return false
            }
            body(frame, start..<r.position)
        }
        return true
    }
}
