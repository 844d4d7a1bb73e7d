"""Bytes per direction and time bin of a packet capture between emulated hosts.

    tcpdump -i BRIDGE -n -tt -s 96 -w run.pcap tcp      (while `hopsim live` runs)
    python timeline.py run.pcap 5 > timeline.txt       (5 ms bins)

Reads `tcpdump -r`'s text (tcpdump must be installed), keeps the TCP segments between
the hosts (not the bridge address .254, where mpirun's daemons talk), and prints one
row per bin with the payload bytes of each host-to-host direction, in KB: which
direction is busy when. Used for README.md's timeline; not part of hopsim.
"""
import collections
import re
import subprocess
import sys

LINE = re.compile(r"(\d+\.\d+) IP \d+\.\d+\.\d+\.(\d+)\.\d+ > \d+\.\d+\.\d+\.(\d+)\.\d+: .*length (\d+)")


def main(pcap: str, bin_ms: float) -> None:
    text = subprocess.run(["tcpdump", "-r", pcap, "-n", "-tt"], capture_output=True,
                          text=True, check=True).stdout
    packets = []
    for line in text.splitlines():
        m = LINE.match(line)
        if m and "254" not in (m[2], m[3]) and int(m[4]) > 0:
            packets.append((float(m[1]), f"{m[2]}>{m[3]}", int(m[4])))
    t0 = packets[0][0]
    pairs = sorted({p for _, p, _ in packets})
    bins = collections.defaultdict(collections.Counter)
    for t, pair, n in packets:
        bins[int((t - t0) * 1000 / bin_ms)][pair] += n
    print("    ms " + " ".join(f"{p:>6}" for p in pairs))
    for b in range(max(bins) + 1):
        print(f"{b * bin_ms:6.0f} " + " ".join(f"{bins[b][p] // 1000:6d}" for p in pairs))


if __name__ == "__main__":
    main(sys.argv[1], float(sys.argv[2]))
