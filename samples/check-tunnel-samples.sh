#!/bin/sh
# Checks every capture under samples/tunnels/ with tshark: each frame must dissect to the same TCP
# segment and HTTP message as the same frame of the unwrapped capture, and no frame may carry a
# malformed-packet or error expert item. Run from the repository root after make-tunnel-samples.py.
set -eu
fields="-e frame.number -e tcp.srcport -e tcp.dstport -e tcp.seq_raw -e tcp.ack_raw -e tcp.flags -e tcp.len -e http.request.method -e http.request.uri -e http.response.code"
status=0
for wrapped in samples/tunnels/*.pcap; do
    base="samples/$(basename "$wrapped" | sed 's/--.*//').pcap"
    # The innermost IP addresses: tshark lists every layer's; the last occurrence is the inner one.
    case "$base" in *ipv6*) ip=ipv6 ;; *) ip=ip ;; esac
    want=$(tshark -r "$base" -T fields $fields -e $ip.src -e $ip.dst 2>/dev/null)
    # tshark cannot guess an MPLS pseudowire's payload: label 300 is Ethernet with a control word.
    case "$wrapped" in *mpls-pw*) set -- -d mpls.label==300,pwethcw ;; *) set -- ;; esac
    got=$(tshark -r "$wrapped" "$@" -T fields $fields -E occurrence=l -e $ip.src -e $ip.dst 2>/dev/null)
    errors=$(tshark -r "$wrapped" "$@" -Y '_ws.malformed || _ws.expert.severity >= error' -T fields -e frame.number 2>/dev/null | wc -l)
    if [ "$want" = "$got" ] && [ "$errors" -eq 0 ]; then
        echo "ok   $wrapped ($(echo "$got" | wc -l) frames, $(tshark -r "$wrapped" "$@" -T fields -e frame.protocols 2>/dev/null | head -1))"
    else
        echo "FAIL $wrapped (errors: $errors)"
        printf '%s\n' "$want" > /tmp/tunnel-want.txt; printf '%s\n' "$got" > /tmp/tunnel-got.txt
        diff /tmp/tunnel-want.txt /tmp/tunnel-got.txt | head -5
        status=1
    fi
done
exit $status
