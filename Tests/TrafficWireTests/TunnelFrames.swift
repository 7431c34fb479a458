import TrafficCapture
@testable import TrafficWire

/// Tunnel headers built around an IP packet, for the decoder's unit and property tests. Each layer is a byte
/// literal annotated with the header it stands for (the layouts of samples/make-tunnel-samples.py); outer IPv4
/// checksums stay 0, which the decoder does not verify by default.
enum TunnelFrames {
    static func be16(_ value: Int) -> [UInt8] { [UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)] }
    static func be32(_ value: Int) -> [UInt8] { be16(value >> 16) + be16(value) }

    static func isIPv6(_ packet: [UInt8]) -> Bool { packet[0] >> 4 == 6 }
    static func etherType(of packet: [UInt8]) -> [UInt8] { isIPv6(packet) ? [0x86, 0xdd] : [0x08, 0x00] }

    /// 02:00:00:00:00:01 > 02:00:00:00:00:02, then 4-byte `tags`, then the EtherType.
    static func ethernet(_ payload: [UInt8], etherType: [UInt8], tags: [[UInt8]] = []) -> [UInt8] {
        [2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1] + tags.flatMap { $0 } + etherType + payload
    }

    static func ethernet(around packet: [UInt8], tags: [[UInt8]] = []) -> [UInt8] {
        ethernet(packet, etherType: etherType(of: packet), tags: tags)
    }

    /// 192.0.2.1 > 192.0.2.2: IPv4, IHL 5, DF, TTL 64, protocol `proto`.
    static func ipv4(_ payload: [UInt8], proto: UInt8) -> [UInt8] {
        [0x45, 0] + be16(20 + payload.count) + [0, 1, 0x40, 0, 64, proto, 0, 0, 192, 0, 2, 1, 192, 0, 2, 2] + payload
    }

    /// 2001:db8:ffff::1 > 2001:db8:ffff::2, next header `next`, hop limit 64.
    static func ipv6(_ payload: [UInt8], next: UInt8) -> [UInt8] {
        let prefix: [UInt8] = [0x20, 0x01, 0x0d, 0xb8, 0xff, 0xff] + [UInt8](repeating: 0, count: 9)
        return [0x60, 0, 0, 0] + be16(payload.count) + [next, 64] + prefix + [1] + prefix + [2] + payload
    }

    /// UDP 49152 > `port`, length filled, checksum 0 (none, RFC 768).
    static func udp(_ payload: [UInt8], port: Int) -> [UInt8] {
        be16(49152) + be16(port) + be16(8 + payload.count) + [0, 0] + payload
    }

    /// VXLAN: flags I (0x08), reserved, VNI 42, reserved.
    static let vxlanHeader: [UInt8] = [0x08, 0, 0, 0, 0, 0, 42, 0]
    /// Geneve: version 0, option length 2 words; flags 0; protocol 0x6558; VNI 42; one option: class 0x0103,
    /// type 0x80, length 1 word, 4 data bytes.
    static let geneveHeaderEthernet: [UInt8] = [0x02, 0, 0x65, 0x58, 0, 0, 42, 0, 0x01, 0x03, 0x80, 1, 0xca, 0xfe, 0xf0, 0x0d]
    /// GTP-U: version 1, PT 1, E and S (0x36); G-PDU (0xFF); length; TEID 0x1000; sequence 1, N-PDU 0, next
    /// extension 0x85 (PDU session container): length 1 word, 2 content bytes, next 0.
    static func gtpuHeader(length: Int) -> [UInt8] {
        [0x36, 0xff] + be16(length) + [0, 0, 0x10, 0, 0, 1, 0, 0x85, 1, 0x10, 9, 0]
    }
    /// Teredo origin indication: 0x0000, obfuscated port and address.
    static let teredoOrigin: [UInt8] = [0, 0, 0xf2, 0x27, 0x39, 0xcc, 0x9b, 0xfe]
    /// Teredo authentication indicator: 0x0001, client id length 2, auth length 1, "id", 1 byte, nonce, confirmation.
    static let teredoAuthentication: [UInt8] = [0, 1, 2, 1, 0x69, 0x64, 0xaa] + [1, 2, 3, 4, 5, 6, 7, 8] + [0]
    /// ERSPAN II: version 1, VLAN 7; COS 1, session 5; index 3.
    static let erspan2Header: [UInt8] = [0x10, 0x07, 0x20, 0x05, 0, 0, 0, 3]
    /// ERSPAN III: version 2, VLAN 7; session 5; timestamp; SGT 0; frame type 0 (Ethernet), O set; then the
    /// 8-byte platform-specific subheader.
    static let erspan3Header: [UInt8] = [0x20, 0x07, 0x00, 0x05, 0, 1, 0xe2, 0x40, 0, 0, 0x00, 0x01]
        + [0x18, 0, 0, 0, 0, 0, 0, 42]

    /// GRE (RFC 2784/2890) with optional checksum, key and sequence number words.
    static func gre(_ payload: [UInt8], protocolType: Int, checksum: Bool = false, key: Bool = false,
                    sequence: Bool = false) -> [UInt8] {
        let flags = (checksum ? 0x8000 : 0) | (key ? 0x2000 : 0) | (sequence ? 0x1000 : 0)
        return be16(flags) + be16(protocolType) + (checksum ? [0, 0, 0, 0] : []) + (key ? be32(0xbeef) : [])
            + (sequence ? be32(7) : []) + payload
    }

    /// MPLS entries: label, TC 0, S on the last, TTL 64.
    static func mpls(labels: [Int]) -> [UInt8] {
        labels.enumerated().flatMap { index, label in be32(label << 12 | (index == labels.count - 1 ? 0x100 : 0) | 64) }
    }

    /// PPPoE session 0x1234 with PPP protocol 0x0021 or 0x0057.
    static func pppoe(around packet: [UInt8]) -> [UInt8] {
        let ppp = (isIPv6(packet) ? [0x00, 0x57] : [0x00, 0x21]) + packet
        return [0x11, 0x00, 0x12, 0x34] + be16(ppp.count) + ppp
    }

    /// One tunnel around an IP packet, giving an outer IP packet.
    enum Layer: CaseIterable, Sendable {
        case vxlan, vxlanTagged, geneveEthernet, geneveIP, gtpu, teredo, gre, greAllFields, greTEB, erspan1, erspan2,
             erspan3, ipInIPv4, ipInIPv6, mplsOverGRE, pseudowireOverGRE, pppoeInVXLAN


        /// How many tunnel layers (toward the depth limit of 8) this adds.
        var depth: Int { kinds(innerIPv6: false).filter { $0 != .vlan }.count }

        func kinds(innerIPv6: Bool) -> [Encapsulation.Kind] {
            switch self {
            case .vxlan: [.vxlan]
            case .vxlanTagged: [.vxlan, .vlan, .vlan]
            case .geneveEthernet, .geneveIP: [.geneve]
            case .gtpu: [.gtpu]
            case .teredo: [.teredo]
            case .gre, .greAllFields, .greTEB: [.gre]
            case .erspan1, .erspan2, .erspan3: [.gre, .erspan]
            case .ipInIPv4, .ipInIPv6: [innerIPv6 ? .ipv6InIP : .ipv4InIP]
            case .mplsOverGRE, .pseudowireOverGRE: [.gre, .mpls]
            case .pppoeInVXLAN: [.vxlan, .pppoe]
            }
        }

        /// Teredo carries only IPv6.
        func fits(_ packet: [UInt8]) -> Bool { self != .teredo || TunnelFrames.isIPv6(packet) }

        func wrap(_ packet: [UInt8]) -> [UInt8] {
            let f = TunnelFrames.self
            switch self {
            case .vxlan:
                return f.ipv4(f.udp(f.vxlanHeader + f.ethernet(around: packet), port: 4789), proto: 17)
            case .vxlanTagged:
                let tags: [[UInt8]] = [[0x88, 0xa8, 0, 200], [0x81, 0, 0, 100]]
                return f.ipv4(f.udp(f.vxlanHeader + f.ethernet(around: packet, tags: tags), port: 4789), proto: 17)
            case .geneveEthernet:
                return f.ipv4(f.udp(f.geneveHeaderEthernet + f.ethernet(around: packet), port: 6081), proto: 17)
            case .geneveIP:
                return f.ipv4(f.udp([0, 0] + f.etherType(of: packet) + [0, 0, 42, 0] + packet, port: 6081), proto: 17)
            case .gtpu:
                return f.ipv4(f.udp(f.gtpuHeader(length: 8 + packet.count) + packet, port: 2152), proto: 17)
            case .teredo:
                return f.ipv4(f.udp(f.teredoAuthentication + f.teredoOrigin + packet, port: 3544), proto: 17)
            case .gre:
                return f.ipv4(f.gre(packet, protocolType: f.isIPv6(packet) ? 0x86dd : 0x0800), proto: 47)
            case .greAllFields:
                return f.ipv6(f.gre(packet, protocolType: f.isIPv6(packet) ? 0x86dd : 0x0800, checksum: true, key: true,
                                    sequence: true), next: 47)
            case .greTEB:
                return f.ipv4(f.gre(f.ethernet(around: packet), protocolType: 0x6558, key: true), proto: 47)
            case .erspan1:
                return f.ipv4(f.gre(f.ethernet(around: packet), protocolType: 0x88be), proto: 47)
            case .erspan2:
                return f.ipv4(f.gre(f.erspan2Header + f.ethernet(around: packet), protocolType: 0x88be, sequence: true),
                              proto: 47)
            case .erspan3:
                return f.ipv4(f.gre(f.erspan3Header + f.ethernet(around: packet), protocolType: 0x22eb, sequence: true),
                              proto: 47)
            case .ipInIPv4:
                return f.ipv4(packet, proto: f.isIPv6(packet) ? 41 : 4)
            case .ipInIPv6:
                return f.ipv6(packet, next: f.isIPv6(packet) ? 41 : 4)
            case .mplsOverGRE:
                return f.ipv4(f.gre(f.mpls(labels: [100, 200]) + packet, protocolType: 0x8847), proto: 47)
            case .pseudowireOverGRE:
                return f.ipv4(f.gre(f.mpls(labels: [300]) + [0, 0, 0, 0] + f.ethernet(around: packet),
                                    protocolType: 0x8847), proto: 47)
            case .pppoeInVXLAN:
                let frame = f.ethernet(f.pppoe(around: packet), etherType: [0x88, 0x64])
                return f.ipv4(f.udp(f.vxlanHeader + frame, port: 4789), proto: 17)
            }
        }
    }

    /// The link around the outermost IP packet.
    enum Link: CaseIterable, Sendable {
        case ethernet, ethernetQinQ, ethernetMPLS, ethernetPPPoE, raw, ipv4OrIPv6, ppp, pppCompressed, pppHDLC,
             ciscoHDLC, nflog, nflogBigEndian, linuxSLL


        var tunnelDepth: Int { self == .ethernetMPLS || self == .ethernetPPPoE ? 1 : 0 }

        func frame(_ packet: [UInt8]) -> (LinkType, [UInt8], [Encapsulation.Kind]) {
            let f = TunnelFrames.self
            let v6 = f.isIPv6(packet)
            switch self {
            case .ethernet: return (.ethernet, f.ethernet(around: packet), [])
            case .ethernetQinQ:
                return (.ethernet, f.ethernet(around: packet, tags: [[0x88, 0xa8, 0, 200], [0x81, 0, 0, 100]]), [.vlan, .vlan])
            case .ethernetMPLS:
                return (.ethernet, f.ethernet(f.mpls(labels: [16, 17, 18]) + packet, etherType: [0x88, 0x47]), [.mpls])
            case .ethernetPPPoE: return (.ethernet, f.ethernet(f.pppoe(around: packet), etherType: [0x88, 0x64]), [.pppoe])
            case .raw: return (.raw, packet, [])
            case .ipv4OrIPv6: return (v6 ? .ipv6 : .ipv4, packet, [])
            case .ppp: return (.ppp, [0xff, 0x03, 0x00, v6 ? 0x57 : 0x21] + packet, [])
            // RFC 1661 §6.5 and RFC 1662: address and control omitted, protocol compressed to one byte.
            case .pppCompressed: return (.ppp, [v6 ? 0x57 : 0x21] + packet, [])
            case .pppHDLC: return (.pppHDLC, [0xff, 0x03, 0x00, v6 ? 0x57 : 0x21] + packet, [])
            case .ciscoHDLC: return (.pppHDLC, [0x0f, 0x00] + f.etherType(of: packet) + packet, [])
            case .nflog, .nflogBigEndian:
                let little = self == .nflog
                func tlv(_ type: Int, _ value: [UInt8]) -> [UInt8] {
                    let length = 4 + value.count, padding = [UInt8](repeating: 0, count: (4 - value.count % 4) % 4)
                    let header: [UInt8] = little ? Array(f.be16(length).reversed()) + Array(f.be16(type).reversed()) : f.be16(length) + f.be16(type)
                    return header + value + padding
                }
                // family, version 0, resource id 5; NFULA_PACKET_HDR, NFULA_PREFIX "traffic", NFULA_PAYLOAD.
                let body = tlv(1, f.etherType(of: packet) + [3, 0]) + tlv(10, Array("traffic\0".utf8)) + tlv(9, packet)
                return (.nflog, [v6 ? 10 : 2, 0, 0, 5] + body, [])
            case .linuxSLL:
                return (.linuxSLL, [0, 0, 0, 1, 0, 6] + [UInt8](repeating: 0, count: 8) + f.etherType(of: packet) + packet, [])
            }
        }
    }
}
