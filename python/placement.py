"""Where ranks run: the placement keyword, and Open MPI's rankfiles and hostfiles read into
a rank -> node map (docs/model.md, "Placement").

The engine owns the map (simulator/placement.cpp: block and cyclic are computed there,
and every map is checked against the platform there); this module only reads what a
user writes into the engine's terms:

- "block": Open MPI's default --map-by slot, ranks_per_node consecutive ranks per node.
- "cyclic": --map-by node (SLURM's cyclic): rank r on node r mod (ranks / ranks_per_node).
- a rankfile (Open MPI 4.1's rmaps_rank_file grammar: `rank N=HOST slot=LIST` lines):
  rank N runs on HOST. Nodes are numbered in the order their hosts first appear in the
  file; `+nK` (Open MPI's K-th node of the allocation) is node K.
- a hostfile (`HOST [slots=K]` lines, orte/util/hostfile): the nodes in the file's order,
  ranks mapped as mpirun --hostfile FILE places them: "FILE" or "block:FILE" is
  --map-by slot (each host's slots filled in turn), "cyclic:FILE" is --map-by node
  (Open MPI 4.1's rmaps_rr_bynode counts per host, ranks dealt round-robin over hosts).
- a list of node indices, one per rank (what the JSON records for a file's map).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .errors import InputError

POLICIES = ("block", "cyclic")
# orte/mca/rmaps/rank_file/rmaps_rank_file_lex.l: a host is a name, an IPv4/IPv6 address,
# user@host, or +nK; a slot list is a STRING token ([A-Za-z0-9_-,;:*@]) or an integer.
_HOST = r"(?:[A-Za-z0-9][A-Za-z0-9_\-]*@)?(?:\+[nN]\d+|[A-Za-z0-9_\-.:]+)"
_RANK_LINE = re.compile(rf"^rank\s+(\d+)\s*=\s*({_HOST})\s+slots?\s*=\s*([A-Za-z0-9_\-,;:*@]+)$")
_RANK_START = re.compile(r"^rank\b")
# orte/util/hostfile/hostfile_lex.l: slots, count and cpu give the slots; the max-slots
# spellings cap them.
_SLOTS_KEYS = ("slots", "count", "cpu")
_MAX_KEYS = ("max_slots", "max-slots", "slots_max", "slots-max", "cpu_max", "cpu-max", "max_cpu",
             "max-cpu", "count_max", "count-max", "max_count", "max-count")


@dataclass(frozen=True)
class Placement:
    """A resolved placement: the engine's policy ("block", "cyclic" or "map") and, for a
    map, the node of each rank, the host name of each node (when a file named them) and
    the file it was read from."""

    policy: str
    node_map: tuple[int, ...] = ()
    hosts: tuple[str, ...] = ()
    source: str = ""

    def ranks_per_node(self) -> int:
        """The most ranks on one node of an explicit map."""
        counts: dict[int, int] = {}
        for n in self.node_map:
            counts[n] = counts.get(n, 0) + 1
        return max(counts.values()) if counts else 1


def resolve(value, ranks: int, base_dir: Path | None = None) -> Placement:
    """The Placement of a keyword value: "block", "cyclic", a file ("PATH",
    "block:PATH" or "cyclic:PATH" for a hostfile), or a list of node indices. InputError
    (one line, file:line for a file) on anything else."""
    if value is None or value == "block":
        return Placement("block")
    if value == "cyclic":
        return Placement("cyclic")
    if isinstance(value, (list, tuple)):
        if not all(isinstance(n, int) and not isinstance(n, bool) for n in value):
            raise InputError(f"placement: a map is a list of node indices, got {list(value)[:8]!r}")
        if len(value) != ranks:
            raise InputError(f"placement: the map has {len(value)} entries for {ranks} ranks")
        if any(n < 0 for n in value):
            raise InputError("placement: node indices start at 0")
        return Placement("map", tuple(value))
    if not isinstance(value, str) or not value:
        raise InputError(f"placement: must be block, cyclic, a rankfile or hostfile, or a list "
                         f"of node indices, got {value!r}")
    policy, _, path = value.partition(":")
    if policy not in POLICIES or not path:
        policy, path = "", value
    p = Path(path)
    if base_dir is not None and not p.is_absolute():
        p = base_dir / p
    if not p.is_file():
        raise InputError(f"placement: {value!r} is not block, cyclic or an existing rankfile or "
                         f"hostfile")
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"placement: cannot read {p}: {getattr(e, 'strerror', None) or e}") from None
    return read(text, str(p), ranks, policy)


def read(text: str, source: str, ranks: int, policy: str = "") -> Placement:
    """A rankfile's or hostfile's map for `ranks` ranks (the kind is recognised from the
    content: a rankfile's lines start with `rank`)."""
    lines = _lines(text)
    if any(_RANK_START.match(t) for _, t in lines):
        if policy:
            raise InputError(f"{source}: a rankfile places every rank itself; {policy}: applies "
                             f"to a hostfile")
        return _rankfile(lines, source, ranks)
    return _hostfile(lines, source, ranks, policy or "block")


def _lines(text: str) -> list[tuple[int, str]]:
    """(line number, content) without comments (#, //, /* */) or blank lines, as the
    flex scanners of both formats skip them."""
    out, in_block = [], False
    for number, line in enumerate(text.splitlines(), 1):
        kept = ""
        while line:
            if in_block:
                end = line.find("*/")
                if end < 0:
                    line = ""
                    continue
                line, in_block = line[end + 2:], False
                continue
            starts = [i for i in (line.find("#"), line.find("//"), line.find("/*")) if i >= 0]
            if not starts:
                kept += line
                break
            i = min(starts)
            kept += line[:i]
            if line.startswith("/*", i):
                line, in_block = line[i + 2:], True
            else:
                line = ""
        if kept.strip():
            out.append((number, kept.strip()))
    return out


def _short(host: str) -> str:
    """Open MPI's node name: the user@ dropped, a domain stripped unless an IP address."""
    host = host.rsplit("@", 1)[-1]
    if re.fullmatch(r"[\d.]+|[0-9A-Fa-f:]*:[0-9A-Fa-f:]*", host):
        return host
    return host.split(".", 1)[0]


def _rankfile(lines, source: str, ranks: int) -> Placement:
    node_of: dict[int, int] = {}
    names: dict[str, int] = {}
    relative = named = None
    for number, text in lines:
        m = _RANK_LINE.match(text)
        if not m:
            raise InputError(f"{source}:{number}: expected 'rank N=HOST slot=LIST' (Open MPI "
                             f"rankfile), got {text[:60]!r}")
        rank, host = int(m.group(1)), m.group(2)
        if rank in node_of:
            raise InputError(f"{source}:{number}: rank {rank} is placed twice")
        if re.fullmatch(r"\+[nN]\d+", host):
            relative = relative or number
            node = int(host[2:])
        else:
            named = named or number
            node = names.setdefault(_short(host), len(names))
        if relative and named:
            raise InputError(f"{source}:{max(relative, named)}: mixes host names and +n relative "
                             f"nodes; use one kind")
        node_of[rank] = node
    missing = [r for r in range(ranks) if r not in node_of]
    if missing:
        raise InputError(f"{source}: rank {missing[0]} has no line; a rankfile must place "
                         f"every rank of the run ({ranks})")
    # As mpirun -np N with a longer rankfile: ranks N and above are not launched.
    node_map = tuple(node_of[r] for r in range(ranks))
    hosts = tuple(sorted(names, key=names.get)) if named else ()
    return Placement("map", node_map, hosts, source)


def _hostfile(lines, source: str, ranks: int, policy: str) -> Placement:
    slots: dict[str, int] = {}
    given: set[str] = set()
    for number, text in lines:
        words = text.replace("=", " = ").split()
        host = words[0]
        if host.startswith("^") or host.startswith("+"):
            raise InputError(f"{source}:{number}: excluded (^) and relative (+) hosts are not "
                             f"read; list the hosts to use")
        if not re.fullmatch(_HOST, host):
            raise InputError(f"{source}:{number}: expected 'HOST [slots=K]' (Open MPI hostfile), "
                             f"got {text[:60]!r}")
        name = _short(host)
        rest, count, cap = words[1:], None, None
        while rest:
            if len(rest) < 3 or rest[1] != "=":
                raise InputError(f"{source}:{number}: expected KEY=VALUE after the host, got "
                                 f"{' '.join(rest)[:40]!r}")
            key, value, rest = rest[0], rest[2], rest[3:]
            if key in _SLOTS_KEYS + _MAX_KEYS:
                if not value.isdigit() or int(value) < 1:
                    raise InputError(f"{source}:{number}: {key} must be a positive integer, got "
                                     f"{value!r}")
                if key in _SLOTS_KEYS:
                    count = int(value)
                else:
                    cap = int(value)
            elif key not in ("port", "username", "user_name", "user-name"):
                raise InputError(f"{source}:{number}: unknown hostfile key {key!r} (read: "
                                 f"slots, max_slots)")
        if count is not None and (name in given or name in slots):
            raise InputError(f"{source}:{number}: the slots of {name} are given twice")
        if count is not None and cap is not None and cap < count:
            raise InputError(f"{source}:{number}: max_slots {cap} is below slots {count}")
        if count is None:
            count = cap if cap is not None and name not in slots else None
        if count is not None:
            slots[name] = count
            given.add(name)
        else:  # a host line without slots: one slot, one more per repeated line
            slots[name] = slots.get(name, 0) + 1
    if not slots:
        raise InputError(f"{source}: no host in this hostfile")
    hosts = tuple(slots)
    total = sum(slots.values())
    if ranks > total:
        raise InputError(f"{source}: {ranks} ranks need {ranks} slots; the hostfile has {total} "
                         f"(mpirun would refuse without --oversubscribe)")
    capacity = [slots[h] for h in hosts]
    counts = _by_slot(capacity, ranks) if policy == "block" else _by_node(capacity, ranks)
    return Placement("map", _deal(counts, policy), hosts, source)


def _by_slot(capacity: list[int], ranks: int) -> list[int]:
    """--map-by slot (rmaps_rr_byslot): each host's slots filled in the file's order."""
    counts, left = [], ranks
    for c in capacity:
        counts.append(min(c, left))
        left -= counts[-1]
    return counts


def _by_node(capacity: list[int], ranks: int) -> list[int]:
    """--map-by node (rmaps_rr_bynode, not oversubscribed): the ranks spread evenly over
    the hosts, a host with fewer free slots than its share taking what it has, the
    rest spread again."""
    counts = [0] * len(capacity)
    mapped, nodes = 0, len(capacity)
    while mapped < ranks and nodes > 0:
        left = ranks - mapped
        avg = max(left // nodes, 1)
        balance = (left - avg * nodes) / nodes
        extra, extra_nodes, add_one = int(balance), 0, False
        if balance - extra > 0:
            extra_nodes = left - (avg + extra) * nodes
            extra, add_one = extra + 1, True
        nodes = 0
        for i, c in enumerate(capacity):
            if c <= counts[i]:
                continue
            if add_one:
                if extra_nodes == 0:
                    extra, add_one = extra - 1, False
                else:
                    extra_nodes -= 1
            take = min(c - counts[i], avg + extra)
            nodes += 1
            take = min(take, ranks - mapped)
            counts[i] += take
            mapped += take
    return counts


def _deal(counts: list[int], policy: str) -> tuple[int, ...]:
    """Ranks to hosts: by slot, each host's ranks consecutive; by node (Open MPI ranks
    by node after mapping by node), one rank per host per round, skipping full hosts."""
    if policy == "block":
        return tuple(n for n, c in enumerate(counts) for _ in range(c))
    out, left = [], list(counts)
    while any(left):
        for n in range(len(left)):
            if left[n]:
                out.append(n)
                left[n] -= 1
    return tuple(out)
