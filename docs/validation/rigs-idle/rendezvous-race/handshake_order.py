"""The control messages and data runs between two emulated hosts, in time order, from a
packet capture on the cluster's bridge (`tcpdump -i BRIDGE -n -tt -s 96 -w run.pcap tcp`):

    python handshake_order.py run.pcap IP_A IP_B [FIRST LAST]

A packet of under 200 payload bytes is a control message ("ctl": Open MPI's TCP BTL
frames a rendezvous request as 40 bytes, a PUT as 64); the rest is data, merged per
direction into runs with gaps under 2 ms. Times from the first packet between them."""
import subprocess, sys
pcap, A, B = sys.argv[1], sys.argv[2], sys.argv[3]
lines = subprocess.run(["tcpdump", "-r", pcap, "-n", "-tt"], capture_output=True, text=True).stdout.splitlines()
ev = []
for l in lines:
    f = l.split()
    if len(f) < 5 or "length" not in f: continue
    t = float(f[0]); s = f[2].rsplit(".", 1)[0]; d = f[4].rstrip(":").rsplit(".", 1)[0]
    n = int(f[f.index("length") + 1].rstrip(","))
    if {s, d} != {A, B} or n == 0: continue
    ev.append((t, "->" if s == A else "<-", n))
t0 = ev[0][0]
runs = {"->": None, "<-": None}
out = []
for t, d, n in ev:
    if n < 200:
        out.append((t, f"{d} ctl {n}"))
        continue
    r = runs[d]
    if r and t - r[1] < 2e-3:
        r[1] = t; r[2] += n
    else:
        if r: out.append((r[0], f"{d} data {r[2]} B until {(r[1]-t0)*1e3:.1f}"))
        runs[d] = [t, t, n]
for d, r in runs.items():
    if r: out.append((r[0], f"{d} data {r[2]} B until {(r[1]-t0)*1e3:.1f}"))
first, last = (int(sys.argv[4]), int(sys.argv[5])) if len(sys.argv) > 5 else (0, None)
for t, s in sorted(out)[first:last]:
    print(f"{(t-t0)*1e3:9.3f} ms {s}")
