"""Is the calibrated verdict valid for people? Coverage of `rlnb.verdicts.human_win_rate`'s interval, simulated with a
known truth through the function users call.

    .venv/bin/python bench/ppi_coverage.py           # writes bench/results/ppi_coverage.json
    .venv/bin/python bench/ppi_coverage.py --smoke   # 50 draws a cell; JSON to a temp folder

Each draw: 400 answer pairs whose human verdict is 1 with probability 0.55 (the truth: what people prefer), a judge
that agrees with the person at a stated rate and gives a stated share of pairs to the policy whatever the answers (its
bias), people's verdicts on a uniformly random n of the pairs. For each judge and n: how often the calibrated interval
(PPI++), the judge-only interval and the people-only interval hold the truth, and their mean widths. The cut-off below
which the people's own interval is used (`min_human`, 50) was chosen on seed 1; this table uses seed 2."""
import sys
from pathlib import Path

JUDGES = {'weak (70 % agreement, 15 % bias)': (0.7, 0.15), 'good (90 % agreement, 10 % bias)': (0.9, 0.1),
          'noisy, unbiased (60 % agreement)': (0.6, 0.0)}
N_HUMAN = (20, 50, 80, 160, 320)

def main(run=None, smoke:bool=False, save:str='ppi_coverage.json'):
    from rlnb.core import utc_now
    from rlnb.hardware import cpu_line
    from rlnb.verdicts import ppi_coverage
    from _smoke import save_result, smoke_home
    print(cpu_line(), flush=True)
    home = smoke_home() if smoke else None
    reps, rows = (50 if smoke else 4000), []
    for name, (acc, bias) in JUDGES.items():
        for n in N_HUMAN:
            r = ppi_coverage(truth=0.55, accuracy=acc, bias=bias, n_pairs=400, n_human=n, reps=reps, seed=2)
            rows.append({'judge': name, **r})
            print(f"{name:34s} n={n:3d}: calibrated {r['coverage']['calibrated']:.3f} (width {r['width']['calibrated']:.3f}), "
                  f"judge only {r['coverage']['judge_only']:.3f}, people only {r['coverage']['human_only']:.3f} "
                  f"(width {r['width']['human_only']:.3f})", flush=True)
    return save_result({'cpu': cpu_line(), 'date': utc_now(), 'truth': 0.55, 'n_pairs': 400, 'reps': reps, 'seed': 2,
                        'rows': rows}, save, home)

if __name__ == '__main__':
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    main(smoke='--smoke' in sys.argv)
