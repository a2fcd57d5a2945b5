"""The closed loop on SmolLM2, watched: simulated users with a hidden preference (short answers, see rlnb.simulated_users.HiddenPreference)
chat with the deployed policy over HTTP (`/v1/chat/completions` of `rlnb.api`), rate every answer and POST the rating back
(`/api/policies/feedback/{agent}`); the OnlineLearner retrains on its own when the buffer is full (`should_retrain`), judges each
candidate against the deployed policy on held-out prompts and deploys only when the gate passes. Then a deliberately bad candidate
(the same buffer with flipped ratings) must be rejected, and a rollback must be served.

    .venv/bin/python bench/online_loop.py [--rounds 3 --prompts 80 --answers 2]
    .venv/bin/python bench/online_loop.py --smoke     # the tiny policy, 1 round of 8 prompts x 2 answers of 24 tokens,
                                                      # 2 training steps, a gate that always passes; the JSON and the
                                                      # figure go to a temp folder
Writes bench/results/online_loop.json and nbs/images/online_loop.png (embedded in nbs/09_online.ipynb)."""
import secrets, argparse, json, os, random, socket, statistics, sys, tempfile, threading, time, urllib.request
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT/'bench'/'results'/'online_loop.json'
FIGURE = ROOT/'nbs'/'images'/'online_loop.png'

TOKEN = secrets.token_urlsafe(24)   # the service is locked without one: this run's own

def post(url, body):
    req = urllib.request.Request(url, json.dumps(body).encode(), {'Content-Type': 'application/json',
                                                                   'Authorization': f'Bearer {TOKEN}'})
    with urllib.request.urlopen(req, timeout=300) as r: return json.loads(r.read())

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--rounds', type=int, default=3); ap.add_argument('--prompts', type=int, default=100)
    ap.add_argument('--answers', type=int, default=2); ap.add_argument('--max-tokens', type=int, default=40)
    ap.add_argument('--base', default='smollm2'); ap.add_argument('--lr', type=float, default=5e-4); ap.add_argument('--epochs', type=float, default=3); ap.add_argument('--home', default=None)
    ap.add_argument('--smoke', action='store_true', help='the tiny policy, one short round; results to a temp folder')
    a = ap.parse_args()
    global OUT, FIGURE
    smoke_cfg = {}
    if a.smoke:
        if a.home: ap.error('--smoke makes its own home')
        from _smoke import smoke_home
        a.home = str(smoke_home()); OUT, FIGURE = Path(a.home)/'results'/OUT.name, Path(a.home)/'results'/FIGURE.name
        a.rounds, a.prompts, a.answers, a.max_tokens, a.base, a.epochs = 1, 8, 2, 24, 'tiny', 1
        # the gate always passes (non-inferiority with a margin of 0.99): candidates are deployed, so the rollback has
        # a version to go back to
        smoke_cfg = dict(max_steps=2, eval_prompts=8, min_eval_prompts=1, gate='non_inferiority', margin=0.99)
    from rlnb.core import cache_dir
    from rlnb.hardware import cpu_line
    cache = cache_dir()
    home = Path(a.home or tempfile.mkdtemp(prefix='rlnb-online-'))
    os.environ['RLNB_HOME'] = str(home); (home/'models').mkdir(parents=True, exist_ok=True)
    if not (home/'models'/'.cache').exists(): (home/'models'/'.cache').symlink_to(cache)
    import uvicorn
    from rlnb.api import create_app
    from rlnb.stats import bootstrap_ci
    from rlnb.prompts import heldout_prompts
    from rlnb.online import OnlineConfig, OnlineLearner
    from rlnb.simulated_users import HiddenPreference, word_count
    from rlnb.feedback import Feedback
    db = str(home/'feedback.db')
    app = create_app(db, token=TOKEN)
    st = app.state.rlnb
    with socket.socket() as s: s.bind(('127.0.0.1', 0)); port = s.getsockname()[1]
    srv = uvicorn.Server(uvicorn.Config(app, host='127.0.0.1', port=port, log_level='warning'))
    threading.Thread(target=srv.run, daemon=True).start()
    url = f'http://127.0.0.1:{port}'
    while not srv.started: time.sleep(0.1)
    users = HiddenPreference(max_words=15, noise=0.1, seed=0)
    cfg = OnlineConfig(min_samples_to_retrain=a.prompts * a.answers - 10, base=a.base, auto_deploy=True, auto_export=True,
                       learning_rate=a.lr, epochs=a.epochs, heldout_share=0.3, eval_prompts=60, min_eval_prompts=16, max_new_tokens=a.max_tokens)
    if smoke_cfg: cfg = replace(cfg, **smoke_cfg)
    L = OnlineLearner('chitchat', st.store, st.registry, cfg, judge=users, on_deploy=st.server)
    t0 = time.perf_counter()
    L.ensure_baseline()
    pool = heldout_prompts(None, n=400, seed=1)
    rng = random.Random(0)
    rounds, events = [], []
    def traffic(r, n_prompts):
        "Users ask, the served policy answers over HTTP, users rate over HTTP; returns the utilities by model version."
        util, t = {}, time.perf_counter()
        for i, q in enumerate(rng.sample(pool, n_prompts)):
            user = f'user{rng.randrange(10_000)}'
            for k in range(a.answers):
                out = post(f'{url}/v1/chat/completions', {'model': 'chitchat', 'messages': [{'role': 'user', 'content': q}],
                                                         'max_tokens': a.max_tokens, 'temperature': 0.8, 'user': user})
                ans, ver = out['choices'][0]['message']['content'].strip(), out['model_version']
                post(f'{url}/api/policies/feedback/chitchat', {'prompt': q, 'response': ans or '(empty)', 'rating': users.rating(ans),
                                                               'model_version': ver, 'rater': user, 'tags': ['simulated']})
                util.setdefault(ver, []).append(users.utility(ans))
        return util, time.perf_counter() - t
    def dump(done=False):
        "Write what happened so far (after every round, so a cut-short run still leaves its figures)."
        versions = [{'name': v.name, 'kind': v.kind, 'parent': v.parent_version, 'status': v.status, 'reason': v.status_reason,
                     'metrics': {k: v.metrics.get(k) for k in ('train_s', 'eval_s', 'export_s', 'win_rate', 'gate_lower', 'steps')}}
                    for v in reversed(st.registry.list('chitchat'))]
        res = {'cpu': cpu_line(), 'args': vars(a), 'done': done,
               'config': {k: getattr(cfg, k) for k in ('min_samples_to_retrain', 'learning_rate', 'epochs', 'heldout_share', 'eval_prompts', 'gate', 'conf', 'max_new_tokens')},
               'hidden_preference': {'max_words': users.max_words, 'min_words': users.min_words}, 'traffic': rounds, 'events': events,
               'versions': versions, 'swaps': st.server.swaps,
               'history': [{k: e[k] for k in ('version', 'previous', 'action', 'reason')} for e in st.registry.history('chitchat')],
               'seconds': round(time.perf_counter() - t0, 1)}
        OUT.write_text(json.dumps(res, indent=1, default=str))
        from rlnb.simulated_users import plot_online
        if any('decision' in e for e in events): plot_online(res, FIGURE)
    for r in range(a.rounds + 1):
        util, secs = traffic(r, a.prompts)
        for ver, u in util.items():
            lo, hi = bootstrap_ci(u, seed=r)
            rounds.append({'round': r, 'version': ver, 'n': len(u), 'utility': round(statistics.fmean(u), 4), 'ci': [round(lo, 4), round(hi, 4)],
                           'satisfied': round(sum(x >= 1 for x in u) / len(u), 4), 'traffic_s': round(secs, 1)})
            print('traffic', json.dumps(rounds[-1]), flush=True)
        if r == a.rounds: break
        ok, why = L.should_retrain(why=True)
        print(f'round {r}: should_retrain {ok} ({why})', flush=True)
        if ok:
            res = L.trigger_retrain()
            events.append({'round': r, 'kind': 'retrain', **{k: res[k] for k in ('name', 'parent', 'deployed', 'seconds', 'train_s', 'eval_s', 'rows')},
                           'decision': res['decision']})
            print('retrain', json.dumps(events[-1]), flush=True)
        dump()
    # a deliberately bad candidate: every rating of the used feedback flipped (6 - stars)
    used = [f for f in st.store.query(agent='chitchat') if f.rating is not None]
    flipped = [Feedback.from_dict({'agent': 'chitchat', 'prompt': f.prompt, 'response': f.response, 'rating': 6 - f.rating}) for f in used[-a.prompts * a.answers:]]
    res = L.trigger_retrain(records=flipped)
    events.append({'round': a.rounds, 'kind': 'flipped labels', **{k: res[k] for k in ('name', 'parent', 'deployed', 'seconds', 'train_s', 'eval_s', 'rows')},
                   'decision': res['decision']})
    print('bad candidate', json.dumps(events[-1]), flush=True)
    dep = st.registry.deployed('chitchat')
    first = L.rollback(reason='demo: roll back to the previously deployed version').name
    served = post(f'{url}/v1/chat/completions', {'model': 'chitchat', 'messages': [{'role': 'user', 'content': 'Hi there!'}], 'max_tokens': 16})['model_version']
    events.append({'kind': 'rollback', 'from': dep.name, 'to': first, 'served_after': served})
    print('rollback', json.dumps(events[-1]), flush=True)
    dump(done=True)
    print('wrote', OUT, flush=True)
    srv.should_exit = True

if __name__ == '__main__': main()
