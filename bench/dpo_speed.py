"""DPO speed on this CPU: TRL's default speed settings vs rlnb's `cpu` preset (and each lever alone), same data, same steps.
    .venv/bin/python bench/dpo_speed.py            # every variant, each in its own process; writes bench/results/dpo_speed.json
    .venv/bin/python bench/dpo_speed.py cpu        # one variant, one JSON line
    ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2 MKL_ENABLE_INSTRUCTIONS=AVX2 \
        .venv/bin/python bench/dpo_speed.py --save dpo_speed_avx2.json trl_defaults cpu cpu_bf16
                                                   # this CPU held to AVX2 (no AVX-512, no bf16, no AMX): what a CPU
                                                   # without fast bf16 gets; the caps are recorded in the JSON
    .venv/bin/python bench/dpo_speed.py --save dpo_share_start.json cpu_bf16 cpu_bf16_no_share_start \
        cpu_bf16_no_share_start cpu_bf16 cpu_bf16 cpu_bf16_no_share_start
                                                   # packing's share_start lever, three runs of each, alternated:
                                                   # 05a_packing renders the medians
    .venv/bin/python bench/dpo_speed.py --smoke    # trl_defaults and cpu on the tiny policy, 2 steps of 2 pairs; the JSON
                                                   # and the table go to a temporary folder
    .venv/bin/python bench/dpo_speed.py cpu PAIRS.jsonl --model FOLDER --steps 4
                                                   # one variant on another model folder (bench/scaling.py's shapes)
SmolLM2-135M-Instruct, LoRA r16 all-linear, batch 4 pairs, max_length 128, lr 5e-5, beta 0.1, 40 real chitchat pairs.
The parent writes the pairs to a small JSONL file, so a variant's peak RSS is training only (like the anchor's).
The anchor, `trl_defaults`, is TRL's DPOConfig speed defaults, bf16 autocast included where the CPU has fast bf16."""
import json, os, subprocess, sys, statistics, tempfile, time
from dataclasses import replace

VARIANTS = {  # name: PreferenceConfig overrides of the `cpu` preset (speed levers only; the optimisation itself is identical)
    # TRL's DPOConfig speed defaults: bf16 autocast (kept only where auto_bf16 measures it faster), SDPA, checkpointing
    'trl_defaults': dict(gradient_checkpointing=True, precompute_ref_log_probs=False, packed=False, bf16=True,
                         attn_implementation='sdpa'),
    'trl_defaults_fp32': dict(gradient_checkpointing=True, precompute_ref_log_probs=False, packed=False),  # ... in fp32
    'ref_once': dict(packed=False),                                                                   # lever: reference log-probs once
    'packed': dict(precompute_ref_log_probs=False),                                                   # lever: packed forward
    'cpu': dict(),                                                                                    # rlnb preset: packed + reference once (+ checkpointing)
    'cpu_no_checkpointing': dict(gradient_checkpointing=False),                                       # preset without checkpointing: faster, more memory
    'cpu_autocast_sdpa': dict(bf16=None, attn_implementation='sdpa'),   # lever: bf16 autocast where it measures faster
    'cpu_autocast': dict(bf16=None),                                    # ... with eager attention (rlnb's choice under bf16)
    'cpu_autocast_no_checkpointing': dict(bf16=None, gradient_checkpointing=False),
    'cpu_autocast_no_checkpointing_ref16': dict(bf16=None, gradient_checkpointing=False, ref_batch_size=16),  # the reference pass in batches of 16
    # lever: shorter packed rows; attention is dense within a row, so a row of several pairs computes scores between
    # pairs that the mask then discards
    'cpu_no_checkpointing_rows256': dict(gradient_checkpointing=False, max_packed_tokens=256),
    'cpu_no_checkpointing_rows256_ref16': dict(gradient_checkpointing=False, max_packed_tokens=256, ref_batch_size=16),
    'cpu_autocast_bf16_base_no_checkpointing': dict(bf16=None, gradient_checkpointing=False, base_dtype='bfloat16'),  # frozen weights in bf16: the cpu_bf16 preset
}
VARIANTS['cpu_bf16'] = VARIANTS['cpu_autocast_bf16_base_no_checkpointing']   # the preset by its name
VARIANTS['cpu_bf16_no_share_start'] = dict(VARIANTS['cpu_bf16'], share_start=False)   # lever: each pair's system turn
                                                         # computed again (before 05a_packing's share_start)
STEPS, BATCH = 10, 4
MODEL = {}   # the policy: the preset's (SmolLM2); --smoke: the tiny one

def smoke_mode():
    "2 steps of 2 pairs on the tiny policy (at least 2 steps: the first is left out of the median)."
    global STEPS, BATCH
    STEPS, BATCH = 2, 2
    MODEL['model'] = 'tiny'

def run(name, data):
    from datasets import Dataset
    from rlnb.dpo_config import PreferenceConfig
    from rlnb.dpo import train_dpo, step_timer
    pairs = Dataset.from_list([json.loads(l) for l in open(data)])
    cfg = replace(PreferenceConfig.PRESETS['cpu'], batch_size=BATCH, max_length=128, logging_steps=1, save_steps=10**9, **MODEL,
                  **VARIANTS[name])
    timer = step_timer()
    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        res = train_dpo(pairs, None, cfg, d, max_steps=STEPS, resume=False, callbacks=[timer])
        total = time.perf_counter() - t0
    s_step = statistics.median(timer.steps[1:])
    toks = max((h.get('num_tokens', 0) for h in res.history), default=0) or None   # real (unpadded) tokens, TRL's count
    losses = [round(h['loss'], 4) for h in res.history if 'loss' in h]
    from rlnb.dpo_config import effective_config
    eff = effective_config(cfg)
    print(json.dumps(dict(variant=name, bf16=eff.bf16, attn=eff.attn_implementation or 'sdpa', s_per_step=round(s_step, 3), pairs_per_s=round(BATCH / s_step, 3),
                          tokens_per_s=round(toks / sum(timer.steps), 1) if toks else None,
                          prepare_s=res.metrics['prepare_seconds'], train_s=res.metrics['train_seconds'], total_s=round(total, 1),
                          peak_rss_mb=res.metrics['peak_rss_mb'], losses=losses)))

def make_data(path):
    from rlnb.feedback import chitchat_records
    from rlnb.formatting import build_datasets
    recs, _ = chitchat_records()
    pairs = build_datasets(recs, max_pairs_per_prompt=300, formats=('pairs',))['pairs']['train'].shuffle(seed=0).select(range(STEPS * BATCH))
    with open(path, 'w') as f:
        for r in pairs: f.write(json.dumps(r) + '\n')

def main():
    args, save = sys.argv[1:], None
    smoke = '--smoke' in args
    if smoke: args.remove('--smoke'); smoke_mode()
    global STEPS
    if '--model' in args: i = args.index('--model'); MODEL['model'] = args[i + 1]; del args[i:i + 2]   # a model folder
    if '--steps' in args: i = args.index('--steps'); STEPS = int(args[i + 1]); del args[i:i + 2]
    if '--save' in args: i = args.index('--save'); save = args[i + 1]; del args[i:i + 2]
    if len(args) == 2 and args[1].endswith('.jsonl'): return run(args[0], args[1])
    from rlnb.core import bench_results
    from rlnb.hardware import cpu_line, isa_caps
    if smoke:
        if args or save: sys.exit('--smoke runs trl_defaults and cpu and saves to a temporary folder: no other arguments')
        from _smoke import smoke_home
        results, args = smoke_home()/'results', ['trl_defaults', 'cpu']
    else: results = bench_results()
    caps = isa_caps()
    print(cpu_line(), caps or '', flush=True)
    from datetime import datetime, timezone
    from rlnb.recipe import code_commit   # the commit a run folder records, read the same way
    date, commit = datetime.now(timezone.utc).isoformat(timespec='seconds'), code_commit()
    names = args or [n for n in VARIANTS if n != 'cpu_bf16']
    data = os.path.join(tempfile.mkdtemp(), 'pairs.jsonl')
    make_data(data)   # the variants' processes read this file; only they are measured
    rows = []
    for name in names:
        out = subprocess.run([sys.executable, __file__, name, data] + ['--smoke'] * smoke, capture_output=True, text=True)
        line = [l for l in out.stdout.splitlines() if l.startswith('{"')]
        if not line: print(name, 'failed:', out.stderr[-2000:]); continue
        rows.append(json.loads(line[-1])); print(line[-1], flush=True)
    base = next((r for r in rows if r['variant'] == 'trl_defaults'), None)
    if save or not args or smoke:   # the full set, or a named file: saved for the notebooks and the README
        (results/(save or 'dpo_speed.json')).write_text(
            json.dumps(dict(cpu=cpu_line(), isa_caps=caps, steps=STEPS, batch=BATCH, rows=rows, date=date,
                            commit=commit), indent=1))
    print(f"\n{'variant':18s} {'s/step':>7s} {'pairs/s':>8s} {'tokens/s':>9s} {'total s':>8s} {'peak MiB':>8s} {'speed-up':>9s} {'end-to-end':>10s} {'max |Δloss|':>11s}")
    for r in rows:
        sp = base['s_per_step'] / r['s_per_step'] if base else float('nan')
        e2e = base['total_s'] / r['total_s'] if base else float('nan')
        dl = max(abs(a - b) for a, b in zip(r['losses'], base['losses'])) if base else float('nan')
        print(f"{r['variant']:18s} {r['s_per_step']:7.2f} {r['pairs_per_s']:8.2f} {r['tokens_per_s'] or 0:9.0f} {r['total_s']:8.1f} {r['peak_rss_mb']:8d} {sp:8.2f}x {e2e:9.2f}x {dl:11.4f}")
    if smoke:
        if len(rows) < len(args): sys.exit(f'{len(args) - len(rows)} variant(s) failed')
        from report import dpo_speed_table
        print(dpo_speed_table(results/'dpo_speed.json'))

if __name__ == '__main__': main()

