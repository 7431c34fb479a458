import Testing
import TrafficTLS

/// The TLS 1.2 PRF and key block against published vectors and an independent implementation.
@Suite struct TLS12KeyScheduleTests {
    /// The "TLS 1.2 PRF test vectors" posted to the IETF TLS WG mailing list, as reproduced in OpenJDK-derived,
    /// Go, C and .NET test suites (all agree on every byte): secret, seed, label "test label", output.
    @Test func publishedSHA256Vector() {
        let output = TLS12KeySchedule.prf(
            .sha256, secret: hex("9bbe436ba940f017b17652849a71db35"), label: "test label",
            seed: hex("a0ba9f936cda311827a6f796ffd5198c"), count: 100)
        #expect(
            output
                == hex(
                    """
                    e3f229ba727be17b8d122620557cd453c2aab21d07c3d495329b52d4e61edb5a
                    6b301791e90d35c9c9a46b4e14baf9af0fa022f7077def17abfd3797c0564bab
                    4fbc91666e9def9b97fce34f796789baa48082d122ee42c5a72e5a5110fff701
                    87347b66
                    """))
    }

    @Test func publishedSHA384Vector() {
        let output = TLS12KeySchedule.prf(
            .sha384, secret: hex("b80b733d6ceefcdc71566ea48e5567df"), label: "test label",
            seed: hex("cd665cf6a8447dd6ff8b27555edb7465"), count: 148)
        #expect(
            output
                == hex(
                    """
                    7b0c18e9ced410ed1804f2cfa34a336a1c14dffb4900bb5fd7942107e81c83cd
                    e9ca0faa60be9fe34f82b1233c9146a0e534cb400fed2700884f9dc236f80edd
                    8bfa961144c9e8d792eca722a7b32fc3d416d473ebc2c5fd4abfdad05d918425
                    9b5bf8cd4d90fa0d31e2dec479e4f1a26066f2eea9a69236a3e52655c9e9aee6
                    91c8f3a26854308d5eaa3be85e0990703d73e56f
                    """))
    }

    /// Any length is a prefix of a longer output; 0 and negative counts give nothing.
    @Test(arguments: [0, -1, 1, 31, 32, 33, 47, 48, 49, 100])
    func prfLengths(_ count: Int) {
        let long = TLS12KeySchedule.prf(.sha384, secret: [1, 2, 3], label: "x", seed: [4], count: 200)
        let short = TLS12KeySchedule.prf(.sha384, secret: [1, 2, 3], label: "x", seed: [4], count: count)
        #expect(short == Array(long.prefix(max(count, 0))))
        #expect(TLS12KeySchedule.legacyPRF(secret: [9], label: "x", seed: [], count: count).count == max(count, 0))
    }

    /// The key block from PRF(master, "key expansion", server_random ‖ client_random), as Python's hmac computes
    /// it (make-tls12-vectors.py); TLS 1.1's from the MD5 ⊕ SHA-1 PRF.
    @Test(arguments: TLS12Vectors.connections)
    func keyBlock(_ vector: TLS12VectorConnection) throws {
        let parameters = try #require(TLSCipherParameters(suite: vector.suite, version: vector.version))
        let seed = vector.serverRandom + vector.clientRandom
        let count = vector.keyBlock.count
        #expect(count == 2 * (parameters.macKeyLength + parameters.keyLength + parameters.fixedIVLength))
        let block =
            vector.version == .tls11
            ? TLS12KeySchedule.legacyPRF(secret: vector.masterSecret, label: "key expansion", seed: seed, count: count)
            : TLS12KeySchedule.prf(
                parameters.hash, secret: vector.masterSecret, label: "key expansion", seed: seed, count: count)
        #expect(block == vector.keyBlock)
    }
}
