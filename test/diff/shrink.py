#!/usr/bin/env python3
"""Shrinks a failing schedule by delta debugging over its flat ops.

  shrink.py --bin BUILD/bin FILE.mlir STEP VARIANT [-o OUT.mlir]

STEP/VARIANT name the failure as difftest.py prints it (run swap+pre,
ldst pcpy, cross b2b, adversarial bcst, ...). A candidate is kept only if
the independent checker still proves it race- and deadlock-free (with the
collective's postcondition, or without `implements` where that fails) and
the same step of the same variant still fails. The result is a flat
schedule with a fixed rank count, ready for test/diff/regress/.
"""
import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import backends  # noqa: E402
import hbcheck  # noqa: E402
import sdmair  # noqa: E402


def flat_text(name, ranks, sizes, impl, ops):
    sched = {'name': name, 'ranks': ranks, 'fixed': True, 'implements': impl,
             'buffers': [(b, 0, n) for b, n in sizes.items()],
             'stmts': sdmair.flat_to_stmts(ops)}
    return sdmair.print_schedule(sched)


def reproduce(bin_dir, step, variant, text, ranks, work):
    """Does `step` still fail on `variant` for this schedule?"""
    os.makedirs(work, exist_ok=True)
    path = os.path.join(work, 's.mlir')
    with open(path, 'w') as f:
        f.write(text)
    if step == 'sdma-run':       # variant: the backend
        rc, _, err = backends.tool(bin_dir, 'sdma-run', [path, f'--ranks={ranks}',
                                                        f'--backend={variant}', '--variant=b2b',
                                                        '-b', '1K', '-e', '4K', '-f', '4',
                                                        '--iters=2'], timeout=300)
        return rc != 0 or 'wrong output' in err
    v, _, pre = variant.partition('+')
    hip = os.path.join(work, 'k.hip')
    fails, plan, packets = backends.run_variant(bin_dir, path, ranks, v, bool(pre), work,
                                                hip, 'atomic')
    if step == 'run':
        return bool(fails)
    if fails:
        return False
    if step == 'adversarial':
        rc, _, _ = backends.tool(bin_dir, 'sdma-sim', [plan, '--adversarial', '--seeds=6',
                                                      '--chunk-bytes=24'])
        return rc != 0
    common = [hip, plan, '--threads=8', '--blocks=1,2']
    if step == 'ldst-staged':
        table = backends.table_kernel(bin_dir, path, ranks, work)
        if not table:
            return False
        rc, _, _ = backends.tool(bin_dir, 'sdma-ldst-cpu', [table] + common[1:] + [
            '--staged', '--stage-cap=3', '--chunks=16,4004'], timeout=300)
        return rc != 0
    if step == 'ldst':
        rc, _, _ = backends.tool(bin_dir, 'sdma-ldst-cpu', common + ['--chunks=16,24,4004'],
                                 timeout=300)
        return rc != 0
    if step == 'cross':
        f2, ref, _ = backends.run_variant(bin_dir, path, ranks, 'pcpy', False,
                                          os.path.join(work, 'ref'), None, 'atomic')
        if f2:
            return False
        rc, _, _ = backends.tool(bin_dir, 'sdma-packet-sim', [packets, f'--reference={ref}',
                                                             '--seeds=2', '--chunk-bytes=64'])
        return rc != 0
    raise ValueError(step)


def candidate_ok(ops, ranks, sizes, impl):
    """-> the implements to use, or False if the ops are not a valid schedule."""
    if not any(op['op'] in sdmair.DATA for op in ops):
        return False
    v = hbcheck.check(ops, ranks, sizes, impl)
    if v['kind'] == 'ok':
        return impl
    if v['kind'] == 'post' and hbcheck.check(ops, ranks, sizes, None)['kind'] == 'ok':
        return None
    return False


def ddmin(ops, test, budget):
    n = 2
    while len(ops) >= 2 and budget[0] > 0:
        size = (len(ops) + n - 1) // n
        chunks = [list(range(i, min(i + size, len(ops)))) for i in range(0, len(ops), size)]
        reduced = False
        for chunk in chunks:
            rest = [op for i, op in enumerate(ops) if i not in set(chunk)]
            budget[0] -= 1
            if test(rest):
                ops, n, reduced = rest, max(n - 1, 2), True
                break
        if not reduced:
            if n >= len(ops):
                break
            n = min(2 * n, len(ops))
    return ops


def shrink(bin_dir, text, step, variant, budget=200):
    """-> (shrunk flat schedule text, ops before, ops after) or None."""
    import re
    m = re.search(r'ranks(?:\(%\w+ = |=)(\d+)', text)
    ranks = int(m.group(1)) if m else 0
    with tempfile.TemporaryDirectory() as tmp:
        if not ranks:
            raise ValueError('give a schedule with a fixed rank count')
        rc, out, err = backends.unroll(bin_dir, _write(tmp, text), ranks)
        head, ops = sdmair.parse_flat(out)
        sizes, name = head['buffers'], head['name']
        state = {'impl': head['implements'], 'n': 0}

        def test(cand):
            impl = candidate_ok(cand, ranks, sizes, state['impl'])
            if impl is False:
                return False
            state['n'] += 1
            t = flat_text(name, ranks, sizes, impl, cand)
            if reproduce(bin_dir, step, variant, t, ranks, os.path.join(tmp, str(state['n']))):
                state['impl'] = impl
                return True
            return False
        if not test(ops):
            return None
        small = ddmin(ops, test, [budget])
        return flat_text(name, ranks, sizes, state['impl'], small), len(ops), len(small)


def _write(tmp, text):
    path = os.path.join(tmp, 'in.mlir')
    with open(path, 'w') as f:
        f.write(text)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--bin', required=True)
    ap.add_argument('file')
    ap.add_argument('step')
    ap.add_argument('variant')
    ap.add_argument('-o', '--output')
    ap.add_argument('--budget', type=int, default=200)
    args = ap.parse_args()
    result = shrink(os.path.abspath(args.bin), open(args.file).read(), args.step,
                    args.variant, args.budget)
    if result is None:
        print('does not reproduce', file=sys.stderr)
        return 1
    text, before, after = result
    print(f'{before} -> {after} ops', file=sys.stderr)
    if args.output:
        with open(args.output, 'w') as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == '__main__':
    sys.exit(main())
