"""The loop closes: a recipe's exported version deploys through the HTTP API and answers the official `openai` client.

    RLNB_HOME=RUN_HOME .venv/bin/python tools/serve_smoke.py --agent chitchat      # after make smoke's recipe run
    .venv/bin/python tools/serve_smoke.py --db fb.db --agent toy --version v1 --json out.json

A real `rlnb_serve_api` process is started on the recipe's store (a free loopback port, a fresh token), the newest
version of `--agent` (or `--version`) is deployed through `POST /api/policies/{agent}/deploy` (with `force` and a
reason when its gate did not pass: a smoke budget trains no better model), and the `openai` client asks it one
question greedily, plain and streamed (`stream=True`: server-sent chunks). Checked: the deploy answers 200 and names
the version; `/ready` is 200; both answers come from that version (`x-rlnb-model-version`) and hold at least one
token (a tiny test model may answer blank space); the streamed pieces join
to the plain answer; the stream ends with a finish reason; a parameter the server does not honour (`top_p`) is refused
by name (422). Exit 1 naming the first check that failed, with the server's log tail."""
import argparse, json, os, secrets, socket, subprocess, sys, tempfile, time, urllib.error, urllib.request
from pathlib import Path

def call(port:int, token:str, method:str, path:str, body=None, timeout:float=120) -> tuple:
    "`(status, parsed JSON body)` of one request to the server with `token`."
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(f'http://127.0.0.1:{port}{path}', data, method=method,
                                 headers={'Content-Type': 'application/json', 'Authorization': f'Bearer {token}'})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r: return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e: return e.code, json.loads(e.read() or b'null')

def check(ok:bool, what:str):
    if not ok: raise AssertionError(what)

def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--db', help="the recipe's store, a SQLite path (default: env DATABASE_URL, else data/feedback.db "
                                 "under RLNB_HOME)")
    ap.add_argument('--agent', required=True)
    ap.add_argument('--version', help='the version to deploy (default: the newest)')
    ap.add_argument('--question', default='Hi! How are you today?')
    ap.add_argument('--max-tokens', type=int, default=24)
    ap.add_argument('--json', help='write the result here')
    a = ap.parse_args(argv)
    import openai
    from rlnb.registry import Registry
    reg = Registry(a.db)
    v = reg.get(a.agent, a.version) if a.version else reg.list(a.agent)[0]
    check(bool(v.gguf_paths), f'{a.agent} {v.name} has no GGUF attached: the export stage did not record its files')
    passed = (v.metrics or {}).get('gate_passed') is True
    with socket.socket() as s: s.bind(('127.0.0.1', 0)); port = s.getsockname()[1]
    token = secrets.token_urlsafe(24)
    log = tempfile.NamedTemporaryFile('w+', prefix='rlnb-serve-smoke-', suffix='.log', delete=False)
    env = {**os.environ, 'RLNB_API_TOKEN': token}
    srv = subprocess.Popen([sys.executable, '-c', 'import sys; from rlnb.api import serve_api_cli; serve_api_cli(sys.argv[1:])',
                            '--port', str(port), *(['--db', str(a.db)] if a.db else [])], env=env, stdout=log,
                           stderr=subprocess.STDOUT)
    t0 = time.monotonic()
    try:
        for _ in range(1200):
            check(srv.poll() is None, f'the server exited with {srv.returncode} before it answered')
            try:
                if call(port, token, 'GET', '/ready', timeout=2)[0] in (200, 503): break
            except OSError: pass
            time.sleep(0.1)
        else: check(False, 'the server did not answer /ready within 120 s')
        body = {'version': v.name} if passed else {'version': v.name, 'force': True,
                                                   'reason': 'serve smoke: a smoke budget does not pass the gate'}
        code, dep = call(port, token, 'POST', f'/api/policies/{a.agent}/deploy', body)
        check(code == 200 and dep.get('name') == v.name, f'deploy answered {code}: {dep}')
        t_deploy = time.monotonic() - t0
        code, ready = call(port, token, 'GET', '/ready')
        check(code == 200, f'/ready answered {code} after the deploy: {ready}')
        oai = openai.OpenAI(base_url=f'http://127.0.0.1:{port}/v1', api_key=token, max_retries=0, timeout=120)
        ask = dict(model=a.agent, messages=[{'role': 'user', 'content': a.question}], max_tokens=a.max_tokens,
                   temperature=0, seed=0)
        raw = oai.chat.completions.with_raw_response.create(**ask)
        plain, served = raw.parse(), raw.headers.get('x-rlnb-model-version')
        with oai.chat.completions.with_streaming_response.create(**ask, stream=True) as sr:
            served_stream = sr.headers.get('x-rlnb-model-version')
            chunks = list(sr.parse())
        try: oai.chat.completions.create(**ask, top_p=0.5); refused = None
        except openai.UnprocessableEntityError as e: refused = str(e)
    except BaseException:
        log.seek(0); print('server log tail:\n' + log.read()[-3000:], file=sys.stderr)
        raise
    finally:
        srv.terminate(); srv.wait(30)
    log.close(); os.unlink(log.name)
    text = ''.join(c.choices[0].delta.content or '' for c in chunks)
    answer = plain.choices[0].message.content
    check(served == served_stream == v.name, f'answered by {served} / {served_stream}, deployed {v.name}')
    check(plain.usage.completion_tokens > 0, f'no token answered: {plain}')
    check(text == answer, f'the streamed answer {text!r} differs from the plain one {answer!r}')
    check(chunks[-1].choices[0].finish_reason in ('stop', 'length'), f'the stream ended with {chunks[-1]}')
    check(refused is not None and "'top_p' is not a parameter" in refused, f'top_p was not refused: {refused}')
    res = {'agent': a.agent, 'version': v.name, 'gate_passed': passed, 'forced': not passed, 'deploy_s': round(t_deploy, 1),
           'answer': answer, 'stream_chunks': len(chunks), 'openai': openai.__version__, 'refused': refused}
    if a.json: Path(a.json).write_text(json.dumps(res, indent=1))
    print(f"serve smoke: {a.agent} {v.name} deployed through the API ({'gate passed' if passed else 'forced: gate not passed'}), "
          f"openai {openai.__version__} answered {answer!r} plain and in {len(chunks)} streamed chunks; top_p refused")
    return res

if __name__ == '__main__':
    try: main()
    except AssertionError as e: sys.exit(f'serve smoke FAILED: {e}')
