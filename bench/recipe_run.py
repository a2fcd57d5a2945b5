"""A recipe's own measured time and result: run it end to end in a new run folder, as `make demo RECIPE=...` does,
and save each stage's seconds and peak memory, the whole wall time and the evaluation's headline per policy.

    .venv/bin/python bench/recipe_run.py data/recipes/filing.yaml               # run it and print the summary
    .venv/bin/python bench/recipe_run.py data/recipes/filing.yaml --save        # ... and write bench/results/recipe_<name>.json
    .venv/bin/python bench/recipe_run.py data/recipes/filing.yaml --split eval --save   # development: task_eval on the
                                 # development split, no export; writes recipe_<name>_dev.json (where choices are made)
    .venv/bin/python bench/recipe_run.py --smoke                                   # a toy recipe on tiny models

`rlnb.run_verdict.recipe_summary` reads the saved file (99_pipeline and the README render it)."""
import json, subprocess, sys, time
from datetime import datetime, timezone
from pathlib import Path

RESULTS = Path(__file__).parent/'results'

def development(recipe:dict) -> dict:
    "The recipe with its task evaluation on the development split (`split: eval`) and no export stage."
    return {**recipe, 'stages': [{**s, 'split': 'eval'} if s['stage'] == 'task_eval' else s
                                 for s in recipe['stages'] if s['stage'] != 'export']}

def main(recipe, save:bool=False, root=None, name:str|None=None, split:str|None=None):
    from rlnb.core import repo_dir
    from rlnb.hardware import cpu_line, peak_rss_mb
    from rlnb.pipeline import run_pipeline, load_recipe
    name = (name or Path(recipe).stem) + ('_dev' if split == 'eval' else '')
    print(cpu_line(), flush=True)
    t = time.perf_counter()
    rec = load_recipe(recipe)
    r = run_pipeline(development(rec) if split == 'eval' else rec, root=root)
    wall = time.perf_counter() - t
    stages = {k: {'seconds': m['seconds'], 'peak_rss_mb': m.get('peak_rss_mb')} for k, m in r.metrics.items()}
    headline = {p: v['headline'] for s in r.metrics.values() for p, v in s.items()
                if isinstance(v, dict) and 'headline' in v}
    task = {k: {p: {x: v for x, v in rep.items() if x != 'rows'} for p, rep in m.items() if isinstance(rep, dict)}
            for k, m in r.metrics.items() if k.startswith('task_eval')}   # a task with right answers: exact match
    row = {'recipe': str(recipe), **({'split': split} if split else {}), 'run': f'{r.path.parent.name}/{r.path.name}', 'wall_s': round(wall, 1), **({'task': task} if task else {}),
           'stages_s': round(sum(s['seconds'] for s in stages.values()), 1), 'stages': stages, 'headline': headline,
           'peak_rss_mb': max([round(peak_rss_mb())] + [s['peak_rss_mb'] or 0 for s in stages.values()]),   # stages report their own peaks
           'cpu': cpu_line(),
           'date': datetime.now(timezone.utc).isoformat(timespec='seconds'),
           'commit': subprocess.run(['git', 'rev-parse', '--short', 'HEAD'], capture_output=True, text=True,
                                    cwd=repo_dir()).stdout.strip() or None}
    print(json.dumps({k: row[k] for k in ('recipe', 'run', 'wall_s', 'stages_s')}))
    for k, s in stages.items(): print(f"  {k:>16}: {s['seconds']:8.1f} s")
    if save:
        out = RESULTS/f'recipe_{name}.json'; out.parent.mkdir(exist_ok=True)
        out.write_text(json.dumps(row, indent=1) + '\n'); print('saved', out)
    return row

def smoke():
    "A toy recipe (a toy run's stages, the tiny reward model, judge and policy, one on-policy round), saved to a temporary folder."
    global RESULTS
    from _smoke import smoke_home, toy_stages
    home = smoke_home(); RESULTS = home/'results'
    recipe = dict(agent='toy', seed=0, stages=toy_stages(home) + [
        dict(stage='reward', preset='tiny', epochs=1), dict(stage='judge', preset='tiny', epochs=1, prompt_half=None),
        dict(stage='dpo_on_policy', preset='tiny', rounds=1),
        dict(stage='evaluate', policies=['dpo_on_policy'], n_prompts=4, ood_prompts=0, max_new_tokens=4),
        dict(stage='export', source='dpo_on_policy', quantization=['q8_0'], question='hi')])
    assert [s['stage'] for s in development(recipe)['stages']][-1] == 'evaluate'   # the export dropped
    row = main(recipe, save=True, root=home/'models', name='smoke')
    saved = json.loads((RESULTS/'recipe_smoke.json').read_text())
    assert list(saved['stages']) == [s['stage'] for s in recipe['stages']], saved['stages']
    assert set(saved['headline']) == {'dpo_on_policy'} and saved['headline']['dpo_on_policy']['judge']['prompts'] == 4, saved
    assert all(s['seconds'] > 0 for s in saved['stages'].values()) and saved['wall_s'] >= max(s['seconds'] for s in saved['stages'].values())

if __name__ == '__main__':
    if '--smoke' in sys.argv: smoke(); sys.exit()
    split = sys.argv[sys.argv.index('--split') + 1] if '--split' in sys.argv else None
    if split not in (None, 'eval', 'confirm'): raise SystemExit(f"--split eval or confirm, got {split!r}")
    main(sys.argv[1], '--save' in sys.argv, split=split)
