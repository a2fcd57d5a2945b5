"""Draw the pipeline map (nbs/images/pipeline_map.png): each stage, its notebook, and the artifact it writes in the run folder.

    python tools/pipeline_map.py          # rewrites nbs/images/pipeline_map.png
"""
from pathlib import Path
import matplotlib; matplotlib.use('Agg')
import matplotlib.pyplot as plt
from matplotlib.patches import FancyBboxPatch

# name: (x, y, notebook, artifact in models/<agent>/vN/, colour)
BOXES = {
    'feedback':   (0.5, 3.0, '01_feedback · 03_widgets', 'data/feedback.db\n(FeedbackStore)', '#dbe9f6'),
    'formatting': (3.4, 3.0, '02_formatting', 'datasets/pairs, kto,\ntargets (split by prompt)', '#dbe9f6'),
    'reward':     (6.3, 4.5, '04_reward', 'reward/reward_model/\njudge/reward_model/', '#fde2c8'),
    'dpo':        (6.3, 1.5, '05_dpo', 'dpo/adapter/\n(DPO or KTO, LoRA)', '#fde2c8'),
    'ppo':        (9.2, 4.5, '06_ppo', 'ppo/ grpo/ rloo/\n(PPO ours; GRPO, RLOO)', '#fde2c8'),
    'on-policy DPO': (9.2, 2.98, '09_online', 'dpo_on_policy/adapter/\n(own answers, RM-ranked)', '#fde2c8'),
    'evaluation': (12.1, 3.0, '08_evaluation', 'eval/<policy>.json\nplots/eval_*.png', '#e1f3dc'),
    'export':     (15.0, 3.0, '07_export', 'gguf/*.gguf, Modelfile,\nREADME.md (model card)', '#e1f3dc'),
    'registry':   (15.0, 0.5, '10_api (registry)', 'policy_versions table:\nv1, v2, … deployed', '#eadcf3'),
    'serving':    (10.6, 0.5, '09_online · 10_api', 'deployed GGUF answers;\nA/B split; gate', '#eadcf3'),
}
EDGES = [('feedback', 'formatting'), ('formatting', 'reward'), ('formatting', 'dpo'), ('reward', 'ppo'), ('ppo', 'evaluation'),
         ('reward', 'on-policy DPO'), ('on-policy DPO', 'evaluation'),
         ('dpo', 'evaluation'), ('reward', 'evaluation'), ('evaluation', 'export'), ('export', 'registry'), ('registry', 'serving'),
         ('serving', 'feedback')]
W, H = 2.2, 1.35

def _edge(x1, y1, x2, y2, pad=0.08):
    "Where the segment from box centre (x1, y1) towards (x2, y2) leaves the box."
    dx, dy = x2 - x1, y2 - y1
    t = min((W / 2 + pad) / abs(dx) if dx else 1e9, (H / 2 + pad) / abs(dy) if dy else 1e9)
    return x1 + t * dx, y1 + t * dy

def best_method(results=None) -> str|None:
    ("The method with the highest lower bound under the independent judge, from the saved results "
     "(`bench/report.py`'s `saved_method_rows`), as one line; None when nothing is saved.")
    import json
    import sys
    from rlnb.core import bench_results
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent/'bench'))   # the report: bench/report.py
    from report import saved_method_rows, METHOD_NAMES
    rows = [r for r in saved_method_rows(results) if 'judge' in r['judges']]
    if not rows: return None
    r = max(rows, key=lambda r: r['judges']['judge']['win_rate_ci'][0]); v = r['judges']['judge']
    f = Path(results or bench_results())/'methods.json'
    dates = {METHOD_NAMES.get(k, k): m.get('date') for k, m in (json.loads(f.read_text()) if f.exists() else {}).get('methods', {}).items()}
    return (f"Best on the demo run: {r['method']} wins {v['win_rate']:.3f} [{v['win_rate_ci'][0]:.3f}, "
            f"{v['win_rate_ci'][1]:.3f}] of held-out prompts against SmolLM2 under the independent judge "
            f"(95 % CI; bench/results/, {(dates.get(r['method']) or '')[:10]}; every method: README, 08_evaluation)")

def draw(path='nbs/images/pipeline_map.png'):
    fig, ax = plt.subplots(figsize=(17.5, 6.2))
    for name, (x, y, nb, art, col) in BOXES.items():
        ax.add_patch(FancyBboxPatch((x - W / 2, y - H / 2), W, H, boxstyle='round,pad=0.04', fc=col, ec='#555', lw=1.2))
        ax.text(x, y + 0.42, name, ha='center', va='center', fontsize=11.5, weight='bold')
        ax.text(x, y + 0.16, nb, ha='center', va='center', fontsize=8, style='italic', color='#333')
        ax.text(x, y - 0.27, art, ha='center', va='center', fontsize=8, family='monospace')
    for a, b in EDGES:
        (x1, y1), (x2, y2) = BOXES[a][:2], BOXES[b][:2]
        loop = (a, b) == ('serving', 'feedback')
        ax.annotate('', xy=_edge(x2, y2, x1, y1), xytext=_edge(x1, y1, x2, y2), arrowprops=dict(
            arrowstyle='-|>', lw=1.4, color='#c0392b' if loop else '#444', shrinkA=0, shrinkB=0,
            connectionstyle='arc3,rad=-0.25' if loop else 'arc3,rad=0'))
    ax.text(3.4, 0.45, 'new ratings of served answers\n→ online retrain (09_online)', fontsize=8.5, color='#c0392b', ha='center')
    ax.text(-0.6, 5.75, 'Each stage reads only what is to its left; a run writes everything under models/<agent>/v<N>/ '
            '(config.json, metrics.json, plots/ and the folders shown). 99_pipeline runs the stages from a recipe.',
            fontsize=9.5, ha='left', color='#222')
    if best := best_method():
        ax.text(-0.6, 5.38, best, fontsize=9.5, ha='left', color='#1e6b30', weight='bold')
    ax.set_xlim(-0.9, 16.4); ax.set_ylim(-0.4, 5.9); ax.axis('off')
    fig.tight_layout(); Path(path).parent.mkdir(parents=True, exist_ok=True); fig.savefig(path, dpi=80)
    return path

if __name__ == '__main__': print(draw())
