"""Random sdma schedules, race-free and deadlock-free by construction.

generate(seed) -> schedule dict (see sdmair.print_schedule), deterministic
in the seed. Two families:
- 'free': random copies/bcasts/swaps over several buffers, single ops and
  loops (affine.for / scf.for, rank_add and arith), random syncs;
- 'collective': a random correct decomposition of all_gather, all_to_all,
  broadcast, scatter or gather (direct loops, staged through a temp buffer,
  relayed through other ranks, forwarded along random trees with bcasts,
  in-place swaps, the ring), declared with `implements` most of the time.

Construction: statements are appended in text order; text order is the
intended sequential semantics. Before a statement is appended, its flat ops
are checked against everything before (happens-before, hbcheck); each
unordered conflict gets a sync placed before the statement that orders the
earlier op before the new one (a fence on the shared issuing rank, the
same engine, a signal/wait pair from the earlier op's issuer to the new
one's, or a barrier). Waits always follow their signals in text order, so
text order is a valid execution: no deadlock.

Pulls: about one copy statement in five is made a pull (`sdma.copy pull`,
issued by its destination's rank) as it is added, by a second random
stream (so a seed's other choices stay what they were until a pull needs
other syncs). Issuers come from hbcheck.issuer, so the syncs placed for a
pull are on its destination's rank. A statement whose own ops race as
pulls (a loop ordered by its sources' signals) is added as puts instead.
"""

import hbcheck
from sdmair import C, V, DATA, expand

TAGS = [0, 0, 0, 1, 2, 7]
PULL = 0.2      # the share of copy statements made pulls


class Builder:
    def __init__(self, rng, ranks, sizes, prng=None):
        """prng: the random stream that picks the pulls (None: no pulls)."""
        self.rng, self.ranks, self.sizes = rng, ranks, sizes
        self.prng = prng if 'pull' not in AVOID else None
        self.stmts, self.flat = [], []
        self.inc = hbcheck.Incremental(ranks)
        self.syncs = 0

    def with_pulls(self, stmt):
        """stmt with some of its copies made pulls (stmt itself if none)."""
        if self.prng is None:
            return stmt
        if stmt[0] == 'op':
            op = stmt[1]
            if op['op'] == 'copy' and not op.get('pull') and self.prng.random() < PULL:
                return ('op', dict(op, pull=True))
            return stmt
        body = [self.with_pulls(st) for st in stmt[5]]
        if all(a is b for a, b in zip(body, stmt[5])):
            return stmt
        return stmt[:5] + (body,)

    def sync_stmt(self, op):
        self.stmts.append(('op', op))
        self.flat.extend(expand([('op', op)], self.ranks))
        self.syncs += 1

    def fix(self, x, y, y_stmt):
        """Order flat op x before the new op y (issuers a, b)."""
        rng = self.rng
        a, b = hbcheck.issuer(self.flat[x]), hbcheck.issuer(y)
        roll = rng.random()
        if roll < 0.06:
            return self.sync_stmt({'op': 'barrier'})
        if a == b:
            ex = self.flat[x].get('engine')
            single = y_stmt[0] == 'op' and y_stmt[1]['op'] in DATA
            if ex is not None and single and roll < 0.35 and y_stmt[1].get('engine') is None:
                y_stmt[1]['engine'] = ex      # same engine queue: program order
                return
            if roll < 0.25:
                return self.sync_stmt({'op': 'fence', 'rank': None})
            return self.sync_stmt({'op': 'fence', 'rank': C(a)})
        tag = rng.choice(TAGS)
        self.sync_stmt({'op': 'signal', 'from': C(a), 'to': C(b), 'tag': tag})
        self.sync_stmt({'op': 'wait', 'rank': C(b), 'from': C(a), 'tag': tag})

    def add(self, stmt, max_fixes=60):
        """Append stmt (some copies made pulls) with the syncs it needs;
        False if its own ops race."""
        pulled = self.with_pulls(stmt)
        if pulled is not stmt:
            mark = (len(self.stmts), len(self.flat), self.syncs)
            if self.add_as_is(pulled, max_fixes):
                return True
            # Its own ops race as pulls: nothing was added; add it as puts.
            assert mark == (len(self.stmts), len(self.flat), self.syncs)
        return self.add_as_is(stmt, max_fixes)

    def add_as_is(self, stmt, max_fixes=60):
        """Append stmt with the syncs it needs; False if its own ops race."""
        for _ in range(max_fixes):
            new = expand([stmt], self.ranks)
            if not new:
                return False
            for op in new:
                if hbcheck.invalid_reason(op, self.ranks, self.sizes) or avoided(op):
                    return False
            start = len(self.flat)
            races = self.inc.conflicts(self.flat + new, start)
            if races is None:
                raise AssertionError('generator produced a deadlock')
            if not races:
                self.stmts.append(stmt)
                self.flat.extend(new)
                return True
            inner = [rc for rc in races if rc[0] >= start]
            if inner:
                return False
            i, j = races[0][0], races[0][1]
            self.fix(i, new[j - start], stmt)
        raise AssertionError('could not order a statement')

    def noise_sync(self):
        rng, r = self.rng, self.ranks
        roll = rng.random()
        if roll < 0.3:
            self.sync_stmt({'op': 'fence', 'rank': C(rng.randrange(r)) if rng.random() < 0.6 else None})
        elif roll < 0.4:
            self.sync_stmt({'op': 'barrier'})
        elif roll < 0.6:
            # A loop of fences, one per rank.
            self.stmts.append(('loop', rng.choice(['affine', 'scf']), 'f', 0, 'R',
                               [('op', {'op': 'fence', 'rank': V('f')})]))
            self.flat.extend(expand([self.stmts[-1]], r))
        else:
            a = rng.randrange(r)
            b = (a + rng.randrange(1, r)) % r
            tag = rng.choice(TAGS)
            self.sync_stmt({'op': 'signal', 'from': C(a), 'to': C(b), 'tag': tag})
            self.sync_stmt({'op': 'wait', 'rank': C(b), 'from': C(a), 'tag': tag})


# ---------------------------------------------------------------- buffers
def size_form(rng, need, ranks):
    """(k, n) with k * ranks + n >= need, in a random written form."""
    k = rng.randint(0, need // ranks)
    n = need - k * ranks + rng.choice([0, 0, 1, 2])
    return (k, n) if k or n else (0, 1)


def rand_slice(rng, ranks, sizes, bufs, count=None):
    b = rng.choice(bufs)
    size = sizes[b]
    cnt = count if count is not None else rng.randint(1, max(1, min(3, size)))
    if cnt > size:
        return None
    return (C(rng.randrange(ranks)), b, C(rng.randint(0, size - cnt)), cnt)


# ---------------------------------------------------------------- free mode
AVOID = set()   # constructs left out (difftest.py --avoid): known, open bugs


def avoided(op):
    if op['op'] != 'copy':
        return False
    return (('self-copy' in AVOID and op['src'] == op['dst']) or
            ('pull' in AVOID and bool(op.get('pull'))))


def free_data_op(rng, ranks, sizes, bufs):
    kind = rng.choice(['copy', 'copy', 'copy', 'bcast', 'swap'])
    src = rand_slice(rng, ranks, sizes, bufs)
    if src is None:
        return None
    n = src[3]
    others = [rand_slice(rng, ranks, sizes, bufs, n) for _ in range(2)]
    if None in others:
        return None
    if kind == 'swap' and rng.random() < 0.4:
        # Two disjoint regions of one buffer on one rank.
        others[0] = (src[0], src[1], C(rng.randint(0, sizes[src[1]] - n)), n)
    if kind == 'copy' and rng.random() < 0.03 and 'self-copy' not in AVOID:
        others[0] = src                       # a legal copy of a slice onto itself
    op = {'copy': lambda: {'op': 'copy', 'src': src, 'dst': others[0]},
          'bcast': lambda: {'op': 'bcast', 'src': src, 'dst': others},
          'swap': lambda: {'op': 'swap', 'a': src, 'b': others[0]}}[kind]()
    op['engine'] = rng.randrange(3) if rng.random() < 0.3 else None
    return op


def free_loop(rng, ranks, sizes, bufs):
    """for r: copy B1[a*r + b] on r -> B2[...] on rank_add(r, d) (and
    variations: a bcast, a signal/wait ring around it)."""
    b1, b2 = rng.choice(bufs), rng.choice(bufs)
    n = rng.randint(1, 2)
    d = rng.randrange(ranks)
    r = V('r')

    def off(buf):
        if sizes[buf] >= ranks * n and rng.random() < 0.6:
            which = rng.choice([r, ('radd', r, C(d))])
            return ('mul', which, n)
        return C(rng.randint(0, sizes[buf] - n)) if sizes[buf] >= n else None
    o1, o2 = off(b1), off(b2)
    if o1 is None or o2 is None:
        return None
    dst_rank = ('radd', r, C(d if rng.random() < 0.7 else d - ranks))
    body = [('op', {'op': 'copy', 'src': (r, b1, o1, n), 'dst': (dst_rank, b2, o2, n),
                    'engine': rng.randrange(3) if rng.random() < 0.2 else None})]
    lo = rng.choice([0, 0, 0, 1]) if ranks > 2 else 0
    loop = ('loop', rng.choice(['affine', 'scf']), 'r', lo, 'R', body)
    if d and rng.random() < 0.35:
        # Ring hand-off: every iteration signals its peer; then all wait.
        tag = rng.choice(TAGS)
        body.append(('op', {'op': 'signal', 'from': r, 'to': dst_rank, 'tag': tag}))
        waits = ('loop', 'affine', 'w', lo, 'R',
                 [('op', {'op': 'wait', 'rank': ('radd', V('w'), C(d)), 'from': V('w'), 'tag': tag})])
        return [loop, waits]
    return [loop]


def exchange(rng, bld, ranks, sizes, names):
    """Opposite copies between two ranks (what sdma-fuse-swap rewrites),
    then a forward of what arrived (its order comes from a hand-off)."""
    p = rng.randrange(ranks)
    q = (p + rng.randrange(1, ranks)) % ranks
    b = rng.choice(names)
    n = 1 if sizes[b] < 4 else rng.randint(1, sizes[b] // 4)
    if sizes[b] < 2 * n:
        return
    lo, hi = C(0), C(sizes[b] - n)
    there = (C(q), b, hi, n)
    back = (C(p), b, hi, n)
    if not bld.add(('op', {'op': 'copy', 'src': (C(p), b, lo, n), 'dst': there, 'engine': None})):
        return
    if not bld.add(('op', {'op': 'copy', 'src': (C(q), b, lo, n), 'dst': back, 'engine': None})):
        return
    fwd = (C(rng.randrange(ranks)), rng.choice(names), None, n)
    size = sizes[fwd[1]]
    if size >= n:
        dst = (fwd[0], fwd[1], C(rng.randint(0, size - n)), n)
        bld.add(('op', {'op': 'copy', 'src': rng.choice([there, back]), 'dst': dst,
                        'engine': None}))


def a2a_block(rng, bld, ranks, sizes, names):
    """for d, for r: B1[(r+d)*n] on r -> B2[r*n] on r+d (an all-to-all
    between two buffers, which swap fusion rewrites), then forwards."""
    fit = [b for b in names if sizes[b] >= ranks]
    if len(fit) < 2:
        return
    b1, b2 = rng.sample(fit, 2)
    n = min(sizes[b1], sizes[b2]) // ranks
    r, d = V('r'), V('d')
    body = [('op', {'op': 'copy', 'src': (r, b1, ('mul', ('radd', r, d), n), n),
                    'dst': (('radd', r, d), b2, ('mul', r, n), n), 'engine': None})]
    lo = rng.choice([0, 1])
    if not bld.add(('loop', rng.choice(['affine', 'scf']), 'd', lo, 'R',
                    [('loop', rng.choice(['affine', 'scf']), 'r', 0, 'R', body)])):
        return
    for _ in range(rng.randint(0, 3)):
        q = rng.randrange(ranks)
        src = (C(q), b2, C(rng.randrange(ranks) * n), n)
        dst = rand_slice(rng, ranks, sizes, names, n)
        if dst and not (dst[0] == src[0] and dst[1] == b2):
            bld.add(('op', {'op': 'copy', 'src': src, 'dst': dst, 'engine': None}))


def gen_free(rng, ranks, prng=None):
    nbuf = rng.randint(2, 4)
    names = ['in', 'b1', 'b2', 'b3'][:nbuf]
    buffers = []
    for i, name in enumerate(names):
        need = rng.choice([1, 2, 3, ranks, 2 * ranks, ranks + 1])
        buffers.append((name,) + size_form(rng, need, ranks))
    sizes = {b: k * ranks + n for b, k, n in buffers}
    bld = Builder(rng, ranks, sizes, prng)
    steps = rng.randint(4, 16)
    for _ in range(steps):
        roll = rng.random()
        if roll < 0.15:
            bld.noise_sync()
            continue
        if roll < 0.45:
            stmts = free_loop(rng, ranks, sizes, names)
            if stmts:
                if bld.add(stmts[0]) and len(stmts) > 1:
                    bld.add(stmts[1])
            continue
        if roll < 0.55:
            exchange(rng, bld, ranks, sizes, names)
            continue
        if roll < 0.62:
            a2a_block(rng, bld, ranks, sizes, names)
            continue
        op = free_data_op(rng, ranks, sizes, names)
        if op:
            bld.add(('op', op))
    return {'buffers': buffers, 'stmts': bld.stmts, 'implements': None, 'flat': bld.flat}
