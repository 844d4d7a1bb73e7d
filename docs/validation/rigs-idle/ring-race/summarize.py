"""The TCP state of the connections that moved the ring's data (ss-h0.txt, measure.sh):
median and range over the samples of Send-Q, cwnd, BBR's pacing rate and bandwidth
estimate, and the round trip. Usage: python3 summarize.py [ss-h0.txt]"""
import re
import statistics
import sys

UNIT = {"G": 1e9, "M": 1e6, "K": 1e3, "": 1.0}


def rate(info, name):
    m = re.search(name + r"[ :(]+([0-9.]+)([GMK]?)bps", info)
    return float(m.group(1)) * UNIT[m.group(2)] / 1e9 if m else None


def samples(path):
    lines = open(path).read().splitlines()
    by_peer = {}
    for head, info in zip(lines, lines[1:]):
        cols = head.split()
        if len(cols) < 4 or not cols[0].isdigit():
            continue
        sent = re.search(r"bytes_sent:(\d+)", info)
        cwnd = re.search(r"cwnd:(\d+)", info)
        mss = re.search(r" mss:(\d+)", info)
        rtt = re.search(r" rtt:([0-9.]+)", info)
        if not (sent and cwnd and mss and rtt) or int(sent.group(1)) < 10_000_000:
            continue  # the runtime's connections, not the data's
        by_peer.setdefault(cols[3], []).append({
            "send-q KB": int(cols[1]) / 1e3,
            "cwnd KB": int(cwnd.group(1)) * int(mss.group(1)) / 1e3,
            "pacing Gbit/s": rate(info, "pacing_rate"),
            "BBR bw Gbit/s": rate(info, "bbr:\\(bw"),
            "rtt ms": float(rtt.group(1))})
    return by_peer


def main(path="ss-h0.txt"):
    for peer, rows in sorted(samples(path).items()):
        print(f"{peer}: {len(rows)} samples")
        for key in rows[0]:
            v = [r[key] for r in rows if r[key] is not None]
            print(f"  {key:14s} median {statistics.median(v):8.3f}   range {min(v):8.3f} - {max(v):8.3f}")


if __name__ == "__main__":
    main(*sys.argv[1:])
