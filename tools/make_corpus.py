"""Write the bad-input corpus: data/corpus/feedback_lines.jsonl (one case a line, valid records between them) and
data/corpus/feedback_lines.expect.json (per line: the case, 'ok' or 'reject', and the word the reason must contain).

    python tools/make_corpus.py      # rewrites both files; 01_feedback and 10_api test every line against them
"""
import json, sys
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent/'data'/'corpus'
G = dict(agent='corpus', prompt='What is the capital of France?', response='Paris.', rating=5)   # a good record to vary

def rec(**kw): return json.dumps({**G, **kw}, ensure_ascii=True)
def without(*ks): return json.dumps({k: v for k, v in G.items() if k not in ks})
def nest(n): return '{"a": ' * n + '1' + '}' * n

BAD = [  # (case, raw line, word the reason names)
    ('lone surrogate in prompt', rec(prompt='\ud800 hi'), 'prompt'),
    ('lone surrogate in response', rec(response='ok \udfff'), 'response'),
    ('lone surrogate in metadata', rec(metadata={'note': '\ud800'}), 'metadata'),
    ('lone surrogate in a tag', rec(tags=['\udc00']), 'tags'),
    ('NUL in prompt', rec(prompt='a\u0000b'), 'prompt'),
    ('NUL in notes', rec(notes='x\u0000'), 'notes'),
    ('id is a list', rec(id=['a', 'b']), 'id'),
    ('id is an object', rec(id={'x': 1}), 'id'),
    ('id is an integer', rec(id=5), 'id'),
    ('id over 64 characters', rec(id='x' * 65), 'id'),
    ('run_id is a list', rec(run_id=[1]), 'run_id'),
    ('rater is an object', rec(rater={'name': 'ann'}), 'rater'),
    ('model_version is a number', rec(model_version=3), 'model_version'),
    ('metadata nested 500 deep', json.dumps(G)[:-1] + ', "metadata": ' + nest(500) + '}', 'metadata'),
    ('metadata nested 20,000 deep', json.dumps(G)[:-1] + ', "metadata": ' + nest(20000) + '}', 'JSON'),
    ('5,000-digit integer score', json.dumps({k: v for k, v in G.items() if k != 'rating'})[:-1] + ', "score": ' + '9' * 5000 + '}', 'JSON'),
    ('5,000-digit integer in metadata', json.dumps(G)[:-1] + ', "metadata": {"n": ' + '9' * 5000 + '}}', 'JSON'),
    ('integer beyond 64 bits in metadata', json.dumps(G)[:-1] + ', "metadata": {"n": ' + '9' * 30 + '}}', 'metadata'),
    ('created_at overflows at 9999-12-31 -05:00', rec(created_at='9999-12-31T23:59:59-05:00'), 'created_at'),
    ('created_at underflows at 0001-01-01 +01:00', rec(created_at='0001-01-01T00:00:00+01:00'), 'created_at'),
    ('created_at is not a date', rec(created_at='yesterday'), 'created_at'),
    ('created_at is a number', rec(created_at=1700000000), 'created_at'),
    ('score is NaN', json.dumps({k: v for k, v in G.items() if k != 'rating'})[:-1] + ', "score": NaN}', 'score'),
    ('Infinity in metadata', json.dumps(G)[:-1] + ', "metadata": {"x": Infinity}}', 'metadata'),
    ('metadata is a string', rec(metadata='note'), 'metadata'),
    ('metadata is a list', rec(metadata=[1, 2]), 'metadata'),
    ('tags is a string', rec(tags='good'), 'tags'),
    ('tags holds a number', rec(tags=['ok', 3]), 'tags'),
    ('prompt and its alias query disagree', rec(query='Capital of Spain?'), 'query'),
    ('rating 6', rec(rating=6), 'rating'),
    ('rating 0', rec(rating=0), 'rating'),
    ('rating 3.5', rec(rating=3.5), 'rating'),
    ('rating true', rec(rating=True), 'rating'),
    ('rating "5"', rec(rating='5'), 'rating'),
    ('score -0.1', json.dumps({**{k: v for k, v in G.items() if k != 'rating'}, 'score': -0.1}), 'score'),
    ('score 1.5', json.dumps({**{k: v for k, v in G.items() if k != 'rating'}, 'score': 1.5}), 'score'),
    ('score "0.5"', json.dumps({**{k: v for k, v in G.items() if k != 'rating'}, 'score': '0.5'}), 'score'),
    ('label "yes"', json.dumps({**{k: v for k, v in G.items() if k != 'rating'}, 'label': 'yes'}), 'label'),
    ('choice "c"', json.dumps({**{k: v for k, v in G.items() if k != 'rating'}, 'kind': 'comparison', 'response_b': 'Lyon.', 'choice': 'c'}), 'choice'),
    ('unknown kind', rec(kind='emoji'), 'kind'),
    ('unknown feedback_type', json.dumps({**{k: v for k, v in G.items() if k != 'rating'}, 'feedback_type': 'love'}), 'feedback_type'),
    ('no kind at all', without('rating'), 'kind'),
    ('empty prompt', rec(prompt=''), 'prompt'),
    ('blank response', rec(response='   '), 'response'),
    ('missing response', without('response'), 'response'),
    ('prompt is a number', rec(prompt=42), 'prompt'),
    ('notes is a list', rec(notes=['a']), 'notes'),
    ('agent with a path trick', rec(agent='../etc'), 'agent'),
    ('agent with a space', rec(agent='Chit Chat'), 'agent'),
    ('agent over 64 characters', rec(agent='a' * 65), 'agent'),
    ('missing agent', without('agent'), 'agent'),
    ('correction without the correction', json.dumps({**{k: v for k, v in G.items() if k != 'rating'}, 'kind': 'correction'}), 'correction'),
    ('comparison without response_b', json.dumps({**{k: v for k, v in G.items() if k != 'rating'}, 'kind': 'comparison', 'choice': 'a'}), 'response_b'),
    ('prompt over MAX_TEXT', rec(prompt='x' * 32_001), 'prompt'),
    ('a JSON array', '[1, 2, 3]', 'JSON object'),
    ('JSON null', 'null', 'JSON object'),
    ('a JSON string', '"hello"', 'JSON object'),
    ('malformed JSON', '{"prompt": "unfinished', 'JSON'),
    ('a trailing comma', '{"agent": "corpus", "prompt": "p", "response": "r", "rating": 3,}', 'JSON'),
]
GOOD = [  # every shape rlnb reads
    ('rating', rec(prompt='Good 1')), ('thumbs', json.dumps({'agent': 'corpus', 'prompt': 'Good 2', 'response': 'r', 'label': True})),
    ('score', json.dumps({'agent': 'corpus', 'prompt': 'Good 3', 'response': 'r', 'score': 0.25})),
    ('legacy thumbs_up', json.dumps({'agent': 'corpus', 'query': 'Good 4', 'response': 'r', 'feedback_type': 'thumbs_up'})),
    ('legacy score with runId', json.dumps({'agentId': 'corpus', 'prompt': 'Good 5', 'response': 'r', 'score': 0.9, 'runId': 'run_1', 'notes': 'ok'})),
    ('comparison', json.dumps({'agent': 'corpus', 'prompt': 'Good 6', 'chosen': 'a', 'rejected': 'b'})),
    ('correction', json.dumps({'agent': 'corpus', 'prompt': 'Good 7', 'response': 'r', 'kind': 'correction', 'correction': 'better'})),
    ('unicode text', rec(prompt='Ça va? 你好 🙂 Good 8')), ('extra fields kept in metadata', rec(prompt='Good 9', color='blue')),
    ('prompt and query agree', rec(prompt='Good 10', query='Good 10')), ('an explicit string id', rec(prompt='Good 11', id='given-id-1')),
    ('created_at with Z', rec(prompt='Good 12', created_at='2024-05-01T12:00:00Z')),
    ('metadata nested 30 deep', json.dumps({**G, 'prompt': 'Good 13'})[:-1] + ', "metadata": ' + nest(30) + '}'),
]

def main(out=None):
    out = Path(out) if out else OUT
    out.mkdir(parents=True, exist_ok=True)
    lines, expect = [], []
    goods = iter(GOOD)
    bom_case, bom_line = next(goods)
    lines.append(bom_line); expect.append(dict(line=1, case=f'{bom_case}, after a UTF-8 byte-order mark', expect='ok'))
    for i, (case, raw, word) in enumerate(BAD):
        lines.append(raw); expect.append(dict(line=len(lines), case=case, expect='reject', reason_names=word))
        if i % 5 == 4 and (g := next(goods, None)):
            lines.append(g[1]); expect.append(dict(line=len(lines), case=g[0], expect='ok'))
    for g in goods: lines.append(g[1]); expect.append(dict(line=len(lines), case=g[0], expect='ok'))
    data = b'\xef\xbb\xbf' + '\n'.join(lines).encode() + b'\n' + b'{"agent": "corpus", "prompt": "\xff\xfe bad bytes", "response": "r", "rating": 1}\n'
    expect.append(dict(line=len(lines) + 1, case='bytes that are not UTF-8', expect='reject', reason_names='UTF-8'))
    (out/'feedback_lines.jsonl').write_bytes(data)
    (out/'feedback_lines.expect.json').write_text(json.dumps(expect, indent=1, ensure_ascii=False) + '\n')
    print(f"{len(expect)} lines: {sum(e['expect'] == 'reject' for e in expect)} bad, {sum(e['expect'] == 'ok' for e in expect)} good -> {out}")

def check() -> bool:
    "Whether the saved corpus is exactly what this script writes."
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        main(d)
        return all((Path(d)/f).read_bytes() == (OUT/f).read_bytes() for f in ('feedback_lines.jsonl', 'feedback_lines.expect.json'))

if __name__ == '__main__':
    if '--check' in sys.argv: sys.exit(0 if check() else f'{OUT} differs from what tools/make_corpus.py writes: run it')
    main()
