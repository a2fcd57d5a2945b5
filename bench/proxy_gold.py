"""Proxy against gold along the KL (Gao, Schulman, Hilton 2022): for each checkpoint of a run's on-policy DPO -- the
base, each round's adapter -- the training reward model's verdict (the proxy the rounds maximise) and the independent
judge's style-controlled win rate (the gold stand-in), and the development half of the tripwires, against sqrt(KL
to the base), on the run's DEVELOPMENT topics (as many prompts as its evaluation, its evaluate settings): where to
stop is a choice, so it looks only where choices may look.

    .venv/bin/python bench/proxy_gold.py models/chitchat/v1     # -> bench/results/proxy_gold.json, nbs/images/proxy_gold.png
    .venv/bin/python bench/proxy_gold.py models/chitchat/v2 --save proxy_gold_anchor.json   # -> ... nbs/images/proxy_gold_anchor.png
    .venv/bin/python bench/proxy_gold.py --smoke                # a toy run folder, tiny models, two tiny adapters

Every round is evaluated here, without the control arm (the base's answers are shared through one cache)."""
import json, math, sys
from datetime import date
from pathlib import Path
sys.path.insert(0, str(Path(__file__).parent))
from _smoke import smoke_home, toy_run, save_result, cli, ROOT

def point(rep, name:str, kl_default:float|None=None) -> dict:
    "One checkpoint's figures from its EvalReport: gold (judge) raw and style-controlled rates, proxy (reward), KL."
    h, r = rep.headline('judge'), rep.headline('reward')
    kl = h.get('kl', kl_default) or 0.0
    return {'checkpoint': name, 'kl': kl, 'sqrt_kl': round(math.sqrt(max(kl, 0.0)), 4),
            'gold_sc': h.get('sc_win_rate', h['win_rate']), 'gold_sc_ci': h.get('sc_win_rate_ci', h['win_rate_ci']),
            'gold_raw': h['win_rate'], 'gold_raw_ci': h['win_rate_ci'],
            'proxy': r['win_rate'], 'proxy_ci': r['win_rate_ci'], 'proxy_score_diff': r.get('score_diff')}

def plot(res:dict, path:Path):
    import matplotlib; matplotlib.use('Agg'); import matplotlib.pyplot as plt
    pts = res['points']; x = [p['sqrt_kl'] for p in pts]
    fig, ax = plt.subplots(figsize=(6.4, 3.4))
    for key, lab, c in (('proxy', 'training reward model (proxy)', 'tab:orange'), ('gold_sc', 'independent judge, style-controlled', 'tab:blue')):
        y = [p[key] for p in pts]; lo = [p[key] - p[key + '_ci'][0] for p in pts]; hi = [p[key + '_ci'][1] - p[key] for p in pts]
        ax.errorbar(x, y, yerr=[lo, hi], marker='o', capsize=3, label=lab, color=c)
    for p in pts: ax.annotate(p['checkpoint'], (p['sqrt_kl'], p['gold_sc']), textcoords='offset points', xytext=(4, -12), fontsize=8)
    ax.axhline(0.5, color='grey', lw=0.8, ls=':'); ax.set_xlabel('√KL to the base (nats)'); ax.set_ylabel('win rate against the base')
    ax.set_title(f"proxy and gold along the KL: run {res['run']}, {res.get('part', '')} topics, {res['date']}", fontsize=9); ax.legend(fontsize=8)
    fig.tight_layout(); fig.savefig(path, dpi=110); plt.close(fig)

def main(run=None, smoke:bool=False, save:str='proxy_gold.json'):
    from rlnb.hardware import cpu_line
    from rlnb.reward import RewardModel
    from rlnb.judges import RewardJudge
    from rlnb.evaluation import evaluate_policy
    from rlnb.eval_stages import stage_eval_config
    from rlnb.assets import tiny_adapter
    home = smoke_home() if smoke else None
    if smoke:
        run = toy_run(home)
        from rlnb.assets import model_path
        recipe, ckpts = {'seed': 0}, {f'round-{i}': tiny_adapter(model_path('tiny'), home/f'a{i}', scale=0.1 * i) for i in (1, 2)}
        ev_opts, prompts, clusters = {'max_new_tokens': 8, 'answers_per_prompt': 1}, None, None
    else:
        run = Path(run); recipe = json.loads((run/'config.json').read_text())['recipe']
        ev_opts = next(s for s in recipe['stages'] if s['stage'] == 'evaluate')
        from rlnb.prompts import eval_prompt_set
        n = len(json.loads((run/'eval'/'prompt_set.json').read_text())['prompts'])   # as many as the run's evaluation
        ps = eval_prompt_set(run, n, ood=0, seed=recipe.get('seed', 0), part='development')['in_distribution']
        prompts, clusters = ps['prompts'], ps['clusters']
        rounds = sorted((run/'dpo_on_policy').glob('round-*/adapter/adapter_config.json'))
        ckpts = {p.parent.parent.name: p.parent for p in rounds}
    J = {n: RewardJudge(RewardModel.load(Path(run)/n/'reward_model'), name=n) for n in ('judge', 'reward')}
    keep = {k: v for k, v in ev_opts.items() if k in ('max_new_tokens', 'answers_per_prompt', 'repetition_penalty', 'bf16', 'kl_answers', 'modes')}
    cfg = stage_eval_config(recipe, **keep, control=False)
    if prompts is None:
        from rlnb.prompts import heldout_prompts
        prompts = heldout_prompts(run, n=4)
    pts = [{'checkpoint': 'base', 'kl': 0.0, 'sqrt_kl': 0.0, 'gold_sc': 0.5, 'gold_sc_ci': [0.5, 0.5], 'gold_raw': 0.5,
            'gold_raw_ci': [0.5, 0.5], 'proxy': 0.5, 'proxy_ci': [0.5, 0.5], 'proxy_score_diff': 0.0}]
    from rlnb.tripwires import run_tripwires
    cache = {}
    for name, ck in ckpts.items():
        rep = evaluate_policy(ck, prompts, J, cfg, clusters=clusters, cache=cache)
        tw = run_tripwires(ck, 'quick' if smoke else 'development', system=recipe.get('system')).summary()
        pts.append({**point(rep, name), 'tripwires': tw}); print({k: v for k, v in pts[-1].items() if k != 'tripwires'}, tw['failed'], flush=True)
    res = {'cpu': cpu_line(), 'date': date.today().isoformat(), 'run': Path(run).name if not smoke else 'toy',
           'part': 'development', 'prompts': len(prompts), 'settings': {k: getattr(cfg, k) for k in ('max_new_tokens', 'answers_per_prompt', 'bf16', 'refill', 'seed')},
           'points': pts,
           'gold_peak': max(pts, key=lambda p: p['gold_sc'])['checkpoint'],
           'note': 'gold: the independent judge (a reward model trained on other prompts), a stand-in for people, not people'}
    save_result(res, save, home)
    plot(res, (home/'results' if home else ROOT/'nbs'/'images')/f'{Path(save).stem}.png')   # proxy_gold.json -> proxy_gold.png
    return res

if __name__ == '__main__':
    cli(main, smoke=sys.argv[1:] == ['--smoke'])
