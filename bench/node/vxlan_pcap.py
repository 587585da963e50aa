#!/usr/bin/env python3
"""Writes a pcap of VXLAN frames for the decap benchmark (vxlan_decap.sh):
`flows` distinct inner UDP flows (source ports, then source addresses) from
remote pods in 10.245.0.0/16 to one local pod, encapsulated from VTEP
192.168.77.2 to 192.168.77.1, VNI 42, 64-byte inner frames, round-robin.
usage: vxlan_pcap.py OUT FLOWS [UDP_DST_PORT]"""
import socket
import struct
import sys


def csum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return (~s) & 0xffff


def ipv4(src, dst, proto, payload):
    h = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), 0, 0x4000, 64, proto, 0,
                    socket.inet_aton(src), socket.inet_aton(dst))
    return h[:10] + struct.pack("!H", csum(h)) + h[12:] + payload


def main():
    out, flows = sys.argv[1], int(sys.argv[2])
    dport = int(sys.argv[3]) if len(sys.argv) > 3 else 4789
    gw = bytes.fromhex("020afa000001")    # sluiced's gateway MAC for 10.250.0.1
    vtep_mac = bytes.fromhex("020000007701")
    # At least 1024 frames so the ring sees bursts, a whole number of rounds.
    count = max(flows, (1024 // flows + 1) * flows if flows < 1024 else flows)
    with open(out, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for i in range(count):
            k = i % flows
            src = "10.245.%d.%d" % ((k // 60000) // 250, 2 + (k // 60000) % 250)
            udp = struct.pack("!HHHH", 1024 + k % 60000, 5001, 8 + 18, 0) + b"\0" * 18
            inner = gw + bytes.fromhex("020000000502") + b"\x08\x00" + ipv4(src, "10.250.0.10", 17, udp)
            vx = struct.pack("!B3xI", 0x08, 42 << 8) + inner
            outer_udp = struct.pack("!HHHH", 49152 + k % 16384, dport, 8 + len(vx), 0) + vx
            frame = vtep_mac + bytes.fromhex("020000007702") + b"\x08\x00" + ipv4("192.168.77.2", "192.168.77.1", 17, outer_udp)
            f.write(struct.pack("<IIII", 0, 0, len(frame), len(frame)) + frame)


if __name__ == "__main__":
    main()
