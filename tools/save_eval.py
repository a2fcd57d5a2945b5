"""Save what a run's `evaluate` stage measured as bench/results/eval_demo.json, the file nbs/08_evaluation renders.

    .venv/bin/python tools/save_eval.py models/chitchat/v3      # after `make demo RECIPE=data/recipes/chitchat_offline.yaml`
    .venv/bin/python tools/save_eval.py RUN --out demo_avx2.json   # another name (a demo on another kind of CPU)

It copies, from the run's metrics.json: the evaluate stage's headline figures per policy and judge (in-distribution
and out-of-distribution rows), each judge's validity, the prompt-set sizing, the stage timings and peak RSS, and the DPO/PPO
figures the reading needs (KL, steps), with the CPU (of the machine it runs on: run it where the demo ran) and the date of metrics.json. Nothing is typed by hand."""
import json, sys
from pathlib import Path

def main(run, name='eval_demo.json'):
    run = Path(run)
    m = json.loads((run/'metrics.json').read_text())
    ev = m.get('evaluate')
    if not ev: raise SystemExit(f"{run} has no evaluate stage in metrics.json")
    cfg = json.loads((run/'config.json').read_text()) if (run/'config.json').exists() else {}
    eval_opts = next((s for s in cfg.get('recipe', {}).get('stages', []) if s.get('stage') == 'evaluate'), {})
    from datetime import datetime, timezone
    from rlnb.hardware import cpu_line, isa_caps        # run on the machine that ran the demo, right after it, same caps
    first = next((run/'eval'/f'{p}.json' for p in ev if (run/'eval'/f'{p}.json').exists()), None)
    when = json.loads(first.read_text()).get('meta', {}).get('created_at') if first else None   # when the evaluation ran
    when = when or datetime.fromtimestamp((run/'metrics.json').stat().st_mtime, timezone.utc).isoformat(timespec='seconds')
    out = {'run': f"{run.parent.name}/{run.name}", 'cpu': cpu_line(), 'isa_caps': isa_caps(), 'date': when,
           'commit': cfg.get('environment', {}).get('git_commit'), 'system': cfg.get('recipe', {}).get('system'),
           'evaluate': ev, 'options': eval_opts,
           'stage_seconds': {k: v.get('seconds') for k, v in m.items() if isinstance(v, dict) and 'seconds' in v},
           'stage_peak_rss_mb': {k: v.get('peak_rss_mb') for k, v in m.items() if isinstance(v, dict) and 'peak_rss_mb' in v},
           'judges': {j: {k: m.get(j, {}).get(k) for k in ('accuracy', 'eval_examples', 'model', 'seed', 'prompt_half')}
                      for j in ('judge', 'reward')},
           'dpo': {k: m.get('dpo', {}).get(k) for k in ('steps', 'train_examples')},
           'ppo': {k: m.get('ppo', {}).get(k) for k in ('steps',)}}
    p = Path(name) if '/' in name else Path(__file__).resolve().parent.parent/'bench'/'results'/name   # a path: there
    p.write_text(json.dumps(out, indent=1, default=str))
    print(f"wrote {p}")

if __name__ == '__main__':
    a = sys.argv[1:]
    main(a[0], a[a.index('--out') + 1] if '--out' in a else 'eval_demo.json')
