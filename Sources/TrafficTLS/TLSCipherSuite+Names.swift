extension TLSCipherSuite {
    /// IANA names of the suites seen in practice; the registry holds hundreds, mostly never deployed.
    public var knownName: String? {
        switch rawValue {
        // RFC 8446 §B.4: the TLS 1.3 suites.
        case 0x1301: "TLS_AES_128_GCM_SHA256"
        case 0x1302: "TLS_AES_256_GCM_SHA384"
        case 0x1303: "TLS_CHACHA20_POLY1305_SHA256"
        case 0x1304: "TLS_AES_128_CCM_SHA256"
        case 0x1305: "TLS_AES_128_CCM_8_SHA256"
        // RFC 5289 / RFC 7905: ECDHE with AEAD, what TLS 1.2 servers negotiate today.
        case 0xc02b: "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"
        case 0xc02c: "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"
        case 0xc02f: "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"
        case 0xc030: "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"
        case 0xcca8: "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256"
        case 0xcca9: "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256"
        case 0xccaa: "TLS_DHE_RSA_WITH_CHACHA20_POLY1305_SHA256"
        case 0xc0ac: "TLS_ECDHE_ECDSA_WITH_AES_128_CCM"
        case 0xc0ad: "TLS_ECDHE_ECDSA_WITH_AES_256_CCM"
        // RFC 4492 / RFC 5289: ECDHE with CBC.
        case 0xc009: "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA"
        case 0xc00a: "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA"
        case 0xc013: "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA"
        case 0xc014: "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA"
        case 0xc023: "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256"
        case 0xc024: "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384"
        case 0xc027: "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256"
        case 0xc028: "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384"
        // RFC 5288 / RFC 5246: static RSA and DHE.
        case 0x009c: "TLS_RSA_WITH_AES_128_GCM_SHA256"
        case 0x009d: "TLS_RSA_WITH_AES_256_GCM_SHA384"
        case 0x009e: "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256"
        case 0x009f: "TLS_DHE_RSA_WITH_AES_256_GCM_SHA384"
        case 0x002f: "TLS_RSA_WITH_AES_128_CBC_SHA"
        case 0x0035: "TLS_RSA_WITH_AES_256_CBC_SHA"
        case 0x003c: "TLS_RSA_WITH_AES_128_CBC_SHA256"
        case 0x003d: "TLS_RSA_WITH_AES_256_CBC_SHA256"
        case 0x0033: "TLS_DHE_RSA_WITH_AES_128_CBC_SHA"
        case 0x0039: "TLS_DHE_RSA_WITH_AES_256_CBC_SHA"
        case 0x0067: "TLS_DHE_RSA_WITH_AES_128_CBC_SHA256"
        case 0x006b: "TLS_DHE_RSA_WITH_AES_256_CBC_SHA256"
        case 0x000a: "TLS_RSA_WITH_3DES_EDE_CBC_SHA"
        case 0x0004: "TLS_RSA_WITH_RC4_128_MD5"
        case 0x0005: "TLS_RSA_WITH_RC4_128_SHA"
        // RFC 5746 §3.3 and RFC 7507: signalling values, never negotiated but offered.
        case 0x00ff: "TLS_EMPTY_RENEGOTIATION_INFO_SCSV"
        case 0x5600: "TLS_FALLBACK_SCSV"
        default: nil
        }
    }
}
