"""Split code cells holding one long class into the class (its attributes, `__init__` and dunder methods) followed by
cells of its other methods written with fastcore's `@patch`, the house style for classes explained method by method.

    python tools/patch_split.py nbs/06_ppo.ipynb [...]     # rewrites in place; prints what it split

Methods that call `super()` without arguments, and static methods, stay in the class (a patched function has no
`__class__` cell). Properties become `@patch(as_prop=True)`, class methods `@patch(cls_method=True)`."""
import ast, json, sys, hashlib
from pathlib import Path

MAX = 40

def _split(src:str):
    lines = src.split('\n')
    k = 0
    while k < len(lines) and lines[k].startswith('#|'): k += 1
    head, body = lines[:k], '\n'.join(lines[k:])
    if '#| export' not in head and '#| exporti' not in head: return None
    try: tree = ast.parse(body)
    except SyntaxError: return None
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    if len(classes) != 1 or len(lines) <= MAX: return None
    cls = classes[0]; bl = body.split('\n')
    if cls.decorator_list or len(tree.body) > 1: return None   # dataclasses, and cells that use the class right away, stay whole
    moved, keep_ranges = [], []
    for n in cls.body:
        if not isinstance(n, ast.FunctionDef) or n.name.startswith('__'): continue
        decos = [ast.unparse(d) for d in n.decorator_list]
        if any(d not in ('property', 'classmethod') for d in decos): continue
        if any(isinstance(x, ast.Call) and isinstance(x.func, ast.Name) and x.func.id == 'super' and not x.args for x in ast.walk(n)): continue
        start = min([n.lineno] + [d.lineno for d in n.decorator_list]) - 1
        while start > 0 and bl[start - 1].strip().startswith('#'): start -= 1
        moved.append((start, n.end_lineno, n, decos))
    if not moved: return None
    out_methods = []
    for start, end, n, decos in moved:
        a0 = n.args.args[0]                                            # `self` / `cls`, wherever the signature wraps
        arg = 'cls' if 'classmethod' in decos else 'self'
        l = bl[a0.lineno - 1]
        bl2 = list(bl); bl2[a0.lineno - 1] = l[:a0.col_offset] + f"{arg}:{cls.name}" + l[a0.end_col_offset:]
        seg = bl2[start:end]
        ind = len(bl[n.lineno - 1]) - len(bl[n.lineno - 1].lstrip())
        seg = [x[ind:] if x.strip() else x for x in seg]
        seg = [x for x in seg if x.strip() not in ('@property', '@classmethod')]
        deco = '@patch(as_prop=True)' if 'property' in decos else '@patch(cls_method=True)' if 'classmethod' in decos else '@patch'
        out_methods.append([deco] + seg)
    drop = set()
    for start, end, n, decos in moved: drop |= set(range(start, end))
    rest_lines = [l for i, l in enumerate(bl) if i not in drop]
    while rest_lines and not rest_lines[-1].strip(): rest_lines.pop()
    cells = ['\n'.join(head + ['from fastcore.basics import patch'] + rest_lines)]
    cur = []
    for m in out_methods:
        if cur and len(head) + len(cur) + 1 + len(m) > MAX: cells.append('\n'.join(head + cur)); cur = []
        cur += ([''] if cur else []) + m
    if cur: cells.append('\n'.join(head + cur))
    return cells

def main(paths):
    for path in paths:
        nb = json.loads(Path(path).read_text()); out = []
        for c in nb['cells']:
            parts = _split(''.join(c['source'])) if c['cell_type'] == 'code' else None
            if not parts: out.append(c); continue
            print(f"{path}: {len(parts)} cells from one class cell of {len(''.join(c['source']).splitlines())} lines")
            for i, p in enumerate(parts):
                cid = c.get('id', '') if i == 0 else hashlib.sha1(f"{c.get('id')}:{i}".encode()).hexdigest()[:8]
                out.append({'cell_type': 'code', 'execution_count': None, 'id': cid, 'metadata': {}, 'outputs': [], 'source': p.splitlines(True)})
        nb['cells'] = out
        Path(path).write_text(json.dumps(nb, indent=1, ensure_ascii=False) + '\n')

if __name__ == '__main__': main(sys.argv[1:])
