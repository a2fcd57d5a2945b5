"""Methods side by side on one run: each trains on a run folder of data/recipes/chitchat_offline.yaml (make demo's recipe
until the on-policy DPO this chose replaced it; its reward model, its training prompts) and is judged like that run's own
DPO and PPO (the run's evaluate options: same held-out prompts, sampling, judges).

    .venv/bin/python bench/methods.py models/chitchat/v3 dpo_on_policy          # train + evaluate one method
    .venv/bin/python bench/methods.py models/chitchat/v3 dpo_on_policy --save   # ... and add it to bench/results/methods.json
    .venv/bin/python bench/methods.py models/chitchat/v3 dpo_on_policy_lr3 --candidate   # ... to methods_candidates.json
    .venv/bin/python bench/methods.py models/chitchat/v3 dpo_on_policy_lr3_bf16 --instrument   # fp32 vs bf16 evaluation
    .venv/bin/python bench/methods.py NAME --promote replicates_TAG.json   # once confirmed: to methods.json
    .venv/bin/python bench/methods.py --smoke                                   # a toy run folder, tiny models, one round

A method is a pipeline stage (`METHODS`); its training time, configuration, per-round figures and the evaluation's
headline and judge validity go to bench/results/methods.json, which `rlnb.evaluation.method_rows` reads, and `make
demo`'s recipe must run the saved method with the highest lower bound (99_pipeline). `--candidate` saves the row to
bench/results/methods_candidates.json instead: measured on development topics, not yet what the demo runs, because its
recipe has not been confirmed on held-out topics across split seeds (bench/confirm.py). Until then the demo keeps the
confirmed method, and its claim stays the one confirmed.

`--instrument` checks the instrument on one measured policy: its development evaluation again with bf16 sampling
(`EvalConfig.bf16=True`, the KL in fp32), the same prompts, judges and K, as `evaluate_<name>_dev_bf16`; both evaluations'
figures and times go to `instrument_check` in the candidates file. `--promote FILE` moves a candidate's row to
methods.json once bench/confirm.py's summary FILE (bench/results/) confirms a recipe running it: FILE's recipe must run the
method's stage and its lower bound under the judge must clear ½ with every run valid and the control holding ½."""
import json, subprocess, sys
from datetime import datetime, timezone
from pathlib import Path

RESULTS = Path(__file__).parent/'results'/'methods.json'
CANDIDATES = RESULTS.with_name('methods_candidates.json')   # measured on development topics, not confirmed yet
STEPS = 14   # GRPO/RLOO steps of 16 answers: about the demo DPO stage's CPU time (the saved rows hold the time)
METHODS = {   # name: the stage and its options; `out` keeps each method's folder apart from the demo's own stages
    # the run's own trained policies (None: the recipe's stage, already done in the run, is evaluated, not retrained)
    'dpo': None, 'ppo': None,
    'dpo_on_policy': dict(stage='dpo_on_policy', preset='cpu', dpo='cpu_bf16', rounds=2, prompts_per_round=128, samples=4),
    # a smaller budget, within the demo DPO stage's time: one round of 48 prompts
    'dpo_on_policy_budget': dict(stage='dpo_on_policy', out='dpo_on_policy_budget', preset='cpu', dpo='cpu_bf16', rounds=1,
                                 prompts_per_round=48, samples=4),
    # the same budget at three times the DPO preset's learning rate (5e-5): the policy moved little in 2 rounds (KL
    # 0.56 nats an answer, DPO margins 0.03)
    'dpo_on_policy_lr3': dict(stage='dpo_on_policy', out='dpo_on_policy_lr3', preset='cpu', dpo='cpu_bf16', rounds=2,
                              prompts_per_round=128, samples=4, learning_rate=1.5e-4),
    # ... with its answers sampled in bf16 where the CPU has it natively (`bf16_sampling`: fp32 logits; its speed:
    # bench/bf16_sampling.py). None, by the CPU's flags (`auto_bf16`): bf16 on the AVX-512-BF16 EPYC it was measured on
    # (its saved row says True, the value it ran with), fp32 on an AVX2-only CPU, where bf16 has no native kernels
    'dpo_on_policy_lr3_bf16': dict(stage='dpo_on_policy', out='dpo_on_policy_lr3_bf16', preset='cpu', dpo='cpu_bf16',
                                   rounds=2, prompts_per_round=128, samples=4, learning_rate=1.5e-4, bf16=None),
    # TRL's group-baseline methods from the same reward model and training prompts as on-policy DPO: 4 prompts x 4
    # answers a step, PPO's cpu preset otherwise
    'grpo': dict(stage='ppo', preset='cpu', model='smollm2', algorithm='grpo', batch_size=16, steps=STEPS, prompt_set='turns'),
    'rloo': dict(stage='ppo', preset='cpu', model='smollm2', algorithm='rloo', batch_size=16, steps=STEPS, prompt_set='turns'),
}
SMOKE = {}
FIGURE = Path(__file__).resolve().parent.parent/'nbs'/'images'/'methods.png'   # the README's figure

def main(run:str, name:str, save:bool=False, candidate:bool=False):
    from rlnb.core import cpu_line, repo_dir
    from rlnb.pipeline import run_pipeline
    run = Path(run); cfg = json.loads((run/'config.json').read_text())
    recipe = cfg.get('recipe', cfg)
    if name not in METHODS: raise SystemExit(f"methods: {', '.join(METHODS)}; got {name!r}")
    own = next((s for s in recipe['stages'] if s.get('key', s['stage']) == name), None)
    if METHODS[name] is None and own is None: raise SystemExit(f"{run} has no {name!r} stage to evaluate")
    stage = own if METHODS[name] is None else {**METHODS[name], **SMOKE.get(METHODS[name]['stage'], {})}
    # development topics only: a method is chosen here, so it is never confirmed here (the recipe's own evaluation reads
    # the confirmation topics); the table's Holm column adjusts for comparing every method with one base
    evaluate = _evaluate_stage(recipe, name)
    print(cpu_line(), flush=True)
    r = run_pipeline({'agent': recipe['agent'], 'seed': recipe.get('seed', 0), 'system': recipe.get('system'),
                      'stages': [{**stage, 'key': name}, evaluate]}, resume=run)
    m, e = r.metrics[name], r.metrics[f'evaluate_{name}']
    row = {'method': name, 'stage': stage, 'train_s': m['seconds'], 'rounds': m.get('rounds'),
           'train_examples': m.get('train_examples'), 'steps': m.get('steps'),
           'reward_first': m.get('reward_first'), 'reward_last': m.get('reward_last'), 'kl_last': m.get('kl_last'), 'evaluate_s': e['seconds'],
           'headline': e[name]['headline'], 'judge_validity': e[name].get('judge_validity'),
           'part': e.get('n_rule', {}).get('part'), 'prompts': e.get('prompts'), 'topics': e.get('n_rule', {}).get('topics'),
           'cpu': cpu_line(), 'date': datetime.now(timezone.utc).isoformat(timespec='seconds'),
           'commit': subprocess.run(['git', 'rev-parse', '--short', 'HEAD'], capture_output=True, text=True,
                                    cwd=repo_dir()).stdout.strip() or None, 'run': f'{run.parent.name}/{run.name}'}
    print(json.dumps({k: row[k] for k in ('method', 'train_s', 'evaluate_s', 'headline')}, indent=1))
    if candidate:
        allr = json.loads(CANDIDATES.read_text()) if CANDIDATES.exists() else {'methods': {}}
        allr['methods'][name] = {**row, 'status': 'candidate: development topics only, its recipe not confirmed'}
        CANDIDATES.parent.mkdir(exist_ok=True); CANDIDATES.write_text(json.dumps(allr, indent=1) + '\n')
        print('saved', CANDIDATES)
    if save:
        allr = json.loads(RESULTS.read_text()) if RESULTS.exists() else {'methods': {}}
        allr['methods'][name] = row
        RESULTS.parent.mkdir(exist_ok=True); RESULTS.write_text(json.dumps(allr, indent=1) + '\n'); print('saved', RESULTS)
        from rlnb.bench import plot_saved_methods
        plot_saved_methods(FIGURE, RESULTS.parent); print('drew', FIGURE)
        if not SMOKE:   # the pipeline map names the best saved method
            sys.path.insert(0, str(Path(__file__).resolve().parent.parent/'tools'))
            import pipeline_map; print('drew', pipeline_map.draw(FIGURE.parent/'pipeline_map.png'))
    return row

def _evaluate_stage(recipe:dict, name:str) -> dict:
    "The run's own evaluate options on development topics, for method `name` (see `main`)."
    ev = {k: v for k, v in next((s for s in recipe['stages'] if s['stage'] == 'evaluate'), {}).items() if k != 'stage'}
    return {**ev, 'stage': 'evaluate', 'key': f'evaluate_{name}', 'tag': name, 'policies': [name], 'ood_prompts': 0,
            'part': 'development', **SMOKE.get('evaluate', {})}

FIELDS = ('win_rate', 'win_rate_ci', 'lc_win_rate', 'lc_win_rate_ci', 'control_win_rate', 'control_win_rate_ci', 'kl',
          'kl_ci', 'valid')

def instrument(run:str, name:str) -> dict:
    ("The same policy judged twice on the same development prompts: `evaluate_<name>` (as `main` made it, fp32 unless the "
     "run's evaluate options say otherwise) and again with bf16 sampling, as `evaluate_<name>_dev_bf16`; saved to the "
     "candidates file's `instrument_check`.")
    from rlnb.core import cpu_line
    from rlnb.pipeline import run_pipeline
    run = Path(run); done = json.loads((run/'metrics.json').read_text())
    if f'evaluate_{name}' not in done: raise SystemExit(f"{run} has no evaluate_{name}: run bench/methods.py {run} {name} first")
    cfg = json.loads((run/'config.json').read_text()); recipe = cfg.get('recipe', cfg)
    fp = _evaluate_stage(recipe, name)
    if fp.get('bf16'): raise SystemExit(f"{run}'s evaluation already samples in bf16: there is no fp32 evaluation to check against")
    bf = {**fp, 'key': f'evaluate_{name}_dev_bf16', 'tag': f'{name}_dev_bf16', 'bf16': True}
    print(cpu_line(), flush=True)
    m = run_pipeline({'agent': recipe['agent'], 'seed': recipe.get('seed', 0), 'system': recipe.get('system'),
                      'stages': [bf]}, resume=run).metrics
    side = lambda e: {'seconds': e['seconds'], **{k: e[name]['headline']['judge'][k] for k in FIELDS}}
    ic = {'what': f"the same policy ({name} of this run) judged on the same development prompts twice: the evaluation's "
                  "answers sampled in fp32, then with bf16 sampling (EvalConfig.bf16; KL in fp32)",
          'policy': name, 'run': f'{run.parent.name}/{run.name}', 'part': 'development',
          'fp32': side(m[f'evaluate_{name}']), 'bf16': side(m[bf['key']]), 'cpu': cpu_line(),
          'date': datetime.now(timezone.utc).date().isoformat()}
    allr = json.loads(CANDIDATES.read_text()) if CANDIDATES.exists() else {'methods': {}}
    CANDIDATES.parent.mkdir(exist_ok=True); CANDIDATES.write_text(json.dumps({**allr, 'instrument_check': ic}, indent=1) + '\n')
    print(json.dumps(ic, indent=1)); print('saved', CANDIDATES)
    return ic

def promote(name:str, summary:str) -> dict:
    ("Move candidate `name`'s row from the candidates file to methods.json, once `summary` (a bench/confirm.py file in "
     "bench/results/) confirms a recipe whose method stage is `name`'s: lower bound above ½ under the judge, every run "
     "valid, the control's interval holding ½. The row keeps its development figures and names the confirmation.")
    s = json.loads((RESULTS.parent/summary).read_text())
    method = {k: v for k, v in METHODS[name].items() if k != 'out'}
    stage = next((x for x in s['recipe']['stages'] if x['stage'] == method['stage']), None)
    if stage != method: raise SystemExit(f"{summary}'s recipe runs {stage}, not {name}'s stage {method}")
    (pol,) = s['policies'].values(); j, c = pol['judge'], s['control']['judge']
    if not (j['in_distribution']['ci'][0] > 0.5 and j['valid_runs'] == len(s['runs']) and c['ci'][0] <= 0.5 <= c['ci'][1]):
        raise SystemExit(f"{summary} does not confirm it: {j['in_distribution']['rate']} {j['in_distribution']['ci']}, "
                         f"{j['valid_runs']} of {len(s['runs'])} valid, control {c['ci']}")
    cand = json.loads(CANDIDATES.read_text())
    if name not in cand['methods']: raise SystemExit(f"{name} is not a candidate in {CANDIDATES}")
    row = {k: v for k, v in cand['methods'].pop(name).items() if k != 'status'}
    row['confirmed'] = {'file': summary, 'rate': j['in_distribution']['rate'], 'ci': j['in_distribution']['ci'],
                        'runs': len(s['runs']), 'conf': s['conf']}
    allr = json.loads(RESULTS.read_text()); allr['methods'][name] = row
    RESULTS.write_text(json.dumps(allr, indent=1) + '\n'); CANDIDATES.write_text(json.dumps(cand, indent=1) + '\n')
    print('moved', name, 'to', RESULTS)
    from rlnb.bench import plot_saved_methods
    plot_saved_methods(FIGURE, RESULTS.parent); print('drew', FIGURE)
    if not SMOKE:
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent/'tools'))
        import pipeline_map; print('drew', pipeline_map.draw(FIGURE.parent/'pipeline_map.png'))
    return row

def smoke():
    "A toy run folder as the pipeline makes it (tiny reward model and judge), then each method for one round."
    global RESULTS, FIGURE, CANDIDATES
    from _smoke import smoke_home, toy_run
    home = smoke_home(); RESULTS = home/'results'/'methods.json'; FIGURE = home/'results'/'methods.png'
    CANDIDATES = home/'results'/'methods_candidates.json'
    run = toy_run(home)
    SMOKE.update(dpo_on_policy=dict(preset='tiny', rounds=1), ppo=dict(preset='tiny', model='tiny', steps=1, batch_size=4),
                 evaluate=dict(n_prompts=4, max_new_tokens=4))
    trained = [n for n, m in METHODS.items() if m]   # the toy run has no DPO or PPO stage of its own
    cand = {n for n in trained if n.startswith('dpo_on_policy_lr3')}   # the candidates go to their own file
    for name in trained: main(run, name, save=name not in cand, candidate=name in cand)
    assert set(json.loads(RESULTS.read_text())['methods']) == set(trained) - cand
    assert set(json.loads(CANDIDATES.read_text())['methods']) == cand
    ic = instrument(run, 'dpo_on_policy_lr3_bf16')            # the same policy, evaluated again with bf16 sampling
    assert ic['fp32']['seconds'] > 0 and ic['bf16']['seconds'] > 0 and 0 <= ic['bf16']['win_rate'] <= 1, ic
    assert json.loads(CANDIDATES.read_text())['instrument_check'] == ic
    import copy                                                   # a confirmation summary: refused, then accepted
    stage = {k: v for k, v in METHODS['dpo_on_policy_lr3_bf16'].items() if k != 'out'}
    ok = {'recipe': {'stages': [stage]}, 'runs': [1, 2, 3], 'conf': 0.95, 'control': {'judge': {'ci': [0.45, 0.55]}},
          'policies': {'dpo_on_policy': {'judge': {'valid_runs': 3, 'in_distribution': {'rate': 0.58, 'ci': [0.52, 0.64]}}}}}
    weak = copy.deepcopy(ok); weak['policies']['dpo_on_policy']['judge']['in_distribution']['ci'] = [0.49, 0.64]
    for f, d in (('weak.json', weak), ('ok.json', ok)): (RESULTS.parent/f).write_text(json.dumps(d))
    try: promote('dpo_on_policy_lr3_bf16', 'weak.json'); raise AssertionError('a lower bound of 0.49 must not promote')
    except SystemExit as e: assert 'does not confirm' in str(e), e
    row = promote('dpo_on_policy_lr3_bf16', 'ok.json')
    assert row['confirmed']['ci'] == [0.52, 0.64] and 'status' not in row, row
    assert 'dpo_on_policy_lr3_bf16' in json.loads(RESULTS.read_text())['methods']
    assert 'dpo_on_policy_lr3_bf16' not in json.loads(CANDIDATES.read_text())['methods']

if __name__ == '__main__':
    if '--smoke' in sys.argv: smoke(); sys.exit()
    a = sys.argv[1:]
    if '--promote' in a: promote(a[0], a[a.index('--promote') + 1]); sys.exit()
    if '--instrument' in a: instrument(a[0], a[1]); sys.exit()
    main(a[0], a[1], '--save' in a, '--candidate' in a)
