"""DPO speed on this CPU: TRL's default speed settings vs rlnb's `cpu` preset (and levers), same data, same steps.
    .venv/bin/python bench/dpo_speed.py            # runs every variant, each in its own process, prints a table
    .venv/bin/python bench/dpo_speed.py cpu        # one variant, one JSON line
SmolLM2-135M-Instruct, LoRA r16 all-linear, batch 4 pairs, max_length 128, lr 5e-5, beta 0.1, real chitchat pairs.
Anchor measured here with TRL defaults: 5.27 s/step, 0.76 pairs/s, peak RSS 2.15 GB."""
import json, subprocess, sys, statistics
from dataclasses import replace

VARIANTS = {  # name: PreferenceConfig overrides (speed levers only; the optimisation itself is identical)
    'trl_defaults': dict(gradient_checkpointing=True, precompute_ref_log_probs=False),   # TRL's DPOConfig speed defaults (fp32)
    'cpu': dict(),                                                                        # rlnb preset: no checkpointing, ref log-probs once
    'cpu_bf16_base': dict(base_dtype='bfloat16'),                                         # + frozen base weights in bf16, LoRA fp32
    'cpu_bucketed': dict(group_by_length=True),                                           # + length-grouped batches (less padding)
}
STEPS, BATCH = 10, 4

def run(name):
    from rlnb.dpo import PRESETS, train_dpo, _step_timer
    from rlnb.feedback import chitchat_records
    from rlnb.formatting import build_datasets
    recs, _ = chitchat_records()
    pairs = build_datasets(recs, max_pairs_per_prompt=300, formats=('pairs',))['pairs']['train'].shuffle(seed=0).select(range(STEPS * BATCH))
    cfg = replace(PRESETS['cpu'], batch_size=BATCH, max_length=128, logging_steps=1, save_steps=10**9, **VARIANTS[name])
    timer = _step_timer()
    import tempfile, time
    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        res = train_dpo(pairs, None, cfg, d, max_steps=STEPS, resume=False, callbacks=[timer])
        total = time.perf_counter() - t0
    s_step = statistics.median(timer.steps[1:])
    toks = max((h.get('num_tokens', 0) for h in res.history), default=0) or None
    losses = [round(h['loss'], 4) for h in res.history if 'loss' in h]
    print(json.dumps(dict(variant=name, s_per_step=round(s_step, 3), pairs_per_s=round(BATCH / s_step, 3),
                          tokens_per_s=round(toks / sum(timer.steps), 1) if toks else None, total_s=round(total, 1),
                          peak_rss_mb=res.metrics['peak_rss_mb'], losses=losses)))

def main():
    if len(sys.argv) > 1: return run(sys.argv[1])
    rows = []
    for name in VARIANTS:
        out = subprocess.run([sys.executable, __file__, name], capture_output=True, text=True)
        line = [l for l in out.stdout.splitlines() if l.startswith('{')]
        if not line: print(name, 'failed:', out.stderr[-2000:]); continue
        rows.append(json.loads(line[-1])); print(line[-1], flush=True)
    base = next((r for r in rows if r['variant'] == 'trl_defaults'), None)
    print(f"\n{'variant':16s} {'s/step':>7s} {'pairs/s':>8s} {'tokens/s':>9s} {'peak MB':>8s} {'speed-up':>9s} {'max |Δloss|':>11s}")
    for r in rows:
        sp = base['s_per_step'] / r['s_per_step'] if base else float('nan')
        dl = max(abs(a - b) for a, b in zip(r['losses'], base['losses'])) if base else float('nan')
        print(f"{r['variant']:16s} {r['s_per_step']:7.2f} {r['pairs_per_s']:8.2f} {r['tokens_per_s'] or 0:9.0f} {r['peak_rss_mb']:8d} {sp:8.2f}x {dl:11.4f}")

if __name__ == '__main__': main()
