"""Golden datasets: chunking documents, importing golden sets, locating gold chunks, validating, near-duplicates and picking gold by hand."""
