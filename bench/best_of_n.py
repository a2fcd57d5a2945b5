"""Best-of-n with the reward model: the no-training baseline every trained policy must beat.

On a pipeline run folder (`make demo` makes one): SmolLM2 answers the run's held-out evaluation prompts (the evaluate
stage's own prompt set, sampling and seed, so its base answers are the ones the trained policies were compared with)
`--pool` more times; the run's reward model (`reward/`, PPO's proxy) picks the best of the first n draws; the
independent judge (`judge/`) and the reward model compare it with the base's answer. One row per n: win rate and
length-controlled win rate with 95 % intervals, KL = log n - (n-1)/n, seconds per served answer on this CPU.

    .venv/bin/python bench/best_of_n.py models/chitchat/v3             # pool of 16: n = 1, 4, 8, 16
    .venv/bin/python bench/best_of_n.py models/chitchat/v3 --save      # ... and write bench/results/best_of_n.json
    .venv/bin/python bench/best_of_n.py models/chitchat/v3 --agreement --save   # only the judges' agreement, on the saved pool
    .venv/bin/python bench/best_of_n.py --smoke                        # a toy run folder, the tiny policy, 4 prompts

The full report (every answer and score) goes to <run>/best_of_n/report.json. The pool also measures how far the
independent judge agrees with the reward model where it matters for best-of-n: ranking the base's own answers to one
prompt (`ranking_agreement`; 0.5 is none), and how each plain draw of the base fares against the base answer every
method is compared with (`draw_vs_base`: an A/A check of that one draw; ½ when it is a typical one), and best-of-n against the draws it never saw (`vs_fresh_draws`: no single comparison answer)."""
import argparse, json, subprocess, sys, time
from datetime import datetime, timezone
from pathlib import Path

RESULTS = Path(__file__).parent/'results'/'best_of_n.json'
SMOKE = {}
FIGURE = Path(__file__).resolve().parent.parent/'nbs'/'images'/'methods.png'   # the README's figure

def main(run:str, pool:int=16, save:bool=False, base:str='smollm2'):
    import torch
    from rlnb.core import repo_dir
    from rlnb.hardware import cpu_line, peak_rss_mb
    from rlnb.best_of_n import best_of_n_report
    from rlnb.prompts import eval_prompt_set
    from rlnb.judges import RewardJudge
    from rlnb.eval_stages import stage_eval_config
    from rlnb.reward import RewardModel
    run = Path(run); cfg = json.loads((run/'config.json').read_text())
    recipe = cfg.get('recipe', cfg)
    ev = next((s for s in recipe.get('stages', []) if s.get('stage') == 'evaluate'), {})
    print(cpu_line(), f'torch threads {torch.get_num_threads()}', flush=True)
    stage_opts = {k: v for k, v in ev.items() if k != 'stage'}
    sizing = {k: stage_opts.pop(k) for k in ('n_prompts', 'target_win_rate', 'part') if k in stage_opts}
    for k in ('policies', 'judges', 'ood_prompts', 'judge_pairs', 'reference', 'tag', 'key'): stage_opts.pop(k, None)
    cfg = stage_eval_config(recipe, stage_opts.pop('preset', 'cpu'), **{**stage_opts, **SMOKE.get('evaluate', {})})
    sets = eval_prompt_set(run, SMOKE.get('n_prompts', sizing.get('n_prompts')), sizing.get('target_win_rate', 0.58),
                           ood=0, seed=cfg.seed, part=SMOKE.get('part', 'development'))['in_distribution']
    # the evaluate stage's sizing, seed and sampling, on development topics: best-of-n is a choice, never a confirmation
    J = {j: RewardJudge(RewardModel.load(run/j/'reward_model'), name=j) for j in ('judge', 'reward')}
    ns = tuple(n for n in (1, 4, 8, 16, 32) if n <= pool)
    t0 = time.perf_counter()
    rep = best_of_n_report(base, sets['prompts'], J['reward'], J, ns=ns, config=cfg, clusters=sets['clusters'])
    out = {'what': f'best-of-n with the reward model of run {run.name}, base {base}', 'cpu': cpu_line(),
           'date': datetime.now(timezone.utc).isoformat(timespec='seconds'),
           'commit': subprocess.run(['git', 'rev-parse', '--short', 'HEAD'], capture_output=True, text=True,
                                    cwd=repo_dir()).stdout.strip() or None,
           'run': f'{run.parent.name}/{run.name}', 'seconds': round(time.perf_counter() - t0, 1),
           'peak_rss_mb': round(peak_rss_mb()), **{k: v for k, v in rep.items() if k not in ('answers', 'scores')}}
    (run/'best_of_n').mkdir(exist_ok=True)
    (run/'best_of_n'/'report.json').write_text(json.dumps({**out, 'answers': rep['answers'], 'scores': rep['scores']}))
    out['pool_agreement'] = pool_agreement(run, sets['prompts'], J)
    if save:
        RESULTS.parent.mkdir(exist_ok=True); RESULTS.write_text(json.dumps(out, indent=1) + '\n'); print('saved', RESULTS)
        from report import plot_saved_methods
        plot_saved_methods(FIGURE, RESULTS.parent); print('drew', FIGURE)
    print(table(out))
    return out

def pool_agreement(run:Path, prompts:list, J:dict) -> dict:
    ("Checks on the saved pool (draws x prompts), per judge: its ranking agreement with the reward model (the "
     "independent judges), how each plain draw fares against the evaluation's one base answer (`draw_vs_base`), "
     "best-of-n against the draws it never saw (`vs_fresh_draws`), and each policy the run evaluated (its sampled "
     "answers in <run>/eval/<policy>.json) against all the draws (`policies_vs_draws`).")
    import numpy as np
    from rlnb.best_of_n import best_of_n_vs_draws, draws_win_rate, ranking_agreement
    rep = json.loads((run/'best_of_n'/'report.json').read_text())
    pool, rs = rep['answers']['pool'], np.asarray(rep['scores'])
    if len(prompts) != rs.shape[1]: raise ValueError(f"{len(prompts)} prompts for a pool of {rs.shape[1]}")
    pols = {}
    for f in sorted((run/'eval').glob('*.json')):
        m = json.loads(f.read_text()).get('modes', {}).get('sampled')
        k = (m or {}).get('answers_per_prompt', 1)       # K answers per prompt: the first of each prompt's K
        if m and m['prompts'][::k] == list(prompts): pols[f.stem] = m['answers']['policy'][::k]   # same prompts, in order
    out = {}
    for j in J:
        js, jb = np.stack([J[j].score(prompts, d) for d in pool]), np.asarray(J[j].score(prompts, rep['answers']['base']))
        w = (js > jb).mean(1) + 0.5 * (js == jb).mean(1)   # each plain draw of the base against the evaluation's base answer
        out[j] = {**(ranking_agreement(rs, js) if j != rep.get('reward', 'reward') else {}),
                  'draw_vs_base': {'mean': round(float(w.mean()), 4), 'min': round(float(w.min()), 4),
                                   'max': round(float(w.max()), 4), 'draws': len(w)},
                  'vs_fresh_draws': {str(n): best_of_n_vs_draws(rs, js, n) for n in (1, 2, 4, 8) if n < len(pool)},
                  'policies_vs_draws': {name: draws_win_rate(J[j].score(prompts, a), js) for name, a in pols.items()}}
    return out

def agreement_only(run:str, save:bool=False):
    "Add `pool_agreement` to a saved result from the pool in <run>/best_of_n/report.json (no new answers)."
    from rlnb.prompts import eval_prompt_set
    from rlnb.judges import RewardJudge
    from rlnb.reward import RewardModel
    run = Path(run); rep = json.loads((run/'best_of_n'/'report.json').read_text())
    cfg = json.loads((run/'config.json').read_text()); recipe = cfg.get('recipe', cfg)
    ev = next((s for s in recipe.get('stages', []) if s.get('stage') == 'evaluate'), {})
    prompts = eval_prompt_set(run, SMOKE.get('n_prompts', ev.get('n_prompts')), ev.get('target_win_rate', 0.58), ood=0,
                              seed=ev.get('seed', recipe.get('seed', 0)), part=SMOKE.get('part', 'development'))['in_distribution']['prompts']
    J = {j: RewardJudge(RewardModel.load(run/j/'reward_model'), name=j) for j in ('judge', 'reward')}
    a = pool_agreement(run, prompts, J); print(json.dumps(a))
    if save:
        r = json.loads(RESULTS.read_text()); r['pool_agreement'] = a
        RESULTS.write_text(json.dumps(r, indent=1) + '\n'); print('saved', RESULTS)
    return a

def table(r:dict) -> str:
    from report import best_of_n_table
    return best_of_n_table(r)

def smoke():
    "A toy run folder as the pipeline makes it (tiny reward model and judge), then best-of-4 from the tiny policy."
    global RESULTS, FIGURE
    from _smoke import smoke_home, toy_run
    home = smoke_home(); RESULTS = home/'results'/'best_of_n.json'; FIGURE = home/'results'/'methods.png'
    run = toy_run(home)
    SMOKE.update(n_prompts=4, evaluate=dict(max_new_tokens=4))
    r = main(run, pool=4, save=True, base='tiny')
    assert set(r['rows']) == {'1', '4'} and json.loads(RESULTS.read_text())['rows']['4']['kl'] == r['rows']['4']['kl'], r
    assert agreement_only(run, save=True) == json.loads(RESULTS.read_text())['pool_agreement'] == r['pool_agreement']

if __name__ == '__main__':
    if '--smoke' in sys.argv: smoke(); sys.exit()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('run'); ap.add_argument('--pool', type=int, default=16); ap.add_argument('--save', action='store_true')
    ap.add_argument('--base', default='smollm2')
    ap.add_argument('--agreement', action='store_true', help="only the judges' agreement on the saved pool")
    a = ap.parse_args()
    if a.agreement: agreement_only(a.run, a.save)
    else: main(a.run, a.pool, a.save, a.base)
