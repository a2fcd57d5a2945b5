"""Which training setting makes SmolLM2 answer better than its base on held-out chitchat prompts?
Reuses a pipeline run folder (its datasets, its reward model `reward/` = PPO's proxy, its independent judge `judge/`),
trains one variant per call, and evaluates it against the base on the run's 64 held-out prompts under both judges.

    .venv/bin/python bench/eval_levers.py models/chitchat/v1 ppo_20_norm     # one variant; see VARIANTS
    .venv/bin/python bench/eval_levers.py models/chitchat/v1 --table         # the table of every variant evaluated so far
    .venv/bin/python bench/eval_levers.py --smoke     # a toy run folder (tiny reward model and judge), one DPO and one
                                                      # PPO variant on the tiny policy for 1 step, 4 prompts; temp folder

Each variant's report goes to <run>/levers/<variant>.json and a summary line to bench/results/eval_levers.jsonl."""
import json, sys, time
from dataclasses import replace
from pathlib import Path

VARIANTS = {
    # DPO on the run's pairs: more pairs, a larger step size, a smaller beta (moves further from the base)
    'dpo_1024_lr2e-4':   dict(algo='dpo', max_train_examples=1024, learning_rate=2e-4),
    'dpo_1024_beta0.02': dict(algo='dpo', max_train_examples=1024, learning_rate=1e-4, beta=0.02),
    # PPO against the run's reward model: more steps, several answers per prompt with per-prompt normalised scores
    'ppo_20_norm':       dict(algo='ppo', steps=20, batch_size=16, num_generations=4, normalize_scores=True, num_minibatches=4,
                              ppo_epochs=2, max_new_tokens=40, learning_rate=1e-4, missing_eos_penalty=None),
    'ppo_40_norm':       dict(algo='ppo', steps=40, batch_size=16, num_generations=4, normalize_scores=True, num_minibatches=4,
                              ppo_epochs=2, max_new_tokens=40, learning_rate=1e-4, missing_eos_penalty=None),
}
RESULTS = Path(__file__).parent/'results'/'eval_levers.jsonl'
SMOKE = {}   # --smoke: overrides of every variant, and the evaluation's size

def train(run:Path, name:str, v:dict) -> Path:
    from datasets import load_from_disk
    from rlnb.formatting import prompt_text
    out = run/'levers'/name
    v = dict(v, **SMOKE.get(v['algo'], {})); algo = v.pop('algo'); max_steps = v.pop('max_steps', -1)
    eval_pairs = v.pop('eval_pairs', 256)
    ds = {s: load_from_disk(str(run/'datasets'/'pairs'/s)) for s in ('train', 'eval')}
    if algo == 'dpo':
        from rlnb.dpo_config import PreferenceConfig
        from rlnb.dpo import train_dpo
        res = train_dpo(ds['train'], ds['eval'].shuffle(seed=0).select(range(min(eval_pairs, len(ds['eval'])))), replace(PreferenceConfig.PRESETS['cpu'], save_steps=10**9, **v), out, max_steps=max_steps, resume=False)
        return res.model_path, res.metrics
    from rlnb.ppo_config import PPOConfig
    from rlnb.ppo import reward_model_fn
    from rlnb.rl import train_ppo
    from rlnb.reward import RewardModel
    from rlnb.assets import load_policy, model_path
    model, tok = load_policy(model_path(v.pop('model', 'smollm2')))
    prompts = list(dict.fromkeys(prompt_text(p) for p in ds['train']['prompt']))
    res = train_ppo(prompts, None, PPOConfig(save_steps=10**9, **v), out,
                    reward_fn=reward_model_fn(RewardModel.load(run/'reward'/'reward_model')), model=model, tok=tok)
    return out/'policy', res.metrics

def main(run:str, name:str):
    from rlnb.hardware import cpu_line
    from rlnb.evaluation import evaluate_policy
    from rlnb.eval_plots import plot_report
    from rlnb.judges import RewardJudge
    from rlnb.prompts import heldout_prompts
    from rlnb.reward import RewardModel
    run = Path(run); print(cpu_line(), flush=True)
    t0 = time.perf_counter(); path, m = train(run, name, VARIANTS[name]); t_train = time.perf_counter() - t0
    judges = {j: RewardJudge(RewardModel.load(run/j/'reward_model'), name=j) for j in ('judge', 'reward')}
    ev = dict(SMOKE.get('evaluate', dict(n_prompts=64)))
    ev = {'top_p': 1.0, 'repetition_penalty': 1.0, 'modes': ['greedy', 'sampled'], **ev}   # as the saved rows were sampled
    rep = evaluate_policy(path, heldout_prompts(run, ev.pop('n_prompts')), judges, output=run/'levers'/f'{name}.json', **ev)
    plot_report(rep, run/'levers'/f'{name}.png')
    print(rep.table())
    line = {'variant': name, 'run': str(run), 'config': VARIANTS[name], 'train_s': round(t_train, 1),
            'train_metrics': {k: v for k, v in m.items() if isinstance(v, (int, float))},
            **{j: rep.headline(j) for j in judges}, **{f'greedy_{j}': rep.headline(j, 'greedy') for j in judges}}
    RESULTS.parent.mkdir(exist_ok=True)
    with open(RESULTS, 'a') as f: f.write(json.dumps(line) + '\n')
    print(json.dumps(line))

def table(run:str):
    lines = [json.loads(l) for l in open(RESULTS)]
    print(f"{'variant':20s} {'judge':7s} {'mode':8s} {'win rate [95% CI]':22s} {'LC win rate':20s} {'score diff':18s} {'KL':>6s}")
    for l in lines:
        for j in ('judge', 'reward'):
            for key in (j, f'greedy_{j}'):
                h = l[key]
                print(f"{l['variant']:20s} {j:7s} {h['mode']:8s} {h['win_rate']:.3f} [{h['win_rate_ci'][0]:.3f}, {h['win_rate_ci'][1]:.3f}]  "
                      f"{h['lc_win_rate']:.3f} [{h['lc_win_rate_ci'][0]:.2f}, {h['lc_win_rate_ci'][1]:.2f}]  "
                      f"{h.get('score_diff', 0):+.3f} [{h.get('score_diff_ci', [0, 0])[0]:+.3f}, {h.get('score_diff_ci', [0, 0])[1]:+.3f}] {h.get('kl', 0):6.2f}")

def smoke():
    "A toy run folder as the pipeline makes it (tiny reward model and judge), then one DPO and one PPO variant on the tiny policy."
    global RESULTS
    from _smoke import smoke_home, toy_run
    home = smoke_home(); RESULTS = home/'results'/'eval_levers.jsonl'
    run = toy_run(home, seed=None)
    SMOKE.update(dpo=dict(model='tiny', max_steps=1, max_train_examples=8, eval_pairs=8), evaluate=dict(n_prompts=4, max_new_tokens=4),
                 ppo=dict(model='tiny', steps=1, batch_size=4, num_minibatches=2, ppo_epochs=1, max_new_tokens=4))
    for name in ('dpo_1024_lr2e-4', 'ppo_20_norm'): main(run, name)
    table(run)

if __name__ == '__main__':
    if '--smoke' in sys.argv: smoke()
    elif '--table' in sys.argv: table(sys.argv[1])
    else: main(*sys.argv[1:3])
