"""The differential tester's own model of an sdma schedule (stdlib only).

A schedule is a list of *statements*: a data or sync op whose fields are
index expressions, or a loop over a variable holding more statements.
`expand` evaluates it to the flat op list sdma-unroll should produce;
`print_schedule` writes it as MLIR (affine.for / scf.for, arith,
affine.apply, sdma.rank_add); `parse_flat` reads sdma-opt's flat output
back into the same flat form, so both can be compared and checked.

Flat ops are dicts:
  {'op': 'copy',  'src': S, 'dst': S, 'engine': E}   (+ 'pull': True: a pull)
  {'op': 'bcast', 'src': S, 'dst': [S, S], 'engine': E}
  {'op': 'swap',  'a': S, 'b': S, 'engine': E}
  {'op': 'reduce', 'kind': K, 'dst': S, 'src': S, 'engine': E}  (K: sum, ...)
  {'op': 'fence', 'rank': R or None}      {'op': 'barrier'}
  {'op': 'signal', 'from': A, 'to': B, 'tag': T}
  {'op': 'wait', 'rank': B, 'from': A, 'tag': T}
with S = (rank, buffer, offset, count) and E an int or None. A copy's
'pull' key is there only when it is a pull (`sdma.copy pull`, issued by
its destination's rank); a put has no 'pull' key, so flat forms compare
with ==.
"""
import re

# ---------------------------------------------------------------- expressions
# ('c', k) | ('v', name) | ('add', e, e) | ('mul', e, k) | ('radd', e, e):
# (a + b) mod R (sdma.rank_add, or arith.addi + arith.remui).


def C(k):
    return ('c', k)


def V(name):
    return ('v', name)


def evaluate(e, env, ranks):
    tag = e[0]
    if tag == 'c':
        return e[1]
    if tag == 'v':
        return env[e[1]]
    if tag == 'add':
        return evaluate(e[1], env, ranks) + evaluate(e[2], env, ranks)
    if tag == 'mul':
        return evaluate(e[1], env, ranks) * e[2]
    if tag == 'radd':
        return (evaluate(e[1], env, ranks) + evaluate(e[2], env, ranks)) % ranks
    raise ValueError(e)


def const_of(e):
    return e[1] if e[0] == 'c' else None


# ---------------------------------------------------------------- statements
# ('op', op-with-expression-fields) | ('loop', style, var, lo, hi, body)
# style: 'affine' or 'scf'; hi may be 'R' (the rank count).
DATA = ('copy', 'bcast', 'swap', 'reduce')


def slices_of(op):
    """The slices of a data op: a copy's source first (its rank issues the
    op, except for a pull: see is_pull), a reduce's destination first."""
    if op['op'] == 'copy':
        return [op['src'], op['dst']]
    if op['op'] == 'bcast':
        return [op['src']] + list(op['dst'])
    if op['op'] == 'reduce':
        return [op['dst'], op['src']]  # the destination's rank issues it
    return [op['a'], op['b']]


def is_pull(op):
    """A pull copy: issued by its destination's rank, not its source's."""
    return op['op'] == 'copy' and bool(op.get('pull'))


def map_slices(op, fn):
    op = dict(op)
    if op['op'] == 'copy':
        op['src'], op['dst'] = fn(op['src']), fn(op['dst'])
    elif op['op'] == 'bcast':
        op['src'], op['dst'] = fn(op['src']), [fn(s) for s in op['dst']]
    elif op['op'] == 'swap':
        op['a'], op['b'] = fn(op['a']), fn(op['b'])
    elif op['op'] == 'reduce':
        op['dst'], op['src'] = fn(op['dst']), fn(op['src'])
    return op


def eval_op(op, env, ranks):
    ev = lambda e: evaluate(e, env, ranks)  # noqa: E731
    kind = op['op']
    if kind in DATA:
        return map_slices(op, lambda s: (ev(s[0]), s[1], ev(s[2]), s[3]))
    out = dict(op)
    for key in ('rank', 'from', 'to'):
        if out.get(key) is not None:
            out[key] = ev(out[key])
    return out


def expand(stmts, ranks, env=None):
    env = dict(env or {})
    flat = []
    for st in stmts:
        if st[0] == 'op':
            flat.append(eval_op(st[1], env, ranks))
        else:
            _, _, var, lo, hi, body = st
            hi = ranks if hi == 'R' else hi
            for i in range(lo, hi):
                env[var] = i
                flat.extend(expand(body, ranks, env))
            env.pop(var, None)
    return flat


# ---------------------------------------------------------------- printing
def buffer_size_text(k, n):
    if k == 0:
        return str(n)
    head = 'ranks' if k == 1 and n == 0 else f'{k} x ranks'
    return head if n == 0 else f'{k} x ranks + {n}'


def buffer_chunks(k, n, ranks):
    return k * ranks + n


class Printer:
    def __init__(self, ranks_name='%R', style_seed=0):
        self.lines = []
        self.counter = 0
        self.consts = {}
        self.style = style_seed

    def fresh(self):
        self.counter += 1
        return f'%v{self.counter}'

    def const(self, k, indent):
        name = self.fresh()
        self.lines.append(f'{indent}{name} = arith.constant {k} : index')
        return name

    def expr(self, e, env, indent, cache):
        """SSA name or integer literal text for e (fields take both)."""
        if e[0] == 'c':
            return str(e[1])
        if e[0] == 'v':
            return env[e[1]]
        if e in cache:
            return cache[e]
        self.style += 1
        if e[0] == 'radd':
            a = self.value(e[1], env, indent, cache)
            d = const_of(e[2])
            if d is not None and self.style % 3:
                name = self.fresh()
                self.lines.append(f'{indent}{name} = sdma.rank_add {a}, {d}')
            elif d is not None and d >= 0:
                # (a + d) mod R written with arith.
                dc = self.const(d, indent)
                s, name = self.fresh(), self.fresh()
                self.lines.append(f'{indent}{s} = arith.addi {a}, {dc} : index')
                self.lines.append(f'{indent}{name} = arith.remui {s}, %R : index')
            else:
                b = self.value(e[2], env, indent, cache)
                name = self.fresh()
                self.lines.append(f'{indent}{name} = sdma.rank_add {a}, {b}')
        elif e[0] == 'add':
            a = self.value(e[1], env, indent, cache)
            b = self.value(e[2], env, indent, cache)
            name = self.fresh()
            self.lines.append(f'{indent}{name} = arith.addi {a}, {b} : index')
        elif e[0] == 'mul':
            a = self.value(e[1], env, indent, cache)
            name = self.fresh()
            if self.style % 2 and e[1][0] == 'v':
                self.lines.append(f'{indent}{name} = affine.apply affine_map<(d0) -> (d0 * {e[2]})>({a})')
            else:
                k = self.const(e[2], indent)
                self.lines.append(f'{indent}{name} = arith.muli {a}, {k} : index')
        else:
            raise ValueError(e)
        cache[e] = name
        return name

    def value(self, e, env, indent, cache):
        """Always an SSA value (arith operands cannot be literals)."""
        text = self.expr(e, env, indent, cache)
        if text.startswith('%'):
            return text
        return self.const(int(text), indent)

    def slice_text(self, s, env, indent, cache):
        r = self.expr(s[0], env, indent, cache)
        o = self.expr(s[2], env, indent, cache)
        return f'%{s[1]}[{o}, {s[3]}] on {r}'

    def op(self, op, env, indent):
        cache = {}
        k = op['op']
        f = lambda s: self.slice_text(s, env, indent, cache)  # noqa: E731
        r = lambda e: self.expr(e, env, indent, cache)  # noqa: E731
        eng = f' {{engine = {op["engine"]}}}' if op.get('engine') is not None else ''
        tag = lambda: f' tag {op["tag"]}' if op['tag'] else ''  # noqa: E731
        if k == 'copy':
            pull = 'pull ' if op.get('pull') else ''
            text = f'sdma.copy {pull}{f(op["src"])} -> {f(op["dst"])}{eng}'
        elif k == 'bcast':
            text = f'sdma.bcast {f(op["src"])} -> {f(op["dst"][0])}, {f(op["dst"][1])}{eng}'
        elif k == 'swap':
            text = f'sdma.swap {f(op["a"])} <-> {f(op["b"])}{eng}'
        elif k == 'reduce':
            text = f'sdma.reduce {op["kind"]} {f(op["dst"])} <- {f(op["src"])}{eng}'
        elif k == 'fence':
            text = 'sdma.fence' + (f' on {r(op["rank"])}' if op.get('rank') is not None else '')
        elif k == 'barrier':
            text = 'sdma.barrier'
        elif k == 'signal':
            text = f'sdma.signal {r(op["from"])} -> {r(op["to"])}{tag()}'
        elif k == 'wait':
            text = f'sdma.wait {r(op["rank"])} <- {r(op["from"])}{tag()}'
        else:
            raise ValueError(k)
        self.lines.append(indent + text)

    def stmts(self, stmts, env, indent):
        for st in stmts:
            if st[0] == 'op':
                self.op(st[1], env, indent)
                continue
            _, style, var, lo, hi, body = st
            name = f'%{var}'
            hi_text = '%R' if hi == 'R' else str(hi)
            if style == 'affine':
                self.lines.append(f'{indent}affine.for {name} = {lo} to {hi_text} {{')
            else:
                lo_v = self.const(lo, indent)
                hi_v = '%R' if hi == 'R' else self.const(hi, indent)
                one = self.const(1, indent)
                self.lines.append(f'{indent}scf.for {name} = {lo_v} to {hi_v} step {one} {{')
            inner = dict(env)
            inner[var] = name
            self.stmts(body, inner, indent + '  ')
            self.lines.append(indent + '}')


def print_schedule(sched):
    """sched: dict name, ranks, fixed (bool), buffers [(name, k, n)],
    types ({name: element type}, optional), implements (None or (kind, in,
    out, root)), stmts."""
    types = sched.get('types') or {}

    def size(b, k, n):
        text = buffer_size_text(k, n)
        return f'{types[b]}[{text}]' if types.get(b) else text
    bufs = ', '.join(f'%{b} : {size(b, k, n)}' for b, k, n in sched['buffers'])
    ranks = f'%R = {sched["ranks"]}' if sched.get('fixed') else '%R'
    impl = ''
    if sched.get('implements'):
        kind, src, dst, root = sched['implements']
        impl = f' implements {kind}(%{src} -> %{dst})' + (f' root {root}' if root is not None else '')
    p = Printer(style_seed=sched.get('style', 0))
    p.stmts(sched['stmts'], {}, '  ')
    head = f'sdma.schedule @{sched["name"]} ranks({ranks}) buffers({bufs}){impl} {{'
    return '\n'.join([head] + p.lines + ['}']) + '\n'


def buffer_table(sched):
    return {b: buffer_chunks(k, n, sched['ranks']) for b, k, n in sched['buffers']}


# ---------------------------------------------------------------- flat form
SLICE = r'%(\w+)\[(\d+), (\d+)\] on (\d+)'
ENGINE = r'(?: \{engine = (\d+) : i64\})?'
_PATTERNS = [
    ('copy', re.compile(rf'sdma\.copy (pull )?{SLICE} -> {SLICE}{ENGINE}$')),
    ('bcast', re.compile(rf'sdma\.bcast {SLICE} -> {SLICE}, {SLICE}{ENGINE}$')),
    ('swap', re.compile(rf'sdma\.swap {SLICE} <-> {SLICE}{ENGINE}$')),
    ('reduce', re.compile(rf'sdma\.reduce (\w+) {SLICE} <- {SLICE}{ENGINE}$')),
    ('fence', re.compile(r'sdma\.fence(?: on (\d+))?$')),
    ('barrier', re.compile(r'sdma\.barrier$')),
    ('signal', re.compile(r'sdma\.signal (\d+) -> (\d+)(?: tag (\d+))?$')),
    ('wait', re.compile(r'sdma\.wait (\d+) <- (\d+)(?: tag (\d+))?$')),
]
HEAD = re.compile(r'sdma\.schedule @(\w+) ranks\(%\w+ = (\d+)\) buffers\(([^)]*)\)'
                  r'(?: implements (\w+)\(%(\w+) -> %(\w+)\)(?: root (\d+))?)?')


def _slice(g, i):
    return (int(g[i + 3]), g[i], int(g[i + 1]), int(g[i + 2]))


def _flat_op(kind, g):
    eng = lambda i: int(g[i]) if g[i] is not None else None  # noqa: E731
    if kind == 'copy':
        op = {'op': 'copy', 'src': _slice(g, 1), 'dst': _slice(g, 5), 'engine': eng(9)}
        if g[0]:
            op['pull'] = True
        return op
    if kind == 'bcast':
        return {'op': 'bcast', 'src': _slice(g, 0), 'dst': [_slice(g, 4), _slice(g, 8)],
                'engine': eng(12)}
    if kind == 'swap':
        return {'op': 'swap', 'a': _slice(g, 0), 'b': _slice(g, 4), 'engine': eng(8)}
    if kind == 'reduce':
        return {'op': 'reduce', 'kind': g[0], 'dst': _slice(g, 1), 'src': _slice(g, 5),
                'engine': eng(9)}
    if kind == 'fence':
        return {'op': 'fence', 'rank': int(g[0]) if g[0] is not None else None}
    if kind == 'barrier':
        return {'op': 'barrier'}
    tag = int(g[2]) if g[2] is not None else 0
    if kind == 'signal':
        return {'op': 'signal', 'from': int(g[0]), 'to': int(g[1]), 'tag': tag}
    return {'op': 'wait', 'rank': int(g[0]), 'from': int(g[1]), 'tag': tag}


def parse_flat(text):
    """sdma-opt --sdma-unroll output -> (header dict, flat ops)."""
    head, ops = None, []
    for line in text.splitlines():
        line = line.strip()
        m = HEAD.match(line)
        if m:
            bufs, types = {}, {}
            for item in m.group(3).split(','):
                name, size = item.split(':')
                name, size = name.strip().lstrip('%'), size.strip()
                if '[' in size:  # a typed buffer: f32[N]
                    types[name], _, size = size.partition('[')
                    size = size.rstrip(']')
                bufs[name] = int(size)
            impl = None
            if m.group(4):
                impl = (m.group(4), m.group(5), m.group(6),
                        int(m.group(7)) if m.group(7) else None)
            head = {'name': m.group(1), 'ranks': int(m.group(2)), 'buffers': bufs,
                    'types': types, 'implements': impl}
            continue
        for kind, pat in _PATTERNS:
            mm = pat.match(line)
            if mm:
                ops.append(_flat_op(kind, mm.groups()))
                break
        else:
            if line.startswith('sdma.') and not line.startswith('sdma.schedule'):
                raise ValueError('unparsed flat op: ' + line)
    return head, ops


def flat_to_stmts(ops):
    """A flat op list as constant statements (for shrinking and replay)."""
    def cs(s):
        return (C(s[0]), s[1], C(s[2]), s[3])
    out = []
    for op in ops:
        if op['op'] in DATA:
            out.append(('op', map_slices(op, cs)))
        else:
            o = dict(op)
            for key in ('rank', 'from', 'to'):
                if o.get(key) is not None:
                    o[key] = C(o[key])
            out.append(('op', o))
    return out


def from_json(text):
    """sdma-translate --sdma-to-json output -> flat ops (one schedule).

    The schedule JSON has no pull flag (version 1): a copy's "rank" is its
    issuer, so a copy whose issuer is its destination's rank, not its
    source's, is a pull (as is one with "pull": true, should it come). A
    pull within one rank (source and destination on the issuer) reads as a
    put: compare json_view of both sides."""
    import json
    sched = json.loads(text)['schedules'][0]
    sl = lambda s: (s['rank'], s['buffer'], s['offset'], s['count'])  # noqa: E731
    ops = []
    for o in sched['ops']:
        k = o['op']
        if k == 'copy':
            ops.append({'op': k, 'src': sl(o['src']), 'dst': sl(o['dst']), 'engine': o.get('engine')})
            if o.get('pull') or (o['rank'] != o['src']['rank'] and
                                 o['rank'] == o['dst']['rank']):
                ops[-1]['pull'] = True
        elif k == 'bcast':
            ops.append({'op': k, 'src': sl(o['src']), 'dst': [sl(d) for d in o['dst']],
                        'engine': o.get('engine')})
        elif k == 'swap':
            ops.append({'op': k, 'a': sl(o['a']), 'b': sl(o['b']), 'engine': o.get('engine')})
        elif k == 'fence':
            ops.append({'op': k, 'rank': o.get('rank')})
        elif k == 'barrier':
            ops.append({'op': k})
        elif k == 'signal':
            ops.append({'op': k, 'from': o['rank'], 'to': o['to'], 'tag': o.get('tag', 0)})
        else:
            ops.append({'op': 'wait', 'rank': o['rank'], 'from': o['from'], 'tag': o.get('tag', 0)})
    return ops


def json_view(ops):
    """What from_json can give back for these flat ops: a pull within one
    rank is the same op as a put there (one issuer), and reads as a put."""
    out = []
    for op in ops:
        if is_pull(op) and op['src'][0] == op['dst'][0]:
            op = dict(op)
            del op['pull']
        out.append(op)
    return out
