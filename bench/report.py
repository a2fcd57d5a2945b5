"""Every saved benchmark of `bench/results/`, rendered: its table, how it was measured and how to read it.

The report of the benchmarks, outside the `rlnb` package: the library never reads `bench/results/` or imports this
module (nbs/index checks), so an installed wheel holds none of it. The bench scripts print their tables with these
functions (`from report import ...`: each runs as `python bench/NAME.py`, so this folder is on its path); the notebooks
render them (`nbs/12_bench`, `nbs/08_evaluation`), and `nbs/12_bench` tests each against a small file of known numbers.
"""
from __future__ import annotations
import json
from pathlib import Path
from rlnb.stats import wilson_interval, mean_ci, holm
from rlnb.verdicts import confirmed
from rlnb.eval_plots import ci_errorbar
from rlnb.core import bench_results
from rlnb.hardware import isa_caps_note

SPEED_GOALS = {   # benchmark: (the stem its saved results start with, the goal in words)
    'DPO, whole run vs TRL defaults': ('dpo_speed', '≥ 3× at no more memory, same losses'),
    'PPO, per step vs TRL 0.29': ('ppo_speed', '≥ 2× at no more memory'),
    'reward model vs TRL defaults': ('reward_speed_minilm', '≥ 3× at equal held-out accuracy'),
    "evaluation's answers and KL vs before": ('eval_gen_speed', 'same answers, faster'),
    'make demo, its stages summed': ('recipe_chitchat', '≤ 10 min on 2 cores'),   # the on-policy demo (issue 75's goal):
    # bench/recipe_run.py data/recipes/chitchat.yaml --save, or tools/save_eval.py RUN --out recipe_chitchat_NAME.json
    'make demo before on-policy DPO (offline DPO + PPO)': ('demo', '≤ 10 min on 2 cores'),   # chitchat_offline.yaml's runs
}

def cpu_kind(r:dict) -> str:
    "The kind of CPU a saved result ran on, from its `cpu` line and `isa_caps`: vendor and the fastest units it used."
    cpu = r.get('cpu', '').removeprefix('CPU: ')
    name = cpu.split(' (')[0].replace('(R)', '').replace(' Processor', '').strip() or 'unknown CPU'
    flags = set(cpu.rsplit('; ', 1)[-1].rstrip(')').split())
    kind = ('AMX' if 'amx_tile' in flags else 'AVX-512-BF16, no AMX' if 'avx512_bf16' in flags
            else 'AVX-512, no bf16' if 'avx512f' in flags else 'AVX2 only' if 'avx2' in flags else 'no AVX2')
    return f"{name}, held to AVX2" if r.get('isa_caps') else f"{name}, {kind}"

def _best_ratio(name:str, r:dict) -> tuple[str, str]:
    "(ratio as text, what it is) of a saved result: the best variant within the goal's conditions, against the anchor."
    if name.startswith('DPO'):
        base = next(x for x in r['rows'] if x['variant'] == 'trl_defaults')
        ok = [x for x in r['rows'] if x['peak_rss_mb'] <= base['peak_rss_mb']
              and max(abs(a - b) for a, b in zip(x['losses'], base['losses'])) < 0.05]
        b = max(ok, key=lambda x: base['total_s'] / x['total_s'])
        return f"{base['total_s'] / b['total_s']:.2f}×", f"`{b['variant']}`, {b['peak_rss_mb']:,} vs {base['peak_rss_mb']:,} MiB"
    if name.startswith('PPO'):
        s, rss = r['summary'], lambda k: r['runs'][k]['peak_rss_mb']
        k = min((k for k in s if k != 'trl' and rss(k) <= rss('trl')), key=lambda k: s[k]['step'])
        x, what = s['trl']['step'] / s[k]['step'], f"`{k}`: {s[k]['step']} vs {s['trl']['step']} s/step"
        mk, mt = step_median(r['runs'][k]), step_median(r['runs']['trl'])
        if mk is None or mt is None: return f"{x:.2f}×", what
        return f"{min(x, mt / mk):.2f}×", (f"{what} ({x:.2f}×), medians {mk:.2f} vs {mt:.2f} ({mt / mk:.2f}×): the "
                                         "lower ratio counts")
    sm = r.get('summary') or {}
    if name.startswith('reward') and 'diff_mean' in sm.get('cpu', {}) and 'trl_defaults' in sm:   # --seeds: means, paired diff
        c, t = sm['cpu'], sm['trl_defaults']
        return (f"{c['pairs_per_s_mean'] / t['pairs_per_s_mean']:.2f}×",
                f"`cpu` over seeds {', '.join(map(str, c['seeds']))}: mean accuracy {c['accuracy_mean']:.3f} vs TRL's "
                f"{t['accuracy_mean']:.3f}, paired difference {c['diff_mean']:+.3f} [{c['diff_ci'][0]:+.3f}, {c['diff_ci'][1]:+.3f}]")
    if name.startswith('reward'):
        rows = {x['variant']: x for x in r['rows']}
        acc = lambda x: '{:.3f} [{:.3f}, {:.3f}]'.format(x['heldout_accuracy'], *wilson_interval(
            x['heldout_accuracy'] * x['eval_pairs'], x['eval_pairs']))
        c, t = rows['cpu'], rows['trl_defaults']
        if 'timed_out_s' in t:   # then TRL with bf16 autocast off, where measured, is the fairer anchor: say it too
            f = rows.get('trl_fp32')
            fp = f"; {c['pairs_per_s'] / f['pairs_per_s']:.2f}× TRL with bf16 off ({acc(f)})" if f else ''
            return (f"≥ {c['speedup_at_least']:.2f}×", f"`cpu`: accuracy {acc(c)}; TRL's defaults did not finish "
                    f"{t['pairs']} pairs in {t['timed_out_s']:.0f} s{fp}")
        return f"{c['pairs_per_s'] / t['pairs_per_s']:.2f}×", f"`cpu`: accuracy {acc(c)} vs TRL's {acc(t)}"
    if name.startswith('make demo'):   # tools/save_eval.py's stage_seconds, or bench/recipe_run.py's stages
        s = r.get('stage_seconds') or {k: v['seconds'] for k, v in r['stages'].items()}; top = sorted(s, key=s.get, reverse=True)[:3]
        return f"{sum(s.values()) / 60:.1f}", f"min; {', '.join(f'{k} {s[k]:.0f} s' for k in top)}; commit {str(r.get('commit'))[:7]}"
    first, last = r['rows'][0], r['rows'][-1]
    return f"{first['seconds'] / last['seconds']:.2f}×", f"{first['seconds']:.0f} → {last['seconds']:.0f} s, {r['prompts']} prompts"

GOAL_MET = {   # benchmark: whether its best figure (the number `_best_ratio` shows) meets the goal; None: read the row
    'DPO, whole run vs TRL defaults': lambda x: x >= 3, 'PPO, per step vs TRL 0.29': lambda x: x >= 2,
    'make demo, its stages summed': lambda x: x <= 10, 'make demo before on-policy DPO (offline DPO + PPO)': lambda x: x <= 10}

def speed_by_cpu(results=None) -> str:
    ("Markdown: one row per saved result of each benchmark of `SPEED_GOALS` (`STEM.json`, `STEM_*.json`): the CPU kind "
     "it ran on, the best figure within the goal, and whether it meets it; a benchmark with none says so.")
    import re
    res = Path(results or bench_results())
    out = ['| benchmark | goal | CPU | best | goal met | what |', '|---|---|---|---|---|---|']
    for name, (stem, goal) in SPEED_GOALS.items():
        files = [f for f in [res/f'{stem}.json', *sorted(res.glob(f'{stem}_*.json'))] if f.exists()]
        if not files: out.append(f"| {name} | {goal} | – | not measured (`{stem}.json`) | – | |")
        for f in files:
            r = json.loads(f.read_text()); x, what = _best_ratio(name, r)
            num = float(re.sub(r'[^0-9.]', '', x))
            met = {True: 'yes', False: '**no**', None: 'read the row'}[GOAL_MET[name](num) if name in GOAL_MET else None]
            out.append(f"| {name} | {goal} | {cpu_kind(r)} | **{x}**{' min' if name.startswith('make') else ''} "
                       f"| {met} | {what.removeprefix('min; ')} (`{f.name}`) |")
    return '\n'.join(out)

def roofline_table(path=None) -> str:
    "Markdown: per training stage, achieved and attainable GFLOP/s and their ratio, from `bench/roofline.py`."
    r = json.loads(Path(path or bench_results()/'roofline.json').read_text())
    out = [f"{r['cpu'].removeprefix('CPU: ')}, {r['threads']} threads, {r['date'][:10]}; run `{r['run']}`.", '',
           '| stage | model | precision | achieved GFLOP/s | attainable GFLOP/s | achieved ÷ attainable | goal ≥ 50 % |',
           '|---|---|---|---|---|---|---|']
    for x in r['rows']:
        out.append(f"| {x['stage']} | {x['model']} | {x['dtype']} | {x['achieved_gflops']:.1f} | {x['attainable_gflops']:.1f} "
                   f"| {x['fraction']:.1%} | {'met' if x['fraction'] >= 0.5 else 'not met'} |")
    return '\n'.join(out)

def native_memory_table(path=None) -> str:
    ("Markdown of `bench/native_memory.py`'s result: per setting and round, resident memory at the start, the peak, "
     "what stays held after it, and the seconds; then whether losses and answers were identical.")
    r = json.loads(Path(path or bench_results()/'native_memory.json').read_text())
    env = lambda s: ', '.join(f"`{k}={v}`" for k, v in r['settings'][s].items())
    out = [f"{r['cpu'].removeprefix('CPU: ')}, {r['date'][:10]}: {r['rounds']} rounds, each {r['prompts']} prompts sampled "
           f"({r['new_tokens']} new tokens) then {r['steps']} DPO steps of {r['batch']} pairs.", '',
           '| setting | round | start MiB | peak MiB | held after MiB | seconds |', '|---|---|---|---|---|---|']
    for s, rows in r['rows'].items():
        for x in rows:
            out.append(f"| {s} ({env(s)}) | {x['round']} | {x['start_mb']:,} | {x['peak_mb']:,} | {x['held_after_mb']:,} "
                       f"| {x['seconds']:.1f} |")
    out += ['', f"Losses and answers identical under both: {'yes' if r['identical'] else '**no**'}."]
    return '\n'.join(out)

def bf16_sampling_table(path=None) -> str:
    ("Markdown of `bench/bf16_sampling.py`'s result: per variant the seconds, the speed-up on the mean of the two fp32 "
     "rows, answers identical to fp32's, mean answer length, and KL(fp32 ‖ variant) per position and per answer (its "
     "mean times the mean answer length).")
    r = json.loads(Path(path or bench_results()/'bf16_sampling.json').read_text())
    out = [f"{r['cpu'].removeprefix('CPU: ')}, {r['date'][:10]}, {r['threads']} threads: {r['prompts']} prompts, "
           f"{r['new_tokens']} new tokens, {r['batch']} x {r['batches_at_once']} rows at once; KL teacher-forced on "
           f"fp32's first {r['teacher_forced']} answers.", '',
           '| variant | seconds | speed-up | identical to fp32 | mean tokens | KL(fp32 ‖ variant) per position: mean / p99 / max '
           '| per answer |', '|---|---|---|---|---|---|---|']
    for x in r['rows']:
        k = x['kl_from_fp32']
        out.append(f"| {x['variant']} | {x['seconds']:.1f} | {x['speedup']:.2f}x | {x['identical_answers']}/{r['prompts']} "
                   f"| {x['mean_tokens']:.1f} | {k['mean']:.1e} / {k['p99']:.1e} / {k['max']:.1e} "
                   f"| {k['mean'] * x['mean_tokens']:.1e} |")
    return '\n'.join(out)

def reward_seed_summary(rows:list, conf:float=0.95) -> dict:
    ("Per variant of a `bench/reward_speed.py --seeds N` run: its seeds' held-out accuracies and their mean, the mean "
     "pairs/s and speed-up; and against `trl_defaults` the per-seed accuracy differences (the same seed, the same "
     "held-out pairs), their mean and its Student-t interval over the seeds. One seed's accuracy on this data moves by "
     "a few points, so a single run cannot say whether two settings learn equally well.")
    _mean_or_none = lambda xs: round(sum(xs) / len(xs), 2) if xs and None not in xs else None   # a timed-out anchor: none
    by = {}
    for r in rows:
        if 'timed_out_s' not in r: by.setdefault(r['variant'], {})[r['seed']] = r   # timed-out runs: no accuracy
    base, out = by.get('trl_defaults', {}), {}
    for v, rs in by.items():
        acc = [rs[s]['heldout_accuracy'] for s in sorted(rs)]
        row = {'seeds': sorted(rs), 'accuracies': acc, 'accuracy_mean': round(sum(acc) / len(acc), 4),
               'pairs_per_s_mean': round(sum(rs[s]['pairs_per_s'] for s in rs) / len(rs), 2),
               'speedup_mean': _mean_or_none([rs[s].get('speedup') for s in rs])}
        common = sorted(set(rs) & set(base))
        if v != 'trl_defaults' and len(common) >= 2:
            d = [rs[s]['heldout_accuracy'] - base[s]['heldout_accuracy'] for s in common]
            m, lo, hi = mean_ci(d, conf)
            row.update(diff_vs_trl=[round(x, 4) for x in d], diff_mean=round(m, 4), diff_ci=[round(lo, 4), round(hi, 4)])
        out[v] = row
    return out

def saved(path, name:str, how:str) -> tuple:
    ("`(result, None)`: the saved JSON at `path` (default `bench_results()/name`); or `(None, why)` when there is none, "
     "naming what writes it (`how`).")
    path = Path(path or bench_results()/name)
    if not path.exists(): return None, f'no saved result at {path}: run {how}'
    return json.loads(path.read_text()), None

def reward_speed_table(path=None) -> str:
    ("Markdown: pairs/s, peak RSS and held-out accuracy (95 % Wilson interval) of each variant of "
     "`bench/reward_speed.py`.")
    r, missing = saved(path, 'reward_speed_minilm.json', 'bench/reward_speed.py')
    if missing: return missing
    out = [
        '| variant | settings | pairs/s | vs TRL defaults | peak RSS MiB | held-out accuracy (95 % CI) |',
        '|---|---|---|---|---|---|',
    ]
    for x in r['rows']:
        s = ', '.join(f'{k}={v}' for k, v in x['settings'].items()) or '`cpu` preset'
        if 'seed' in x: s += f", seed {x['seed']}"
        if 'timed_out_s' in x:    # stopped by bench/reward_speed.py --limit: the others' speed-up is a lower bound
            out.append(f"| {x['variant']} | {s} | did not finish {x['pairs']} pairs in {x['timed_out_s']:.0f} s | – | – | – |"); continue
        sp = f"{x['speedup']:.2f}×" if x.get('speedup') is not None else f"≥ {x['speedup_at_least']:.2f}×"
        lo, hi = wilson_interval(x['heldout_accuracy'] * x['eval_pairs'], x['eval_pairs'])
        out.append(f"| {x['variant']} | {s} | {x['pairs_per_s']:.1f} | {sp} | {x['peak_rss_mb']:,.0f} "
                   f"| {x['heldout_accuracy']:.3f} ({lo:.3f}, {hi:.3f}) |")
    for v, m in (r.get('summary') or {}).items():   # --seeds: the mean over seeds, the paired difference to TRL's
        sp = f"{m['speedup_mean']:.2f}×" if m.get('speedup_mean') is not None else '–'
        out.append(f"| **{v}, mean of seeds {', '.join(map(str, m['seeds']))}** | | {m['pairs_per_s_mean']:.1f} "
                   f"| {sp} | | {m['accuracy_mean']:.3f}"
                   + (f"; vs TRL {m['diff_mean']:+.3f} ({m['diff_ci'][0]:+.3f}, {m['diff_ci'][1]:+.3f})" if 'diff_mean' in m else '')
                   + ' |')
    return '\n'.join(out) + (f"\n\n{r['rows'][0]['pairs']} training pairs, backbone {r['backbone']}. {r['cpu']}"
                              f"{isa_caps_note(r.get('isa_caps'))}")

def dpo_speed_table(path=None) -> str:
    "Markdown: each variant of `bench/dpo_speed.py` against TRL's defaults, per step and for the whole run."
    r, missing = saved(path, 'dpo_speed.json', 'bench/dpo_speed.py')
    if missing: return missing
    rows = r['rows']
    base = next(x for x in rows if x['variant'] == 'trl_defaults')
    out = [
        (
            '| variant | bf16 | attention | s/step | pairs/s | prepare s | total s | peak RSS GiB | per step | whole run '
            '| max \\|Δ loss\\| |'
        ),
        '|---|---|---|---|---|---|---|---|---|---|---|',
    ]
    dl = {x['variant']: max(abs(a - b) for a, b in zip(x['losses'], base['losses'])) for x in rows}
    for x in rows:
        out.append(
            f"| {x['variant']} | {'on' if x['bf16'] else 'off'} | {x['attn']} | {x['s_per_step']:.2f} |"
            f" {x['pairs_per_s']:.2f} | {x['prepare_s']:.1f} | {x['total_s']:.1f} | {x['peak_rss_mb'] / 1024:.2f} |"
            f" {base['s_per_step'] / x['s_per_step']:.2f}× | {base['total_s'] / x['total_s']:.2f}× |"
            f" {dl[x['variant']]:.4f} |"
        )
    # within TRL's memory, the same loss trajectory (bf16 rounding moves it by ~0.03)
    ok = [x for x in rows if x['peak_rss_mb'] <= base['peak_rss_mb'] and dl[x['variant']] < 0.05]
    best = max(ok, key=lambda x: base['total_s'] / x['total_s'])
    goal = (f"Goal, ≥ 3× TRL's whole run at no more memory and the same losses: best is `{best['variant']}`, "
            f"{base['total_s'] / best['total_s']:.2f}× ({base['s_per_step'] / best['s_per_step']:.2f}× per step) at "
            f"{best['peak_rss_mb'] / 1024:.2f} GiB against {base['peak_rss_mb'] / 1024:.2f}: "
            + ('met.' if base['total_s'] / best['total_s'] >= 3 else 'not met.'))
    return '\n'.join(out) + (f"\n\n{goal}\n\n{r['steps']} steps of {r['batch']} pairs. {r['cpu']}"
                              f"{isa_caps_note(r.get('isa_caps'))}")

def threads_line(t:dict, what:str) -> str:
    ("The thread-scaling sentence of a scaling file's `threads` record: `what` (a step) at 1 thread and at 2, and the "
     "16-thread time the Amdahl fit of the two projects.")
    if 'serial_share' not in t: return 'Threads: not measured.'
    return (f"Threads: {what} at the {t['size']} shape took {t['s_per_step']['1']:.2f} s on 1 thread and "
            f"{t['s_per_step']['2']:.2f} s on 2 ({t['speedup_2']:.2f}×); an Amdahl fit of the two puts the serial share at "
            f"{t['serial_share']:.2f}, which projects {t['projected_s']:.2f} s a step on {t['threads']} threads "
            f"({t['projected_speedup']:.1f}×): a projection from two points, not a measurement.")

def scaling_table(path=None) -> str:
    ("Markdown: `bench/scaling.py`'s DPO step and sampling at each model shape, rlnb against TRL's side, with peak "
     "memory, and the thread-scaling line.")
    r, missing = saved(path, 'scaling.json', 'bench/scaling.py')
    if missing: return missing
    out = ['| shape | DPO, TRL defaults s/step | rlnb `cpu` | rlnb `cpu_bf16` | best vs TRL | peak RSS GiB (TRL / best) '
           '| sampling tokens/s, `generate` | rlnb | vs `generate` | peak RSS GiB (generate / rlnb) |',
           '|---|---|---|---|---|---|---|---|---|---|']
    for row in r['rows']:
        d, g = row['dpo'], row['generation']
        base = d.get('trl_defaults')
        ours = [(v, d[v]) for v in ('cpu', 'cpu_bf16') if v in d]
        best = min(ours, key=lambda x: x[1]['s_per_step']) if ours else None
        cell = lambda v: f"{d[v]['s_per_step']:.2f}" if v in d else '—'
        ratio = f"{base['s_per_step'] / best[1]['s_per_step']:.2f}× (`{best[0]}`)" if base and best else '—'
        mem = (f"{base['peak_rss_mb'] / 1024:.1f} / {best[1]['peak_rss_mb'] / 1024:.1f}" if base and best else '—')
        gt, gr = g.get('transformers'), g.get('rlnb')
        gen = (f"{gt['tokens_per_s']:.0f} | {gr['tokens_per_s']:.0f} ({gr['precision']}) | "
               f"{gr['tokens_per_s'] / gt['tokens_per_s']:.2f}× | {gt['peak_rss_mb'] / 1024:.1f} / "
               f"{gr['peak_rss_mb'] / 1024:.1f}" if gt and gr else 'failed | | |')
        out.append(f"| {row['size']} | {cell('trl_defaults')} | {cell('cpu')} | {cell('cpu_bf16')} | {ratio} | {mem} "
                   f"| {gen} |")
    fits = []
    for row in r['rows']:   # the smallest common memory size that holds the best preset's peak and the sampling's
        d, g = row['dpo'], row['generation']
        need = min((x['peak_rss_mb'] for x in (d.get('cpu'), d.get('cpu_bf16')) if x), default=None)
        gen = max((x['peak_rss_mb'] for x in g.values() if x), default=0)
        if need: fits.append(f"{row['size']} in {next(m for m in (2, 4, 8, 16, 32, 64, 128) if m * 1024 >= max(need, gen))} GiB")
    th = threads_line(r.get('threads', {}), "the `cpu` preset's DPO step")
    fit = ("Memory, the smallest of 2, 4, 8, 16, 32, 64 and 128 GiB that holds rlnb's DPO (its lighter preset) and the sampling: "
           + ', '.join(fits) + '.') if fits else ''
    return '\n'.join(out) + (f"\n\n{fit}\n\n{th}\n\nDPO: {r['steps']} steps of {r['batch_pairs']} pairs (median step after the "
                              f"first), max length {r['max_length']}. Sampling: {r['prompts']} prompts, {r['new_tokens']} "
                              f"new tokens, one batch. Random weights of each shape. {r['cpu']}"
                              f"{isa_caps_note(r.get('isa_caps'))}, {r['date'][:10]}")

GIB_SIZES = (2, 4, 8, 16, 24, 32, 64, 128)   # common machines' memory, GiB (24: the 2-core machines rlnb is built on)

def _gib_to_fit(mb:float) -> int|None:
    "The smallest of `GIB_SIZES` that holds `mb` MiB (None: none does)."
    return next((m for m in GIB_SIZES if m * 1024 >= mb), None)

def ppo_scaling_table(path=None) -> str:
    ("Markdown: `bench/ppo_scaling.py`'s PPO step at each model shape, TRL 0.29 against rlnb's `cpu` preset (mean and "
     "median seconds per step, responses per second, peak memory; a side that did not fit says so), then the memory "
     "each shape needs and the thread-scaling line.")
    r, missing = saved(path, 'ppo_scaling.json', 'bench/ppo_scaling.py')
    if missing: return missing
    out = ['| shape | TRL 0.29 s/step (median) | rlnb `cpu` s/step (median) | rlnb vs TRL, mean (median) | responses/s '
           '(TRL / rlnb) | rlnb response tokens/s | peak RSS GiB (TRL / rlnb) | generate / prepare / update s (TRL; rlnb) |',
           '|---|---|---|---|---|---|---|---|']
    fits = []
    for row in r['rows']:
        t, o = (row['ppo'].get(k) or {} for k in ('trl', 'rlnb (cpu preset: + bf16 sampling copy)'))
        def cell(x):
            if not x: return 'not run'
            if 'failed' in x: return (f"did not fit in {x['limit_gib']:.1f} GiB" if x['fits'] is False
                                      else f"failed: {x['failed'][:60]}")
            return f"{x['s_per_step']:.2f} ({x['s_per_step_median']:.2f})"
        ok = lambda x: bool(x) and 'failed' not in x
        ratio = (f"{t['s_per_step'] / o['s_per_step']:.2f}× ({t['s_per_step_median'] / o['s_per_step_median']:.2f}×)"
                 if ok(t) and ok(o) else '—')
        rps = f"{t['responses_per_s']:.3f} / {o['responses_per_s']:.3f}" if ok(t) and ok(o) else '—'
        tps = f"{o['response_tokens_per_s']:.1f}" if ok(o) and 'response_tokens_per_s' in o else '—'
        mem = ' / '.join(f"{x['peak_rss_mb'] / 1024:.1f}" if ok(x) else '—' for x in (t, o))
        ph = lambda x: ' / '.join(f"{x['phases'][k]:.1f}" for k in ('generate', 'prepare', 'update')) if ok(x) else '—'
        out.append(f"| {row['size']} | {cell(t)} | {cell(o)} | {ratio} | {rps} | {tps} | {mem} | {ph(t)}; {ph(o)} |")
        need = [f"{n} {_gib_to_fit(x['peak_rss_mb']) or f'more than {GIB_SIZES[-1]}'} GiB" for n, x in (('TRL', t), ('rlnb', o))
                if ok(x)]
        need += [f"{n} more than {x['limit_gib']:.1f} GiB" for n, x in (('TRL', t), ('rlnb', o))
                 if x and 'failed' in x and x['fits'] is False]
        fits.append(f"{row['size']}: " + ', '.join(need))
    th = threads_line(r.get('threads', {}), "rlnb's PPO step")
    s = r['settings']
    return '\n'.join(out) + (f"\n\nMemory, the smallest of {', '.join(map(str, GIB_SIZES[:-1]))} and {GIB_SIZES[-1]} GiB "
                              "that holds each side's peak: "
                              + '; '.join(fits) + f".\n\n{th}\n\n{r['steps']} steps a side (the first left out: the "
                              f"mean and median are of the other {r['steps'] - 1}), {s['batch']} responses of up to "
                              f"{s['new_tokens']} tokens a step, {s['epochs']} PPO epochs of {s['minibatches']} "
                              f"minibatches, LoRA r{s['lora_r']} on both sides; TRL's value model is a full copy of the "
                              f"policy, as its documentation runs it. Each side ran under a {r['limit_gib']:.1f} GiB "
                              f"address-space limit on a {r['machine_gib']:.0f} GiB machine. Random weights of each shape. "
                              f"{r['cpu']}{isa_caps_note(r.get('isa_caps'))}, {r['date'][:10]}")

def shape_params(shape:dict, vocab:int=49152) -> int:
    ("Parameters of a Llama shape with tied embeddings (SmolLM2's): the embedding, and per layer the attention's "
     "four projections (keys and values at the KV heads' width), the gated MLP's three and two norms; the final norm.")
    h, L, i = shape['hidden_size'], shape['num_hidden_layers'], shape['intermediate_size']
    kv = h * shape['num_key_value_heads'] // shape['num_attention_heads']
    return vocab * h + L * (2 * h * h + 2 * h * kv + 3 * h * i + 2 * h) + h

def plot_scaling(path=None):
    "Seconds per DPO step against parameters, TRL's defaults and rlnb's best preset, log-log; the figure."
    import matplotlib.pyplot as plt
    r = json.loads(Path(path or bench_results()/'scaling.json').read_text())
    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    rows = r['rows']
    for label, pick in (("TRL's defaults", lambda d: d.get('trl_defaults')),
                        ('rlnb, best preset', lambda d: min((d[v] for v in ('cpu', 'cpu_bf16') if v in d),
                                                             key=lambda x: x['s_per_step'], default=None))):
        pts = [(shape_params(x['shape']), pick(x['dpo'])['s_per_step']) for x in rows if pick(x['dpo'])]
        ax.plot(*zip(*pts), marker='o', label=label)
    ax.set(xscale='log', yscale='log', xlabel='parameters', ylabel='seconds per DPO step (4 pairs)',
           title=f"DPO step by model size, {r['cpu'].removeprefix('CPU: ').split(' (')[0]}, {r['date'][:10]}")
    ax.legend(); fig.tight_layout()
    return fig

def _ci_cell(xs:list, d:int) -> str:
    "`mean (lo, hi)` with a Student-t interval; one value has none (a smoke run of a step or two)."
    if len(xs) < 2: return f"{xs[0]:.{d}f} (one step: no interval)" if xs else 'no steps'
    m, lo, hi = mean_ci(xs)
    return f"{m:.{d}f} ({lo:.{d}f}, {hi:.{d}f})"

def step_median(run:dict) -> float|None:
    "A PPO run's median seconds per step after the first (warm-up); None where its file keeps no per-step split."
    import statistics
    ph = ('generate', 'score', 'prepare', 'update')
    xs = [sum(x[k] for k in ph) for x in run.get('steps', [])[1:] if all(k in x for k in ph)]
    return round(statistics.median(xs), 2) if xs else None

def ppo_speed_table(path=None) -> str:
    "Markdown: seconds per step by phase, peak RSS and the learning figures of each side of `bench/ppo_speed.py`."
    r, missing = saved(path, 'ppo_speed.json', 'bench/ppo_speed.py')
    if missing: return missing
    s = r['summary']
    rows = ['| run | generate s | score s | prepare s | update s | **s / step** | TRL ÷ this | median s / step '
            '| TRL ÷ this, medians | peak RSS MiB | mean reward (95 % CI) | mean KL, nats (95 % CI) |',
            '|---|---|---|---|---|---|---|---|---|---|---|---|']
    med = {k: step_median(r['runs'][k]) for k in s}
    for k, m in s.items():
        ratio = f"{s['trl']['step'] / m['step']:.2f}×"
        mr = f"{med['trl'] / med[k]:.2f}×" if med[k] and med['trl'] else '–'
        steps = r['runs'][k]['steps'][1:]  # one batch's k1 KL estimate swings ±0.3: the mean and its interval say more
        rows.append(
            f"| {k} | {m['generate']} | {m['score']} | {m['prepare']} | {m['update']} | **{m['step']}** | {ratio} "
            f"| {f'{med[k]:.2f}' if med[k] is not None else '–'} | {mr} | {r['runs'][k]['peak_rss_mb']:,} | {_ci_cell([x['reward'] for x in steps], 4)} "
            f"| {_ci_cell([x['kl'] for x in steps], 3)} |"
        )
    rss = lambda k: r['runs'][k]['peak_rss_mb']
    best = min((k for k in s if k != 'trl' and rss(k) <= rss('trl')), key=lambda k: s[k]['step'])
    x = s['trl']['step'] / s[best]['step']
    xm = med['trl'] / med[best] if med[best] and med['trl'] else None   # a slow step or two moves the mean, not this
    goal = (f"Goal, ≥ 2× TRL 0.29 per step at no more memory: `{best}` is {x:.2f}× at {rss(best):,} MiB against "
            f"{rss('trl'):,}" + (f", {xm:.2f}× by the median step" if xm is not None else '') + ': '
            + ('met.' if x >= 2 and (xm is None or xm >= 2) else 'not met.'))
    return '\n'.join(rows) + (f"\n\n{goal}\n\n{r['steps']} steps each, the first left out of the per-step means "
                              f"(warm-up); intervals are Student-t over the steps. {r['cpu']}"
                              f"{isa_caps_note(r.get('isa_caps'))}")

def plot_ppo_speed(path=None):
    "Per-step reward and KL of each run, and its seconds per step split by phase."
    import matplotlib.pyplot as plt
    r = json.loads(Path(path or bench_results()/'ppo_speed.json').read_text())
    fig, ax = plt.subplots(1, 3, figsize=(15, 3.6))
    for k, run in r['runs'].items():
        ax[0].plot([x['reward'] for x in run['steps']], marker='o', label=k)
        ax[1].plot([x['kl'] for x in run['steps']], marker='o', label=k)
    ax[0].set(title='mean reward per step', xlabel='step')
    ax[1].set(title='KL(π‖π_ref) per step (nats)', xlabel='step')
    bottom = [0.0] * len(r['summary'])
    for ph in ('generate', 'score', 'prepare', 'update'):
        v = [m[ph] for m in r['summary'].values()]
        ax[2].bar(list(r['summary']), v, bottom=bottom, label=ph); bottom = [a + b for a, b in zip(bottom, v)]
    ax[2].set(title='seconds per step', ylabel='s')
    for a in ax: a.legend(fontsize=8)
    fig.tight_layout()
    return fig

def scale_out_table(paths=None) -> str:
    "Markdown: seconds per step of DPO and PPO by number of processes, from `bench/scale_out.py`'s results."
    paths = [Path(p) for p in paths] if paths else sorted(bench_results().glob('scale_out*.json'))
    if not paths: return f'no saved result in {bench_results()}: run bench/scale_out.py'
    out = ['| stage | device | processes | threads each | s / step | vs 1 process |', '|---|---|---|---|---|---|']
    notes = []
    for p in paths:
        r = json.loads(p.read_text())
        for x in r['rows']:
            stage = {'dpo': 'DPO, padded', 'dpo_packed': 'DPO, packed'}.get(x['stage'], x['stage'].upper())
            out.append(f"| {stage} | {r['device']} | {x['processes']} | {x['threads']} "
                       f"| {x['s_per_step']:.2f} | {x['speedup']:.2f}× |")
        notes.append(f"{r['device']}: {r['cpu']}" + (f"; {r['gpu']}" if r.get('gpu') else ''))
    return '\n'.join(out) + '\n\n' + '\n\n'.join(notes)

def gpu_speed_table(path=None) -> str:
    "Markdown: DPO, PPO and generation on a GPU, from `bench/gpu_speed.py`'s results."
    r, missing = saved(path, 'gpu_speed.json', 'bench/gpu_speed.py on a machine with a CUDA GPU')
    if missing: return missing
    d = r['dpo']; base = d[0]
    out = ['| DPO variant | s / step | pairs / s | whole run s | peak GPU MiB | per step | whole run |',
           '|---|---|---|---|---|---|---|']
    out += [f"| {x['variant']} | {x['s_per_step']:.3f} | {x['pairs_per_s']:.1f} | {x['total_s']:.1f} "
            f"| {x['peak_gpu_mb']:,} | {base['s_per_step'] / x['s_per_step']:.2f}× "
            f"| {base['total_s'] / x['total_s']:.2f}× |" for x in d]
    p = r['ppo']
    out += ['', '| PPO (rlnb) | responses × tokens | generate s | prepare s | update s | s / step | peak GPU MiB |',
            '|---|---|---|---|---|---|---|',
            f"| `small_gpu` shape, bf16 {'on' if p['bf16'] else 'off'} | {p['batch']} × {p['max_new_tokens']} "
            f"| {p['generate']:.2f} | {p['prepare']:.2f} | {p['update']:.2f} | {p['s_per_step']:.2f} "
            f"| {p['peak_gpu_mb']:,} |"]
    out += ['', '| HF `generate`, bf16 | prefill s | decode tokens / s |', '|---|---|---|']
    out += [f"| batch {g['batch']} | {g['prefill_s']:.3f} | {g['decode_tok_s']:,.1f} |" for g in r['generate']]
    return '\n'.join(out) + f"\n\n{r['gpu']}, torch {r['torch']}; {r['weights']}. {r['cpu']}"

def eval_gen_speed_table(paths=None) -> str:
    ("Markdown: seconds per lever of `bench/eval_gen_speed.py`, one column pair (seconds, speed-up over `before`) per "
     "saved run (default: every `eval_gen_speed*.json`), headed by the CPU kind it ran on; a lever a run did not have "
     "shows –. Answers are checked identical to the first row that draws tokens the same way; a row that draws "
     "differently gives another sample of the same distribution, so its answers' mean length (words) is shown beside "
     "the time. Each run's CPU and caps below.")
    paths = [Path(p) for p in paths] if paths else sorted(bench_results().glob('eval_gen_speed*.json'))
    runs = [json.loads(p.read_text()) for p in paths if p.exists()]
    if not runs: return f"no saved result in {bench_results()}: run bench/eval_gen_speed.py"
    levers = list(dict.fromkeys(x['lever'] for r in runs for x in r['rows']))   # in order, every run's
    by = [{x['lever']: x for x in r['rows']} for r in runs]
    out = ['| lever | ' + ' | '.join(f"s ({cpu_kind(r)}) | speed-up" for r in runs)
           + ' | answers identical to their draw\'s first row | mean words | max \\|ΔKL\\| nats |',
           '|---|' + '---|---|' * len(runs) + '---|---|---|']
    for lv in levers:
        have = [(r, b[lv]) for r, b in zip(runs, by) if lv in b]
        cells = ' | '.join(f"{b[lv]['seconds']:.1f} | {b[lv]['speedup']:.2f}×" if lv in b else '– | –' for b in by)
        same = all(x['identical_answers'] == r['prompts'] for r, x in have)
        words = ' / '.join(f"{x['mean_words']:.1f}" for _, x in have if 'mean_words' in x) or '–'
        out.append(f"| {lv} | {cells} | {'yes' if same else 'no'} | {words} | {max(x['max_kl_diff'] for _, x in have):.1e} |")
    foot = '\n\n'.join(f"{cpu_kind(r)}: {r['prompts']} prompts, {r['new_tokens']} new tokens, batch {r['batch']}, "
                       f"{r['threads']} threads, {r['date']}. {r['cpu']}{isa_caps_note(r.get('isa_caps'))}" for r in runs)
    return '\n'.join(out) + '\n\n' + foot

def eval_memory_table(path=None) -> str:
    "Markdown: seconds and peak RSS of each variant of `bench/eval_memory.py`, with the plan `decode_plan` made."
    r = json.loads(Path(path or bench_results()/'eval_memory.json').read_text())
    base = r['rows'][0]
    out = [f"{r['prompts']} answers of 128 new tokens with their exact KL, on {r['cpu'].removeprefix('CPU: ')}, "
           f"{r['date'][:10]}; same answers in every row, KL within {r['kl_max_abs_diff']:.1e} nats.", '',
           '| variant | rows per pass | log-probs kept | seconds | time vs first row | peak RSS MiB | memory vs first row |',
           '|---|---|---|---|---|---|---|']
    for x in r['rows']:
        p = x['plan']
        out.append(f"| {x['variant']} | {p['batch_size']} x {p['batches_at_once']} | {'yes' if p['keep_logprobs'] else 'no'} "
                   f"| {x['seconds']:.1f} | {x['seconds'] / base['seconds']:.2f}× | {x['peak_rss_mb']:,} "
                   f"| {x['peak_rss_mb'] / base['peak_rss_mb']:.2f}× |")
    return '\n'.join(out)

def judge_ensemble_table(path=None, smollm2=None) -> str:
    ("Markdown: held-out human-pair accuracy of each judge of `bench/judge_ensemble.py` and of their ensemble, against "
     "the best one-line heuristic, the decision, and the SmolLM2 backbone's saved result beside them.")
    r = json.loads(Path(path or bench_results()/'judge_ensemble.json').read_text())
    ci = lambda c, s='': f"[{c[0]:{s}.3f}, {c[1]:{s}.3f}]"
    out = [f"{r['pairs']:,} held-out human pairs on {r['topics']} topics of `{Path(r['run']).parent.name}/{Path(r['run']).name}`, "
           f"on {r['cpu'].removeprefix('CPU: ')}, {r['date'][:10]}.", '',
           '| judge | accuracy (95 % CI, topics resampled) | vs best heuristic (95 % CI) | beats it |', '|---|---|---|---|']
    for x in r['rows']:
        h = x['vs_heuristic']
        out.append(f"| {x['judge']} | {x['accuracy']:.3f} {ci(x['ci'])} | {h['diff']:+.3f} {ci(h['ci'], '+')} "
                   f"('{h['heuristic']}' {h['heuristic_accuracy']:.3f}) | {'yes' if h['beats'] else 'no'} |")
    sm = Path(smollm2 or bench_results()/'judge_smollm2.json')
    if sm.exists():
        s = json.loads(sm.read_text())
        out.append(f"| SmolLM2-135M + score head ({s['train_examples']} pairs in {s['train_seconds']:.0f} s, "
                   f"`judge_smollm2.json`) | {s['accuracy']:.3f} | {s['accuracy'] - s['best_baseline'][1]:+.3f} "
                   f"('{s['best_baseline'][0]}' {s['best_baseline'][1]:.3f}) | – |")
    e = r['ensemble_minus_judge']
    out += ['', f"Ensemble minus the run's judge: {e['diff']:+.4f} {ci(e['ci'], '+')}: "
            + ("the ensemble is better, and replaces the judge." if r['adopt_ensemble'] else
               "not significantly better, so the evaluation keeps the single judge (an ensemble would triple the "
               "judge stage's time for no measured gain).")]
    return '\n'.join(out)

def serve_speed_table(path=None) -> str:
    "Markdown: prefill time and decode tokens/s per engine and batch size, from `bench/serve_speed.py`'s results."
    r, missing = saved(path, 'serve_speed.json', 'bench/serve_speed.py')
    if missing: return missing
    by = {}
    for x in r['rows']: by.setdefault(x['engine'], {})[x['batch']] = x
    out = ['| engine | file MiB | prefill s (batch 1) | decode tok/s, batch 1 | vs HF fp32 | prefill s (batch '
           f"{r['batch']}) | decode tok/s, batch {r['batch']} | vs HF fp32 |", '|---|---|---|---|---|---|---|---|']
    for e, b in by.items():
        one, many = b[1], b[r['batch']]
        out.append(f"| {e} | {one['size_mb'] or '—'} | {one['prefill_s']:.3f} | {one['decode_tok_s']:,.1f} "
                   f"| {one['vs_hf_fp32']:.2f}× | {many['prefill_s']:.3f} | {many['decode_tok_s']:,.1f} "
                   f"| {many['vs_hf_fp32']:.2f}× |")
    return '\n'.join(out) + (f"\n\n{r['prompt_tokens']}-token prompt, {r['new_tokens']} new tokens, median of "
                             f"{r['repeats']}. {r['cpu']}")

def api_speed_table(pattern:str|None=None) -> str:
    "Markdown: one row per saved `bench/api_speed.py` result (backend, workers): medians, with the range over the runs."
    import glob
    rng = lambda d: f"{d['median']:,.0f} ({d['min']:,.0f}–{d['max']:,.0f})"
    rows = [
        (
            '| backend | durability | workers | single POST, new connection (req/s) | single POST, keep-alive (req/s) '
            '| keep-alive p50 / p99 ms | batch (records/s) | runs | records lost |'
        ),
        '|---|---|---|---|---|---|---|---|---|',
    ]
    cost = []
    for f in sorted(glob.glob(pattern or str(bench_results()/'api_speed_*.json'))):
        r = json.load(open(f))
        if 'keep_alive_requests_per_s' not in r: continue
        if c := r.get('full_over_normal'):        # measured in turn with a NORMAL server, in every run
            cost.append(f"SQLite `synchronous=FULL` (the default) over `NORMAL`, {r['workers']} worker(s), median of the "
                        f"{r['repeats']} runs' ratios: "
                        f"{c['keep_alive']:.2f}× the single-POST rate (keep-alive), {c['new_connection']:.2f}× (new "
                        f"connections), {c['batch']:.2f}× the batch rate.")
        rows.append(f"| {r['backend']} | {r.get('durability', '')} | {r['workers']} | "
                    f"{rng(r['new_connection_requests_per_s'])} | {rng(r['keep_alive_requests_per_s'])} | "
                    f"{r['keep_alive_p50_ms']['median']} / {r['keep_alive_p99_ms']['median']} | "
                    f"{rng(r['batch_records_per_s'])} | {r['repeats']} | {r['runs_with_wrong_counts']} |")
    if len(rows) == 2: return 'no saved results: run bench/api_speed.py'
    return '\n'.join(rows) + ''.join(f'\n\n{c}' for c in cost) + f"\n\n{r['cpu']}"

def verdict_rows(summaries:dict, judge:str='judge') -> list[dict]:
    ("One row per method and one per control from saved replicate summaries (`{label: replicate_summary}`, e.g. "
     "bench/results/replicates_*.json): the mean win rate over runs, its replicate interval (at the summary's `conf`), each "
     "run's figure, how many runs gave a valid verdict, `confirmed` (`confirmed`; a lower bound above ½ without the rest "
     "is labelled 'not confirmed'). A control row per summary: the "
     "base against itself.")
    rows = []
    for label, s in summaries.items():
        for name, js in s['policies'].items():
            if (r := js.get(judge)) and (v := r.get('in_distribution')):
                ok = confirmed(s, name, judge)[0]
                why = '' if ok or v['ci'][0] <= 0.5 else ': not confirmed'   # `confirmed` says why
                rows.append({'label': f"{name} ({label}){why}", 'rate': v['rate'], 'ci': v['ci'], 'runs': v['runs'],
                             'valid': f"{r['valid_runs']} of {len(s['runs'])}", 'conf': s.get('conf', 0.95), 'control': False,
                             'confirmed': ok})
        if c := s['control'].get(judge):
            rows.append({'label': f"base vs base ({label})", 'rate': c['rate'], 'ci': c['ci'], 'runs': c['runs'],
                         'valid': 'must hold ½', 'conf': s.get('conf', 0.95), 'control': True})
    return rows

def plot_verdicts(rows:list[dict], title:str='', path=None, metadata:dict|None=None):
    ("Each row of `verdict_rows` as its mean win rate over the base with the replicate interval (error bar) and each "
     "run's figure (dots); green only where `confirmed`, controls in grey; the dashed line is a tie. `path`: also saved there as PNG, with `metadata` "
     "(e.g. a hash of the saved files it was drawn from) in its text chunks.")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(9.5, 0.55 * len(rows) + 1.4))
    for i, r in enumerate(rows[::-1]):
        col = 'gray' if r['control'] else ('C2' if r.get('confirmed') else 'C0')   # green: confirmed, nothing less
        ci_errorbar(ax, [i], [r['rate']], [r['ci']], horizontal=True, fmt='o', capsize=4, color=col)
        ax.plot(r['runs'], [i] * len(r['runs']), '|', color=col, ms=10, alpha=0.6)
        lvl = '' if r['conf'] == 0.95 else f" ({100 * r['conf']:g} % CI)"
        ax.annotate(f"{r['rate']:.3f} [{r['ci'][0]:.3f}, {r['ci'][1]:.3f}]{lvl}", (r['ci'][1], i), xytext=(6, -3),
                    textcoords='offset points', fontsize=7)
    ax.axvline(0.5, ls='--', c='gray')
    ax.set_yticks(range(len(rows)), [r['label'] for r in rows[::-1]], fontsize=8)
    hi = max([0.75] + [max([r['ci'][1], *r['runs']]) for r in rows]) + 0.12   # room for the interval's label
    ax.set(xlim=(0.35, hi), xlabel='win rate over the base, independent judge (bar: replicate CI; ticks: runs)')
    ax.set_title(title, fontsize=9); fig.tight_layout()
    if path: Path(path).parent.mkdir(parents=True, exist_ok=True); fig.savefig(path, dpi=100, metadata=metadata)
    return fig

def best_of_n_table(r:dict) -> str:
    ("Markdown: one row per n and judge of a `best_of_n_report` (or `bench/results/best_of_n.json`): win rate and "
     "length-controlled win rate with their intervals, the KL bound, seconds per served answer, answer length.")
    ci = lambda v, f='.3f': f"[{v[0]:{f}}, {v[1]:{f}}]"
    rows = ['| n | judge | win rate over the base (95 % CI) | length-controlled (95 % CI) | score Δ (95 % CI) | KL nats | '
            's per answer | tokens |', '|---|---|---|---|---|---|---|---|']
    for row in r['rows'].values():
        for jn, j in row['judges'].items():
            sd = f"{j['score_diff']:+.3f} {ci(j['score_diff_ci'], '+.3f')}" if 'score_diff' in j else '–'
            rows.append(f"| {row['n']} | {jn} | {j['win_rate']:.3f} {ci(j['win_rate_ci'])} | {j['lc_win_rate']:.3f} "
                        f"{ci(j['lc_win_rate_ci'])} | {sd} | {row['kl']:.2f} | {row['seconds_per_answer']:.2f} | "
                        f"{row['mean_tokens']:.1f} |")
    return '\n'.join(rows)

def method_rows(evaluation:dict|None,       # a run's saved evaluation (`bench/results/eval_demo.json`)
                best: dict | None = None,   # a best-of-n report of the same run (`bench/results/best_of_n.json`)
                methods: dict | None = None,  # more methods trained on the same run (`bench/results/methods.json`)
                ns: tuple = (1, 4, 8, 16),  # best-of-n rows to show (1: another plain draw of the base, an A/A row)
               ) -> list[dict]:
    ("One row per method, trained or not: `method`, `train_s` (stage seconds; best-of-n: 0), `kl` (mean nats), "
     "`s_per_answer` (best-of-n only), `judges` {name: win rate, LC win rate and their intervals, against the base's "
     "one evaluation answer per prompt, and the base-against-base control where the report has one} and `vs_draws` {name: win rate and interval against every draw of the base in "
     "best-of-n's pool, where `best` holds its `pool_agreement`}.")
    keys = ('win_rate', 'win_rate_ci', 'lc_win_rate', 'lc_win_rate_ci', 'control_win_rate', 'control_win_rate_ci')
    secs, ev, rows = (evaluation or {}).get('stage_seconds', {}), (evaluation or {}).get('evaluate', {}), []
    pa = (best or {}).get('pool_agreement', {})
    draws = lambda f, name: {j: {'win_rate': v[name]['win_rate'], 'ci': v[name]['ci']}
                             for j, a in pa.items() if (v := a.get(f, {})) and name in v}
    for n in ns:
        r = (best or {}).get('rows', {}).get(str(n))
        if r: rows.append({'method': f'best-of-{n}' if n > 1 else 'base again (A/A)', 'train_s': 0.0, 'kl': r['kl'],
                           's_per_answer': r['seconds_per_answer'],
                           'judges': {j: {k: v[k] for k in keys + ('sign_p',) if k in v} for j, v in r['judges'].items()},
                           'vs_draws': draws('vs_fresh_draws', str(n))})
    saved = (methods or {}).get('methods', {})   # a method measured there wins over the run's own evaluation of it
    trained = [(pol, secs.get(pol), ev.get(pol, {}).get('headline')) for pol in ('dpo', 'ppo') if pol not in saved]
    trained += [(n, r.get('train_s'), r.get('headline')) for n, r in saved.items()]
    for pol, train_s, h in trained:
        if h: rows.append({'method': METHOD_NAMES.get(pol, pol), 'train_s': train_s,
                           'kl': next(iter(h.values())).get('kl'), 's_per_answer': None,
                           'judges': {j: {k: v[k] for k in keys + ('sign_p', 'valid') if k in v} for j, v in h.items()},
                           'vs_draws': draws('policies_vs_draws', pol)})
    return rows

METHOD_NAMES = {'dpo': 'DPO', 'ppo': 'PPO', 'dpo_on_policy': 'DPO on-policy',
                 'dpo_on_policy_budget': 'DPO on-policy, one round', 'grpo': 'GRPO', 'rloo': 'RLOO',
                 'dpo_on_policy_lr3': 'DPO on-policy, 3x learning rate',
                 'dpo_on_policy_lr3_bf16': 'DPO on-policy, 3x learning rate, bf16 sampling'}

def methods_table(rows:list[dict], judges:tuple = ('judge', 'reward')) -> str:
    ("Markdown of `method_rows`: one line per method, per judge (the independent one first) the win rate and the "
     "length-controlled one against the base's evaluation answer, and, where measured, against every draw of the base; "
     "last, the first judge's sign-test p adjusted by Holm over every method compared with the base (the A/A row, the "
     "control, is not a method).")
    ci = lambda v: f"[{v[0]:.3f}, {v[1]:.3f}]"
    dr = any(r.get('vs_draws') for r in rows)
    head = ' | '.join(f"{j}: win rate (95 % CI) | {j}: length-controlled" + (f" | {j}: vs the base's draws" if dr else '')
                      for j in judges)
    ctl = any('control_win_rate' in r['judges'].get(judges[0], {}) for r in rows)   # each row's own base-vs-base arm
    sp = any(r.get('s_per_answer') is not None for r in rows)                      # best-of-n rows pay per answer
    out = [f"| method | training s | KL nats | {head} | " + (f"control: base vs base ({judges[0]}) | " if ctl else '')
           + ("s per answer | " if sp else '') + f"Holm p ({judges[0]}) |", '|---' * (4 + ctl + sp + (3 if dr else 2) * len(judges)) + '|']
    tested = [i for i, r in enumerate(rows) if judges[0] in r['judges'] and r['method'] != 'base again (A/A)']
    adj = dict(zip(tested, holm([rows[i]['judges'][judges[0]].get('sign_p', 1.0) for i in tested])))   # no p: counted as 1
    for i, r in enumerate(rows):
        cells = []
        for j in judges:
            v = r['judges'].get(j)
            cells += [f"{v['win_rate']:.3f} {ci(v['win_rate_ci'])}", f"{v['lc_win_rate']:.3f} {ci(v['lc_win_rate_ci'])}"] if v else ['–', '–']
            if dr: cells.append(f"{d['win_rate']:.3f} {ci(d['ci'])}" if (d := r.get('vs_draws', {}).get(j)) else '–')
        kl = f"{r['kl']:.2f}" if r.get('kl') is not None else '–'
        ts = f"{r['train_s']:.0f}" if r.get('train_s') is not None else '–'
        spa = f"{r['s_per_answer']:.2f}" if r.get('s_per_answer') is not None else '–'
        hp = (f"{adj[i]:.3f}" + (', no verdict' if r['judges'][judges[0]].get('valid') is False else '')
              if i in adj and 'sign_p' in r['judges'][judges[0]] else '–')
        if ctl: cells.append(f"{v['control_win_rate']:.3f} {ci(v['control_win_rate_ci'])}"
                             if (v := r['judges'].get(judges[0], {})).get('control_win_rate') is not None else '–')
        if sp: cells.append(spa)
        out.append(f"| {r['method']} | {ts} | {kl} | " + ' | '.join(cells) + f" | {hp} |")
    return '\n'.join(out)

def plot_methods(rows:list[dict], judges:tuple = ('judge', 'reward'), path=None, title:str|None=None):
    ("Win rate over the base with its 95 % interval, per method and judge; the dashed line is a tie with the base. "
     "Where rows hold `vs_draws`, a second panel: against every draw of the base instead of its one evaluation answer.")
    import matplotlib.pyplot as plt
    panels = [('judges', 'win_rate', 'win_rate_ci', "against the base's evaluation answer")]
    if any(r.get('vs_draws') for r in rows): panels.append(('vs_draws', 'win_rate', 'ci', "against every draw of the base"))
    fig, axs = plt.subplots(1, len(panels), figsize=((1.2 + 1.1 * len(rows)) * len(panels), 3.8), squeeze=False)
    for ax, (f, w, c, sub) in zip(axs[0], panels):
        for k, j in enumerate(judges):
            pts = [(i, r[f][j]) for i, r in enumerate(rows) if j in r.get(f, {})]
            if not pts: continue
            ci_errorbar(ax, [i + 0.15 * (k - (len(judges) - 1) / 2) for i, _ in pts], [v[w] for _, v in pts],
                        [v[c] for _, v in pts], fmt='o', capsize=3, label=j)
        ax.axhline(0.5, ls='--', c='gray')
        ax.set_xticks(range(len(rows)), [r['method'] for r in rows], fontsize=8, rotation=20)
        ax.set(ylim=(0.2, 1.0), ylabel='win rate over the base', title=sub)
        ax.legend(fontsize=8)
    fig.suptitle(title or 'win rate over the base, 95 % CI', fontsize=10); fig.tight_layout()
    if path: Path(path).parent.mkdir(parents=True, exist_ok=True); fig.savefig(path, dpi=100)
    return fig

def saved_method_rows(results=None) -> list[dict]:
    ("`method_rows` of the saved results in `results` (default `bench/results/`). When every row of methods.json says "
     "which topics it was judged on (`part`), the table is those rows alone: one run, one prompt set, each row with its "
     "own control. Else the older files beside it (eval_demo.json, best_of_n.json) join in, as they were measured.")
    d = Path(results) if results else bench_results()
    read = lambda n: json.loads((d/n).read_text()) if (d/n).exists() else None
    meth = read('methods.json')
    if meth and meth.get('methods') and all(r.get('part') for r in meth['methods'].values()): return method_rows(None, None, meth)
    return method_rows(read('eval_demo.json'), read('best_of_n.json'), meth)

def plot_saved_methods(path=None, results=None):
    ("`plot_methods` of `saved_method_rows(results)`: the figure the README shows, written to `path` "
     "(`bench/best_of_n.py --save` and `bench/methods.py --save` redraw nbs/images/methods.png).")
    return plot_methods(saved_method_rows(results), path=path, title='win rate over SmolLM2 on held-out chitchat prompts (sampled), 95 % CI')
