"""Methods side by side on one run: each trains on a run folder of data/recipes/chitchat_offline.yaml (make demo's recipe
until the on-policy DPO this chose replaced it; its reward model, its training prompts) and is judged like that run's own
DPO and PPO (the run's evaluate options: same held-out prompts, sampling, judges).

    .venv/bin/python bench/methods.py models/chitchat/v3 dpo_on_policy          # train + evaluate one method
    .venv/bin/python bench/methods.py models/chitchat/v3 dpo_on_policy --save   # ... and add it to bench/results/methods.json
    .venv/bin/python bench/methods.py models/chitchat/v3 dpo_on_policy_lr3 --candidate   # ... to methods_candidates.json
    .venv/bin/python bench/methods.py --smoke                                   # a toy run folder, tiny models, one round

A method is a pipeline stage (`METHODS`); its training time, configuration, per-round figures and the evaluation's
headline and judge validity go to bench/results/methods.json, which `rlnb.evaluation.method_rows` reads, and `make
demo`'s recipe must run the saved method with the highest lower bound (99_pipeline). `--candidate` saves the row to
bench/results/methods_candidates.json instead: measured on development topics, not yet what the demo runs, because its
recipe has not been confirmed on held-out topics across split seeds (bench/confirm.py). Until then the demo keeps the
confirmed method, and its claim stays the one confirmed."""
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
    ev = {k: v for k, v in next((s for s in recipe['stages'] if s['stage'] == 'evaluate'), {}).items() if k != 'stage'}
    if name not in METHODS: raise SystemExit(f"methods: {', '.join(METHODS)}; got {name!r}")
    own = next((s for s in recipe['stages'] if s.get('key', s['stage']) == name), None)
    if METHODS[name] is None and own is None: raise SystemExit(f"{run} has no {name!r} stage to evaluate")
    stage = own if METHODS[name] is None else {**METHODS[name], **SMOKE.get(METHODS[name]['stage'], {})}
    # development topics only: a method is chosen here, so it is never confirmed here (the recipe's own evaluation reads
    # the confirmation topics); the table's Holm column adjusts for comparing every method with one base
    evaluate = {**ev, 'stage': 'evaluate', 'key': f'evaluate_{name}', 'tag': name, 'policies': [name], 'ood_prompts': 0,
                'part': 'development',
                **SMOKE.get('evaluate', {})}
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

if __name__ == '__main__':
    if '--smoke' in sys.argv: smoke(); sys.exit()
    main(sys.argv[1], sys.argv[2], '--save' in sys.argv, '--candidate' in sys.argv)
