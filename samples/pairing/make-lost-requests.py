#!/usr/bin/env python3
"""Issue 24 item 3 samples (samples/pairing/), mangled from samples/http-basic.pcap (8 keep-alive exchanges on one connection):

- http-lost-requests.pcap: frames 13 and 15 removed, the whole requests `GET /index.html` (the conditional one,
  answered 304) and `GET /missing.html` (404). The server's ACKs show it had them: its 304 and 404 answer requests
  the capture lost, and the three exchanges after the hole must still pair with their own requests.
- http-response-first.pcap: frames 19 and 20 swapped, the request `GET /page.html` captured after its response
  (two capture queues): every byte is there, so the records must be those of http-basic.pcap.

Plain pcap rewritten record by record (no scapy needed)."""
import struct, sys
from pathlib import Path

here = Path(__file__).resolve().parent
data = (here.parent / "http-basic.pcap").read_bytes()
header, records, offset = data[:24], [], 24
endian = "<" if data[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
while offset < len(data):
    caplen = struct.unpack(endian + "I", data[offset + 8:offset + 12])[0]
    records.append(data[offset:offset + 16 + caplen])
    offset += 16 + caplen
assert len(records) == 25, "http-basic.pcap has 25 frames"

lost = [r for i, r in enumerate(records, 1) if i not in (13, 15)]
(here / "http-lost-requests.pcap").write_bytes(header + b"".join(lost))

swapped = list(records)
swapped[18], swapped[19] = swapped[19], swapped[18]
(here / "http-response-first.pcap").write_bytes(header + b"".join(swapped))
print("wrote http-lost-requests.pcap (23 frames) and http-response-first.pcap (25 frames)", file=sys.stderr)
