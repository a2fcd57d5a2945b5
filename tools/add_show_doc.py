"""After an exported definition that no example cell follows, add a `show_doc` cell: nbdev's rendering of its signature,
parameter comments and docstring, saved with the notebook so the web view documents it.

    python tools/add_show_doc.py nbs/*.ipynb      # idempotent: a definition already shown is left alone
"""
import ast, json, sys, hashlib
from pathlib import Path

def _public(src:str) -> str|None:
    "The first public definition of an export cell (`Class.method` for a @patch'ed method), or None."
    try: tree = ast.parse(src)
    except SyntaxError: return None
    for n in tree.body:
        if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and not n.name.startswith('_'):
            decos = [ast.unparse(d) for d in getattr(n, 'decorator_list', [])]
            if any(d.startswith('patch') for d in decos):
                a = n.args.args[0].annotation if n.args.args else None
                return f'{ast.unparse(a)}.{n.name}' if a is not None else None
            return n.name
    return None

def _flags(c) -> str: return ''.join(c['source']).split('\n', 1)[0] if c['cell_type'] == 'code' else ''

def main(paths):
    added = 0
    for path in paths:
        nb = json.loads(Path(path).read_text()); cells = nb['cells']; out = []
        shown = {''.join(c['source']).strip() for c in cells if c['cell_type'] == 'code'}
        for i, c in enumerate(cells):
            out.append(c)
            if c['cell_type'] != 'code' or not _flags(c).startswith('#| export'): continue
            nxt = cells[i + 1] if i + 1 < len(cells) else None
            if nxt is not None and nxt['cell_type'] == 'code' and not _flags(nxt).startswith('#|'): continue   # an example follows
            name = _public(''.join(c['source']))
            if not name or f'show_doc({name})' in shown: continue
            src = f'show_doc({name})'
            out.append({'cell_type': 'code', 'execution_count': None, 'id': hashlib.sha1(f'{path}:{src}'.encode()).hexdigest()[:8],
                        'metadata': {}, 'outputs': [], 'source': [src]})
            shown.add(src); added += 1
        nb['cells'] = out
        Path(path).write_text(json.dumps(nb, indent=1, ensure_ascii=False) + '\n')
    print(f'{added} show_doc cells added')

if __name__ == '__main__': main(sys.argv[1:])
