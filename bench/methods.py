"""Methods side by side on one run: each trains on a run folder of data/recipes/chitchat_offline.yaml (make demo's recipe
until the on-policy DPO this chose replaced it; its reward model, its training prompts) and is judged like that run's own
DPO and PPO (the run's evaluate options: same held-out prompts, sampling, judges).

    .venv/bin/python bench/methods.py models/chitchat/v3 dpo_on_policy          # train + evaluate one method
    .venv/bin/python bench/methods.py models/chitchat/v3 dpo_on_policy --save   # ... and add it to bench/results/methods.json
    .venv/bin/python bench/methods.py models/chitchat/v3 dpo_on_policy_lr3 --candidate   # ... to methods_candidates.json
    .venv/bin/python bench/methods.py models/chitchat/v3 dpo_on_policy_lr3_bf16 --instrument   # fp32 vs bf16 evaluation
    .venv/bin/python bench/methods.py NAME --promote replicates_TAG.json   # once confirmed: to methods.json
    .venv/bin/python bench/methods.py models/chitchat/v1 --instrument-demo   # a make demo run: its evaluation as recipe asks
    .venv/bin/python bench/methods.py --shared-run bench/plans/rm4k.yaml 0   # a new run of a plan's shared stages
    .venv/bin/python bench/methods.py models/chitchat/v1 guard_rpo --variety  # the variety tripwire, from saved answers
    .venv/bin/python bench/methods.py models/chitchat/v1 guard_rpo --tripwires  # every tripwire again, today's probes
    .venv/bin/python bench/methods.py --smoke                                   # a toy run folder, tiny models, one round

A method is a pipeline stage (`METHODS`); its training time, configuration, per-round figures and the evaluation's
headline and judge validity go to bench/results/methods.json, which `report.method_rows` reads, and `make
demo`'s recipe must run the saved method with the highest lower bound (99_pipeline). `--candidate` saves the row to
bench/results/methods_candidates.json instead: measured on development topics, not yet what the demo runs, because its
recipe has not been confirmed on held-out topics across split seeds (bench/confirm.py). Until then the demo keeps the
confirmed method, and its claim stays the one confirmed.

`--instrument` checks the instrument on one measured policy: its development evaluation again with bf16 sampling
(`EvalConfig.bf16=True`, the KL in fp32), the same prompts, judges and K, as `evaluate_<name>_dev_bf16`; both evaluations'
figures and times go to `instrument_check` in the candidates file. `--promote FILE` moves a candidate's row to
methods.json once bench/confirm.py's summary FILE (bench/results/) confirms a recipe running it: FILE's recipe must run the
method's stage and confirm it (`rlnb.verdicts.confirmed`: lower bound above ½, the control holding ½, no more invalid runs
than its plan allows). A summary that does not confirm it leaves the row where it is, its status naming the refusal."""
SMOKE_TIMEOUT = 500   # tools/bench_smoke.py: its smoke trains one method of each code path and evaluates each, past the default limit
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
    # make demo's on-policy DPO (data/recipes/chitchat.yaml until these: 2 rounds of 64 prompts at 3e-4) with an anchor,
    # for a policy that keeps what its base could do (the tripwires' development half, judged by evaluate's
    # `tripwires: development`): the chosen answers' NLL added to DPO's loss (RPO, `sft_weight`) ...
    'anchor_rpo': dict(stage='dpo_on_policy', out='anchor_rpo', preset='cpu', dpo='cpu_bf16', rounds=2,
                       prompts_per_round=64, samples=4, learning_rate=3e-4, bf16=None, sft_weight=1.0),
    # ... or less of a move: a third and a half of make demo's learning rate (its KL grew with it, and the tripwires
    # with KL: bench/results/proxy_gold.json)
    'anchor_lr1': dict(stage='dpo_on_policy', out='anchor_lr1', preset='cpu', dpo='cpu_bf16', rounds=2,
                       prompts_per_round=64, samples=4, learning_rate=1e-4, bf16=None),
    'anchor_lr15': dict(stage='dpo_on_policy', out='anchor_lr15', preset='cpu', dpo='cpu_bf16', rounds=2,
                        prompts_per_round=64, samples=4, learning_rate=1.5e-4, bf16=None),
    # ... RPO's anchor (the chosen answers' NLL) at anchor_lr1's and anchor_lr15's rates: anchor_rpo judged highest of the
    # anchors but lost three tripwires at 3e-4, with the largest KL; a smaller move may keep them. Run on a shared run of
    # bench/plans/anchor.yaml under split seed 0 (make demo's data, reward model and judge). Measured: both kept every
    # tripwire, neither reached anchor_lr1's style-controlled lower bound (their saved rows), so no plan was drafted and
    # no look at confirmation topics spent
    'anchor_rpo_lr1': dict(stage='dpo_on_policy', out='anchor_rpo_lr1', preset='cpu', dpo='cpu_bf16', rounds=2,
                           prompts_per_round=64, samples=4, learning_rate=1e-4, bf16=None, sft_weight=1.0),
    'anchor_rpo_lr15': dict(stage='dpo_on_policy', out='anchor_rpo_lr15', preset='cpu', dpo='cpu_bf16', rounds=2,
                            prompts_per_round=64, samples=4, learning_rate=1.5e-4, bf16=None, sft_weight=1.0),
    # ... anchor_lr1's stage on a run whose reward model learns from 4,000 pairs of its half, as the judge does from its
    # own (1,500 until this; bench/results/rm_curve.json: the curve still climbs at 3,900): a reward closer to people's
    # ratings to move toward. Its run: the plan's shared stages under split seed 0 (bench/plans/rm4k.yaml's header).
    # Measured: it lost a tripwire and judged lower than anchor_lr1 (its saved row), so the plan was not run
    'rm4k_lr1': dict(stage='dpo_on_policy', out='rm4k_lr1', preset='cpu', dpo='cpu_bf16', rounds=2,
                     prompts_per_round=64, samples=4, learning_rate=1e-4, bf16=None),
    # anchor_rpo (the highest judged, three tripwires lost at 3e-4, with answers that looped) with guards on what the
    # tripwires probe, from material no tripwire asks: each round adds 32 questions in the five other languages
    # (`on_policy.guard_items`), their answers ranked by the language probe's own rule, and ranks an answer that loops
    # or breaks the length rule below every answer of its prompt that keeps both (`guard_rules`); and at 2e-4
    'guard_rpo': dict(stage='dpo_on_policy', out='guard_rpo', preset='cpu', dpo='cpu_bf16', rounds=2, prompts_per_round=64,
                      samples=4, learning_rate=3e-4, bf16=None, sft_weight=1.0, guard_prompts=32, guard_rules=True),
    'guard_rpo_lr2': dict(stage='dpo_on_policy', out='guard_rpo_lr2', preset='cpu', dpo='cpu_bf16', rounds=2,
                          prompts_per_round=64, samples=4, learning_rate=2e-4, bf16=None, sft_weight=1.0, guard_prompts=32,
                          guard_rules=True),
    # Measured: guard_rpo won its judge by collapsing onto one reply ("I'm sorry for your loss.": its row's `variety`,
    # from `--variety`), which reward model and judge (one architecture, one kind of rating) both score high. So the
    # evaluation gained a `variety` tripwire (`tripwires.variety_probe`: answers not opening like the answers to 3+
    # other prompts), and training a rule against the same (`stock_prompts`): a stock reply is never the chosen one
    'guard2_rpo_lr2': dict(stage='dpo_on_policy', out='guard2_rpo_lr2', preset='cpu', dpo='cpu_bf16', rounds=2,
                           prompts_per_round=64, samples=4, learning_rate=2e-4, bf16=None, sft_weight=1.0,
                           guard_prompts=32, guard_rules=True, stock_prompts=3),
    'guard2_rpo': dict(stage='dpo_on_policy', out='guard2_rpo', preset='cpu', dpo='cpu_bf16', rounds=2, prompts_per_round=64,
                       samples=4, learning_rate=3e-4, bf16=None, sft_weight=1.0, guard_prompts=32, guard_rules=True,
                       stock_prompts=3),
    # Measured: guard2_rpo_lr2 kept every tripwire below anchor_lr1's style-controlled lower bound; guard2_rpo above it
    # but lost knowledge (their rows). Between them, measured: every tripwire kept, below anchor_lr1's lower bound. So
    # no plan was drafted and no look at confirmation topics spent; make demo keeps anchor_lr1
    'guard2_rpo_lr25': dict(stage='dpo_on_policy', out='guard2_rpo_lr25', preset='cpu', dpo='cpu_bf16', rounds=2,
                            prompts_per_round=64, samples=4, learning_rate=2.5e-4, bf16=None, sft_weight=1.0,
                            guard_prompts=32, guard_rules=True, stock_prompts=3),
    # The style-controlled rate is what stays of a win once length and style are held fixed, and the guarded rows'
    # wins were mostly length. So the pairs are chosen by the reward less its style part (`style_debias`: a fit within
    # prompt of the reward on the style covariates the verdict uses, its residual), the guards as guard2's
    'style_rpo_lr25': dict(stage='dpo_on_policy', out='style_rpo_lr25', preset='cpu', dpo='cpu_bf16', rounds=2,
                           prompts_per_round=64, samples=4, learning_rate=2.5e-4, bf16=None, sft_weight=1.0,
                           guard_prompts=32, guard_rules=True, stock_prompts=3, style_debias=True),
    # Measured: style_rpo_lr25 above anchor_lr1's style-controlled lower bound, but lost variety: its most common
    # opener is "I'm sorry for your sake." (its row, its answers). So a stock reply is one opening 2 prompts' answers
    'style_rpo_lr25_s2': dict(stage='dpo_on_policy', out='style_rpo_lr25_s2', preset='cpu', dpo='cpu_bf16', rounds=2,
                              prompts_per_round=64, samples=4, learning_rate=2.5e-4, bf16=None, sft_weight=1.0,
                              guard_prompts=32, guard_rules=True, stock_prompts=2, style_debias=True),
    # Measured: variety kept, knowledge lost (its row: the policy answers as many of the probe's facts as the base, but
    # not enough of the same ones). No candidate meets the rule, so no plan was drafted and no look spent
    # A step back toward the base (`adapter_scale`: the trained LoRA change scaled, WiSE-FT's interpolation) keeps more
    # of what the base could do at a share of the gain. The rounds do not depend on the scale: these resume guard2_rpo's
    # rounds (the same setup, copied into their folders) and change only the final adapter
    'guard2_rpo_s75': dict(stage='dpo_on_policy', out='guard2_rpo_s75', preset='cpu', dpo='cpu_bf16', rounds=2,
                           prompts_per_round=64, samples=4, learning_rate=3e-4, bf16=None, sft_weight=1.0, guard_prompts=32,
                           guard_rules=True, stock_prompts=3, adapter_scale=0.75),
    'guard2_rpo_s5': dict(stage='dpo_on_policy', out='guard2_rpo_s5', preset='cpu', dpo='cpu_bf16', rounds=2,
                          prompts_per_round=64, samples=4, learning_rate=3e-4, bf16=None, sft_weight=1.0, guard_prompts=32,
                          guard_rules=True, stock_prompts=3, adapter_scale=0.5),
    # Measured: every tripwire kept, above anchor_lr1's style-controlled lower bound, so bench/plans/scaled.yaml was fixed
    # and run: not confirmed (its row's status, bench/results/replicates_scaled.json); make demo keeps anchor_lr1
    # The knowledge tripwire then gained the capital questions (`tripwires.capital_items`): its development half held
    # too few facts the base knew to tell a loss from chance. Asked again with them (`--tripwires`; each row keeps its
    # earlier answer as `tripwires_before`), guard2_rpo kept every tripwire and has the highest style-controlled lower
    # bound of the candidates not refused, so bench/plans/guard2.yaml was fixed before its runs
    # Measured: not confirmed (its row's status, bench/results/replicates_guard2.json); make demo keeps anchor_lr1
    # Each confirmation run lost facts the base knew. So a round also asks fact questions no probe asks (32 of
    # `on_policy.fact_guard_items`: demonyms and continents) and ranks their answers by the knowledge probe's rule: where
    # the policy still knows the fact, RPO's anchor rehearses its right answer (`fact_prompts`); guard2_rpo otherwise
    'fact_rpo': dict(stage='dpo_on_policy', out='fact_rpo', preset='cpu', dpo='cpu_bf16', rounds=2, prompts_per_round=64,
                     samples=4, learning_rate=3e-4, bf16=None, sft_weight=1.0, guard_prompts=32, fact_prompts=32,
                     guard_rules=True, stock_prompts=3),
    # Measured: knowledge lost and a style-controlled lower bound below anchor_lr1's (its row): asked a capital, the policy
    # often named the continent, the answer shape the continent questions rehearsed. No plan drafted, no look spent
    # ... so the same rounds rehearse the demonym questions only (`fact_kinds`), whose answers name a people, not a place
    'demonym_rpo': dict(stage='dpo_on_policy', out='demonym_rpo', preset='cpu', dpo='cpu_bf16', rounds=2, prompts_per_round=64,
                        samples=4, learning_rate=3e-4, bf16=None, sft_weight=1.0, guard_prompts=32, fact_prompts=32,
                        fact_kinds='demonym', guard_rules=True, stock_prompts=3),
    # Measured: knowledge kept (the policy knew more of the probe's facts than its base), variety lost (answers opening
    # with the same sentence of gladness) and a style-controlled lower bound below anchor_lr1's (its row). Refused by the
    # rule: no plan drafted, no look spent
    # ... so a stock reply is one opening 2 prompts' answers, as in style_rpo_lr25_s2 (which kept variety), with the
    # demonym rehearsal that kept the facts
    'demonym_rpo_s2': dict(stage='dpo_on_policy', out='demonym_rpo_s2', preset='cpu', dpo='cpu_bf16', rounds=2,
                           prompts_per_round=64, samples=4, learning_rate=3e-4, bf16=None, sft_weight=1.0, guard_prompts=32,
                           fact_prompts=32, fact_kinds='demonym', guard_rules=True, stock_prompts=2),
    # Measured: every tripwire kept, knowledge and language above the base's, but a style-controlled lower bound below
    # anchor_lr1's (its row): the rule keeps anchor_lr1, so no plan was drafted and no look spent
    # ... so its pairs are chosen by the reward less its style part (`style_debias`, which lifted the style-controlled
    # rate of guard2_rpo_lr25's rounds in style_rpo_lr25), demonym_rpo_s2's guards otherwise
    'demonym_style_s2': dict(stage='dpo_on_policy', out='demonym_style_s2', preset='cpu', dpo='cpu_bf16', rounds=2,
                             prompts_per_round=64, samples=4, learning_rate=3e-4, bf16=None, sft_weight=1.0,
                             guard_prompts=32, fact_prompts=32, fact_kinds='demonym', guard_rules=True, stock_prompts=2,
                             style_debias=True),
    # Measured: every tripwire kept and the raw rate above demonym_rpo_s2's, but the style-controlled rate lower, its
    # lower bound below anchor_lr1's (its row): the residual pairs moved the policy further (a larger KL) without a gain
    # at equal style. Refused by the rule: no plan drafted, no look spent
    # Every candidate above moved the policy by the reward model, which is barely more accurate on people's pairs than
    # "longer wins", so what it taught was mostly style. People's own replies are another signal: SFT on the opening
    # replies of conversations people rated 0.75 or more (the format stage's `sft` examples), on the reward model's half
    # of the training prompts only (the judge never trained on them), one gentle epoch. Its run: bench/plans/people.yaml
    'people_sft': dict(stage='sft', out='people_sft', preset='cpu', prompt_half=0, epochs=1, learning_rate=1e-4),
    # Measured: the raw rate above anchor_lr1's, the style-controlled lower bound below ½, the largest KL of any row, and
    # knowledge and language lost (its row): people's openers taught the chat's style (short, lower-case, a greeting or
    # a question back), which the style-controlled verdict holds fixed, and English only. Refused by the rule: no plan
    # drafted, no look spent
    # TRL's group-baseline methods from the same reward model and training prompts as on-policy DPO: 4 prompts x 4
    # answers a step, PPO's cpu preset otherwise
    'grpo': dict(stage='ppo', preset='cpu', model='smollm2', algorithm='grpo', batch_size=16, steps=STEPS, prompt_set='turns'),
    'rloo': dict(stage='ppo', preset='cpu', model='smollm2', algorithm='rloo', batch_size=16, steps=STEPS, prompt_set='turns'),
}
SMOKE = {}
FIGURE = Path(__file__).resolve().parent.parent/'nbs'/'images'/'methods.png'   # the README's figure

def main(run:str, name:str, save:bool=False, candidate:bool=False):
    from rlnb.core import repo_dir
    from rlnb.hardware import cpu_line
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
           'tripwires': e[name].get('tripwires'),   # the development half (`_evaluate_stage`)
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
        from report import plot_saved_methods
        plot_saved_methods(FIGURE, RESULTS.parent); print('drew', FIGURE)
        if not SMOKE:   # the pipeline map names the best saved method
            sys.path.insert(0, str(Path(__file__).resolve().parent.parent/'tools'))
            import pipeline_map; print('drew', pipeline_map.draw(FIGURE.parent/'pipeline_map.png'))
    return row

def _evaluate_stage(recipe:dict, name:str) -> dict:
    "The run's own evaluate options on development topics, for method `name` (see `main`)."
    ev = {k: v for k, v in next((s for s in recipe['stages'] if s['stage'] == 'evaluate'), {}).items() if k != 'stage'}
    return {**ev, 'stage': 'evaluate', 'key': f'evaluate_{name}', 'tag': name, 'policies': [name], 'ood_prompts': 0,
            'part': 'development', 'tripwires': 'development', **SMOKE.get('evaluate', {})}

FIELDS = ('win_rate', 'win_rate_ci', 'lc_win_rate', 'lc_win_rate_ci', 'control_win_rate', 'control_win_rate_ci', 'kl',
          'kl_ci', 'valid')

def instrument(run:str, name:str) -> dict:
    ("The same policy judged twice on the same development prompts: `evaluate_<name>` (as `main` made it, fp32 unless the "
     "run's evaluate options say otherwise) and again with bf16 sampling, as `evaluate_<name>_dev_bf16`; saved to the "
     "candidates file's `instrument_check`.")
    from rlnb.hardware import cpu_line
    from rlnb.pipeline import run_pipeline
    run = Path(run); done = json.loads((run/'metrics.json').read_text())
    if f'evaluate_{name}' not in done: raise SystemExit(f"{run} has no evaluate_{name}: run bench/methods.py {run} {name} first")
    cfg = json.loads((run/'config.json').read_text()); recipe = cfg.get('recipe', cfg)
    fp = _evaluate_stage(recipe, name)
    if fp.get('bf16', False) is not False:   # True, or None (bf16 wherever the CPU has it): no fp32 reference
        raise SystemExit(f"{run}'s evaluation sets bf16={fp['bf16']!r}: there is no fp32 evaluation to check against")
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

DEMO_CHECK = RESULTS.with_name('instrument_demo.json')
NEW_EVAL = dict(bf16=None, kl_answers=1)   # the evaluation's settings under test (None: bf16 by the CPU's flags)

def instrument_demo(run:str) -> dict:
    ("The instrument on make demo's own policy: a run's evaluate stage (its confirmation prompts, K, OOD row, control) "
     "run again with `NEW_EVAL` as `evaluate_new`; both evaluations' judge rows, KL and stage seconds go to "
     "bench/results/instrument_demo.json. The policy is the same, so the win rates may differ only by sampling.")
    from rlnb.hardware import auto_bf16, cpu_line
    from rlnb.pipeline import run_pipeline
    run = Path(run); done = json.loads((run/'metrics.json').read_text())
    cfg = json.loads((run/'config.json').read_text()); recipe = cfg.get('recipe', cfg)
    ev = next((s for s in recipe['stages'] if s['stage'] == 'evaluate'), None)
    if ev is None or 'evaluate' not in done: raise SystemExit(f"{run} has no finished evaluate stage to check against")
    if any(ev.get(k) is not None for k in NEW_EVAL): raise SystemExit(f"{run}'s evaluation already sets {ev}: no reference")
    new = {**ev, 'key': 'evaluate_new', 'tag': 'new', **NEW_EVAL}
    print(cpu_line(), flush=True)
    m = run_pipeline({'agent': recipe['agent'], 'seed': recipe.get('seed', 0), 'system': recipe.get('system'),
                      'stages': [new]}, resume=run).metrics
    def side(e):
        return {'seconds': e['seconds'], 'peak_rss_mb': e.get('peak_rss_mb'), **{p: {
            'in_distribution': {k: e[p]['headline']['judge'][k] for k in FIELDS},
            'ood': {k: e[p]['ood_headline']['judge'][k] for k in FIELDS if k in e[p].get('ood_headline', {}).get('judge', {})}}
            for p in ev['policies']}}
    def paired(p, ood):   # the second evaluation's outcome minus the first's, answer by answer, clusters resampled
        from rlnb.stats import bootstrap_ci
        sfx = '_ood' if ood else ''
        a, b = (json.loads((run/'eval'/f'{p}{sfx}{t}.json').read_text())['modes']['sampled'] for t in ('', '_new'))
        if a['prompts'] != b['prompts']: raise SystemExit(f"{run}: the two evaluations of {p} read other prompts")
        d = [y - x for x, y in zip(a['judges']['judge']['outcomes'], b['judges']['judge']['outcomes'])]
        lo, hi = bootstrap_ci(d, groups=a.get('clusters') or a['prompts'])
        return {'diff': round(sum(d) / len(d), 4), 'ci': [round(lo, 4), round(hi, 4)], 'answers': len(d),
                'clusters': 'conversations' if a.get('clusters') else 'prompts'}
    ic = {'what': "make demo's policy judged twice on the same confirmation prompts by its run's evaluate stage: as the run "
                  f"did it (fp32 sampling, KL on every answer), then with {NEW_EVAL} (bf16 resolved to "
                  f"{auto_bf16()} on this CPU)", 'run': f'{run.parent.name}/{run.name}', 'part': ev.get('part', 'confirmation'),
          'settings': NEW_EVAL, 'bf16_resolved': auto_bf16(), 'before': side(done['evaluate']),
          'after': side(m['evaluate_new']),
          'paired': {p: {'in_distribution': paired(p, False), **({'ood': paired(p, True)} if ev.get('ood_prompts', 64) else {})}
                     for p in ev['policies']},
          'cpu': cpu_line(), 'date': datetime.now(timezone.utc).date().isoformat()}
    if not SMOKE: DEMO_CHECK.write_text(json.dumps(ic, indent=1) + '\n'); print('saved', DEMO_CHECK)
    print(json.dumps(ic, indent=1))
    return ic

def promote(name:str, summary:str) -> dict:
    ("Move candidate `name`'s row from the candidates file to methods.json, once `summary` (a bench/confirm.py file in "
     "bench/results/, confirmation topics, one policy) confirms a recipe whose method stage is `name`'s "
     "(`rlnb.verdicts.confirmed`). The row keeps its development figures and names the confirmation.")
    s = json.loads((RESULTS.parent/summary).read_text())
    method = {k: v for k, v in METHODS[name].items() if k != 'out'}
    stage = next((x for x in s['recipe']['stages'] if x['stage'] == method['stage']), None)
    if stage != method: raise SystemExit(f"{summary}'s recipe runs {stage}, not {name}'s stage {method}")
    if len(s['policies']) != 1: raise SystemExit(f"{summary} summarises {len(s['policies'])} policies: one recipe, one policy")
    if s.get('part') != 'confirmation': raise SystemExit(f"{summary} is on {s.get('part')} topics, not confirmation")
    from rlnb.verdicts import confirmed
    (pol,) = s['policies'].values(); j = pol['judge']
    ok, why = confirmed(s)
    cand = json.loads(CANDIDATES.read_text())
    if name not in cand['methods']: raise SystemExit(f"{name} is not a candidate in {CANDIDATES}")
    if not ok:                  # refused: the row says so, and make demo's recipe may not run it (99_pipeline)
        cand['methods'][name]['status'] = f"not confirmed by {summary}: {why}"
        CANDIDATES.write_text(json.dumps(cand, indent=1) + '\n')
        raise SystemExit(f"{summary} does not confirm it: {why} (its candidate row now says so)")
    row = {k: v for k, v in cand['methods'].pop(name).items() if k != 'status'}
    row['confirmed'] = {'file': summary, 'rate': j['in_distribution']['rate'], 'ci': j['in_distribution']['ci'],
                        'runs': len(s['runs']), 'conf': s['conf']}
    allr = json.loads(RESULTS.read_text()); allr['methods'][name] = row
    RESULTS.write_text(json.dumps(allr, indent=1) + '\n'); CANDIDATES.write_text(json.dumps(cand, indent=1) + '\n')
    print('moved', name, 'to', RESULTS)
    from report import plot_saved_methods
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
    run = toy_run(home, sft=True)
    SMOKE.update(dpo_on_policy=dict(preset='tiny', rounds=1), ppo=dict(preset='tiny', model='tiny', steps=1, batch_size=4),
                 sft=dict(preset='tiny', max_steps=1, prompt_half=None),   # the toy's few prompts may leave a half empty
                 evaluate=dict(n_prompts=4, max_new_tokens=4, tripwires='quick'))
    # the toy run has no DPO or PPO stage of its own. Methods that differ from one trained here by option values only
    # (a budget, a rate) take the same code path, so one of each runs: the smoke stays inside bench_smoke's limit
    same_path = {'dpo_on_policy_budget', 'dpo_on_policy_lr3', 'anchor_lr1', 'anchor_lr15', 'rm4k_lr1',   # = dpo_on_policy's path
                 'anchor_rpo_lr1', 'anchor_rpo_lr15',                                                 # = anchor_rpo's
                 'guard_rpo_lr2', 'guard2_rpo_lr2', 'guard2_rpo_lr25', 'guard2_rpo_s5',   # guard_rpo's, guard2_rpo's, guard2_rpo_s75's
                 'style_rpo_lr25_s2', 'demonym_rpo_s2', 'demonym_style_s2'}   # style_rpo_lr25's; demonym_rpo's (+ its style part)
    trained = [n for n, m in METHODS.items() if m and n not in same_path]
    cand = {n for n in trained if n.startswith(('dpo_on_policy_lr3', 'anchor_', 'people_'))}   # the candidates go to their own file
    for name in trained: main(run, name, save=name not in cand, candidate=name in cand)
    assert set(json.loads(RESULTS.read_text())['methods']) == set(trained) - cand
    assert set(json.loads(CANDIDATES.read_text())['methods']) == cand
    ic = instrument(run, 'dpo_on_policy_lr3_bf16')            # the same policy, evaluated again with bf16 sampling
    assert ic['fp32']['seconds'] > 0 and ic['bf16']['seconds'] > 0 and 0 <= ic['bf16']['win_rate'] <= 1, ic
    assert json.loads(CANDIDATES.read_text())['instrument_check'] == ic
    import copy                                                   # a confirmation summary: refused, then accepted
    stage = {k: v for k, v in METHODS['dpo_on_policy_lr3_bf16'].items() if k != 'out'}
    ok = {'recipe': {'stages': [stage]}, 'part': 'confirmation', 'runs': [1, 2, 3], 'conf': 0.95,
          'control': {'judge': {'ci': [0.45, 0.55]}},
          'policies': {'dpo_on_policy': {'judge': {'valid_runs': 3, 'in_distribution': {'rate': 0.58, 'ci': [0.52, 0.64]}}}}}
    bad = {f: copy.deepcopy(ok) for f in ('weak', 'four', 'off', 'dev', 'two')}
    bad['weak']['policies']['dpo_on_policy']['judge']['in_distribution']['ci'] = [0.49, 0.64]   # the lower bound
    bad['four']['policies']['dpo_on_policy']['judge']['valid_runs'] = 2                         # a run's control off ½
    bad['off']['control']['judge']['ci'] = [0.51, 0.6]                                          # the pooled control off ½
    bad['dev']['part'] = 'development'                                                           # topics a choice saw
    bad['two']['policies']['other'] = bad['two']['policies']['dpo_on_policy']                  # which policy is it?
    why = {'weak': 'interval [0.490, 0.640] holds ½', 'four': '1 of 3 runs invalid', 'off': 'control [0.510, 0.600] misses',
           'dev': 'not confirmation',
           'two': 'one recipe, one policy'}
    for f, d in (*bad.items(), ('ok', ok)): (RESULTS.parent/f'{f}.json').write_text(json.dumps(d))
    for f in bad:
        try: promote('dpo_on_policy_lr3_bf16', f'{f}.json'); raise AssertionError(f'{f}.json must not promote')
        except SystemExit as e: assert why[f] in str(e), (f, e)
    st = json.loads(CANDIDATES.read_text())['methods']['dpo_on_policy_lr3_bf16']['status']
    assert st.startswith('not confirmed by off.json: ') and why['off'] in st, st   # the last refusal, on its row
    from _smoke import toy_stages
    from rlnb.pipeline import run_pipeline
    ev = dict(stage='evaluate', policies=['dpo_on_policy'], part=None, n_prompts=4, max_new_tokens=4, ood_prompts=0)
    demo = run_pipeline(dict(agent='toy', seed=0, stages=toy_stages(home) + [    # a toy make demo run, then its instrument
        dict(stage='reward', preset='tiny', epochs=1), dict(stage='judge', preset='tiny', epochs=1, prompt_half=None),
        dict(stage='dpo_on_policy', preset='tiny', rounds=1), ev]), root=home/'models').path
    d = instrument_demo(demo)
    pd = d['paired']['dpo_on_policy']['in_distribution']
    assert d['after']['seconds'] > 0 and pd['answers'] > 0 and -1 <= pd['diff'] <= 1 and 'ood' not in d['paired'], d
    assert not DEMO_CHECK.exists() or json.loads(DEMO_CHECK.read_text())['run'] != d['run'], 'the smoke wrote bench/results'
    row = promote('dpo_on_policy_lr3_bf16', 'ok.json')   # every part holds: promoted
    assert row['confirmed']['ci'] == [0.52, 0.64] and 'status' not in row, row
    assert 'dpo_on_policy_lr3_bf16' in json.loads(RESULTS.read_text())['methods']
    assert 'dpo_on_policy_lr3_bf16' not in json.loads(CANDIDATES.read_text())['methods']
    import yaml   # a plan's shared stages only, under the split seed asked for
    plan = home/'plan.yaml'
    plan.write_text(yaml.safe_dump(dict(agent='toy', seed=7, stages=toy_stages(home) + [
        dict(stage='reward', preset='tiny', epochs=1), dict(stage='judge', preset='tiny', epochs=1, prompt_half=None),
        dict(stage='dpo_on_policy', preset='tiny', rounds=1), ev])))
    sr = shared_run(str(plan), 3, root=home/'models')
    cfg, done = json.loads((sr/'config.json').read_text())['recipe'], json.loads((sr/'metrics.json').read_text())
    assert cfg['seed'] == 3 and {'reward', 'judge'} <= set(done) and not {'dpo_on_policy', 'evaluate'} & set(done), (cfg, done)

def shared_run(plan:str, seed:int=0, root=None) -> Path:
    ("A new run of `plan`'s shared stages (the data, the reward model, the judge) under split seed `seed`: its method, "
     "evaluation and export are left out, for `main` to train a candidate there and judge it on development topics.")
    from rlnb.pipeline import load_recipe, run_pipeline
    recipe = load_recipe(plan)
    stages = [s for s in recipe['stages'] if s['stage'] in ('base_answers', 'import_feedback', 'format', 'reward', 'judge')]
    path = run_pipeline({**recipe, 'seed': seed, 'stages': stages}, root=root).path
    print(f"made {path}: {plan}'s shared stages under split seed {seed}", flush=True)
    return path

def variety(run:str, name:str) -> dict:
    ("The `variety` tripwire (`rlnb.tripwires.variety_probe`, the TripwireConfig defaults) of a candidate measured "
     "before it existed, from its saved development evaluation's answers, with the most common openers of each side; "
     "saved into its candidates row as `variety`.")
    from collections import Counter
    from rlnb.tripwires import TripwireConfig, opener, variety_probe
    m = next(iter(json.loads((Path(run)/'eval'/f'{name}_{name}.json').read_text())['modes'].values()))
    tc = TripwireConfig()
    v = {**variety_probe(m['answers']['policy'], m['answers']['base'], m['prompts'], tc.variety_margin, tc.stock_prompts,
                         tc.conf, tc.seed),
         'top_openers': {s: Counter(map(opener, m['answers'][s])).most_common(3) for s in ('policy', 'base')},
         'measured': 'after the run, from its saved evaluation answers',
         'date': datetime.now(timezone.utc).date().isoformat()}
    allr = json.loads(CANDIDATES.read_text())
    allr['methods'][name]['variety'] = v
    CANDIDATES.write_text(json.dumps(allr, indent=1) + '\n')
    print(json.dumps(v, indent=1)); print('saved', CANDIDATES)
    return v

def tripwires_again(run:str, name:str) -> dict:
    ("Every tripwire of a candidate asked again with today's probe items (the development half, as `_evaluate_stage`, "
     "the recipe's system message, variety from its saved development answers): the row's `tripwires` becomes this "
     "summary; its first answer, from the run itself, stays as `tripwires_before` (a later ask replaces only the last).")
    from rlnb.core import repo_dir
    from rlnb.hardware import cpu_line
    from rlnb.tripwires import run_tripwires
    run = Path(run); cfg = json.loads((run/'config.json').read_text()); recipe = cfg.get('recipe', cfg)
    m = next(iter(json.loads((run/'eval'/f'{name}_{name}.json').read_text())['modes'].values()))
    out = run/'eval'/f'{name}_tripwires_again.json'
    s = run_tripwires(run/name/'adapter', 'development', system=recipe.get('system'), chat=m, output=out).summary()
    allr = json.loads(CANDIDATES.read_text()); row = allr['methods'][name]
    if row.get('tripwires') is None: raise SystemExit(f"{name}'s row holds no tripwires: its evaluation asked none")
    row['tripwires_before'] = row.get('tripwires_before') or {**row['tripwires'], 'variety_after': row.pop('variety', None)}
    commit = subprocess.run(['git', 'rev-parse', '--short', 'HEAD'], capture_output=True, text=True, cwd=repo_dir()).stdout.strip()
    row['tripwires'] = {**s, 'asked_again': datetime.now(timezone.utc).date().isoformat(), 'cpu': cpu_line(), 'commit': commit or None}
    CANDIDATES.write_text(json.dumps(allr, indent=1) + '\n')
    print(name, 'passed' if s['passed'] else f"failed {s['failed']}", {k: (r['base_passes'], r['kept'], r['diff'])
                                                                         for k, r in s['probes'].items()}, flush=True)
    return s

if __name__ == '__main__':
    if '--smoke' in sys.argv: smoke(); sys.exit()
    a = sys.argv[1:]
    if '--shared-run' in a: shared_run(a[a.index('--shared-run') + 1], int(a[a.index('--shared-run') + 2])); sys.exit()
    if '--promote' in a: promote(a[0], a[a.index('--promote') + 1]); sys.exit()
    if '--instrument' in a: instrument(a[0], a[1]); sys.exit()
    if '--variety' in a: variety(a[0], a[1]); sys.exit()
    if '--tripwires' in a: [tripwires_again(a[0], n) for n in a[1:] if n != '--tripwires']; sys.exit()
    if '--instrument-demo' in a: instrument_demo(a[0]); sys.exit()
    main(a[0], a[1], '--save' in a, '--candidate' in a)
