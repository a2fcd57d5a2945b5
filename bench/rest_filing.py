"""Best-of-n data (ReST) against plain SFT on the filing task's development split: data/recipes/filing.yaml's stages,
plus a regression reward model on the scored answers' 0-1 scores (never the right folders) and one `rest` round after
SFT (the SFT policy answers every training document `samples` times, the reward model keeps the best of each, SFT goes
on from the SFT adapter on them); `task_eval` scores both policies on the development split, no export. The same
documents answered by both: the exact-match difference is paired, document by document, with a bootstrap interval.

    .venv/bin/python bench/rest_filing.py           # run and print
    .venv/bin/python bench/rest_filing.py --save    # ... and write bench/results/rest_filing.json (05c_rest renders it)
    .venv/bin/python bench/rest_filing.py --smoke   # a toy filing task on tiny models, results in a temporary folder"""
import json, sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).parent))
from _smoke import smoke_home, save_result, ROOT
import recipe_run

REWARD = dict(stage='reward', preset='cpu', objective='regression', epochs=10)   # ~240 scored answers: 1 epoch is 15 steps
REST = dict(stage='rest', preset='cpu', samples=4, max_new_tokens=24,
            sft_overrides={'learning_rate': 5.0e-4, 'batch_size': 4, 'epochs': 2})   # the recipe's SFT rate and batch

def rest_recipe(recipe:dict, reward:dict=REWARD, rest:dict=REST) -> dict:
    "`recipe` with `reward` before its `sft` stage, `rest` after it, and no export (development: choices are made here)."
    out = []
    for s in recipe['stages']:
        if s['stage'] == 'export': continue
        if s['stage'] == 'sft': out += [reward, s, rest]; continue
        out.append(s)
    if not any(s['stage'] == 'sft' for s in recipe['stages']): raise SystemExit("the recipe has no sft stage to go on from")
    return {**recipe, 'stages': out}

def paired(run:Path, a:str='sft', b:str='rest', seed:int=0) -> dict:
    "Exact match of `b` minus `a` on the same documents (their task_eval rows), with a bootstrap interval over documents."
    import numpy as np
    from rlnb.judges import rule_components
    from rlnb.stats import bootstrap_ci
    rows = {n: {r['prompt']: r for r in json.loads((run/'eval'/f'task_{n}.json').read_text())['rows']} for n in (a, b)}
    ps = sorted(set(rows[a]) & set(rows[b]))
    em = {n: np.array([float(rule_components(rows[n][p]['policy'], rows[n][p]['gold'])['exact']) for p in ps]) for n in (a, b)}
    d = em[b] - em[a]
    lo, hi = bootstrap_ci(d, seed=seed)
    return {'documents': len(ps), a: round(float(em[a].mean()), 4), b: round(float(em[b].mean()), 4),
            'diff': round(float(d.mean()), 4), 'diff_ci': [round(lo, 4), round(hi, 4)],
            'better': int((d > 0).sum()), 'worse': int((d < 0).sum()), 'significant': bool(lo > 0 or hi < 0)}

def table(r:dict) -> str:
    "A saved `bench/rest_filing.py` result as a table: exact match of the base, SFT and SFT + ReST, the paired difference."
    t, p, rr = r['task'], r['paired'], r['rest_round']
    ci = lambda s: f"{s['exact_match']:.3f} [{s['exact_match_ci'][0]:.3f}, {s['exact_match_ci'][1]:.3f}]"
    lines = [f"{r['cpu']}, {r['date'][:10]}; {p['documents']} development documents",
             '| policy | exact match (Wilson 95 %) | stage s |', '|---|---|---|',
             f"| base | {ci(t['sft']['base'])} | |",
             f"| SFT | {ci(t['sft']['policy'])} | {r['stages']['sft']['seconds']:.0f} |",
             f"| SFT + one ReST round | {ci(t['rest']['policy'])} | {r['stages']['rest']['seconds']:.0f} |", '',
             f"ReST minus SFT, paired: {p['diff']:+.3f} [{p['diff_ci'][0]:+.3f}, {p['diff_ci'][1]:+.3f}] "
             f"({p['better']} documents better, {p['worse']} worse)" + ('' if p['significant'] else ': not significant'),
             f"The round: best of {rr['samples']} answers to {rr['prompts']} training documents, {rr['kept']} kept "
             f"(mean reward {rr['best_score_mean']} vs {rr['score_mean']} over every draw; at the best scores' quartiles "
             f"{', '.join(f'{k}: {v}' for k, v in rr['kept_at'].items())} would be kept)"]
    return '\n'.join(lines)

def main(recipe=ROOT/'data'/'recipes'/'filing.yaml', save:bool=False, root=None, reward=REWARD, rest=REST, home=None) -> dict:
    from rlnb.pipeline import load_recipe
    rec = rest_recipe(load_recipe(recipe), reward, rest)
    row = recipe_run.main(rec, root=root, name='rest_filing', split='eval')
    run = ROOT/'models'/row['run'] if root is None else Path(root)/row['run']
    res = {'what': "plain SFT against SFT then one best-of-n (ReST) round, the filing task's development split",
           'recipe': str(recipe), 'reward': reward, 'rest': rest, **{k: row[k] for k in ('run', 'wall_s', 'stages', 'cpu', 'date', 'commit')},
           'task': row['task']['task_eval'], 'paired': paired(run),
           'rest_round': json.loads((run/'metrics.json').read_text())['rest']['rest']}
    p = res['paired']
    print(f"exact match on {p['documents']} development documents: SFT {p['sft']:.3f}, SFT + ReST {p['rest']:.3f}, "
          f"paired difference {p['diff']:+.3f} [{p['diff_ci'][0]:+.3f}, {p['diff_ci'][1]:+.3f}]"
          + ('' if p['significant'] else ' (not significant)'))
    if save or home: save_result(res, 'rest_filing.json', home)
    return res

def smoke():
    home = smoke_home()
    kinds = ['invoice', 'receipt', 'payslip']
    lines = [dict(prompt=f'File document {i} ({kinds[i % 3]})', response=f'Finance/{kinds[i % 3]}' if i % 2 else 'Misc',
                  score=0.9 if i % 2 else 0.1, metadata=dict(gold=f'Finance/{kinds[i % 3]}', kind=kinds[i % 3])) for i in range(40)]
    (home/'fb.jsonl').write_text('\n'.join(json.dumps(x) for x in lines))
    db = str(home/'fb.db')
    toy = dict(agent='toyfile', seed=0, system='Reply with the folder only.', stages=[dict(stage='import_feedback', source=str(home/'fb.jsonl'), store=db),
        dict(stage='format', store=db, eval_frac=0.3, formats=['sft', 'targets']), dict(stage='sft', preset='tiny', max_steps=2),
        dict(stage='task_eval', max_new_tokens=4), dict(stage='export', source='sft')])
    (home/'toy.yaml').write_text(json.dumps(toy))   # JSON is YAML
    recipe_run.RESULTS = home/'results'
    res = main(home/'toy.yaml', root=home/'models', home=home, reward=dict(stage='reward', preset='tiny', objective='regression', epochs=1),
               rest=dict(stage='rest', preset='tiny', sft_overrides={'max_steps': 2}))
    saved = json.loads((home/'results'/'rest_filing.json').read_text())
    assert [s for s in saved['stages']] == ['import_feedback', 'format', 'reward', 'sft', 'rest', 'task_eval'], saved['stages']
    p = saved['paired']
    assert p['documents'] == saved['task']['sft']['prompts'] and abs(p['sft'] - saved['task']['sft']['policy']['exact_match']) < 1e-4, (p, saved['task']['sft']['policy'])
    assert abs(p['diff'] - (p['rest'] - p['sft'])) < 2e-4 and p['diff_ci'][0] <= p['diff'] <= p['diff_ci'][1], p
    assert saved['rest_round']['kept'] >= 1 and res == saved
    assert 'not significant' in table(saved) or saved['paired']['significant'], table(saved)

if __name__ == '__main__':
    if '--smoke' in sys.argv: smoke(); sys.exit()
    main(save='--save' in sys.argv)
