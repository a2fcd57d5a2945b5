"""The error ledger: every look ever taken at confirmation topics, and the one-sided error each spent.

A look is a saved summary whose runs were judged on confirmation topics (bench/results/replicates_*.json, written by
bench/confirm.py; instrument_demo.json, bench/methods.py --instrument-demo). Each claim a look could make -- one per
policy and row (in distribution, out of distribution) under the independent judge -- spends (1 - conf) / 2 of
one-sided error (a claim is 'above 1/2'; a summary that saved no level is taken at 95 %); by the union bound the chance
that any of them claimed a win that is not there is at most their sum, rounded up: the cumulative that stands beside
every claim made on these topics.

    .venv/bin/python bench/ledger.py            # -> bench/results/ledger.json (and prints the table)
    .venv/bin/python bench/ledger.py --smoke    # the same reading, written to a temporary folder"""
import json, math, sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).parent))
from _smoke import smoke_home, save_result, ROOT

def looks(results:Path) -> list[dict]:
    "One row per look at confirmation topics in `results`, oldest first."
    out = []
    for f in sorted(results.glob('replicates_*.json')) + sorted(results.glob('instrument_demo.json')):
        s = json.loads(f.read_text())
        if s.get('part') != 'confirmation': continue
        conf = s.get('conf', 0.95)
        claims = [f"{p} {row}" for p, js in (s.get('policies') or {}).items()
                  for row in ('in_distribution', 'out_of_distribution') if row in (js.get('judge') or {})]
        claims = claims or [f"{p} paired" for p in (s.get('paired') or {})] or [f.stem]
        out.append({'file': f.name, 'date': s.get('date', '')[:19], 'what': s.get('tag') or s.get('what', '')[:80] or f.stem,
                    'runs': len(s.get('runs') or []) or None, 'conf': conf, 'conf_saved': 'conf' in s, 'claims': claims,
                    'alpha_one_sided': round(len(claims) * (1 - conf) / 2, 5), 'recipe': s.get('recipe_path')})
    return sorted(out, key=lambda r: r['date'])

def main(smoke:bool=False):
    rows = looks(ROOT/'bench'/'results')
    total = math.ceil(sum(r['alpha_one_sided'] for r in rows) * 1000) / 1000   # rounded up: an upper bound
    res = {'looks': rows, 'n_looks': len(rows), 'n_claims': sum(len(r['claims']) for r in rows), 'cumulative_alpha_one_sided': total,
           'rule': 'union bound: the chance that any look claimed a win that is not there is at most the sum of their one-sided errors',
           'not_counted': "make demo's own evaluation of split seed 0 (a reading of the shipped recipe, not a choice between recipes)"}
    for r in rows: print(f"{r['date'][:10]}  {r['file']:<34} {len(r['claims'])} claims at {r['conf']:.3f} -> {r['alpha_one_sided']:.4f}")
    print(f"{len(rows)} looks, {res['n_claims']} claims at confirmation topics, cumulative one-sided error <= {total:.3f}")
    save_result(res, 'ledger.json', smoke_home() if smoke else None)
    return res

if __name__ == '__main__':
    main(smoke=sys.argv[1:] == ['--smoke'])
