"""First-stage runs over a chunk corpus (BM25, dense, hybrid, rerank) and pooling them for judging."""
