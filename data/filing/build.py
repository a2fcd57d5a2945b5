"""The filing agent's feedback: a second task, not chat, in the shape the seeds' agents collect it.

    python data/filing/build.py            # rewrites data/filing/feedback.jsonl (seeded: the same bytes every time)
    python data/filing/build.py --check    # exit 1 if the committed file is not what this script writes

A document-filing agent (seed 001: agents that file and prioritise documents) reads a short description of a document
and answers with the folder it belongs in, one answer per document; its operator's rule-based checker scores each
answer in [0, 1], the `{"prompt", "response", "score"}` records of seeds 003 and 004. Nothing here was tuned on any
stage: the documents, folders and scores follow fixed rules written down below.

- **Documents**: ten kinds a small company files (invoices, receipts, payslips, contracts, NDAs, CVs, tax notices,
  meeting notes, bug reports, board decks), each filled from small lists of organisations, people, projects, amounts
  and dates; 400 documents, each its own prompt.
- **Gold folder**: a fixed rule per kind (`Finance/Invoices/<organisation>`, `HR/Payroll/<year>-<month>`, ...), kept in
  the record's metadata (`gold`) for the evaluation's exact-match score; never shown to a training stage.
- **The agent's answer** (what was rated): the gold folder (45 %), the right top folder with a wrong leaf (25 %),
  another kind's folder (20 %) or an unusable answer (`Misc`, a sentence instead of a path; 10 %).
- **Score**: 1.0 for the gold folder, 0.5 for the right top folder, 0.0 otherwise, plus uniform noise of ±0.1 (a
  checker that is sometimes unsure), clipped to [0, 1] and rounded to 2 decimals.
- Prompt: `File this document. Reply with the folder path only.` and the description on the next line.
"""
import json, random, sys
from pathlib import Path

OUT = Path(__file__).parent/'feedback.jsonl'
ORGS = ['ACME Corp', 'Globex', 'Initech', 'Umbrella Health', 'Stark Logistics', 'Wayne Foods', 'Hooli', 'Vandelay Imports']
PEOPLE = ['Ana Silva', 'Tom Becker', 'Priya Nair', 'Jonas Berg', 'Mei Chen', 'Omar Haddad', 'Lucy Grant', 'Ivan Petrov']
ROLES = ['Backend Engineer', 'Data Analyst', 'Sales Manager', 'Office Assistant']
PROJECTS = ['Atlas', 'Beacon', 'Comet', 'Delta']
MONTHS = ['01', '02', '03', '04', '05', '06', '07', '08', '09', '10', '11', '12']
YEARS = ['2024', '2025', '2026']

def org_slug(o:str) -> str: return o.split()[0]

def document(kind:str, r:random.Random) -> tuple[str, str]:
    "A description of one document of `kind` and its gold folder."
    o, p, y, m = r.choice(ORGS), r.choice(PEOPLE), r.choice(YEARS), r.choice(MONTHS)
    d = f'{y}-{m}-{r.randint(1, 28):02d}'
    if kind == 'invoice':
        return (f"Invoice #{r.randint(1000, 9999)} from {o} dated {d}, {r.randint(2, 40)} items, total "
                f"${r.randint(100, 9000):,}.00, due in 30 days.", f'Finance/Invoices/{org_slug(o)}')
    if kind == 'receipt':
        return (f"Card receipt from {o} on {d} for ${r.randint(5, 400)}.{r.randint(0, 99):02d}, paid by {p}.",
                f'Finance/Receipts/{y}')
    if kind == 'payslip':
        return f"Payslip of {p} for {y}-{m}: gross ${r.randint(3, 9)},{r.randint(100, 999)}, tax withheld.", f'HR/Payroll/{y}-{m}'
    if kind == 'contract':
        return (f"Signed services agreement between us and {o}, effective {d}, term {r.choice([12, 24, 36])} months.",
                f'Legal/Contracts/{org_slug(o)}')
    if kind == 'nda':
        return f"Mutual non-disclosure agreement with {o}, signed by {p} on {d}.", f'Legal/NDAs/{org_slug(o)}'
    if kind == 'cv':
        role = r.choice(ROLES)
        return f"CV of {p} applying for the {role} opening, received {d}.", f"HR/Recruiting/{role.replace(' ', '')}"
    if kind == 'tax':
        return f"Tax assessment notice for the {y} fiscal year from the tax office, dated {d}.", f'Finance/Tax/{y}'
    if kind == 'notes':
        pr = r.choice(PROJECTS)
        return f"Meeting notes: project {pr} weekly sync on {d}, attendees {p} and team.", f'Projects/{pr}/Meetings'
    if kind == 'bug':
        pr = r.choice(PROJECTS)
        return f"Bug report #{r.randint(100, 999)} in project {pr}: login fails after update, reported by {p}.", f'Engineering/Bugs/{pr}'
    q = r.randint(1, 4)
    return f"Board meeting deck for Q{q} {y}, prepared by {p}.", f'Board/{y}/Q{q}'

KINDS = ['invoice', 'receipt', 'payslip', 'contract', 'nda', 'cv', 'tax', 'notes', 'bug', 'board']
PROMPT = "File this document. Reply with the folder path only.\n"

def answer(gold:str, r:random.Random) -> tuple[str, float]:
    "The agent's answer to a document whose gold folder is `gold`, and the checker's score of it (before noise)."
    u = r.random()
    if u < 0.45: return gold, 1.0
    top = gold.split('/')[0]
    if u < 0.70:
        leaf = r.choice(['Misc', 'Archive', 'Other', '2023', 'General'])
        return '/'.join(gold.split('/')[:-1] + [leaf]) if gold.count('/') > 1 else f'{top}/{leaf}', 0.5
    if u < 0.90:
        other = document(r.choice([k for k in KINDS]), r)[1]
        return (other, 0.5 if other.split('/')[0] == top and other != gold else (1.0 if other == gold else 0.0))
    return r.choice(['Misc', 'I would put it in the shared drive.', 'Documents', 'Inbox']), 0.0

def build(n:int=400, seed:int=0) -> list[dict]:
    r, out, seen = random.Random(seed), [], set()
    while len(out) < n:
        kind = KINDS[len(out) % len(KINDS)]
        text, gold = document(kind, r)
        if text in seen: continue
        seen.add(text)
        resp, s = answer(gold, r)
        score = round(min(1.0, max(0.0, s + r.uniform(-0.1, 0.1))), 2)
        out.append({'prompt': PROMPT + text, 'response': resp, 'score': score,
                    'metadata': {'gold': gold, 'kind': kind}})
    return out

def text() -> str: return ''.join(json.dumps(x, ensure_ascii=False) + '\n' for x in build())

if __name__ == '__main__':
    if '--check' in sys.argv:
        ok = OUT.exists() and OUT.read_text() == text()
        print('data/filing/feedback.jsonl is ' + ('what build.py writes' if ok else 'NOT what build.py writes'))
        sys.exit(0 if ok else 1)
    OUT.write_text(text()); print(f'{len(build())} records -> {OUT}')
