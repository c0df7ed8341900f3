"""Mutants of a generated schedule: one sync removed, one index shifted or
one copy's issuer changed (a pull made a put, or a put a pull).

mutants(sched, rng, count) -> [(description, mutated schedule)]. What the
verifier should say about each is decided by hbcheck on the mutant's flat
form, not here: a removed sync may have been redundant.
"""
import copy

from sdmair import C, DATA


def sites(stmts, path=()):
    """(path, statement) for every op statement, loops included."""
    out = []
    for i, st in enumerate(stmts):
        if st[0] == 'op':
            out.append((path + (i,), st))
        else:
            out.extend(sites(st[5], path + (i, 5)))
    return out


def _remove(stmts, paths):
    stmts = _rebuild(stmts)
    for path in sorted(paths, reverse=True):
        holder = _get_list(stmts, path[:-1])
        del holder[path[-1]]
    return stmts


def _rebuild(stmts):
    """A deep copy with loops as lists, so bodies can be edited."""
    out = []
    for st in stmts:
        if st[0] == 'op':
            out.append(['op', copy.deepcopy(st[1])])
        else:
            out.append(list(st[:5]) + [_rebuild(st[5])])
    return out


def _freeze(stmts):
    return [('op', st[1]) if st[0] == 'op' else tuple(st[:5]) + (_freeze(st[5]),)
            for st in stmts]


def _get_list(stmts, prefix):
    node = stmts
    for step in prefix:
        node = node[step]
    return node


def _edit(stmts, path, fn):
    stmts = _rebuild(stmts)
    holder = _get_list(stmts, path[:-1])
    holder[path[-1]][1] = fn(holder[path[-1]][1])
    return stmts


def _shift_slice(s, what):
    rank, buf, off, cnt = s
    if what == 'rank':
        return (('radd', rank, C(1)), buf, off, cnt)
    if what == 'count':
        return (rank, buf, off, cnt + 1)
    return (rank, buf, ('add', off, C(what)), cnt)


def candidates(sched):
    """Every single mutation: (description, new statements)."""
    stmts = sched['stmts']
    all_sites = sites(stmts)
    out = []
    for idx, (path, st) in enumerate(all_sites):
        op = st[1]
        k = op['op']
        where = '/'.join(map(str, path))
        if k in ('fence', 'barrier', 'wait'):
            out.append((f'drop {k} at {where}', _remove(stmts, [path])))
        if k == 'signal':
            out.append((f'drop signal at {where}', _remove(stmts, [path])))
            nxt = idx + 1
            if nxt < len(all_sites):
                p2, st2 = all_sites[nxt]
                o2 = st2[1]
                if (o2['op'] == 'wait' and o2['from'] == op['from'] and
                        o2['rank'] == op['to'] and o2['tag'] == op['tag']):
                    out.append((f'drop signal+wait at {where}', _remove(stmts, [path, p2])))
        if k == 'copy' and op['src'][0] != op['dst'][0]:
            # The other rank issues it: the syncs placed on its issuer no
            # longer order it (a pull made a put is a sync removed).
            if op.get('pull'):
                put = lambda o: {x: v for x, v in o.items() if x != 'pull'}  # noqa: E731
                out.append((f'drop pull at {where}', _edit(stmts, path, put)))
            else:
                out.append((f'make pull at {where}',
                            _edit(stmts, path, lambda o: dict(o, pull=True))))
        if k in DATA:
            if op.get('engine') is not None:
                out.append((f'drop engine at {where}',
                            _edit(stmts, path, lambda o: dict(o, engine=None))))
            keys = ['src', 'dst'] if k != 'swap' else ['a', 'b']
            for key in keys:
                for what in (1, -1, 'rank'):
                    def fn(o, key=key, what=what):
                        o = copy.deepcopy(o)
                        if isinstance(o[key], list):
                            o[key][0] = _shift_slice(o[key][0], what)
                        else:
                            o[key] = _shift_slice(o[key], what)
                        return o
                    out.append((f'shift {key} {what} at {where}', _edit(stmts, path, fn)))
    return [(d, _freeze(s)) for d, s in out]


def mutants(sched, rng, count):
    """count random single mutations, syncs removed twice as often."""
    cands = candidates(sched)
    syncs = [c for c in cands if c[0].startswith('drop')]
    shifts = [c for c in cands if not c[0].startswith('drop')]
    picked = []
    for _ in range(count):
        pool = syncs if (syncs and (rng.random() < 0.67 or not shifts)) else shifts
        if not pool:
            break
        d, s = pool.pop(rng.randrange(len(pool)))
        m = dict(sched)
        m['stmts'] = s
        m['name'] = sched['name'] + 'm' + str(len(picked))
        picked.append((d, m))
    return picked
