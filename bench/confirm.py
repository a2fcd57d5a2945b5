"""Confirm a method chosen on development topics: run a recipe's own stages into replicate runs of `make demo` that
already hold its shared stages, evaluate it on each run's confirmation topics, and summarise over the runs.

    .venv/bin/python bench/confirm.py data/recipes/chitchat.yaml models/chitchat/v1 models/chitchat/v2 models/chitchat/v3 --tag lr3_bf16 --save
    .venv/bin/python bench/confirm.py data/recipes/chitchat.yaml RUN... --tag NAME --looks 2 --save   # a second look at growing runs
    .venv/bin/python bench/confirm.py PLAN.yaml --new-runs 5 5 --tag NAME --save   # five new runs, split seeds 5 to 9
    .venv/bin/python bench/confirm.py --figure     # redraw nbs/images/verdict.png (README, 08_evaluation) from the saved files
    .venv/bin/python bench/confirm.py --smoke

The runs are what `rlnb_pipeline data/recipes/chitchat.yaml --replicates N` made, one split seed each. A stage of the
recipe that a run already holds is checked to have the same options (the data, the reward model, the judge) and is not
run again: the recipe under that split seed would make it the same way. Its other stages run into the run under the
run's own seed; a method stage that `bench/methods.py` already trained there under the same key is kept after its
options are checked against `methods.METHODS`. The evaluation runs as `evaluate_<tag>` with its own report files, so the
demo's own evaluation is untouched. The export stage is left out (a verdict needs none). `--save` writes the replicate
summary (`rlnb.replicates.replicate_summary(tag=...)`) with the CPU, the date and the commit of this process to
bench/results/replicates_<tag>.json, which nbs/08_evaluation renders.

`--conf C` sets the intervals' level (default 1 - 0.05/K), `--max-invalid N` how many runs whose own verdict was
invalid (their control missed ½ at 95 %) the plan allows (default 0); both are recorded (`conf`, `max_invalid_runs`) and
`rlnb.verdicts.confirmed` reads them. A new plan sets them before its runs, in a commit.

`--looks K`: the replicates of one recipe are looked at K times in all (runs added after an earlier summary was seen);
every look's intervals are at level 1 - 0.05/K (Bonferroni over the planned looks), so that stopping at the first look
whose lower bound clears ½ keeps the claim's nominal error rate at 5 % (at 2.5 % for the one-sided claim "better"). The
file records `looks` and `conf`. A look made before the plan, at 95 %, spent its own share: say so where it is reported."""
SMOKE_TIMEOUT = 360   # tools/bench_smoke.py: its smoke runs a toy confirmation of several runs, past the default limit on a shared machine
import json, subprocess, sys
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE/'results'

def plan(recipe:dict, run:Path, tag:str) -> list[dict]:
    "The stages of `recipe` still to run in `run`; raises when a stage the run holds has other options than the recipe's."
    sys.path.insert(0, str(HERE))
    from methods import METHODS
    cfg = json.loads((run/'config.json').read_text())['recipe']
    done = json.loads((run/'metrics.json').read_text())
    own = {s.get('key', s['stage']): s for s in cfg['stages']}
    if cfg.get('system') != recipe.get('system'): raise SystemExit(f"{run}: another system message than the recipe's")
    todo = []
    for s in recipe['stages']:
        k = s.get('key', s['stage'])
        if s['stage'] == 'export': continue
        if s['stage'] == 'evaluate': todo.append({**s, 'key': f'evaluate_{tag}', 'tag': tag}); continue
        if k in own:
            if own[k] != s: raise SystemExit(f"{run}: its {k!r} stage has options {own[k]} but the recipe's are {s}")
            continue
        if k in done and f'evaluate_{tag}' not in done and {**(METHODS.get(k) or {}), 'stage': s['stage']} != {**s}:
            # (a run this script already confirmed under `tag` was checked, or trained here, then: a later look rereads it)
            raise SystemExit(f"{run}: holds a {k!r} stage, but not with the recipe's options {s}")
        todo.append(s)
    return todo

def new_runs(recipe:dict, seed:int, n:int, root=None) -> list[Path]:
    ("`n` new runs of `recipe`'s stages but its evaluation and export, under split seeds `seed` .. `seed + n - 1` (each "
     "its own run folder); `main` then evaluates them under its tag.")
    from rlnb.pipeline import run_pipeline
    stages = [s for s in recipe['stages'] if s['stage'] not in ('evaluate', 'export')]
    out = []
    for s in range(seed, seed + n):
        print(f"== new run under split seed {s}", flush=True)
        out.append(run_pipeline({**recipe, 'seed': s, 'stages': stages}, root=root).path)
        print(f"== made {out[-1]} (split seed {s}; if this process stops, pass the runs made so far and resume them)", flush=True)
    return out

def main(recipe_path, runs:list, tag:str, save:bool=False, results:Path=RESULTS, looks:int=1, conf:float|None=None,
         max_invalid:int=0, new:tuple|None=None, root=None) -> dict:
    from rlnb.core import repo_dir
    from rlnb.hardware import cpu_line, isa_caps
    from rlnb.pipeline import load_recipe, run_pipeline
    from rlnb.replicates import replicate_summary, replicates_table
    if not isinstance(looks, int) or looks < 1: raise SystemExit(f"--looks must be an integer >= 1, got {looks!r}")
    if conf is not None and not 0.5 < conf < 1: raise SystemExit(f"--conf must lie in (0.5, 1), got {conf!r}")
    if not isinstance(max_invalid, int) or max_invalid < 0: raise SystemExit(f"--max-invalid must be >= 0, got {max_invalid!r}")
    recipe, runs = load_recipe(recipe_path), [Path(r) for r in runs]
    if new: runs += new_runs(recipe, *new, root=root)   # (first split seed, how many)
    if len(runs) < 2: raise SystemExit(f"a confirmation needs at least 2 runs, got {len(runs)}")
    commit = subprocess.run(['git', 'rev-parse', 'HEAD'], capture_output=True, text=True, cwd=repo_dir()).stdout.strip() or None
    print(cpu_line(), flush=True)
    todos = [plan(recipe, r, tag) for r in runs]          # every run checked before any runs
    for run, todo in zip(runs, todos):
        seed = json.loads((run/'config.json').read_text())['recipe'].get('seed', 0)
        print(f"== {run} (split seed {seed}): {', '.join(s.get('key', s['stage']) for s in todo)}", flush=True)
        run_pipeline({'agent': recipe['agent'], 'seed': seed, 'system': recipe.get('system'), 'stages': todo}, resume=run)
    ev = next((x for x in recipe['stages'] if x['stage'] == 'evaluate'), {})
    requires = ['style_controlled'] + (['tripwires'] if ev.get('tripwires', 'cpu') else [])   # the rule's evidence (confirmed)
    s = {**replicate_summary(runs, tag=tag, conf=conf or 1 - 0.05 / looks), 'looks': looks, 'max_invalid_runs': max_invalid,
         'requires': requires}
    print(replicates_table(s))
    if save:
        metas = [json.loads(f.read_text()).get('meta') or {} for f in sorted((runs[-1]/'eval').glob(f'*_{tag}.json'))]
        out = {**s, 'recipe': recipe, 'recipe_path': str(recipe_path), 'commit': commit, 'cpu': cpu_line(),
               'isa_caps': isa_caps(), 'date': max((m['created_at'] for m in metas if m.get('created_at')),
                                                   default=datetime.now(timezone.utc).isoformat(timespec='seconds')),
               'shared_commits': [json.loads((r/'config.json').read_text()).get('environment', {}).get('git_commit') for r in runs]}
        p = Path(results)/f'replicates_{tag}.json'; p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps(out, indent=1, default=str) + '\n'); print(f"wrote {p}")
        if Path(results) == RESULTS and all((RESULTS/f).exists() for f in SUMMARIES.values()): figure()
    return s

FIGURE = HERE.parent/'nbs'/'images'/'verdict.png'
DEMO = 'chitchat.yaml, make demo'   # the label of make demo's recipe: index (the README) and 08 state its file's verdict
SUMMARIES = {'chitchat_offline.yaml': 'replicates_demo.json',          # offline DPO and PPO, the demo's first methods
             'on-policy, 1x lr: make demo until the next': 'replicates_best.json',   # at the DPO preset's learning rate
             'candidate: 3x lr, bf16, seeds 0-4': 'replicates_lr3_bf16.json',         # not confirmed: a run's control failed
             'the candidate anew, seeds 5-9': 'replicates_lr3_bf16_b.json',   # confirmed: make demo's until the next
             'lighter, 3e-4: make demo until the next': 'replicates_light.json',   # bench/plans/light.yaml, seeds 10-13, 15
             'guarded, half the change': 'replicates_scaled.json',   # bench/plans/scaled.yaml, seeds 22-24: not confirmed
             'guarded, the whole change': 'replicates_guard2.json',   # bench/plans/guard2.yaml, seeds 25-27: not confirmed
             DEMO: 'replicates_anchor.json'}   # anchored (bench/plans/anchor.yaml): disjoint judge, 1e-4, seeds 16-18

def figure_source(results:Path=RESULTS) -> str:
    ("SHA-256 of the saved summaries the figure is drawn from and of the code that draws it (stored in the PNG: "
     "08_evaluation checks it is current).")
    import hashlib, inspect
    from report import verdict_rows, plot_verdicts
    code = ''.join(inspect.getsource(f) for f in (verdict_rows, plot_verdicts, figure)).encode()
    return hashlib.sha256(b''.join((Path(results)/f).read_bytes() for f in SUMMARIES.values()) + code).hexdigest()

def figure(results:Path=RESULTS, out:Path=FIGURE) -> Path:
    "Every method's replicated verdict on confirmation topics, with its control, as one figure (`report.plot_verdicts`)."
    import matplotlib; matplotlib.use('Agg')
    from report import verdict_rows, plot_verdicts
    ss = {k: json.loads((Path(results)/f).read_text()) for k, f in SUMMARIES.items()}
    rows = verdict_rows(ss)
    last = ss[DEMO]
    title = (f"confirmation topics, {' / '.join(str(len(s['runs'])) for s in ss.values())} split seeds; "
             f"{last['cpu'].removeprefix('CPU: ').split(' (')[0]}, {max(s['date'][:10] for s in ss.values())}")
    plot_verdicts(rows, title, out, metadata={'Source': figure_source(results)})
    print(f"wrote {out}"); return out

def smoke():
    "Two toy replicate runs (split seeds 0 and 1), then a toy on-policy recipe confirmed on both."
    from _smoke import smoke_home, toy_stages
    from rlnb.pipeline import run_pipeline
    home = smoke_home()
    shared = toy_stages(home) + [dict(stage='reward', preset='tiny', epochs=1), dict(stage='judge', preset='tiny', epochs=1, prompt_half=None)]
    runs = [run_pipeline(dict(agent='toy', seed=s, stages=shared), root=home/'models').path for s in (0, 1)]
    recipe = dict(agent='toy', seed=0, stages=shared + [
        dict(stage='dpo_on_policy', preset='tiny', rounds=1),
        dict(stage='evaluate', policies=['dpo_on_policy'], part=None, n_prompts=4, max_new_tokens=4, ood_prompts=0),
        dict(stage='export', source='dpo_on_policy')])
    (home/'recipe.json').write_text(json.dumps(recipe))
    s = main(home/'recipe.json', runs, 'smoke', save=True, results=home/'results')
    assert 'dpo_on_policy' in s['policies'] and s['tag'] == 'smoke' and (s['looks'], s['conf']) == (1, 0.95), s
    assert s['requires'] == ['style_controlled', 'tripwires'] and len(s['tripwires']['dpo_on_policy']) == 2, s   # the rule's evidence
    s2 = main(home/'recipe.json', runs, 'smoke', looks=2)   # a second look: nothing reruns, wider intervals
    s3 = main(home/'recipe.json', runs[:1], 'smoke', conf=0.99, max_invalid=1, new=(2, 1), root=home/'models')
    assert (s3['conf'], s3['max_invalid_runs'], s['max_invalid_runs']) == (0.99, 1, 0), s3   # a plan's level and allowance
    assert s3['seeds'] == [0, 2] and s3['runs'][0] == s['runs'][0], s3                       # ... and a new run, seed 2
    r1, r2 = (x['policies']['dpo_on_policy']['judge']['in_distribution'] for x in (s, s2))
    assert s2['conf'] == 0.975 and r2['rate'] == r1['rate'] and r2['ci'][0] <= r1['ci'][0] and r2['ci'][1] >= r1['ci'][1], (r1, r2)
    saved = json.loads((home/'results'/'replicates_smoke.json').read_text())
    assert saved['runs'] == s['runs'] and saved['commit'], saved
    bad = {**recipe, 'stages': [{**shared[2], 'epochs': 2}] + recipe['stages'][3:]}
    try: plan(bad, runs[0], 'smoke'); raise AssertionError('a changed shared stage must be refused')
    except SystemExit as e: assert 'options' in str(e), e
    from PIL import Image
    f = figure(RESULTS, home/'verdict.png')                 # the README's figure, drawn from the saved files into the temp home
    assert Image.open(f).text['Source'] == figure_source(), Image.open(f).text

if __name__ == '__main__':
    a = sys.argv[1:]
    if '--smoke' in a: smoke(); sys.exit()
    if '--figure' in a: figure(); sys.exit()
    if '--tag' not in a: raise SystemExit("say --tag NAME: the evaluation's key in each run and bench/results/replicates_NAME.json "
                                          "(each confirmed recipe has its own: " + ', '.join(SUMMARIES.values()) + ')')
    tag = a[a.index('--tag') + 1]
    looks = int(a[a.index('--looks') + 1]) if '--looks' in a else 1
    conf = float(a[a.index('--conf') + 1]) if '--conf' in a else None
    max_invalid = int(a[a.index('--max-invalid') + 1]) if '--max-invalid' in a else 0
    new = tuple(int(x) for x in a[a.index('--new-runs') + 1:a.index('--new-runs') + 3]) if '--new-runs' in a else None
    skip = {i + k for i, x in enumerate(a) if x in ('--tag', '--looks', '--conf', '--max-invalid') for k in (1,)} | \
           {i + k for i, x in enumerate(a) if x == '--new-runs' for k in (1, 2)}
    pos = [x for i, x in enumerate(a) if not x.startswith('--') and i not in skip]
    main(pos[0], pos[1:], tag, '--save' in a, looks=looks, conf=conf, max_invalid=max_invalid, new=new)
