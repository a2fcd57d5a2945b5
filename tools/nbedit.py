"""Small helpers to edit notebooks from scripts (the notebooks stay the source of truth; run nbdev_export after).

    from tools.nbedit import NB
    nb = NB('nbs/07_export.ipynb')
    nb.replace('def parity_check', new_source)          # the one cell whose source contains the text
    nb.insert_after('def parity_check', [nb.md('...'), nb.code('...')])
    nb.save()
"""
import hashlib, json
from pathlib import Path

class NB:
    def __init__(self, path):
        self.path = Path(path)
        self.nb = json.loads(self.path.read_text()) if self.path.exists() else {
            'cells': [], 'metadata': {'kernelspec': {'display_name': 'python3', 'language': 'python', 'name': 'python3'}},
            'nbformat': 4, 'nbformat_minor': 5}
    @property
    def cells(self): return self.nb['cells']
    def src(self, c): return ''.join(c['source'])
    def _id(self, text): return hashlib.sha1(f'{self.path.name}:{text}:{len(self.cells)}'.encode()).hexdigest()[:8]
    def code(self, text):
        text = text.strip('\n')
        return {'cell_type': 'code', 'execution_count': None, 'id': self._id(text), 'metadata': {}, 'outputs': [], 'source': text.splitlines(True)}
    def md(self, text):
        text = text.strip('\n')
        return {'cell_type': 'markdown', 'id': self._id(text), 'metadata': {}, 'source': text.splitlines(True)}
    def find(self, text) -> int:
        hits = [i for i, c in enumerate(self.cells) if text in self.src(c)]
        if len(hits) != 1: raise ValueError(f"{len(hits)} cells contain {text!r} in {self.path}")
        return hits[0]
    def replace(self, match, text):
        c = self.cells[self.find(match)]
        c['source'] = text.strip('\n').splitlines(True)
        if c['cell_type'] == 'code': c['outputs'], c['execution_count'] = [], None
    def sub(self, match, old, new):
        c = self.cells[self.find(match)]
        s = self.src(c)
        if old not in s: raise ValueError(f"{old!r} not in the cell with {match!r}")
        c['source'] = s.replace(old, new).splitlines(True)
    def insert_after(self, match, new_cells):
        i = self.find(match) if isinstance(match, str) else match
        self.cells[i+1:i+1] = new_cells
    def insert_before(self, match, new_cells):
        i = self.find(match)
        self.cells[i:i] = new_cells
    def delete(self, match): del self.cells[self.find(match)]
    def append(self, new_cells): self.cells.extend(new_cells)
    def save(self): self.path.write_text(json.dumps(self.nb, indent=1, ensure_ascii=False) + '\n')
