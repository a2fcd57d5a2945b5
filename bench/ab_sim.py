"""The A/B test's error rates end to end: A/A and A/B experiments through `ABTest.record` -> `ab_report`.

    .venv/bin/python bench/ab_sim.py            # 2,000 A/A tests + 400 A/B tests;
                                                # writes bench/results/ab_sim.json
    .venv/bin/python bench/ab_sim.py --smoke    # 6 + 4 tests; the JSON in a temporary folder

Each experiment is what `rlnb.abtest.simulate_ab` runs: units arriving one after another (half in bursts within
one second), every 4th unit rating twice, thumbs and 1-5 ratings in turn, 50/50 and 70/30 splits in turn, and
`ab_report` read after every 5 units like a dashboard. A/A: how often a winner is named while watching, at the
horizon, either way. A/B: the planned power (thumbs 0.3 -> 0.4 at `sample_size(0.3, 0.1)` units per arm), found at
the horizon and while watching. Rates come with 95 % Wilson intervals."""
import argparse, json, sys, tempfile, time
from datetime import datetime, timezone
from pathlib import Path

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--aa', type=int, default=2000); ap.add_argument('--ab', type=int, default=400)
    ap.add_argument('--horizon', type=int, default=100); ap.add_argument('--seed', type=int, default=None)
    ap.add_argument('--smoke', action='store_true', help='a handful of tests; results to a temporary folder')
    a = ap.parse_args()
    if a.smoke:
        sys.path.insert(0, str(Path(__file__).parent)); from _smoke import smoke_home
        results, a.aa, a.ab, a.horizon = smoke_home()/'results', 6, 4, 30
    else: results = Path(__file__).parent/'results'
    from rlnb.hardware import cpu_line
    from rlnb.feedback_store import FeedbackStore
    from rlnb.stats import sample_size, wilson_interval
    from rlnb.abtest import simulate_ab
    seed = a.seed if a.seed is not None else int(time.time()) % 100_000   # a fresh seed each run, recorded
    st = FeedbackStore(Path(tempfile.mkdtemp())/'ab_sim.db')
    t0 = time.perf_counter()
    aa = simulate_ab(st, experiments=a.aa, horizon=a.horizon, mde=0.1, seed=seed, prefix='aa')
    n_plan = 30 if a.smoke else sample_size(0.3, 0.1)
    ab = simulate_ab(st, experiments=a.ab, effect=0.1, horizon=n_plan, mde=0.1, kinds=('thumbs',), seed=seed + 1,
                     prefix='ab')
    ci = lambda r, n: [round(x, 4) for x in wilson_interval(r * n, n)]
    for d, n in ((aa, a.aa), (ab, a.ab)):
        for k in ('winner_while_watching', 'winner_at_horizon', 'winner_either'): d[k + '_ci'] = ci(d[k], n)
    res = {'cpu': cpu_line(), 'date': datetime.now(timezone.utc).isoformat(timespec='seconds'), 'seed': seed,
           'seconds': round(time.perf_counter() - t0, 1), 'aa': aa, 'ab': {**ab, 'planned_power': 0.8}}
    results.mkdir(parents=True, exist_ok=True)
    (results/'ab_sim.json').write_text(json.dumps(res, indent=1))
    print(json.dumps(res, indent=1))

if __name__ == '__main__': main()
