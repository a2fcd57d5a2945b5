"""Reward-model training speed: TRL's RewardTrainer with its own defaults against rlnb's `cpu` preset, one lever at a
time, on the same pairs, each variant in its own process (so peak RSS is its own).

    .venv/bin/python bench/reward_speed.py                 # every variant; writes bench/results/reward_speed.json
    .venv/bin/python bench/reward_speed.py cpu             # one variant, one JSON line
    .venv/bin/python bench/reward_speed.py --backbone smollm2 cpu
    ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2 MKL_ENABLE_INSTRUCTIONS=AVX2 \
        .venv/bin/python bench/reward_speed.py --save reward_speed_minilm_avx2.json --limit 600 trl_defaults cpu cpu_bf16
                                                           # this CPU held to AVX2 (no AVX-512, bf16 or AMX); caps recorded;
                                                           # --limit: a variant still running after 600 s is stopped and
                                                           # recorded so (TRL's bf16 autocast default emulates bf16 there)
    .venv/bin/python bench/reward_speed.py --eval-pairs 1000 --save reward_speed_minilm_NAME.json trl_defaults cpu full_cpu
                                                           # more held-out pairs (narrower intervals), the named variants
    .venv/bin/python bench/reward_speed.py --eval-pairs 1000 --seeds 4 --save reward_speed_minilm_NAME_seeds.json trl_defaults cpu
                                                           # each variant with seeds 0-3 (initialisation, data order):
                                                           # mean accuracy, and the paired difference to TRL's with a
                                                           # t-interval over the seeds (one seed's accuracy moves by ~0.04)
    .venv/bin/python bench/reward_speed.py --smoke         # trl_defaults and cpu on the tiny encoder, 16 pairs; the JSON
                                                           # and the table go to a temporary folder

Data: 512 real chitchat preference pairs for training, 200 held-out pairs (other prompts) for accuracy, one epoch,
after a 16-pair warm-up run in the same process. Held-out accuracy is measured after training, outside the timing
(TRL evaluates nothing by default; rlnb's in-training learning curves are off here). Every variant trains through TRL's `RewardTrainer` (rlnb's reward
stage is built on it); they differ only in the settings below. TRL's defaults (trl.RewardConfig): every weight trained,
learning rate 1e-4, batch 8, max_length 1024, bf16 autocast on, gradient checkpointing on. MiniLM has 512 positions,
so TRL's 1024 would fail on it ('expanded size 1024 must match 512'); the TRL rows use 512, the most it can take."""
import json, os, subprocess, sys
from dataclasses import replace

TRL = dict(lora=False, learning_rate=1e-4, batch_size=8, max_length=512, bf16=True, gradient_checkpointing=True,
           warmup_ratio=0.0, group_by_length=False)
VARIANTS = {   # name: RewardConfig overrides of the `cpu` preset
    'trl_defaults': TRL,
    'trl_no_checkpointing': {**TRL, 'gradient_checkpointing': False},           # lever: no recomputation
    'trl_fp32': {**TRL, 'bf16': False, 'gradient_checkpointing': False},        # lever: ... and no autocast
    'lora_fp32_b8_512': dict(batch_size=8, bf16=False, group_by_length=False, max_length=512),  # lever: LoRA r16
    'lora_fp32_b8': dict(batch_size=8, bf16=False, group_by_length=False),      # ... truncated at 128 tokens
    'lora_fp32': dict(bf16=False, group_by_length=False),                       # ... batch 16
    'lora_bf16': dict(bf16=None, group_by_length=False),                        # ... + bf16 where auto_bf16 says
    'cpu': dict(),                                                              # rlnb's preset: fp32, batches of similar lengths
    'cpu_bf16': dict(bf16=None),                                                # ... + bf16 where auto_bf16 says
    'full_cpu': dict(lora=False, learning_rate=1e-4),         # the preset's speed settings, every weight trained at TRL's rate
    'full_cpu_bf16': dict(lora=False, learning_rate=1e-4, bf16=None),           # ... + bf16 where auto_bf16 says
}
N_TRAIN, N_EVAL, N_WARM = 512, 200, 16

def smoke_mode():
    global N_TRAIN, N_EVAL, N_WARM
    N_TRAIN, N_EVAL, N_WARM = 16, 8, 4

def data():
    from rlnb.feedback import chitchat_records
    from rlnb.formatting import build_datasets
    recs, _ = chitchat_records()
    ds = build_datasets(recs, max_pairs_per_prompt=300, formats=('pairs',))['pairs']   # split by prompt
    return ds['train'].shuffle(seed=0), ds['eval'].shuffle(seed=0).select(range(N_EVAL))

def run(name, backbone, seed=None):
    from rlnb.reward import RewardConfig, train_reward_model
    from rlnb.reward_eval import evaluate_pairs
    train, held = data()
    cfg = replace(RewardConfig.PRESETS['cpu'], model=backbone, max_train_examples=None, **VARIANTS[name])
    if seed is not None: cfg = replace(cfg, seed=seed)   # the head's and adapters' initialisation and the data order
    train_reward_model(train.select(range(N_WARM)), None, replace(cfg, epochs=1))       # warm-up (allocations, kernels)
    res = train_reward_model(train.select(range(N_WARM, N_WARM + N_TRAIN)), None, cfg)   # no evaluation inside the timing
    m = {**res.metrics, **evaluate_pairs(res.model, held)}
    losses = [round(h['loss'], 4) for h in res.history if 'loss' in h]
    print(json.dumps(dict(variant=name, backbone=backbone, pairs=N_TRAIN, seconds=round(m['train_seconds'], 2),
                          pairs_per_s=round(N_TRAIN / m['train_seconds'], 2), steps=m['steps'],
                          peak_rss_mb=m['peak_rss_mb'], heldout_accuracy=m['accuracy'], eval_pairs=m['eval_pairs'], losses=losses,
                          settings=VARIANTS[name], **({'seed': seed} if seed is not None else {}))))

def main():
    args = sys.argv[1:]
    smoke = '--smoke' in args
    if smoke: args.remove('--smoke'); smoke_mode()
    save = args.pop(args.index('--save') + 1) if '--save' in args else None
    if '--save' in args: args.remove('--save')
    limit = float(args.pop(args.index('--limit') + 1)) if '--limit' in args else None   # seconds a variant may take
    if '--limit' in args: args.remove('--limit')
    backbone = args.pop(args.index('--backbone') + 1) if '--backbone' in args else 'minilm'
    if '--backbone' in args: args.remove('--backbone')
    global N_EVAL
    if '--eval-pairs' in args:   # more held-out pairs: narrower accuracy intervals
        N_EVAL = int(args.pop(args.index('--eval-pairs') + 1)); args.remove('--eval-pairs')
    seed = int(args.pop(args.index('--seed') + 1)) if '--seed' in args else None   # child: one seed
    if '--seed' in args: args.remove('--seed')
    seeds = int(args.pop(args.index('--seeds') + 1)) if '--seeds' in args else None   # each variant with seeds 0..N-1
    if '--seeds' in args: args.remove('--seeds')
    if len(args) == 1 and not save and seeds is None: return run(args[0], backbone, seed)
    from rlnb.core import bench_results
    from rlnb.hardware import cpu_line, isa_caps
    if smoke:
        if args or backbone != 'minilm': sys.exit('--smoke runs trl_defaults and cpu on the tiny encoder: no other arguments')
        from _smoke import smoke_home
        results, args, backbone = smoke_home()/'results', ['trl_defaults', 'cpu'], 'tiny-encoder'
        seeds = 2   # the --seeds path: each variant twice, the summary and its table rows
    else: results = bench_results()
    print(cpu_line(), flush=True)
    rows = []
    for name, sd in [(n, sd) for n in args or VARIANTS for sd in (range(seeds) if seeds else [None])]:
        try:
            out = subprocess.run([sys.executable, __file__, '--backbone', backbone, '--eval-pairs', str(N_EVAL), name]
                                 + ['--smoke'] * smoke + (['--seed', str(sd)] if sd is not None else []),
                                 capture_output=True, text=True, env={**os.environ, 'HF_HUB_OFFLINE': '1'}, timeout=limit)
        except subprocess.TimeoutExpired:         # recorded: the others' speed-up over it is then a lower bound
            rows.append(dict(variant=name, backbone=backbone, pairs=N_TRAIN, timed_out_s=limit, settings=VARIANTS[name],
                             **({"seed": sd} if sd is not None else {})))
            print(f"{name}: did not finish {N_TRAIN} pairs in {limit:.0f} s", flush=True); continue
        line = [l for l in out.stdout.splitlines() if l.startswith('{"')]
        if not line: print(name, 'failed:', out.stderr[-2000:]); continue
        rows.append(json.loads(line[-1])); print(line[-1], flush=True)
    bases = [r for r in rows if r['variant'] == 'trl_defaults']
    base = bases[0] if bases else None
    if len(bases) > 1 and not any('timed_out_s' in b for b in bases):   # several seeds: against TRL's mean speed
        base = {**base, 'pairs_per_s': sum(b['pairs_per_s'] for b in bases) / len(bases)}
    for r in rows:
        if 'timed_out_s' in r: continue
        if base and 'timed_out_s' in base:
            r['speedup'], r['speedup_at_least'] = None, round(r['pairs_per_s'] / (base['pairs'] / base['timed_out_s']), 2)
        else: r['speedup'] = round(r['pairs_per_s'] / base['pairs_per_s'], 2) if base else None
        print(f"{r['variant']:22s} {r['pairs_per_s']:7.2f} pairs/s {r['peak_rss_mb']:6.0f} MiB  acc {r['heldout_accuracy']}"
              f"  {r['speedup'] or ('>= %s' % r.get('speedup_at_least'))}x")
    from report import reward_seed_summary
    summary = reward_seed_summary(rows) if seeds else None
    if summary: print(json.dumps(summary, indent=1))
    if not args or smoke or save: (results/(save or f'reward_speed_{backbone}.json')).write_text(
        json.dumps(dict(cpu=cpu_line(), isa_caps=isa_caps(), backbone=backbone, rows=rows,
                        **({'seeds': seeds, 'summary': summary} if seeds else {})), indent=1))
    if smoke:
        if len(rows) < len(args): sys.exit(f'{len(args) - len(rows)} variant(s) failed')
        from report import reward_speed_table
        print(reward_speed_table(results/f'reward_speed_{backbone}.json'))

if __name__ == '__main__': main()
