"""Where each emulated host's link sat idle during a packet capture between the hosts.

    tcpdump -i BRIDGE -n -tt -s 96 -w run.pcap tcp      (while `hopsim live` runs)
    python link_idle.py run.pcap FROM_MS TO_MS > capture-....txt

Per sending host (the last byte of its address), the gaps of more than 2 ms between its
data segments (over 300 B) within the window: how long its link carried nothing. Used
for README.md's 4x1 capture; not part of hopsim.
"""
import re,subprocess,sys,collections
LINE = re.compile(r"(\d+\.\d+) IP \d+\.\d+\.\d+\.(\d+)\.(\d+) > \d+\.\d+\.\d+\.(\d+)\.(\d+): .*length (\d+)")
text=subprocess.run(["tcpdump","-r",sys.argv[1],"-n","-tt"],capture_output=True,text=True).stdout
ev=[]
for l in text.splitlines():
    m=LINE.match(l)
    if m and "254" not in (m[2],m[4]) and int(m[6])>0:
        ev.append((float(m[1]),m[2],m[4],int(m[6])))
t0=ev[0][0]
lo,hi=float(sys.argv[2]),float(sys.argv[3])
last={}
gaps=collections.defaultdict(list)
for t,s,d,n in ev:
    ms=(t-t0)*1000
    if ms<lo or ms>hi or n<300: continue
    if s in last and ms-last[s]>2.0: gaps[s].append((round(last[s],2),round(ms-last[s],2)))
    last[s]=ms
for s in sorted(gaps):
    tot=sum(g for _,g in gaps[s])
    print(s,"idle ms total %.1f over %.0f ms"%(tot,hi-lo), gaps[s][:12])
