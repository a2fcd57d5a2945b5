"""Re-wrap the statements of notebook code cells that have lines over 120 characters (black, on those statements only).

    python tools/wrap_long.py nbs/05_dpo.ipynb [...]   # rewrites in place; prints what is still too long

Only the innermost statement holding a long line is re-formatted, so the rest of a cell keeps its hand layout. A long
`def` header is re-formatted alone (its body untouched). Strings and comments are not wrapped by black: those are
reported for a hand edit."""
import ast, json, sys
from pathlib import Path
import black

MAX = 120
MODE = black.Mode(line_length=MAX, string_normalization=False, magic_trailing_comma=False,
                  enabled_features={black.mode.Preview.string_processing})   # splits long strings into implicit concatenations

def _split_doc(line:str) -> list[str]|None:
    "A one-line docstring `    \"text\"` over MAX as a parenthesised implicit concatenation (still one docstring)."
    ind = len(line) - len(line.lstrip()); body = line.strip()
    if not (body[:1] in '\"\'' and body[-1:] == body[:1] and body.count(body[0]) == 2): return None
    q, words, parts, cur = body[0], body[1:-1].split(' '), [], ''
    for w in words:
        if cur and ind + 2 + len(cur) + len(w) + 3 > MAX: parts.append(cur + ' '); cur = w
        else: cur = f'{cur} {w}' if cur else w
    parts.append(cur)
    out = [' ' * ind + '(' + q + parts[0] + q] + [' ' * (ind + 1) + q + x + q for x in parts[1:]]
    out[-1] += ')'
    return out

def _fmt(src:str, ind:int=0) -> str:
    import dataclasses
    return black.format_str(src, mode=dataclasses.replace(MODE, line_length=MAX - ind)).rstrip('\n')

def _innermost(tree, lineno):
    "The innermost statement whose lines include `lineno` (1-based)."
    best = None
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and node.lineno <= lineno <= node.end_lineno:
            if best is None or (node.end_lineno - node.lineno) <= (best.end_lineno - best.lineno): best = node
    return best

def _wrap_comments(body:str) -> str:
    "Comments on long lines: a trailing one moves above its line; a long full-line one wraps."
    import io, tokenize, textwrap
    try: toks = [t for t in tokenize.generate_tokens(io.StringIO(body).readline) if t.type == tokenize.COMMENT]
    except (tokenize.TokenError, IndentationError, SyntaxError): return body
    bl = body.split('\n')
    for t in reversed(toks):
        i, col = t.start[0] - 1, t.start[1]
        line = bl[i]
        if len(line) <= MAX or line.lstrip().startswith('#|'): continue
        code, text = line[:col].rstrip(), t.string.lstrip('#').strip()
        ind = len(line) - len(line.lstrip())
        wrapped = textwrap.wrap(text, MAX - ind - 2) or ['']
        bl[i:i + 1] = [' ' * ind + '# ' + w for w in wrapped] + ([code] if code.strip() else [])
    return '\n'.join(bl)

def _comments(src:str) -> list:
    import io, tokenize
    return sorted(t.string.strip() for t in tokenize.generate_tokens(io.StringIO(src).readline) if t.type == tokenize.COMMENT)

def _same_code(a:str, b:str) -> bool:
    "Same program, up to how string literals are split (implicit concatenation folds to one constant)."
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        return compile(a, 'a', 'exec').co_code == compile(b, 'b', 'exec').co_code and \
               compile(a, 'a', 'exec').co_consts == compile(b, 'b', 'exec').co_consts

def wrap_source(src:str) -> str:
    lines = src.split('\n')
    magic = [i for i, l in enumerate(lines) if l.startswith(('#|', '%', '!'))]
    body = '\n'.join('' if i in magic else l for i, l in enumerate(lines))
    seen, stuck = {body}, set()
    for _ in range(3000):
        try: tree = ast.parse(body)
        except SyntaxError: return src
        bl = body.split('\n')
        long = [i + 1 for i, l in enumerate(bl) if len(l) > MAX and l not in stuck]
        before = body
        done = False
        for ln in long:
            same = sorted((n for n in ast.walk(tree) if isinstance(n, ast.stmt) and not hasattr(n, "body") and n.lineno == ln == n.end_lineno),
                          key=lambda n: n.col_offset)
            if len(same) >= 2 and all(n.col_offset > same[0].col_offset - 1 for n in same):   # `a; b; c` or `head: a; b`
                line = bl[ln - 1]; ind = len(line) - len(line.lstrip()); head = line[:same[0].col_offset].rstrip()
                segs = [ast.get_source_segment(body, n) for n in same]
                segs[-1] += line[same[-1].end_col_offset:]          # a trailing comment stays with the last statement
                if head.strip() == '': bl[ln - 1:ln] = [' ' * ind + x for x in segs]
                elif head.endswith(':'): bl[ln - 1:ln] = [head] + [' ' * (ind + 4) + x for x in segs]
                else: segs = None
                if segs: body = '\n'.join(bl); done = True; break
            node = _innermost(tree, ln)
            if node is None: continue
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str) \
               and node.lineno == node.end_lineno and (rep := _split_doc(bl[ln - 1])):
                bl[ln - 1:ln] = rep; body = '\n'.join(bl); done = True; break
            start, end = node.lineno - 1, node.end_lineno - 1
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or (hasattr(node, 'body') and node.body and node.body[0].lineno > node.lineno):
                first = node.body[0]
                if ln >= first.lineno: continue                       # the long line is in the body, in no simple statement
                hdr_end = first.lineno - 2                             # header lines only
                while hdr_end > start and not bl[hdr_end].rstrip().endswith(':'): hdr_end -= 1
                if node.decorator_list if hasattr(node, 'decorator_list') else False: start = node.decorator_list[0].lineno - 1
                seg = bl[start:hdr_end + 1]
                ind = len(seg[-1]) - len(seg[-1].lstrip()) if False else len(bl[node.lineno - 1]) - len(bl[node.lineno - 1].lstrip())
                stub = '\n'.join(l[ind:] for l in seg) + '\n    pass'
                try: new = _fmt(stub, ind).rsplit('\n', 1)[0]
                except Exception: continue
                rep = [(' ' * ind + l) if l else l for l in new.split('\n')]
                if rep == seg: continue
                bl[start:hdr_end + 1] = rep
            elif node.col_offset > len(bl[start]) - len(bl[start].lstrip()):   # `header: stmt` on one line
                line = bl[start]; ind = len(line) - len(line.lstrip())
                if start != end or any(isinstance(n, ast.stmt) and n is not node and n.lineno == ln and n.col_offset >= node.col_offset
                                       for n in ast.walk(tree)): continue
                head, stmt = line[:node.col_offset].rstrip(), line[node.col_offset:]
                if not head.endswith(':'): continue
                try: new = _fmt(stmt, ind + 4)
                except Exception: continue
                bl[start:end + 1] = [head] + [(' ' * (ind + 4) + l) if l else l for l in new.split('\n')]
            else:
                seg = bl[start:end + 1]
                ind = len(seg[0]) - len(seg[0].lstrip())
                if any(l.strip() and len(l) - len(l.lstrip()) < ind for l in seg): continue
                # a one-line compound (`if x: y`) counts as simple here
                try: new = _fmt('\n'.join(l[ind:] for l in seg), ind)
                except Exception: continue
                rep = [(' ' * ind + l) if l else l for l in new.split('\n')]
                if rep == seg: continue
                bl[start:end + 1] = rep
            body = '\n'.join(bl); done = True; break
        if not done: break
        try: ok = (ast.dump(ast.parse(body)) == ast.dump(ast.parse(before)) or _same_code(before, body)) and _comments(body) == _comments(before)
        except SyntaxError: ok = False
        if body in seen or not ok:                   # no progress (or a change of meaning): leave that line as it is
            stuck.add(before.split('\n')[ln - 1]); body = before
        seen.add(body)
    body = _wrap_comments(body)
    out = body.split('\n')
    for i in magic: out[i] = lines[i]                # magics were first lines; they stay where they were
    return '\n'.join(out)

def main(paths):
    left = 0
    for p in paths:
        nb = json.loads(Path(p).read_text())
        for c in nb['cells']:
            if c['cell_type'] != 'code': continue
            s = ''.join(c['source']); t = wrap_source(s)
            if t != s: c['source'] = t.splitlines(True)
            for l in t.split('\n'):
                if len(l) > MAX: left += 1; print(f"{p}: {len(l)}: {l.strip()[:100]}")
        Path(p).write_text(json.dumps(nb, indent=1, ensure_ascii=False) + '\n')
    print(f"{left} lines still over {MAX} characters")

if __name__ == '__main__': main(sys.argv[1:])
