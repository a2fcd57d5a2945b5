"""Render nbs/index.ipynb into README.md (Quarto, which nbdev_readme needs, cannot be installed offline here).
Markdown cells are copied, visible code cells become ```python blocks, `#| hide` cells are left out. A cell with
`#| echo: false` shows no code; with `#| output: asis` its saved output (markdown or printed text) goes in as it is
(Quarto's meaning of both), so figures read from saved benchmark results reach the README without being retyped.
`--check` exits 1 (and says so) when README.md differs from what index.ipynb renders to."""
import json, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

def _asis(cell) -> str:
    "A cell's saved outputs as markdown: text/markdown data, else printed text."
    out = []
    for o in cell.get('outputs', []):
        data = o.get('data', {})
        if 'text/markdown' in data: out.append(''.join(data['text/markdown']))
        elif o.get('output_type') == 'stream': out.append(''.join(o.get('text', '')))
    return '\n'.join(out)

def render(nb_path=ROOT/'nbs'/'index.ipynb') -> str:
    parts = []
    for c in json.loads(Path(nb_path).read_text())['cells']:
        src = ''.join(c['source']).strip()
        lines = src.splitlines()
        if c['cell_type'] == 'markdown': parts.append(src.replace('](images/', '](nbs/images/'))   # README sits one folder up
        elif not any(l.strip().startswith(('#| hide', '#|hide')) for l in lines):
            opts = {l.strip().replace(' ', '') for l in lines if l.startswith('#|')}
            code = '\n'.join(l for l in lines if not l.startswith('#|')).strip()
            if code and '#|echo:false' not in opts: parts.append(f"```python\n{code}\n```")
            if '#|output:asis' in opts: parts.append(_asis(c).strip())
    return '\n\n'.join(parts) + '\n'

if __name__ == '__main__':
    text, readme = render(), ROOT/'README.md'
    if '--check' in sys.argv:
        if readme.read_text() != text:
            sys.exit("README.md is out of date with nbs/index.ipynb: run `make readme` (python tools/readme.py).")
        print('README.md agrees with nbs/index.ipynb')
    else:
        readme.write_text(text); print(f'wrote {readme}')
