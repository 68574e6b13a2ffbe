"""Headings per filing and the split-word repair over a folder of `ppkit extract` output:
`python scripts/measure_split_words.py DIR`."""
import re, sys, glob, collections
from pathlib import Path
from ppkit.documents.tree import parse_markdown
from ppkit.documents.repair import join_split_words
W = re.compile(r"[A-Za-z]{2,}")
docs = sorted(glob.glob(sys.argv[1] + "/*.pages.json"))
raw = {Path(p).name[:-11]: Path(p[:-11] + ".md").read_text() for p in docs}
fixed = {d: join_split_words(t) for d, t in raw.items()}
def vocab(texts):
    c = collections.Counter()
    for t in texts: c.update(w.casefold() for w in W.findall(re.sub(r"</?[a-zA-Z][^>]*>", " ", t)))
    return c
def heading_words(text):
    return [w.casefold() for n in parse_markdown(text, "d").headings() for w in W.findall(n.title)]
for label, texts in (("before", raw), ("after", {d: f.text for d, f in fixed.items()})):
    v = vocab(texts.values())
    hw = [w for t in texts.values() for w in heading_words(t)]
    frag = [w for w in hw if v[w] <= 2]
    print(f"{label}: heading words {len(hw)}, of them rare in the {len(texts)} filings (<= 2 occurrences): {len(frag)}")
heads = {d: len(parse_markdown(f.text, d).headings()) for d, f in fixed.items()}
few = sorted((n, d) for d, n in heads.items() if n < 3)
print(f"filings: {len(raw)}; with < 3 headings: {len(few)}: {few}")
print(f"words joined: {sum(len(f.joins) for f in fixed.values())} in {sum(1 for f in fixed.values() if f.joins)} filings")
print("lines kept:", all(raw[d].count(chr(10)) == f.text.count(chr(10)) for d, f in fixed.items()))
