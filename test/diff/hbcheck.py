"""An independent checker of flat sdma schedules (stdlib only).

It does not share code or data structures with sdma-verify: it rebuilds the
happens-before order from the written contract, finds races and deadlocks,
and executes the schedule symbolically (chunk provenance) to check the
collective's postcondition.

Ordering contract (README, "Ordering model"):
- a copy, bcast or swap is issued by the rank of its first slice (a
  copy's source), a pull copy (`sdma.copy pull`) and a reduce by their
  destination's rank; a signal by its source, a wait by its waiting rank;
  fences, signals, waits and engines order a data op on its issuing rank
  only, whichever ranks' memory it touches;
- a fence on rank r (or on all ranks) orders r's earlier ops before r's
  later ops; a barrier orders every earlier op before every later op;
- the k-th wait (b <- a, tag) matches the k-th signal (a -> b, tag); the
  signal follows every op a issued before it, and the ops b issues after
  the wait follow the signal (a wait orders nothing issued before it);
- two data ops of one rank with the same engine run in program order;
- program order alone orders nothing;
- sdma.reduce (issued by its destination's rank) reads its source and
  reads and writes its destination; two reduces into the identical slice
  with the same operator accumulate: they need no order between them.
Reductions execute as multisets of the input chunks combined into a chunk,
which the postcondition compares with every rank's input chunk once.
"""
from sdmair import DATA, slices_of


def issuer(op):
    """The rank that issues op (its fences, signals, waits and engines
    order it)."""
    k = op['op']
    if k == 'copy':
        return (op['dst'] if op.get('pull') else op['src'])[0]
    if k == 'reduce':
        return op['dst'][0]
    if k in DATA:
        return slices_of(op)[0][0]
    if k == 'signal':
        return op['from']
    return op['rank']


def accesses(op):
    """(rank, buffer, lo, hi, writes) per slice of a data op."""
    k = op['op']
    if k == 'copy' and op['src'] == op['dst']:
        # A copy onto itself writes back what is there: only its read can
        # conflict (a concurrent write to it races with the read).
        s = op['src']
        return [(s[0], s[1], s[2], s[2] + s[3], False)]
    out = []
    for i, s in enumerate(slices_of(op)):
        write = k == 'swap' or (i == 0 if k == 'reduce' else i > 0)
        out.append((s[0], s[1], s[2], s[2] + s[3], write))
    return out


def accumulate(a, b):
    """Two reduces into the identical slice with the same operator."""
    return (a['op'] == 'reduce' and b['op'] == 'reduce' and
            a['kind'] == b['kind'] and a['dst'] == b['dst'])


def invalid_reason(op, ranks, sizes):
    """What the op verifier (or sdma-unroll) must reject, or None."""
    k = op['op']
    for key in ('rank', 'from', 'to'):
        v = op.get(key)
        if k not in DATA and v is not None and not 0 <= v < ranks:
            return 'rank out of range'
    if k not in DATA:
        return None
    sl = slices_of(op)
    for r, b, off, cnt in sl:
        if not 0 <= r < ranks:
            return 'rank out of range'
        if off < 0 or cnt <= 0 or off + cnt > sizes[b]:
            return 'slice out of bounds'
    if any(s[3] != sl[0][3] for s in sl):
        return 'sizes differ'
    if k == 'copy' and sl[0] == sl[1]:
        return None                           # a copy onto itself is legal
    for i in range(len(sl)):
        for j in range(i + 1, len(sl)):
            a, b = sl[i], sl[j]
            if a[0] == b[0] and a[1] == b[1] and a[2] < b[2] + b[3] and b[2] < a[2] + a[3]:
                return 'slices overlap'
    return None


def match_waits(ops):
    """wait index -> signal index; unmatched waits as (rank, from, tag,
    waits, signals)."""
    signals, waits = {}, {}
    for i, op in enumerate(ops):
        if op['op'] == 'signal':
            signals.setdefault((op['from'], op['to'], op['tag']), []).append(i)
        elif op['op'] == 'wait':
            waits.setdefault((op['from'], op['rank'], op['tag']), []).append(i)
    match, unmatched = {}, []
    for key, ws in waits.items():
        ss = signals.get(key, [])
        for k, w in enumerate(ws):
            if k < len(ss):
                match[w] = ss[k]
        if len(ws) > len(ss):
            unmatched.append((key[1], key[0], key[2], len(ws), len(ss)))
    return match, unmatched


def build_graph(ops, ranks, match):
    """Nodes: one per op, plus one per rank for a fence on all ranks
    (numbered after the ops). Returns the predecessor lists."""
    preds = [[] for _ in ops]
    last_fence = [None] * ranks
    since = [[] for _ in range(ranks)]     # ops of r since its last fence
    waits = [[] for _ in range(ranks)]     # waits of r since its last fence
    engines = {}

    def fence_node(r, pred_extra=()):
        node = len(preds)
        preds.append([x for x in [last_fence[r]] if x is not None] + since[r] + list(pred_extra))
        last_fence[r], since[r], waits[r] = node, [], []
        return node

    for i, op in enumerate(ops):
        k = op['op']
        if k == 'barrier':
            before = [x for r in range(ranks) for x in ([last_fence[r]] if last_fence[r] is not None else []) + since[r]]
            preds[i] = before
            for r in range(ranks):
                last_fence[r], since[r], waits[r] = i, [], []
            continue
        if k == 'fence':
            for r in ([op['rank']] if op['rank'] is not None else range(ranks)):
                fence_node(r)
            continue
        r = issuer(op)
        base = [x for x in [last_fence[r]] if x is not None]
        if k == 'wait':
            preds[i] = base + ([match[i]] if i in match else [])
            waits[r].append(i)
        elif k == 'signal':
            preds[i] = base + since[r]
        else:
            preds[i] = base + waits[r]
            e = op.get('engine')
            if e is not None:
                if (r, e) in engines:
                    preds[i].append(engines[(r, e)])
                engines[(r, e)] = i
        since[r].append(i)
    return preds


def topo_order(preds):
    n = len(preds)
    succ = [[] for _ in range(n)]
    indeg = [0] * n
    for v, ps in enumerate(preds):
        for p in ps:
            succ[p].append(v)
            indeg[v] += 1
    ready = [v for v in range(n) if indeg[v] == 0]
    order = []
    while ready:
        v = ready.pop()
        order.append(v)
        for w in succ[v]:
            indeg[w] -= 1
            if indeg[w] == 0:
                ready.append(w)
    return order if len(order) == n else None


def ancestors(preds, order):
    anc = [0] * len(preds)
    for v in order:
        a = 0
        for p in preds[v]:
            a |= anc[p] | (1 << p)
        anc[v] = a
    return anc


def find_races(ops, anc, only=None):
    """Unordered conflicting pairs: (i, j, rank, buffer, lo, hi) with i < j.
    only: restrict to pairs with j in this set."""
    by_loc = {}
    for i, op in enumerate(ops):
        if op['op'] in DATA:
            for r, b, lo, hi, w in accesses(op):
                by_loc.setdefault((r, b), []).append((i, lo, hi, w))
    races = []
    for (r, b), items in by_loc.items():
        for x in range(len(items)):
            i, lo1, hi1, w1 = items[x]
            for y in range(x + 1, len(items)):
                j, lo2, hi2, w2 = items[y]
                if i == j or not (w1 or w2) or lo1 >= hi2 or lo2 >= hi1:
                    continue
                a, c = min(i, j), max(i, j)
                if only is not None and c not in only:
                    continue
                if (anc[c] >> a) & 1 or (anc[a] >> c) & 1:
                    continue
                if accumulate(ops[a], ops[c]):
                    continue
                races.append((a, c, r, b, max(lo1, lo2), min(hi1, hi2)))
    return races


def combine(kind, a, b):
    """The value of `a` combined with `b` by `kind`: ('red', kind, sorted
    leaves), a multiset of input tokens (order-free: accumulating reduces
    commute); an operator mixed with another gives ('mixed',)."""
    leaves = []
    for x in (a, b):
        if x[0] == 'red':
            if x[1] != kind:
                return ('mixed',)
            leaves.extend(x[2])
        elif x[0] == 'mixed':
            return ('mixed',)
        else:
            leaves.append(x)
    return ('red', kind, tuple(sorted(leaves)))


def execute(ops, order, ranks, sizes):
    """Symbolic run in a linearisation of happens-before: chunk -> token
    ('init', rank, buffer, chunk), or a reduction of tokens (combine)."""
    mem = {}

    def get(r, b, c):
        return mem.get((r, b, c), ('init', r, b, c))
    for v in order:
        if v >= len(ops) or ops[v]['op'] not in DATA:
            continue
        op = ops[v]
        if op['op'] == 'reduce':
            (rd, bd, od, n), (rs, bs, os_, _) = op['dst'], op['src']
            for i in range(n):
                mem[(rd, bd, od + i)] = combine(op['kind'], get(rd, bd, od + i),
                                                get(rs, bs, os_ + i))
            continue
        if op['op'] == 'swap':
            (ra, ba, oa, n), (rb, bb, ob, _) = op['a'], op['b']
            va = [get(ra, ba, oa + i) for i in range(n)]
            vb = [get(rb, bb, ob + i) for i in range(n)]
            for i in range(n):
                mem[(ra, ba, oa + i)], mem[(rb, bb, ob + i)] = vb[i], va[i]
            continue
        (rs, bs, os_, n) = op['src']
        vals = [get(rs, bs, os_ + i) for i in range(n)]
        dsts = op['dst'] if op['op'] == 'bcast' else [op['dst']]
        for (rd, bd, od, _) in dsts:
            for i in range(n):
                mem[(rd, bd, od + i)] = vals[i]
    return get


def expected_output(impl, ranks, sizes, op=None):
    """(rank, out, chunk) -> ('init', src rank, in, chunk) of the collective
    (reductions: combine's value over every rank's chunk, with `op`)."""
    kind, src, dst, root = impl
    out = sizes[dst]
    want = {}

    def reduced(chunk):
        leaves = tuple(sorted(('init', p, src, chunk) for p in range(ranks)))
        return leaves[0] if ranks == 1 else ('red', op, leaves)
    if kind in ('all_reduce', 'reduce'):
        for r in range(ranks):
            if kind == 'reduce' and r != root:
                continue
            for i in range(out):
                want[(r, dst, i)] = reduced(i)
    elif kind == 'reduce_scatter':
        for r in range(ranks):
            for i in range(out):
                want[(r, dst, i)] = reduced(r * out + i)
    elif kind in ('all_gather', 'gather'):
        per = out // ranks
        for r in range(ranks):
            if kind == 'gather' and r != root:
                continue
            for i in range(out):
                want[(r, dst, i)] = ('init', i // per, src, i % per)
    elif kind == 'all_to_all':
        per = out // ranks
        for r in range(ranks):
            for i in range(out):
                want[(r, dst, i)] = ('init', i // per, src, r * per + i % per)
    elif kind == 'broadcast':
        for r in range(ranks):
            for i in range(out):
                want[(r, dst, i)] = ('init', root, src, i)
    else:  # scatter
        for r in range(ranks):
            for i in range(out):
                want[(r, dst, i)] = ('init', root, src, r * out + i)
    return want


def check(ops, ranks, sizes, impl=None):
    """Verdict: {'kind': ok|invalid|deadlock|race|post, ...}."""
    for op in ops:
        why = invalid_reason(op, ranks, sizes)
        if why:
            return {'kind': 'invalid', 'why': why}
    match, unmatched = match_waits(ops)
    preds = build_graph(ops, ranks, match)
    order = topo_order(preds)
    verdict = {'kind': 'ok'}
    if unmatched or order is None:
        verdict = {'kind': 'deadlock', 'unmatched': unmatched, 'cycle': order is None}
        return verdict
    anc = ancestors(preds, order)
    races = find_races(ops, anc)
    if races:
        return {'kind': 'race', 'races': races,
                'where': {(r, b) for _, _, r, b, _, _ in races}}
    get = execute(ops, order, ranks, sizes)
    if impl:
        op = next((o['kind'] for o in ops if o['op'] == 'reduce'), None)
        wrong = {key for key, tok in expected_output(impl, ranks, sizes, op).items()
                 if get(*key) != tok}
        if wrong:
            return {'kind': 'post', 'wrong': wrong}
    verdict['final'] = get
    return verdict


class Incremental:
    """The generator's view: is adding these ops race-free?"""

    def __init__(self, ranks):
        self.ranks = ranks

    def conflicts(self, ops, start):
        """Races between ops[start:] and anything (None: a deadlock)."""
        match, unmatched = match_waits(ops)
        if unmatched:
            return None
        preds = build_graph(ops, self.ranks, match)
        order = topo_order(preds)
        if order is None:
            return None
        anc = ancestors(preds, order)
        return find_races(ops, anc, only=set(range(start, len(ops))))
