"""Split notebook code cells longer than 40 lines at top-level statement boundaries (a definition and its test stay whole).

    python tools/split_cells.py nbs/*.ipynb     # rewrites in place; prints the cells that are still long

Each piece keeps the cell's directives (`#| export`, `#| slow`, ...); pieces are cut greedily so each is at most MAX lines
when the statements allow it. A single statement (one function) longer than MAX stays whole and is reported."""
import ast, json, sys, hashlib
from pathlib import Path

MAX = 40

def _starts(body:str) -> list[int]:
    "0-based line where each top-level statement begins, its decorators and the comments just above it included."
    tree = ast.parse(body); lines = body.split('\n'); out = []
    for n in tree.body:
        s = min([n.lineno] + [d.lineno for d in getattr(n, 'decorator_list', [])]) - 1
        while s > 0 and lines[s - 1].lstrip().startswith('#') and not lines[s - 1].startswith('#|'): s -= 1
        out.append(s)
    return out

def split_source(src:str) -> list[str]:
    lines = src.split('\n')
    if len(lines) <= MAX or src.lstrip().startswith('%%'): return [src]
    k = 0
    while k < len(lines) and lines[k].startswith('#|'): k += 1
    head, rest = lines[:k], lines[k:]
    body = '\n'.join(rest)
    try: starts = _starts(body)
    except SyntaxError: return [src]
    if len(starts) < 2: return [src]
    cuts, cur = [0], 0
    bounds = starts[1:] + [len(rest)]
    for i, b in enumerate(starts[1:], 1):
        nxt = bounds[i]                                 # where the statement starting at b ends
        if nxt - cur + len(head) > MAX and b > cur: cuts.append(b); cur = b
    pieces = [rest[a:b] for a, b in zip(cuts, cuts[1:] + [len(rest)])]
    out = []
    for p in pieces:
        while p and not p[-1].strip(): p = p[:-1]
        while p and not p[0].strip(): p = p[1:]
        if p: out.append('\n'.join(head + p))
    return out if len(out) > 1 else [src]

def main(paths):
    left = 0
    for path in paths:
        nb = json.loads(Path(path).read_text()); cells = []
        for c in nb['cells']:
            s = ''.join(c['source'])
            parts = split_source(s) if c['cell_type'] == 'code' else [s]
            if len(parts) == 1: cells.append(c)
            else:
                for i, p in enumerate(parts):
                    cid = c.get('id', '') if i == 0 else hashlib.sha1(f"{c.get('id')}:{i}:{p}".encode()).hexdigest()[:8]
                    cells.append({'cell_type': 'code', 'execution_count': None, 'id': cid, 'metadata': {}, 'outputs': [],
                                  'source': p.splitlines(True)})
            for p in parts:
                if c['cell_type'] == 'code' and len(p.split('\n')) > MAX: left += 1; print(f"{path}: {len(p.splitlines())} lines: {p.splitlines()[1][:70] if len(p.splitlines()) > 1 else ''}")
        nb['cells'] = cells
        Path(path).write_text(json.dumps(nb, indent=1, ensure_ascii=False) + '\n')
    print(f"{left} code cells still over {MAX} lines")

if __name__ == '__main__': main(sys.argv[1:])
