"""Golden datasets: chunking documents, importing, locating gold chunks, validating, near-duplicates, picking gold by hand."""
