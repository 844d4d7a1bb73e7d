"""count.py FIT DIR: the rigs report's counting (calibration/latency_bound.py, 2 cores) of the files in DIR, validated on FIT: per-file median abs error over the counted cases."""
import json, subprocess, sys, statistics
from pathlib import Path
from hopsim.calibration.latency_bound import counted_flags, rig_half_length
plat, d = sys.argv[1], Path(sys.argv[2])
nh = rig_half_length(sorted(d.glob('imb-pingpong-2x1-*.txt')))
groups = [('4', '1', 'block', '*-4x1-block-*'), ('4', '2', 'block', '*-4x2-block-*'),
          ('4', '2', 'cyclic', '*-4x2-node-*'), ('2', '1', 'block', '*-2x1-block-*')]
meds = {}
for nodes, rpn, pl, pat in groups:
    files = sorted(str(p) for p in d.glob(pat + '.txt'))
    out = subprocess.run([sys.executable, '-m', 'hopsim', 'validate', '--platform', plat, '--nodes', nodes,
                          '--ranks-per-node', rpn, '--placement', pl, *files, '--json'],
                         capture_output=True, text=True)
    cases = json.loads(out.stdout)['cases']
    by = {}
    for c, n in zip(cases, counted_flags(cases, 2, nh)):
        if n:
            by.setdefault(Path(c['file']).name, []).append(abs(c['error_pct']))
    for f, e in by.items():
        meds[f] = statistics.median(e)
for f in sorted(meds):
    print(f'{f:40s} {meds[f]:6.1f}')
four = [v for f, v in meds.items() if '-4x' in f]
two = [v for f, v in meds.items() if '-2x1' in f]
print(f'n_half {nh:.0f} B; 4-host: median over files {statistics.median(four):.1f} (worst {max(four):.1f}) over {len(four)} files; '
      f'2-host: {statistics.median(two):.1f} (worst {max(two):.1f}) over {len(two)} files')
