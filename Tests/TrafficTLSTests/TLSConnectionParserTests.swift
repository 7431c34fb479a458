import Testing
import TrafficReassembly
import TrafficTLS

@Suite struct TLSConnectionParserTests {
    @Test func tls13GreaseECH() {
        let s = TLSReplay.run(TLSConversation.tls13GreaseECH.steps)
        #expect(s.sni == "public.example.com")
        #expect(s.ech)
        #expect(s.offeredALPN == ["h2", "http/1.1"])  // the GREASE ALPN id 0x3a3a is dropped
        #expect(s.offeredVersions == [.tls13, .tls12])  // 0x7a7a is dropped
        #expect(s.clientLegacyVersion == .tls12)
        #expect(s.negotiatedVersion?.name == "TLS 1.3")
        #expect(s.cipherSuite?.name == "TLS_AES_128_GCM_SHA256")
        #expect(s.selectedALPN == nil)  // TLS 1.3 sends it in the encrypted EncryptedExtensions
        #expect(s.flags.map(\.name) == ["ech"])
        #expect(s.isTLS && !s.resumed && !s.helloRetryRequest)
    }

    @Test func tls12Split() {
        let s = TLSReplay.run(TLSConversation.tls12Split.steps)
        #expect(s.sni == "shop.example")
        #expect(s.offeredALPN == ["h2", "http/1.1"])
        #expect(s.selectedALPN == "h2")
        #expect(s.offeredVersions.isEmpty)
        #expect(s.negotiatedVersion == .tls12)
        #expect(s.cipherSuite?.name == "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256")
        // The encrypted Finished after CCS looks like a ClientHello header but is not parsed.
        #expect(s.flags.map(\.name) == [])
        #expect(!s.resumed)
    }

    @Test func tls13HelloRetryRequest() {
        let s = TLSReplay.run(TLSConversation.tls13HRR.steps)
        #expect(s.helloRetryRequest)
        #expect(s.resumed)
        #expect(s.flags.map(\.name) == ["hello_retry_request", "resumed"])
        #expect(s.negotiatedVersion == .tls13)
        #expect(s.cipherSuite?.name == "TLS_AES_256_GCM_SHA384")
        #expect(s.sni == "hrr.example")
    }

    @Test func tls12Resumed() {
        let s = TLSReplay.run(TLSConversation.tls12Resumed.steps)
        #expect(s.resumed)
        #expect(s.flags.map(\.name) == ["resumed"])
        #expect(s.cipherSuite?.name == "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256")
        #expect(s.serverToClient.otherRecordBytes == 24)  // one heartbeat record
    }

    @Test(arguments: TLSConversation.all)
    func accountingMatchesRecords(_ conversation: TLSConversation) {
        let s = TLSReplay.run(conversation.steps)
        #expect(s.clientToServer == conversation.expectedStats[0])
        #expect(s.serverToClient == conversation.expectedStats[1])
        #expect(s.clientToServer.isConserved && s.serverToClient.isConserved)
        #expect(s.clientToServer.nonTLSBytes == 0 && s.clientToServer.missingBytes == 0)
    }

    @Test(arguments: TLSConversation.all)
    func byteByByteAndSmallChunksMatchWhole(_ conversation: TLSConversation) {
        let whole = TLSDigest(TLSReplay.run(conversation.steps))
        for chunk in [1, 2, 3, 5, 7, 64] {
            #expect(TLSDigest(TLSReplay.run(conversation.steps, chunk: chunk)) == whole, "chunk \(chunk)")
        }
    }

    @Test(arguments: TLSConversation.all)
    func splitAtEveryOffsetMatchesWhole(_ conversation: TLSConversation) {
        let whole = TLSDigest(TLSReplay.run(conversation.steps))
        for (index, step) in conversation.steps.enumerated() {
            let count: Int
            switch step {
            case .client(let bytes), .server(let bytes): count = bytes.count
            case .gap: continue
            }
            for offset in 1..<count {
                let split = TLSDigest(TLSReplay.run(conversation.steps, splittingStep: index, at: offset))
                #expect(split == whole, "step \(index) offset \(offset)")
                if split != whole { return }
            }
        }
    }

    @Test func summaryIsAlsoAProperty() {
        let parser = TLSConnectionParser(info: TLSReplay.info)
        TLSReplay.feed(TLSConversation.tls13HRR.steps[0], into: parser, chunk: nil)
        #expect(parser.summary.sni == "hrr.example")
        #expect(!parser.isFinished)
        parser.finish(time: .zero)
        #expect(parser.isFinished && parser.summary.sni == "hrr.example")
    }

    @Test func oversizedHelloIsFlaggedAndStillCounted() {
        let conversation = TLSConversation.tls13GreaseECH
        let s = TLSReplay.run(conversation.steps, limits: TLSParserLimits(maximumHandshakeMessageBytes: 64))
        #expect(s.sni == nil)
        #expect(s.flags.map(\.name) == ["handshake_message_too_large"])
        #expect(s.clientToServer == conversation.expectedStats[0])
        #expect(s.negotiatedVersion == nil)  // the 118-byte ServerHello is over the limit too
    }
}
