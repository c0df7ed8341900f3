"""Random correct decompositions of the five collectives (see gen.py)."""
from gen import Builder, TAGS, free_data_op, gen_free, size_form
from sdmair import C, V

KINDS = ['all_gather', 'all_to_all', 'broadcast', 'scatter', 'gather']
TMP = 'tmp'


def required_moves(kind, ranks, c, root, src, dst):
    """(source slice, destination slice) per block the collective moves."""
    moves = []
    for p in range(ranks):
        for q in range(ranks):
            if kind == 'all_gather':
                moves.append(((p, src, 0, c), (q, dst, p * c, c)))
            elif kind == 'all_to_all':
                if not (src == dst and p == q):
                    moves.append(((p, src, q * c, c), (q, dst, p * c, c)))
            elif kind == 'broadcast' and p == root:
                if not (src == dst and q == root):
                    moves.append(((p, src, 0, c), (q, dst, 0, c)))
            elif kind == 'scatter' and p == root:
                moves.append(((p, src, q * c, c), (q, dst, 0, c)))
            elif kind == 'gather' and q == root:
                moves.append(((p, src, 0, c), (q, dst, p * c, c)))
    return moves


def const_copy(s, d, engine=None):
    return ('op', {'op': 'copy', 'src': (C(s[0]), s[1], C(s[2]), s[3]),
                   'dst': (C(d[0]), d[1], C(d[2]), d[3]), 'engine': engine})


class Tmp:
    """Fresh chunks of the temp buffer, per rank."""

    def __init__(self):
        self.used = {}

    def take(self, rank, n):
        off = self.used.get(rank, 0)
        self.used[rank] = off + n
        return (rank, TMP, off, n)

    def need(self):
        return max(self.used.values(), default=0)


def split(rng, move):
    (s, d) = move
    n = s[3]
    if n < 2 or rng.random() < 0.6:
        return [move]
    k = rng.randint(1, n - 1)
    return [((s[0], s[1], s[2], k), (d[0], d[1], d[2], k)),
            ((s[0], s[1], s[2] + k, n - k), (d[0], d[1], d[2] + k, n - k))]


def routed(rng, bld, moves, ranks, inplace, tmp):
    """Each move direct, staged on its source rank, or relayed through a
    random rank's temp chunks; hops emitted wave by wave."""
    waves = [[], [], []]
    for move in moves:
        for s, d in split(rng, move):
            roll = rng.random()
            if not inplace and roll < 0.4:
                waves[0].append((s, d))
            elif roll < 0.7 or ranks == 1:
                t = tmp.take(s[0], s[3])
                waves[0].append((s, t))
                waves[1].append((t, d))
            else:
                m = rng.randrange(ranks)
                t = tmp.take(m, s[3])
                waves[0].append((s, t))
                if rng.random() < 0.3:   # a second relay
                    t2 = tmp.take(rng.randrange(ranks), s[3])
                    waves[1].append((t, t2))
                    waves[2].append((t2, d))
                else:
                    waves[1].append((t, d))
    for wave in waves:
        rng.shuffle(wave)
        for s, d in wave:
            engine = rng.randrange(2) if rng.random() < 0.25 else None
            assert bld.add(const_copy(s, d, engine))


def tree(rng, bld, kind, ranks, c, root, src, dst):
    """Per source block a random tree; a node forwards its copy of the
    block (out slot) to its children, two at a time with bcast."""
    sources = [root] if kind == 'broadcast' else range(ranks)
    for p in rng.sample(list(sources), len(sources)):
        slot = 0 if kind == 'broadcast' else p * c
        others = [q for q in range(ranks) if q != p]
        rng.shuffle(others)
        nodes, children = [p], {}
        for q in others:
            children.setdefault(rng.choice(nodes), []).append(q)
            nodes.append(q)
        if src != dst:
            assert bld.add(const_copy((p, src, 0, c), (p, dst, slot, c)))
        for u in nodes:
            here = (u, src, 0, c) if u == p else (u, dst, slot, c)
            kids = list(children.get(u, []))
            while kids:
                if len(kids) >= 2 and rng.random() < 0.5:
                    a, b = kids.pop(0), kids.pop(0)
                    op = {'op': 'bcast', 'src': (C(u), here[1], C(here[2]), c),
                          'dst': [(C(a), dst, C(slot), c), (C(b), dst, C(slot), c)],
                          'engine': None}
                    assert bld.add(('op', op))
                else:
                    q = kids.pop(0)
                    assert bld.add(const_copy(here, (q, dst, slot, c)))


def ring(rng, bld, ranks, c, src, dst):
    """The ring all-gather, with loops, rank_add and a tag. Pushed: rank r
    copies a chunk to r+1, then signals r+1, which forwards it next step;
    or pulled: r+1 pulls the chunk from r, then signals r+2, which pulls it
    from r+1 next step (the same signal/wait pairs, one rank on)."""
    r, s = V('r'), V('s')
    pull = bld.prng is not None and bld.prng.random() < 0.5
    tag = rng.choice(TAGS)
    bld.add(('loop', 'affine', 'r', 0, 'R', [
        ('op', {'op': 'copy', 'src': (r, src, C(0), c), 'dst': (r, dst, ('mul', r, c), c),
                'engine': None})]))
    nxt = ('radd', r, C(1))
    chunk = ('radd', r, ('add', C(1), ('mul', s, -1)))   # r - s + 1 mod R
    step = {'op': 'copy', 'src': (r, dst, ('mul', chunk, c), c),
            'dst': (nxt, dst, ('mul', chunk, c), c), 'engine': None}
    if pull:
        step['pull'] = True
    hand_off = ({'op': 'signal', 'from': nxt, 'to': ('radd', r, C(2)), 'tag': tag} if pull else
                {'op': 'signal', 'from': r, 'to': nxt, 'tag': tag})
    body = [('loop', 'affine', 'r', 0, 'R', [('op', step), ('op', hand_off)]),
            ('loop', 'scf', 'w', 0, 'R', [
                ('op', {'op': 'wait', 'rank': V('w'), 'from': ('radd', V('w'), C(-1)),
                        'tag': tag})])]
    assert bld.add(('loop', rng.choice(['affine', 'scf']), 's', 1, 'R', body))


def direct_loops(rng, bld, kind, ranks, c, root, src, dst, staged):
    r, d = V('r'), V('d')
    peer = ('radd', r, d)
    style = lambda: rng.choice(['affine', 'scf'])  # noqa: E731
    read = src
    if staged:
        whole = bld.sizes[src]
        first = [('op', {'op': 'copy', 'src': (r, src, C(0), whole),
                         'dst': (r, TMP, C(0), whole), 'engine': None})]
        if kind in ('broadcast', 'scatter'):
            assert bld.add(('op', {
                'op': 'copy', 'src': (C(root), src, C(0), whole),
                'dst': (C(root), TMP, C(0), whole), 'engine': None}))
        else:
            assert bld.add(('loop', style(), 'r', 0, 'R', first))
        read = TMP
    if kind == 'all_gather':
        inner = [('op', {'op': 'copy', 'src': (r, read, C(0), c),
                         'dst': (peer, dst, ('mul', r, c), c), 'engine': None})]
        loops = ('loop', style(), 'r', 0, 'R', [('loop', style(), 'd', 0, 'R', inner)])
        if rng.random() < 0.5:
            loops = ('loop', style(), 'd', 0, 'R', [('loop', style(), 'r', 0, 'R', inner)])
    elif kind == 'all_to_all':
        inner = [('op', {'op': 'copy', 'src': (r, read, ('mul', peer, c), c),
                         'dst': (peer, dst, ('mul', r, c), c), 'engine': None})]
        loops = ('loop', style(), 'r', 0, 'R', [('loop', style(), 'd', 0, 'R', inner)])
    elif kind == 'broadcast':
        if src != dst:
            assert bld.add(const_copy((root, read, 0, c), (root, dst, 0, c)))
        loops = ('loop', style(), 'd', 1, 'R', [('op', {
            'op': 'copy', 'src': (C(root), read, C(0), c),
            'dst': (('radd', V('d'), C(root)), dst, C(0), c), 'engine': None})])
    elif kind == 'scatter':
        loops = ('loop', style(), 'q', 0, 'R', [('op', {
            'op': 'copy', 'src': (C(root), read, ('mul', V('q'), c), c),
            'dst': (V('q'), dst, C(0), c), 'engine': None})])
    else:
        loops = ('loop', style(), 'p', 0, 'R', [('op', {
            'op': 'copy', 'src': (V('p'), read, C(0), c),
            'dst': (C(root), dst, ('mul', V('p'), c), c), 'engine': None})])
    assert bld.add(loops)


def swaps(rng, bld, ranks, c, data):
    pairs = [(p, q) for p in range(ranks) for q in range(p + 1, ranks)]
    rng.shuffle(pairs)
    for p, q in pairs:
        op = {'op': 'swap', 'a': (C(p), data, C(q * c), c), 'b': (C(q), data, C(p * c), c),
              'engine': rng.randrange(2) if rng.random() < 0.2 else None}
        if rng.random() < 0.5:
            op['a'], op['b'] = op['b'], op['a']
        assert bld.add(('op', op))


def gen_collective(rng, ranks, prng=None):
    kind = rng.choice(KINDS)
    c = rng.randint(1, 3)
    root = rng.randrange(ranks) if kind in ('broadcast', 'scatter', 'gather') else None
    inplace = kind in ('all_to_all', 'broadcast') and rng.random() < 0.35
    src, dst = ('data', 'data') if inplace else ('in', 'out')
    in_chunks = {'all_gather': c, 'all_to_all': ranks * c, 'broadcast': c,
                 'scatter': ranks * c, 'gather': c}[kind]
    out_chunks = {'all_gather': ranks * c, 'all_to_all': ranks * c, 'broadcast': c,
                  'scatter': c, 'gather': ranks * c}[kind]
    sizes = {src: in_chunks, dst: out_chunks, TMP: 10 ** 6, 'sc': rng.randint(2, 6)}
    bld = Builder(rng, ranks, sizes, prng)
    tmp = Tmp()
    strategies = ['routed', 'direct', 'staged']
    if kind in ('all_gather', 'broadcast'):
        strategies += ['tree', 'tree']
    if kind == 'all_gather':
        strategies.append('ring')
    if kind == 'all_to_all' and inplace:
        strategies = ['routed', 'swaps', 'swaps']
    strategy = rng.choice(strategies)
    for _ in range(rng.randint(0, 2)):
        op = free_data_op(rng, ranks, sizes, ['sc'])
        if op:
            bld.add(('op', op))
    if strategy == 'routed':
        routed(rng, bld, required_moves(kind, ranks, c, root, src, dst), ranks, inplace, tmp)
    elif strategy == 'tree':
        tree(rng, bld, kind, ranks, c, root, src, dst)
    elif strategy == 'ring':
        ring(rng, bld, ranks, c, src, dst)
    elif strategy == 'swaps':
        swaps(rng, bld, ranks, c, src)
    else:
        direct_loops(rng, bld, kind, ranks, c, root, src, dst, strategy == 'staged')
        if strategy == 'staged':
            tmp.used[0] = in_chunks
    for _ in range(rng.randint(0, 2)):
        if rng.random() < 0.5:
            bld.noise_sync()
        else:
            op = free_data_op(rng, ranks, sizes, ['sc'])
            if op:
                bld.add(('op', op))
    # Exact sizes, written as `N`, `ranks`, `K x ranks` or `K x ranks + N`.
    buffers = []
    for b, n in ([(src, in_chunks)] if inplace else [('in', in_chunks), ('out', out_chunks)]):
        k = rng.randint(0, n // ranks)
        buffers.append((b, k, n - k * ranks))
    if tmp.need():
        buffers.append((TMP,) + size_form(rng, tmp.need(), ranks))
    buffers.append(('sc', 0, sizes['sc']))
    implements = (kind, src, dst, root) if rng.random() < 0.85 else None
    return {'buffers': buffers, 'stmts': bld.stmts, 'implements': implements,
            'flat': bld.flat, 'strategy': f'{kind}/{strategy}'}


def generate(seed):
    """A schedule dict, deterministic in seed."""
    import random
    rng = random.Random(seed)
    prng = random.Random(f'pull{seed}')      # which copies are pulls (gen.py)
    ranks = rng.randint(2, 9)
    if rng.random() < 0.55:
        sched = gen_collective(rng, ranks, prng)
    else:
        sched = gen_free(rng, ranks, prng)
        sched['strategy'] = 'free'
    sched.update(name=f'gen{seed}', ranks=ranks, fixed=rng.random() < 0.3, style=seed)
    return sched
