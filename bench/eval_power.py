"""How many held-out prompts an evaluation needs: power of the win-rate verdict, simulated through `win_rate`.

    .venv/bin/python bench/eval_power.py            # 1,000 evaluations per (true win rate, prompts) cell;
                                                    # writes bench/results/eval_power.json
    .venv/bin/python bench/eval_power.py --smoke    # 50 per cell, 3 cells; the JSON in a temporary folder

For each true win rate p and number of prompts n, the script draws per-prompt outcomes (win with probability p, else
loss), calls `rlnb.win_rates.win_rate` (the function the evaluation report uses) and counts how often the 95 %
interval's lower bound clears ½: the verdict "the policy is better". It also counts how often the bound clears ½
under p = ½ (a false verdict), and records `prompts_needed(p)`, the closed form the `evaluate` stage sizes its prompt
set with, so the notebook can draw both. A fresh seed each run, recorded."""
import argparse, json, sys, time
from datetime import datetime, timezone
from pathlib import Path

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--sims', type=int, default=1000)
    ap.add_argument('--seed', type=int, default=None)
    ap.add_argument('--smoke', action='store_true', help='50 evaluations per cell, 3 cells; results to a temporary folder')
    a = ap.parse_args()
    rates, sizes = (0.5, 0.55, 0.58, 0.6, 0.65, 0.7), (32, 64, 100, 150, 200, 305, 400, 600)
    if a.smoke:
        sys.path.insert(0, str(Path(__file__).parent)); from _smoke import smoke_home
        results, a.sims, rates, sizes = smoke_home()/'results', 50, (0.5, 0.58), (64, 305)
    else: results = Path(__file__).parent/'results'
    import numpy as np
    from rlnb.hardware import cpu_line
    from rlnb.win_rates import win_rate
    from rlnb.stats import prompts_needed, wilson_interval
    seed = a.seed if a.seed is not None else int(time.time()) % 100_000
    rng, t0, cells = np.random.default_rng(seed), time.perf_counter(), []
    for p in rates:
        for n in sizes:
            hits = sum(win_rate((rng.random(n) < p).astype(float))['ci'][0] > 0.5 for _ in range(a.sims))
            cells.append({'true_win_rate': p, 'prompts': n, 'verdict_rate': round(hits / a.sims, 4),
                          'ci': [round(x, 4) for x in wilson_interval(hits, a.sims)]})
            print(f"p {p:.2f}  n {n:4d}: lower bound > 0.5 in {hits / a.sims:.3f}", flush=True)
    res = {'cpu': cpu_line(), 'date': datetime.now(timezone.utc).isoformat(timespec='seconds'), 'seed': seed,
           'sims_per_cell': a.sims, 'seconds': round(time.perf_counter() - t0, 1), 'cells': cells,
           'prompts_needed': {str(p): prompts_needed(p) for p in rates if p > 0.5}}
    results.mkdir(parents=True, exist_ok=True)
    (results/'eval_power.json').write_text(json.dumps(res, indent=1))
    print(f"{results/'eval_power.json'} ({res['seconds']} s; {res['cpu']})")

if __name__ == '__main__': main()
