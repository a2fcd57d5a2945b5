"""Feedback ingestion speed of `rlnb_serve_api` on loopback: single-record POSTs (every record committed before its 201)
from client threads, and the batch endpoint; SQLite (default) or PostgreSQL (`--db postgresql://...`).

    .venv/bin/python bench/api_speed.py                         # SQLite in a temporary folder, 5 runs
    eval "$(tools/pg.sh start)"; .venv/bin/python bench/api_speed.py --db "$DATABASE_URL"; tools/pg.sh stop
    .venv/bin/python bench/api_speed.py --smoke                 # SQLite, 1 run of a few requests; writes a temp folder

Clients and server share the machine's cores, so each run is noisy: the script runs `--repeats` times and reports every
run, the median and the range. Two client styles are measured side by side in each run: a new TCP connection per request
(`urllib`, the worst case) and one kept-alive connection per client thread (what HTTP client libraries and connection
pools do). `--workers 2` serves with two uvicorn worker processes. On SQLite, each `--sync` level (default FULL, what the
service runs, and NORMAL) gets its own server and store, measured in turn within every run, so `full_over_normal`
(the median of the per-run ratios) is the cost of durability on this machine's disk.
Goals (issue: registry and HTTP API): >= 500 requests/s single-record, >= 10,000 records/s through the batch endpoint.
Writes bench/results/api_speed_<backend>.json."""
import secrets, argparse, http.client, json, os, socket, statistics, subprocess, sys, tempfile, threading, time, urllib.request
from pathlib import Path

# the server is locked without a token: the benchmark starts it with one of its own and sends it
TOKEN = secrets.token_urlsafe(24)
NO_LIMITS = {'RLNB_API_RATE': '0', 'RLNB_API_CONCURRENCY': '0'}   # the server's capacity, not one token's limits
HEADERS = {'Content-Type': 'application/json', 'Authorization': f'Bearer {TOKEN}'}

def post_new(port, path, body):
    "One request on a new connection."
    req = urllib.request.Request(f'http://127.0.0.1:{port}{path}', json.dumps(body).encode(),
                                 HEADERS)
    with urllib.request.urlopen(req, timeout=60) as r: return r.status, json.loads(r.read())

class KeepAlive:
    "One persistent HTTP/1.1 connection (reopened if the server closes it)."
    def __init__(self, port): self.port, self.c = port, http.client.HTTPConnection('127.0.0.1', port, timeout=60)
    def post(self, path, body):
        for attempt in (0, 1):
            try:
                self.c.request('POST', path, json.dumps(body), HEADERS)
                r = self.c.getresponse(); return r.status, json.loads(r.read())
            except (http.client.HTTPException, ConnectionError):
                if attempt: raise
                self.c.close(); self.c = http.client.HTTPConnection('127.0.0.1', self.port, timeout=60)

def single_burst(port, agent, threads, per_thread, keepalive) -> dict:
    "`threads` clients each POST `per_thread` records; requests/s, latency percentiles, errors."
    lat, errors = [], []
    def client(t):
        ka = KeepAlive(port) if keepalive else None
        for i in range(per_thread):
            body = {'prompt': f'thread {t} q {i}', 'response': 'an answer', 'score': 0.5}
            t0 = time.perf_counter()
            try:
                c, _ = ka.post(f'/api/policies/feedback/{agent}', body) if ka else \
                    post_new(port, f'/api/policies/feedback/{agent}', body)
                assert c == 201, c
            except Exception as e: errors.append(repr(e))
            lat.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    ths = [threading.Thread(target=client, args=(t,)) for t in range(threads)]
    for t in ths: t.start()
    for t in ths: t.join()
    wall = time.perf_counter() - t0
    lat.sort(); n = len(lat)
    return {'requests': n, 'seconds': round(wall, 2), 'requests_per_s': round(n / wall, 1),
            'p50_ms': round(lat[n // 2] * 1e3, 2), 'p99_ms': round(lat[int(n * 0.99)] * 1e3, 2), 'errors': len(errors)}

def batch_run(port, agent, batches, size) -> dict:
    "`batches` sequential batch POSTs of `size` records on one kept-alive connection; records/s."
    ka, bt = KeepAlive(port), []
    for b in range(batches):
        rows = [{'prompt': f'batch {b} q {i}', 'response': 'an answer', 'rating': 1 + i % 5} for i in range(size)]
        t0 = time.perf_counter(); c, r = ka.post(f'/api/policies/feedback/{agent}/batch', rows)
        bt.append(time.perf_counter() - t0)
        assert c == 201 and r['added'] == size, r
    return {'batches': batches, 'batch_size': size, 'records_per_s': round(batches * size / sum(bt), 1),
            'p50_batch_s': round(sorted(bt)[len(bt) // 2], 3)}

def durability(st) -> str:
    "What a commit survives: PostgreSQL's fsync/synchronous_commit, SQLite's journal mode and synchronous level."
    import sqlalchemy as sa
    with st.engine.connect() as c:
        if st.engine.dialect.name == 'postgresql':
            return f"fsync={c.execute(sa.text('SHOW fsync')).scalar()}, " \
                   f"synchronous_commit={c.execute(sa.text('SHOW synchronous_commit')).scalar()}"
        sync = {0: 'OFF', 1: 'NORMAL', 2: 'FULL', 3: 'EXTRA'}[c.execute(sa.text('PRAGMA synchronous')).scalar()]
        return f"journal_mode={c.execute(sa.text('PRAGMA journal_mode')).scalar()}, synchronous={sync}"

def summary(xs:list) -> dict:
    return {'median': round(statistics.median(xs), 1), 'min': round(min(xs), 1), 'max': round(max(xs), 1),
            'runs': [round(x, 1) for x in xs]}

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--db'); ap.add_argument('--threads', type=int, default=8)
    ap.add_argument('--per-thread', type=int, default=250); ap.add_argument('--batches', type=int, default=6)
    ap.add_argument('--batch-size', type=int, default=5000); ap.add_argument('--repeats', type=int, default=5)
    ap.add_argument('--workers', type=int, default=1)
    ap.add_argument('--sync', default='FULL,NORMAL',
                    help="SQLite's synchronous levels measured side by side, in turn within every run (FULL is the default)")
    ap.add_argument('--smoke', action='store_true', help='SQLite, one run of a few requests; results to a temp folder')
    a = ap.parse_args()
    if a.smoke:
        if a.db: ap.error('--smoke runs on SQLite only')
        from _smoke import smoke_home
        results = smoke_home()/'results'
        a.threads, a.per_thread, a.batches, a.batch_size, a.repeats = 2, 5, 2, 50, 1
    else: results = Path(__file__).parent/'results'
    from rlnb.hardware import cpu_line
    from rlnb.feedback_store import FeedbackStore
    backend = 'postgresql' if (a.db or '').startswith('postgres') else 'sqlite'
    levels = [x.strip().upper() for x in a.sync.split(',')] if backend == 'sqlite' else ['server']
    from rlnb.sql import SYNC_LEVELS
    if bad := [lv for lv in levels if backend == 'sqlite' and lv not in SYNC_LEVELS]:
        ap.error(f"--sync: {bad} not among SQLite's levels {list(SYNC_LEVELS)}")
    tmp = Path(tempfile.mkdtemp())
    servers = {}                     # one server and store per SQLite synchronous level, measured in turn in every run
    try:
        for lv in levels:
            db = a.db or str(tmp/f'bench_{lv.lower()}.db')
            env = {**os.environ, 'RLNB_API_TOKEN': TOKEN, **NO_LIMITS}
            if backend == 'sqlite': env['RLNB_SQLITE_SYNCHRONOUS'] = lv
            else:
                st = FeedbackStore(db)
                for r in range(a.repeats): [st.delete(agent=f'{k}{r}') for k in ('benchn', 'benchk', 'benchb')]
            with socket.socket() as s: s.bind(('127.0.0.1', 0)); port = s.getsockname()[1]
            argv = ['--port', str(port), '--db', db, '--workers', str(a.workers)]
            srv = subprocess.Popen([sys.executable, '-c', f'from rlnb.api import serve_api_cli; serve_api_cli({argv!r})'],
                                   env=env)
            servers[lv] = dict(srv=srv, port=port, db=db, env=env, runs=[])
        for lv, sv in servers.items():
            for _ in range(300):
                try: urllib.request.urlopen(f"http://127.0.0.1:{sv['port']}/docs", timeout=1); break
                except OSError: time.sleep(0.1)
            post_new(sv['port'], '/api/policies/feedback/warm', {'prompt': 'p', 'response': 'r', 'label': True})
        for r in range(a.repeats):
            for lv, sv in servers.items():
                port = sv['port']
                new = single_burst(port, f'benchn{r}', a.threads, a.per_thread, keepalive=False)
                ka = single_burst(port, f'benchk{r}', a.threads, a.per_thread, keepalive=True)
                batch = batch_run(port, f'benchb{r}', a.batches, a.batch_size)
                sv['runs'].append({'new_connection': new, 'keep_alive': ka, 'batch': batch})
                print(f"run {r} [{lv}]: new connection {new['requests_per_s']} req/s (p50 {new['p50_ms']} ms, p99 "
                      f"{new['p99_ms']} ms), keep-alive {ka['requests_per_s']} req/s (p50 {ka['p50_ms']} ms, p99 "
                      f"{ka['p99_ms']} ms), batch {batch['records_per_s']} records/s", flush=True)
    finally:
        for sv in servers.values(): sv['srv'].terminate(); sv['srv'].wait(20)
    out, results_all = None, {}
    for lv, sv in servers.items():
        old = os.environ.get('RLNB_SQLITE_SYNCHRONOUS')
        if backend == 'sqlite': os.environ['RLNB_SQLITE_SYNCHRONOUS'] = lv     # this process reads with the server's level
        st = FeedbackStore(sv['db'])
        for r, x in enumerate(sv['runs']): x['stored'] = {k: st.count(agent=f'{k}{r}') for k in ('benchn', 'benchk', 'benchb')}
        dur = durability(st); st.engine.dispose()
        if old is None: os.environ.pop('RLNB_SQLITE_SYNCHRONOUS', None)
        else: os.environ['RLNB_SQLITE_SYNCHRONOUS'] = old
        runs, n_single = sv['runs'], a.threads * a.per_thread
        lost = sum(x['stored'][k] != n for x in runs for k, n in (('benchn', n_single), ('benchk', n_single),
                                                                  ('benchb', a.batches * a.batch_size)))
        results_all[lv] = {'cpu': cpu_line(), 'backend': backend,
               'token_limits': 'off (RLNB_API_RATE=0, RLNB_API_CONCURRENCY=0)', 'durability': dur,
               'side_by_side': levels, 'workers': a.workers, 'threads': a.threads,
               'per_thread': a.per_thread, 'batch_size': a.batch_size, 'batches': a.batches, 'repeats': a.repeats,
               'runs_with_wrong_counts': lost,
               'errors': sum(x[k]['errors'] for x in runs for k in ('new_connection', 'keep_alive')),
               'new_connection_requests_per_s': summary([x['new_connection']['requests_per_s'] for x in runs]),
               'keep_alive_requests_per_s': summary([x['keep_alive']['requests_per_s'] for x in runs]),
               'keep_alive_p50_ms': summary([x['keep_alive']['p50_ms'] for x in runs]),
               'keep_alive_p99_ms': summary([x['keep_alive']['p99_ms'] for x in runs]),
               'batch_records_per_s': summary([x['batch']['records_per_s'] for x in runs]), 'runs': runs}
    if 'FULL' in results_all and 'NORMAL' in results_all:     # the cost of durability, from runs taken in turn
        f, n = results_all['FULL'], results_all['NORMAL']
        rate = lambda run, k: run[k]['records_per_s' if k == 'batch' else 'requests_per_s']
        ratio = lambda k: round(statistics.median(rate(x, k) / rate(y, k) for x, y in zip(f['runs'], n['runs'])), 3)
        f['full_over_normal'] = {k: ratio(k) for k in ('new_connection', 'keep_alive', 'batch')}
    suffix = '' if a.workers == 1 else f'_w{a.workers}'
    for lv, res in results_all.items():
        tag = '' if lv in ('FULL', 'server') else f'_{lv.lower()}'
        out = results/f'api_speed_{backend}{suffix}{tag}.json'; out.parent.mkdir(exist_ok=True)
        out.write_text(json.dumps(res, indent=1))
        print(lv, json.dumps({k: v for k, v in res.items() if k != 'runs'}, indent=1))
    if a.smoke:
        from report import api_speed_table
        print(api_speed_table(str(results/'api_speed_*.json')))
        for res in results_all.values(): assert res['runs_with_wrong_counts'] == 0 and res['errors'] == 0, res

if __name__ == '__main__': main()
