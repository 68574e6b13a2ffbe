"""Finance domain knowledge as data with sources: the catalogue of standard measures, the statement row concepts
they read, and the glossary of everyday terms (:mod:`ppkit.finance.catalogue`), with the phrase matching that
reads row labels and questions through them (:mod:`ppkit.finance.labels`, :mod:`ppkit.finance.read`).

Layer: above ``indexing``, below ``retrieval``; used by retrieval (query expansion, the statements a measure
needs) and by the answer stage (the measure asked, the rows that hold its inputs).
"""
