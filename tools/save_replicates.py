"""Save a replicated recipe's summary as bench/results/replicates_<name>.json, the file nbs/08_evaluation renders.

    .venv/bin/python tools/save_replicates.py models/chitchat/v1 models/chitchat/v2 models/chitchat/v3
    .venv/bin/python tools/save_replicates.py RUN... --out replicates_best.json

The runs are those `rlnb_pipeline RECIPE --replicates N` made (one per split seed). The summary is computed again from
their saved reports by `rlnb.replicates.replicate_summary` (so a fix to the summary reaches saved runs), with the CPU (run it
where the runs ran), the time of the last run's evaluation and the commit of the code: `run_replicates` runs every
replicate in one process, so the code is the first run's commit (runs made before the pipeline kept its commit per
process recorded HEAD at their own start: each run's record is kept as `run_commits`). Nothing is typed by hand."""
import json, sys
from pathlib import Path

def main(runs, name='replicates_demo.json'):
    from rlnb.hardware import cpu_line, isa_caps
    from rlnb.replicates import replicate_summary
    runs = [Path(r) for r in runs]
    cfgs = [json.loads((r/'config.json').read_text()) for r in runs]
    commits = [c.get('environment', {}).get('git_commit') for c in cfgs]
    if len({json.dumps(c.get('recipe', {}).get('stages'), sort_keys=True) for c in cfgs}) > 1:
        raise SystemExit("the runs' recipes differ (beyond the split seed): not one replicated recipe")
    metas = [json.loads(f.read_text()).get('meta') or {} for f in sorted((runs[-1]/'eval').glob('*.json'))]
    last = max((m['created_at'] for m in metas if m.get('created_at')), default=None)   # when its evaluation ran
    out = {**replicate_summary(runs), 'commit': commits[0], 'run_commits': commits, 'cpu': cpu_line(), 'isa_caps': isa_caps(), 'date': last,
           'recipe': cfgs[0].get('recipe')}
    p = Path(name) if '/' in name else Path(__file__).resolve().parent.parent/'bench'/'results'/name   # a path: there
    p.write_text(json.dumps(out, indent=1, default=str) + '\n')
    print(f"wrote {p}")

if __name__ == '__main__':
    a = sys.argv[1:]
    name = a[a.index('--out') + 1] if '--out' in a else 'replicates_demo.json'
    main([x for i, x in enumerate(a) if x != '--out' and (i == 0 or a[i - 1] != '--out')], name)
