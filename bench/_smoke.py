"""What the benchmarks' `--smoke` mode shares (tools/bench_smoke.py runs every bench/*.py with `--smoke`).

A smoke run takes the benchmark's own code path end to end with the smallest budget (a tiny model or the real one for
a step or two, one repeat, a handful of rows), so a benchmark that no longer runs fails the suite. It never writes
bench/results/, models/ or data/: `smoke_home()` points RLNB_HOME at a fresh temporary folder (runs, stores, exports
land there) whose models/.cache is the real cache (converted models are reused), and results go to its `results/`.

    .venv/bin/python bench/_smoke.py --smoke      # checks these helpers
"""
import os, sys, tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

def real_cache() -> Path:
    "The models/.cache rlnb uses outside smoke mode (RLNB_HOME's, else the repository's)."
    return (Path(os.environ.get('RLNB_HOME') or ROOT).expanduser()/'models'/'.cache').resolve()

def smoke_home() -> Path:
    "Set RLNB_HOME to a new temporary folder (models/.cache linked to the real cache) and return it."
    cache = real_cache(); cache.mkdir(parents=True, exist_ok=True)
    home = Path(tempfile.mkdtemp(prefix='rlnb-smoke-'))
    (home/'models').mkdir(); (home/'models'/'.cache').symlink_to(cache, target_is_directory=True)
    (home/'results').mkdir()
    os.environ['RLNB_HOME'] = str(home)
    print(f"smoke: RLNB_HOME={home} (results in {home/'results'})", flush=True)
    return home

def toy_stages(home:Path, prompts:int=5, records:int=40, sft:bool=False) -> list[dict]:
    ("The first two stages of a toy recipe: `records` rated answers to `prompts` prompts written to `home`/fb.jsonl, "
     "imported into `home`/fb.db and formatted (with `sft`, the `sft` examples too).")
    import json
    lines = [dict(prompt=f'q{i % prompts}', response=f'answer {i}', rating=1 + (i // prompts) % 5) for i in range(records)]
    (home/'fb.jsonl').write_text('\n'.join(json.dumps(l) for l in lines))
    db = str(home/'fb.db')
    fmt = dict(stage='format', store=db, eval_frac=0.4)
    if sft: fmt['formats'] = ['pairs', 'kto', 'targets', 'sft']
    return [dict(stage='import_feedback', source=str(home/'fb.jsonl'), store=db), fmt]

def toy_run(home:Path, prompts:int=5, records:int=40, judges:bool=True, seed:int|None=0, sft:bool=False) -> Path:
    ("A toy run folder as the pipeline makes it under `home`: `records` rated answers to `prompts` prompts imported and "
     "formatted, and with `judges` a tiny reward model and a tiny judge. Returns the run folder.")
    from rlnb.pipeline import run_pipeline
    stages = toy_stages(home, prompts, records, sft)
    if judges: stages += [dict(stage='reward', preset='tiny', epochs=1), dict(stage='judge', preset='tiny', epochs=1, prompt_half=None)]
    return run_pipeline(dict(agent='toy', stages=stages, **({'seed': seed} if seed is not None else {})), root=home/'models').path

def save_result(res:dict, name:str, home:Path|None=None) -> Path:
    "Write a benchmark's result: `bench/results/<name>`, or the smoke home's `results/` in smoke mode (`home`)."
    import json
    dest = (home/'results' if home else ROOT/'bench'/'results')/name
    dest.write_text(json.dumps(res, indent=1) + '\n'); print('saved', dest)
    return dest

def cli(main, smoke:bool):
    ("`main(RUN or None, smoke=smoke)` from the command line: `script.py [RUN] [--smoke] [--save NAME]` (`--save`: "
     "the result's file name in bench/results, passed as `save=NAME`).")
    argv = sys.argv[1:]
    kw = {}
    if '--save' in argv:
        i = argv.index('--save')
        if i + 1 >= len(argv): sys.exit('--save needs a file name')
        kw['save'] = argv.pop(i + 1); argv.pop(i)
    args = [a for a in argv if not a.startswith('--')]
    return main(args[0] if args else None, smoke=smoke, **kw)

def skip(what:str):
    "Say that a part of the benchmark was not run here (tools/bench_smoke.py shows these lines)."
    print(f"SKIP: {what}", flush=True)

if __name__ == '__main__':
    assert sys.argv[1:] == ['--smoke'], 'usage: python bench/_smoke.py --smoke'
    before = os.environ.get('RLNB_HOME')
    home = smoke_home()
    assert (home/'models'/'.cache').resolve() == (Path(before or ROOT).expanduser()/'models'/'.cache').resolve()
    assert not home.resolve().is_relative_to(ROOT), home
    print('ok')
