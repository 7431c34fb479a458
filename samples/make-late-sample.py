#!/usr/bin/env python3
"""http-segments-late.pcap: http-segments.pcap with one data segment written after the ACK that covers it.

On mirror ports, bridges and multi-queue NICs the two directions are stamped by different queues, and a data
segment can land in the file after the receiver's ACK for it (issue 24). Frame 8 (server, seq 2897, 1 448 bytes
of the 12 000-byte body) moves to after frame 13 (the client's ACK of 4345, which covers it), with frame 13's
timestamp so that time still runs forward. Every byte is in the file: the records must equal http-segments.pcap's.
Python standard library only; deterministic.
"""
import os
import struct

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "http-segments.pcap"), "rb") as f:
    data = f.read()
header, records, offset = data[:24], [], 24
endian = "<" if data[:4] == b"\xd4\xc3\xb2\xa1" else ">"
while offset < len(data):
    seconds, fraction, caplen, length = struct.unpack(endian + "IIII", data[offset:offset + 16])
    records.append([seconds, fraction, caplen, length, data[offset + 16:offset + 16 + caplen]])
    offset += 16 + caplen
moved = records.pop(7)            # frame 8
ack = records[11]                 # frame 13, now at index 11
moved[0], moved[1] = ack[0], ack[1]
records.insert(12, moved)
with open(os.path.join(here, "http-segments-late.pcap"), "wb") as f:
    f.write(header)
    for seconds, fraction, caplen, length, frame in records:
        f.write(struct.pack(endian + "IIII", seconds, fraction, caplen, length) + frame)
