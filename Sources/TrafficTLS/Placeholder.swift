// The TLS record layer stage: see TLSConnectionParser.
