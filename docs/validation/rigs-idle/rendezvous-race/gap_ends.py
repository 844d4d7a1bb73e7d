"""What ends each idle gap of one emulated host's outgoing data in a packet capture.

    tcpdump -i BRIDGE -n -tt -s 96 -w run.pcap tcp      (while `hopsim live` runs)
    python gap_ends.py run.pcap HOST FROM_MS TO_MS

HOST is the last byte of the host's address. For every gap of more than 2 ms between its
data segments (over 300 B) within the window, the packets it received in the 0.3 ms
before the data resumed: a pure ACK ("ack"), data of a peer (which carries an ACK or a
window update too: "data"), a control-sized segment ("ctl"), or nothing ("none", the
sending process itself). Used for README.md's cyclic capture; not part of hopsim.
"""
import collections
import re
import subprocess
import sys

LINE = re.compile(r"(\d+\.\d+) IP \d+\.\d+\.\d+\.(\d+)\.\d+ > \d+\.\d+\.\d+\.(\d+)\.\d+: .*length (\d+)")
text = subprocess.run(["tcpdump", "-r", sys.argv[1], "-n", "-tt"], capture_output=True, text=True).stdout
events = [(float(m[1]), m[2], m[3], int(m[4])) for m in map(LINE.match, text.splitlines())
          if m and "254" not in (m[2], m[3])]
t0 = events[0][0]
host, lo, hi = sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
last_out, received, ends = None, [], collections.Counter()
for t, src, dst, n in events:
    ms = (t - t0) * 1000
    if not lo <= ms <= hi:
        continue
    if dst == host:
        received.append((ms, n))
    if src == host and n > 300:
        if last_out is not None and ms - last_out > 2.0:
            before = [k for when, k in received if ms - 0.3 <= when <= ms]
            kind = ("data" if any(k > 300 for k in before) else "") + \
                   ("ctl" if any(0 < k <= 300 for k in before) else "") + \
                   ("ack" if any(k == 0 for k in before) else "")
            ends[kind or "none"] += 1
        last_out = ms
        received = [(w, k) for w, k in received if w > ms - 1]
print(f"host {host}: gaps ending after", dict(sorted(ends.items())))
